import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import type { CpuGemmProvider, CpuGeneralContractionProvider, CpuLayoutTransformProvider } from './cpu-providers.js';
import type { CpuTensorPrimitivesProvider } from './tensor-primitives.js';

/**
 * What a provider package's factory returns (e.g. `createFaerProvider()`): the kind it serves
 * (or `'any'`) and the slots it fills in that kind's standard bundle, plus typed extensions. Nothing
 * registers itself at import; an application passes packages to `CpuBackend.create`.
 */
export interface CpuProviderPackage {
  /** The backend kind this package provides kernels for; `'any'` fills its slots in both standard bundles (faer and blas). */
  readonly kind: CpuBackendKind | 'any';
  /** Diagnostic name (never a dispatch key). */
  readonly name: string;
  readonly gemm?: CpuGemmProvider;
  /**
   * The GEMM provider opts in to engine-scheduled grouped GEMM (R51, R110): it tolerates concurrent
   * calls and honours Sequential without starting workers. The standard bundle then keeps
   * `engineOuter` scheduling after installing it (setting a GEMM provider otherwise resets it to
   * `providerOwned`).
   */
  readonly engineOuterGroupedGemm?: boolean;
  readonly layoutTransform?: CpuLayoutTransformProvider;
  readonly generalContraction?: CpuGeneralContractionProvider;
  readonly tensorPrimitives?: CpuTensorPrimitivesProvider;
  /** Extensions stored in the bundle (e.g. linalg kernels); never interpreted by core. */
  readonly extensions?: readonly (readonly [ExtensionKey<unknown>, unknown])[];
  /**
   * The threads the package's runtime started in this process (e.g. OpenBLAS's pool), for the
   * thread census (`CpuBackend.census()`), which flags those whose CPU mask leaves the backend's
   * domains. Optional; must be cheap and must not start anything. Threads an engine worker runs
   * on are the engine's, not the provider's.
   *
   * @example
   * ```ts
   * import { CpuBackend, type CpuProviderPackage, referenceGemmProvider, referenceLayoutProvider } from '@tenferro/core';
   *
   * // A package whose runtime started one thread of its own (here: pretend the main thread is it).
   * const pkg: CpuProviderPackage = {
   *   kind: 'faer',
   *   name: 'example',
   *   gemm: referenceGemmProvider,
   *   layoutTransform: referenceLayoutProvider,
   *   threads: () => [{ tid: process.pid, role: 'example pool' }],
   * };
   * console.log(pkg.threads?.()); // e.g. [ { tid: 12345, role: 'example pool' } ]
   * const backend = await CpuBackend.create({ threads: 1, providers: [pkg] });
   * console.log(backend.census().threads.find((t) => t.tid === process.pid)?.owner); // prints: { kind: 'provider', provider: 'example', role: 'example pool' }
   * await backend.close();
   * ```
   */
  threads?(): readonly ProviderThread[];
}

/** A thread a provider package's runtime started: its kernel thread id and what it does. */
export interface ProviderThread {
  readonly tid: number;
  /** e.g. `OpenBLAS worker`. */
  readonly role: string;
}
