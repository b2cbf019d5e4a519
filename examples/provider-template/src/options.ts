// src/options.ts
import { TenferroError } from '@tenferro/core';

export interface XProviderOptions {
  /** Smallest m·n·k that fans out over the context's worker pool (default 65536). */
  readonly parallelMinWork?: number;
}

export interface ResolvedXProviderOptions {
  readonly parallelMinWork: number;
}

const KNOWN = ['parallelMinWork'];

export function validateXProviderOptions(options: unknown, op = 'createXProvider'): ResolvedXProviderOptions {
  if (options === undefined) return Object.freeze({ parallelMinWork: 65_536 });
  if (typeof options !== 'object' || options === null) {
    throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw TenferroError.invalidArgument(op, `options.${key}`, `one of ${KNOWN.join(', ')}`, key);
  }
  const { parallelMinWork = 65_536 } = options as XProviderOptions;
  if (!Number.isSafeInteger(parallelMinWork) || parallelMinWork < 1) {
    throw TenferroError.invalidArgument(op, 'options.parallelMinWork', 'a positive integer', parallelMinWork);
  }
  return Object.freeze({ parallelMinWork });
}
