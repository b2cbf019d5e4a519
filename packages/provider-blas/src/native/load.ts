/** The addon through `defineAddon` (#40), loaded on the first `loadBlas()` of each realm. It links no BLAS: `binding.load()` dlopen()s one later, on an engine worker (src/kernels/gemm.ts). */
import { defineAddon } from '@tenferro/core/kernel';
import { APT_INSTALL_LINE } from '../../scripts/detect-blas.mjs';
import { addonOverride } from './addon-path.js';
import { ABI, type BlasBinding } from './binding.js';

/** `1` makes the provider unavailable at run time too (the build already skips the addon). */
export const IGNORE_ENV = 'TENFERRO_IGNORE_SYSTEM_BLAS';
export { ADDON_ENV } from './addon-path.js';

const apt = `(Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`;
/** What only this package knows: whether there is a CBLAS to build against, and how to get one. */
const ADVICE: Record<string, readonly string[]> = {
  platform: ["use the faer kind instead: CpuBackend.create({ kind: 'faer' })"],
  disabled: ['if the addon was built while it was set (the build skips it then too), rebuild it after unsetting it', `if no BLAS is installed ${apt}`],
  load: ["the addon loads no BLAS itself (it dlopen()s one at run time), so this is the addon's own build: reinstall it with npm rebuild @tenferro/provider-blas"],
};
const blasAddon = defineAddon<BlasBinding>({
  packageName: '@tenferro/provider-blas',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_blas.node',
  override: addonOverride, // TENFERRO_BLAS_ADDON: another build (e.g. a sanitizer build); its build record is not this one's
  exports: ['gemm', 'load', 'info', 'getThreads', 'setThreads', 'lapackSymbols', 'lapack'],
  disableEnv: IGNORE_ENV,
  abi: ABI,
  platforms: ['linux'],
  label: 'blas',
  advice: (failure) => ({ possibleSolutions: ADVICE[failure] ?? [] }),
});

/** Load the addon once per realm and cache the outcome; never throws (NODE_DEBUG=tenferro logs it). */
export const loadBlas = blasAddon.load;
