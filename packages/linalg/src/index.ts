/**
 * `@tenferro/linalg`: `linalg(backend | session)` and `status()`. Nothing happens at import: the
 * addon loads on the first `status()` (main thread) or the first kernel task (each engine worker).
 */
import type { ProviderPackageStatus } from '@tenferro/core';
import { loadLinalg } from './native/load.js';

export { linalg, Linalg } from './linalg.js';
export type { LinalgCallRecord, LinalgRunOptions, LinalgTarget, LstsqResult } from './linalg.js';
export { BUILTIN_KERNELS } from './builtin.js';
export * from './contract/index.js';

/**
 * Whether the built-in kernels can run here (loads the addon on this thread).
 *
 * @example
 * ```ts
 * import { status } from '@tenferro/linalg';
 *
 * const s = status();
 * console.log(s.available ? s.name : s.reasons.join('; ')); // e.g. tenferro linalg built-in (Eigen 3.4.0)
 * ```
 */
export function status(): ProviderPackageStatus {
  const addon = loadLinalg();
  if (!addon.available) {
    return Object.freeze({ available: false, reasons: addon.reasons, possibleSolutions: [...addon.possibleSolutions, "a provider's CpuLinalgKernels (e.g. @tenferro/provider-blas) still runs where it applies"] });
  }
  const info = addon.binding.info();
  return Object.freeze({ available: true, name: `tenferro linalg built-in (Eigen ${info.eigen})`, details: Object.freeze({ eigen: info.eigen }), warnings: [], addonPath: addon.path });
}
