/**
 * Lazy loading of the native addon, through core's `loadAddon`. Nothing here runs at import time:
 * the addon is loaded on the first `loadBlas()` call of each JavaScript realm (the main thread and
 * each engine worker) and the outcome is cached. The addon links no BLAS: the runtime is
 * dlopen()ed later, by `binding.load()` on an engine worker (src/kernels/gemm.ts).
 */
import { readFileSync } from 'node:fs';
import { debuglog } from 'node:util';
import { type AddonAdvice, type AddonFailure, type AddonLoad, loadAddon } from '@tenferro/core';
import { APT_INSTALL_LINE } from '../../scripts/detect-blas.mjs';
import { addonOverride, addonPath } from './addon-path.js';
import type { BlasBinding } from './binding.js';

const debug = debuglog('tenferro');

export type BlasLoad = AddonLoad<BlasBinding>;

/** `1` makes the provider unavailable at run time too (the build already skips the addon). */
export const IGNORE_ENV = 'TENFERRO_IGNORE_SYSTEM_BLAS';

export { ADDON_ENV } from './addon-path.js';

let cached: BlasLoad | undefined;

/** Load the addon once per realm and cache the outcome; never throws. */
export function loadBlas(): BlasLoad {
  if (cached === undefined) {
    const other = addonOverride();
    cached = loadAddon<BlasBinding>({
      packageName: '@tenferro/provider-blas',
      // Relative to this file, in src/native/ or dist/native/. The build record describes that build only.
      addon: addonPath(),
      status: other === undefined ? new URL('../../native/build/status.json', import.meta.url) : undefined,
      exports: ['gemm', 'load', 'info', 'getThreads', 'setThreads', 'lapackSymbols', 'lapack'],
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
    case 'load':
      return { possibleSolutions: [`the addon loads no BLAS itself (it dlopen()s one at run time), so this is the addon's own build: reinstall it with npm rebuild @tenferro/provider-blas`] };
    default:
      return {};
  }
}


/** Whether an OpenBLAS (or any libblas) is already mapped into this process, by whoever loaded it. */
export function blasLibraryMapped(): { openblas: boolean; any: boolean } {
  let maps = '';
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return { openblas: false, any: false };
  }
  const openblas = /libopenblas[^/\s]*\.so/.test(maps);
  return { openblas, any: openblas || /libblas\.so|libcblas\.so|libmkl_rt|libblis/.test(maps) };
}

