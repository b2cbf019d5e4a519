/**
 * Lazy loading of the native addon. Nothing here runs at import time: the addon is loaded on the
 * first `loadFaer()` call (per JavaScript realm: the main thread and each engine worker load it
 * once) and the outcome is cached.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FaerBinding, NativeInfo } from './binding.js';

export type FaerLoadStatus =
  | { readonly available: true; readonly binding: FaerBinding; readonly info: NativeInfo; readonly path: string }
  | { readonly available: false; readonly reason: string };

/** Relative to this file (src/native/ or dist/native/). */
const ADDON_URL = new URL('../../native/build/Release/tenferro_faer.node', import.meta.url);
const STATUS_URL = new URL('../../native/build/status.json', import.meta.url);

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_FAER_DISABLE';

let cached: FaerLoadStatus | undefined;

/** Load the addon once and cache the outcome; never throws. */
export function loadFaer(): FaerLoadStatus {
  cached ??= loadUncached();
  return cached;
}

function loadUncached(): FaerLoadStatus {
  if (process.env[DISABLE_ENV] === '1') return unavailable(`disabled by ${DISABLE_ENV}=1`);
  return loadFaerFrom(fileURLToPath(ADDON_URL), fileURLToPath(STATUS_URL));
}

/** Load the addon at `addonPath` (no caching); internal, exported for tests. */
export function loadFaerFrom(addonPath: string, statusPath: string): FaerLoadStatus {
  try {
    const require = createRequire(import.meta.url);
    const binding = require(addonPath) as Partial<FaerBinding>;
    for (const name of ['gemm', 'info', 'fmaPeak'] as const) {
      if (typeof binding[name] !== 'function') throw new Error(`${addonPath} does not export ${name}()`);
    }
    const info = (binding as FaerBinding).info();
    if (info === null) throw new Error('the addon reports no usable ISA path');
    return Object.freeze({ available: true, binding: binding as FaerBinding, info, path: addonPath });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return unavailable(`cannot load the native addon ${addonPath}: ${message.split('\n')[0]}${buildNote(statusPath)}`);
  }
}

function unavailable(reason: string): FaerLoadStatus {
  return Object.freeze({ available: false, reason });
}

function buildNote(statusPath: string): string {
  let text: string;
  try {
    text = readFileSync(statusPath, 'utf8');
  } catch {
    return '; no native build recorded (run `pnpm --filter @tenferro/provider-faer build:native`)';
  }
  try {
    const status = JSON.parse(text) as { ok?: unknown; reason?: unknown };
    if (status.ok === true) return '; the last native build succeeded, so the addon was moved or does not fit this Node';
    return `; the native build failed: ${typeof status.reason === 'string' ? status.reason : 'no reason recorded'}`;
  } catch {
    return `; ${statusPath} is not valid JSON`;
  }
}
