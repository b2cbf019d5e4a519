/**
 * Lazy loading of the native addon. Nothing here runs at import time: the addon (and with it the
 * system BLAS) is loaded on the first `loadBlas()` call of each JavaScript realm (the main
 * thread and each engine worker) and the outcome is cached.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';
import { APT_INSTALL_LINE, detectBlas } from '../../scripts/detect-blas.mjs';
import type { BlasBinding } from './binding.js';

const debug = debuglog('tenferro');

export type BlasLoad =
  | { readonly available: true; readonly binding: BlasBinding; readonly path: string }
  | { readonly available: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] };

/** Where the addon and its build record live, relative to this file (src/native or dist/native). */
const ADDON_URL = new URL('../../native/build/Release/tenferro_blas.node', import.meta.url);
const STATUS_URL = new URL('../../native/build/status.json', import.meta.url);

/** `1` makes the provider unavailable at run time too (the build already skips the addon). */
export const IGNORE_ENV = 'TENFERRO_IGNORE_SYSTEM_BLAS';

/** Path of another build of the addon (e.g. against MKL in scripts/test-mkl.sh); inherited by engine workers. */
export const ADDON_ENV = 'TENFERRO_BLAS_ADDON';

const REBUILD = 'rebuild the addon: pnpm --filter @tenferro/provider-blas run build:native';

let cached: BlasLoad | undefined;

/** Load the addon once per realm and cache the outcome; never throws. */
export function loadBlas(): BlasLoad {
  cached ??= loadUncached();
  return cached;
}

/** Whether this realm has loaded the addon (so the BLAS library is in the process). */
export function addonLoadedHere(): boolean {
  return cached?.available === true;
}

/** Whether an OpenBLAS (or any libblas) is already mapped into this process, by whoever loaded it. */
export function blasLibraryMapped(): { openblas: boolean; any: boolean } {
  let maps = '';
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return { openblas: addonLoadedHere(), any: addonLoadedHere() };
  }
  const openblas = /libopenblas[^/\s]*\.so/.test(maps);
  return { openblas, any: openblas || /libblas\.so|libmkl_rt|libblis/.test(maps) || maps.includes('tenferro_blas.node') };
}

function loadUncached(): BlasLoad {
  if (process.platform !== 'linux') {
    return unavailable([`platform ${process.platform} is not supported: @tenferro/provider-blas is built for Linux`], ['use the faer kind instead']);
  }
  if (process.env[IGNORE_ENV] === '1') {
    const d = detectBlas();
    const why = d.found ? [`${IGNORE_ENV}=1: the system BLAS is ignored on purpose`] : d.reasons;
    const fixes = d.found ? [`unset ${IGNORE_ENV}`, `if no BLAS is installed (Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`] : d.possibleSolutions;
    return unavailable(why, fixes);
  }
  const addonPath = process.env[ADDON_ENV] || fileURLToPath(ADDON_URL);
  try {
    const require = createRequire(import.meta.url);
    const binding = require(addonPath) as Partial<BlasBinding>;
    for (const name of ['gemm', 'info', 'getThreads', 'setThreads'] as const) {
      if (typeof binding[name] !== 'function') throw new Error(`${addonPath} does not export ${name}()`);
    }
    debug(`tenferro: blas: loaded ${addonPath}`);
    return Object.freeze({ available: true, binding: binding as BlasBinding, path: addonPath });
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    debug(`tenferro: blas: cannot load ${addonPath}: ${message}`);
    return explainMissing(addonPath, message);
  }
}

/** Why the addon is missing: the build record, else a fresh detection. */
function explainMissing(addonPath: string, loadError: string): BlasLoad {
  let status: { ok?: unknown; reason?: unknown; reasons?: unknown; possibleSolutions?: unknown } | undefined;
  try {
    status = JSON.parse(readFileSync(fileURLToPath(STATUS_URL), 'utf8')) as typeof status;
  } catch {
    status = undefined;
  }
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  if (status !== undefined && status.ok === false && strings(status.reasons).length > 0) {
    return unavailable([`the native addon was not built: no system CBLAS was found at build time`, ...strings(status.reasons)], strings(status.possibleSolutions));
  }
  const detection = detectBlas();
  const reasons = [`cannot load the native addon ${addonPath}: ${loadError}`];
  if (status === undefined) reasons.push('no native build is recorded (native/build/status.json is missing)');
  else if (status.ok === false && typeof status.reason === 'string') reasons.push(`the native build failed: ${status.reason}`);
  else if (status.ok === true) reasons.push('the last native build succeeded, so the addon was moved, does not fit this Node, or its BLAS library (libblas.so.3) is gone');
  if (!detection.found) reasons.push(...detection.reasons);
  const fixes = detection.found ? [REBUILD, `if libblas.so.3 is missing (Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`] : [...detection.possibleSolutions];
  return unavailable(reasons, fixes);
}

function unavailable(reasons: readonly string[], possibleSolutions: readonly string[]): BlasLoad {
  const fixes = possibleSolutions.some((s) => s.includes(APT_INSTALL_LINE)) ? possibleSolutions : [...possibleSolutions, `Debian/Ubuntu (as root): ${APT_INSTALL_LINE}`];
  return Object.freeze({ available: false, reasons: Object.freeze([...reasons]), possibleSolutions: Object.freeze([...fixes]) });
}
