// @tenferro/provider-tprims — native strided tensor primitives and layout transforms on the
// engine's pinned workers. Importing this module loads nothing and registers nothing: call
// createTprimsProvider() and pass the result to CpuBackend.create({ providers: [...] }), or just
// install the package (provider discovery finds it for both standard kinds).
import { type CpuProviderPackage, type ProviderPackageStatus, TenferroError } from '@tenferro/core';
import { ISA_ID } from './native/binding.js';
import { loadTprims, tprimsAddon } from './native/load.js';
import { type TprimsProviderOptions, validateTprimsProviderOptions } from './options.js';
import { createLayoutProvider, createTensorPrimitivesProvider } from './tensor-primitives-provider.js';

export type { TprimsProviderOptions, ValidatedTprimsProviderOptions } from './options.js';
export { DEFAULT_PARALLEL_MIN_ELEMENTS, validateTprimsProviderOptions } from './options.js';
export type { NativeInfo, TprimsIsa } from './native/binding.js';

/**
 * This package's status in the shape every tenferro provider package reports (what `tenferro
 * info` lists): the ISA path and the paths this CPU can run, or why the addon cannot load and what
 * would fix it. Loads the addon on this thread.
 *
 * @example
 * ```ts
 * import { status } from '@tenferro/provider-tprims';
 *
 * const s = status();
 * console.log(s.available ? s.details.isa : s.reasons); // e.g. avx2+fma
 * ```
 */
export function status(): ProviderPackageStatus {
  // The ISA report (isa, isaPaths, isaNotBuilt and the not-built warning) is defineAddon's.
  return tprimsAddon.status(({ info }) => ({ name: `tenferro tprims (${info.isa})`, details: { slots: 'tensorPrimitives, layoutTransform' } }));
}

/**
 * The tprims provider package: `{ kind: 'any', name, tensorPrimitives, layoutTransform }`, whose
 * name names the ISA path. Loads the addon on the calling thread (to learn the path and which
 * kernels exist, so declines are decided before a worker hop). Errors: `InvalidArgument` for bad
 * options (checked before anything is loaded) or an ISA path this CPU cannot run;
 * `ProviderUnavailable` when the addon cannot load, with `detail: { reasons, possibleSolutions }`.
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor, ops } from '@tenferro/core';
 * import { createTprimsProvider, status } from '@tenferro/provider-tprims';
 *
 * if (status().available) {
 *   const backend = await CpuBackend.create({ providers: [createTprimsProvider()] });
 *   const t = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
 *   const dense = await ops(backend).contiguous(t.transpose()); // a native strided copy
 *   console.log(dense.toArray()); // prints: [ 1, 3, 5, 2, 4, 6 ]
 *   await backend.close();
 * }
 * ```
 */
export function createTprimsProvider(options?: TprimsProviderOptions): CpuProviderPackage {
  const op = 'createTprimsProvider';
  const o = validateTprimsProviderOptions(options, op);
  const s = loadTprims();
  if (!s.available) {
    throw new TenferroError('ProviderUnavailable', `the native tensor primitives are unavailable: ${s.reason}. Possible solutions: ${s.possibleSolutions.join('; ')}`, {
      op,
      detail: { reasons: s.reasons, possibleSolutions: s.possibleSolutions },
    });
  }
  let isa = -1;
  let info = s.info;
  if (o.isa !== 'auto') {
    isa = ISA_ID[o.isa];
    const chosen = s.binding.info(isa);
    if (chosen === null) throw TenferroError.invalidArgument(op, 'options.isa', `an ISA path this CPU can run (best: ${s.info.isa})`, o.isa);
    info = chosen;
  }
  const config = { binding: s.binding, info, isa, parallelMinElements: o.parallelMinElements };
  return Object.freeze({
    kind: 'any',
    name: `tenferro tprims (${info.isa})`,
    tensorPrimitives: createTensorPrimitivesProvider(config),
    layoutTransform: createLayoutProvider(config),
  });
}

