import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import type { CpuGemmProvider, CpuGeneralContractionProvider, CpuLayoutTransformProvider } from './cpu-providers.js';

/**
 * What a provider package's factory returns (e.g. `createFaerProvider()`): the kind it serves
 * and the slots it fills in that kind's standard bundle, plus typed extensions. Nothing
 * registers itself at import; an application passes packages to `CpuBackend.create`.
 */
export interface CpuProviderPackage {
  /** The backend kind this package provides kernels for. */
  readonly kind: CpuBackendKind;
  /** Diagnostic name (never a dispatch key). */
  readonly name: string;
  readonly gemm?: CpuGemmProvider;
  readonly layoutTransform?: CpuLayoutTransformProvider;
  readonly generalContraction?: CpuGeneralContractionProvider;
  /** Extensions stored in the bundle (e.g. linalg kernels); never interpreted by core. */
  readonly extensions?: readonly (readonly [ExtensionKey<unknown>, unknown])[];
}
