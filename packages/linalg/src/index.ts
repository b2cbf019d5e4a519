/**
 * `@tenferro/linalg`: `linalg(backend | session)` and `status()`. Nothing happens at import: the
 * addon loads on the first `status()` (main thread) or the first kernel task (each engine worker).
 * Every operation is one call of core's `runExtension` (#35): `src/primitives/`, `src/composites/`.
 */
import type { ProviderPackageStatus } from '@tenferro/core';
import { linalgAddon } from './native/load.js';

export { linalg } from './linalg.js';
export type { Linalg, LinalgRunOptions, LinalgTarget, LstsqResult } from './linalg.js';
export { BUILTIN_KERNELS } from './builtin.js';
export { applyOutputConvention, linalgOutputSpecs } from './output-convention.js';
export type { LinalgOutputSpec } from './output-convention.js';
export * from './contract/index.js';

/**
 * Whether the built-in kernels can run here (loads the addon on this thread), with the Eigen
 * version they were compiled with and the instruction set they use on this CPU (`details.isa`:
 * `generic`, `avx2` or `avx512`; `TENFERRO_LINALG_ISA=generic|avx2` lowers it).
 *
 * @example
 * ```ts
 * import { status } from '@tenferro/linalg';
 *
 * const s = status();
 * console.log(s.available ? s.name : s.reasons.join('; ')); // e.g. tenferro linalg built-in (Eigen 3.4.0, avx512)
 * ```
 */
export function status(): ProviderPackageStatus {
  // isa: the instruction set the kernels run with here (the best of those compiled in — generic,
  // avx2, avx512 — that the CPU supports; native/src/dispatch.cc); the ISA report is defineAddon's.
  return linalgAddon.status(({ info }) => ({ name: `tenferro linalg built-in (Eigen ${info.eigen}, ${info.isa})`, details: { eigen: info.eigen, compilers: info.compilers } }), [
    "a provider's CpuLinalgKernels (e.g. @tenferro/provider-blas) still runs where it applies",
  ]);
}
