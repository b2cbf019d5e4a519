import { GemmAnalysisCache } from '../contraction/gemm-analysis-cache.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import { validateSignal } from '../util/abort-listeners.js';
import type { RunOptions } from './backend-options.js';

/** Options of `withBackendSession`. */
export interface SessionOptions extends RunOptions {
  /**
   * The GEMM-analysis cache the session's operations use (R82): the caller's, bound to the
   * session's bundle on first dispatch (R117). Without it the engine's own cache is lent.
   */
  readonly gemmCache?: GemmAnalysisCache;
}

const KEYS: ReadonlySet<string> = new Set(['signal', 'gemmCache']);

/** Validate {@link SessionOptions} (unknown keys are errors). */
export function validateSessionOptions(options: unknown, op: string): { readonly signal: AbortSignal | undefined; readonly gemmCache: GemmAnalysisCache | undefined } {
  if (options === undefined) return { signal: undefined, gemmCache: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw invalidArgument(op, `options.${key}`, `one of the options ${[...KEYS].join(', ')}`, key);
  }
  const o = options as SessionOptions;
  if (o.gemmCache !== undefined && !(o.gemmCache instanceof GemmAnalysisCache)) throw invalidArgument(op, 'options.gemmCache', 'a GemmAnalysisCache', o.gemmCache);
  return { signal: validateSignal(o.signal, op), gemmCache: o.gemmCache };
}
