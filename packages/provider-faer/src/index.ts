// @tenferro/provider-faer — tenferro's own native GEMM kernels on the engine's pinned workers.
// Importing this module loads nothing and registers nothing: call createFaerProvider() and pass
// the result to CpuBackend.create({ kind: 'faer', providers: [...] }).
import { type CpuProviderPackage, TenferroError } from '@tenferro/core';
import { createGemmProvider } from './gemm-provider.js';
import { type FaerIsa, ISA_ID, type NativeInfo } from './native/binding.js';
import { loadFaer } from './native/load.js';
import { type FaerProviderOptions, resolveOptions } from './options.js';

export type { FaerProviderOptions } from './options.js';
export type { BlockingInfo, FaerIsa, KernelShapeInfo, NativeInfo } from './native/binding.js';

/** What {@link faerProviderStatus} reports. */
export type FaerProviderStatus =
  | {
      readonly available: true;
      /** The ISA path the kernels use by default: `'avx512f'`, `'avx2+fma'` or `'portable'`. */
      readonly isa: string;
      readonly native: NativeInfo;
      readonly path: string;
    }
  | { readonly available: false; readonly reason: string };

/** Whether the native addon loads here, and which ISA path it chose (loads the addon on this thread when called). */
export function faerProviderStatus(): FaerProviderStatus {
  const s = loadFaer();
  if (!s.available) return Object.freeze({ available: false, reason: s.reason });
  return Object.freeze({ available: true, isa: s.info.isa, native: s.info, path: s.path });
}

/**
 * The faer provider package: `{ kind: 'faer', name, gemm }`, whose name names the ISA path
 * (e.g. `'tenferro faer GEMM (avx512f)'`). Loads the addon on the calling thread to learn the
 * path. Errors: `ProviderUnavailable` when the addon cannot load (check `faerProviderStatus()`
 * first to fall back to core's reference kernels), `InvalidArgument` for bad options or an ISA
 * path this CPU cannot run.
 */
export function createFaerProvider(options?: FaerProviderOptions): CpuProviderPackage {
  const op = 'createFaerProvider';
  const o = resolveOptions(options);
  const s = loadFaer();
  if (!s.available) {
    throw new TenferroError('ProviderUnavailable', `the native GEMM kernels are unavailable: ${s.reason}. Possible solutions: build them with \`pnpm --filter @tenferro/provider-faer build:native\` (needs python3, make and g++), or run without providers to use core's reference kernels`, {
      op,
      detail: { reason: s.reason },
    });
  }
  let isa = -1;
  let info = s.info;
  if (o.isa !== 'auto') {
    isa = ISA_ID[o.isa as FaerIsa];
    const chosen = s.binding.info(isa);
    if (chosen === null) {
      throw new TenferroError('InvalidArgument', `ISA path ${o.isa} cannot run on this CPU (best: ${s.info.isa})`, { op, detail: { param: 'options.isa' } });
    }
    info = chosen;
  }
  const gemm = createGemmProvider({ info, isa, parallelMinWork: o.parallelMinWork });
  return Object.freeze({ kind: 'faer', name: gemm.name, gemm });
}
