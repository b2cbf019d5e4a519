// @tenferro/provider-faer — tenferro's own native GEMM kernels on the engine's pinned workers.
// Importing this module loads nothing and registers nothing: call createFaerProvider() and pass
// the result to CpuBackend.create({ kind: 'faer', providers: [...] }).
import { type CpuProviderPackage, type ProviderPackageStatus, TenferroError } from '@tenferro/core';
import { createGemmProvider } from './gemm-provider.js';
import { ISA_ID, type NativeInfo } from './native/binding.js';
import { faerAddon, loadFaer } from './native/load.js';
import { type FaerProviderOptions, validateFaerProviderOptions } from './options.js';

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
  | { readonly available: false; readonly reason: string; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] };

/**
 * This package's status in the shape every tenferro provider package reports (what `tenferro
 * info` lists): the ISA path, the register tiles, the blocking and the cache sizes it derives
 * from, or why the addon cannot load and what would fix it. Loads the addon on this thread.
 *
 * @example
 * ```ts
 * import { status } from '@tenferro/provider-faer';
 *
 * const s = status();
 * console.log(s.available ? s.name : s.possibleSolutions.join('\n')); // e.g. tenferro faer GEMM (avx2)
 * ```
 */
export function status(): ProviderPackageStatus {
  return faerAddon.status(({ info: { isa, kernel, blocking, cache } }) => {
    const size = (bytes: number) => (bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : `${Math.round(bytes / 1024)} KiB`);
    return {
      name: `tenferro faer GEMM (${isa})`,
      details: {
        registerTile: `f64 ${kernel.f64.mr}×${kernel.f64.nr}, f32 ${kernel.f32.mr}×${kernel.f32.nr}`,
        blocking: `f64 mc ${blocking.f64.mc}, kc ${blocking.f64.kc}, nc ${blocking.f64.nc}`,
        caches: `L1d ${size(cache.l1d)}, L2 ${size(cache.l2)}, L3 ${size(cache.l3)} (${cache.fromSysfs ? 'sysfs' : 'defaults'})`,
      },
      // The ISA report (isa, isaPaths, isaNotBuilt and the not-built warning) is defineAddon's.
      warnings: cache.fromSysfs
        ? []
        : [`no cache sizes in /sys/devices/system/cpu/cpu0/cache: the blocking assumes L1d ${size(cache.l1d)}, L2 ${size(cache.l2)}, L3 ${size(cache.l3)}, which may not fit this CPU`],
    };
  });
}

/**
 * This package's own diagnostics: the full `NativeInfo` of the default ISA path (loads the addon on this thread). See also {@link status}.
 *
 * @example
 * ```ts
 * import { faerProviderStatus } from '@tenferro/provider-faer';
 *
 * console.log(faerProviderStatus()); // e.g. { available: true, isa: 'avx2', … }
 * ```
 */
export function faerProviderStatus(): FaerProviderStatus {
  const s = loadFaer();
  if (!s.available) return Object.freeze({ available: false, reason: s.reason, reasons: s.reasons, possibleSolutions: s.possibleSolutions });
  return Object.freeze({ available: true, isa: s.info.isa, native: s.info, path: s.path });
}

/**
 * The faer provider package: `{ kind: 'faer', name, gemm }`, whose name names the ISA path
 * (e.g. `'tenferro faer GEMM (avx512f)'`). Loads the addon on the calling thread to learn the
 * path. Errors: `InvalidArgument` for bad options (checked before anything is loaded) or an ISA
 * path this CPU cannot run; `ProviderUnavailable` when the addon cannot load, with `detail:
 * { reasons, possibleSolutions }` (check `status()` first to fall back to core's reference kernels).
 *
 * @example
 * ```ts
 * import { CpuBackend } from '@tenferro/core';
 * import { createFaerProvider, status } from '@tenferro/provider-faer';
 *
 * if (status().available) {
 *   const backend = await CpuBackend.create({ kind: 'faer', providers: [createFaerProvider()] });
 *   console.log(backend.executionInfo().providerDiagnostic); // e.g. gemm tenferro faer GEMM (avx2) …
 *   await backend.close();
 * }
 * ```
 */
export function createFaerProvider(options?: FaerProviderOptions): CpuProviderPackage {
  const op = 'createFaerProvider';
  const o = validateFaerProviderOptions(options, op);
  const s = loadFaer();
  if (!s.available) {
    throw new TenferroError('ProviderUnavailable', `the native GEMM kernels are unavailable: ${s.reason}. Possible solutions: ${s.possibleSolutions.join('; ')}`, {
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
  const gemm = createGemmProvider({ info, isa, parallelMinWork: o.parallelMinWork });
  // No `engineOuterGroupedGemm` opt-in (R51): the GEMM's own `groupedGemm` runs a group as one
  // kernel task per lane, claiming jobs through a shared counter — at 2 threads 1000 jobs of 32×32
  // took 7.3 ms that way against 80 ms as one engine-scheduled `gemm` call per job.
  return Object.freeze({ kind: 'faer', name: gemm.name, gemm });
}

