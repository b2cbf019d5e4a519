/**
 * Lazy loading of the native addon, through core's `loadAddon`. Nothing here runs at import time:
 * the addon (and with it the system BLAS) is loaded on the first `loadBlas()` call of each
 * JavaScript realm (the main thread and each engine worker) and the outcome is cached.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';
import { type AddonAdvice, type AddonFailure, type AddonLoad, loadAddon } from '@tenferro/core';
import { APT_INSTALL_LINE, detectBlas } from '../../scripts/detect-blas.mjs';
import type { BlasBinding } from './binding.js';

const debug = debuglog('tenferro');

export type BlasLoad = AddonLoad<BlasBinding>;

/** `1` makes the provider unavailable at run time too (the build already skips the addon). */
export const IGNORE_ENV = 'TENFERRO_IGNORE_SYSTEM_BLAS';

/** Path of another build of the addon (e.g. against MKL in scripts/test-mkl.sh); inherited by engine workers. */
export const ADDON_ENV = 'TENFERRO_BLAS_ADDON';

let cached: BlasLoad | undefined;

/** Load the addon once per realm and cache the outcome; never throws. */
export function loadBlas(): BlasLoad {
  if (cached === undefined) {
    const other = process.env[ADDON_ENV] || undefined;
    cached = loadAddon<BlasBinding>({
      packageName: '@tenferro/provider-blas',
      // The build record describes the package's own build (or prebuilt binary) only.
      addon: other === undefined ? findAddon() : resolve(other),
      status: other === undefined ? new URL('../../native/build/status.json', import.meta.url) : undefined,
      exports: ['gemm', 'info', 'getThreads', 'setThreads'],
      disableEnv: IGNORE_ENV,
      platforms: ['linux'],
      advice: blasAdvice,
    });
    debug(cached.available ? `tenferro: blas: loaded ${cached.path}` : `tenferro: blas: unavailable: ${cached.reasons.join('; ')}`);
  }
  return cached;
}

/** What only this package knows: whether there is a CBLAS to build against, and how to get one. */
function blasAdvice(failure: AddonFailure): AddonAdvice {
  const apt = `(Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`;
  switch (failure) {
    case 'platform':
      return { possibleSolutions: ["use the faer kind instead: CpuBackend.create({ kind: 'faer' })"] };
    case 'disabled':
      return { possibleSolutions: ['if the addon was built while it was set (the build skips it then too), rebuild it after unsetting it', `if no BLAS is installed ${apt}`] };
    case 'load': {
      const detection = detectBlas();
      if (!detection.found) return { reasons: detection.reasons, possibleSolutions: detection.possibleSolutions };
      return { possibleSolutions: [`if libblas.so.3 is missing ${apt}`] };
    }
    default:
      return {};
  }
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

/**
 * The addon file, as node-gyp-build finds it in native/ (relative to this file, in src/native/ or
 * dist/native/): a local build in native/build/Release, else the prebuilt binary for this platform
 * in native/prebuilds/<platform>-<arch>/; the build path when there is neither (the loader then
 * explains why from the build record).
 */
function findAddon(): string {
  const dir = fileURLToPath(new URL('../../native/', import.meta.url));
  try {
    return (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path(dir);
  } catch {
    return join(dir, 'build', 'Release', 'tenferro_blas.node');
  }
}
