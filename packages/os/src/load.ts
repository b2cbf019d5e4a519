/**
 * Lazy loading of the native addon. Nothing here runs at import time: the addon is loaded on
 * the first `loadOs()` call (per JavaScript realm: the main thread and each worker load it
 * once) and the outcome is cached.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { OsBinding } from './binding.js';

/** The outcome of loading the addon. */
export type OsStatus =
  | { readonly available: true; readonly binding: OsBinding; readonly path: string }
  | { readonly available: false; readonly reason: string };

/** Where the addon and its build record live, relative to this file (src/ or dist/). */
const ADDON_URL = new URL('../native/build/Release/tenferro_os.node', import.meta.url);
const STATUS_URL = new URL('../native/build/status.json', import.meta.url);

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_OS_DISABLE';

let cached: OsStatus | undefined;

/** Load the addon once and cache the outcome; never throws. */
export function loadOs(): OsStatus {
  cached ??= loadOsUncached();
  return cached;
}

function loadOsUncached(): OsStatus {
  if (process.platform !== 'linux') {
    return unavailable(`platform ${process.platform} is not supported: thread affinity is Linux-only`);
  }
  if (process.env[DISABLE_ENV] === '1') {
    return unavailable(`disabled by ${DISABLE_ENV}=1`);
  }
  return loadOsFrom(fileURLToPath(ADDON_URL), fileURLToPath(STATUS_URL));
}

/**
 * Load the addon at `addonPath` (no caching). On failure the reason names the load error and,
 * when `statusPath` records a failed build, that failure. Internal; exported for tests.
 */
export function loadOsFrom(addonPath: string, statusPath: string): OsStatus {
  try {
    const require = createRequire(import.meta.url);
    const binding = require(addonPath) as Partial<OsBinding>;
    for (const name of ['gettid', 'yieldThread', 'getThreadAffinity', 'getProcessAffinity', 'setThreadAffinity'] as const) {
      if (typeof binding[name] !== 'function') throw new Error(`${addonPath} does not export ${name}()`);
    }
    return Object.freeze({ available: true, binding: binding as OsBinding, path: addonPath });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return unavailable(`cannot load the native addon ${addonPath}: ${message.split('\n')[0]}${buildNote(statusPath)}`);
  }
}

function unavailable(reason: string): OsStatus {
  return Object.freeze({ available: false, reason });
}

/** What native/build/status.json says about the last build, as a sentence to append. */
function buildNote(statusPath: string): string {
  let text: string;
  try {
    text = readFileSync(statusPath, 'utf8');
  } catch {
    return '; no native build recorded (run `pnpm --filter @tenferro/os build:native`)';
  }
  try {
    const status = JSON.parse(text) as { ok?: unknown; reason?: unknown };
    if (status.ok === true) return '; the last native build succeeded, so the addon was moved or does not fit this Node';
    return `; the native build failed: ${typeof status.reason === 'string' ? status.reason : 'no reason recorded'}`;
  } catch {
    return `; ${statusPath} is not valid JSON`;
  }
}
