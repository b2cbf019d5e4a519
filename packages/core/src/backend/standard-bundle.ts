import type { CpuBackendKind } from '../contract/backend-kind.js';
import { TenferroError } from '../errors/tenferro-error.js';
import { validateBundleForDomain } from '../provider/bundle-validation.js';
import { type CapabilityPolicy, CpuProviderBundle } from '../provider/provider-bundle.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { providerPackageOf } from '../provider/provider-packages.js';
import type { Coordinator } from '../runtime/engine/coordinator.js';

/**
 * The standard bundle of a kind (R50, R54): built-in slots, replaced by those of the provider
 * packages passed for that kind or for `'any'` kind; blas uses the provider-default-compatibility policy.
 */
export function standardBundle(kind: CpuBackendKind, providers: readonly CpuProviderPackage[], policy?: CapabilityPolicy): CpuProviderBundle {
  const builder = CpuProviderBundle.builder(kind);
  builder.capabilityPolicy(policy ?? (kind === 'blas' ? 'providerDefaultCompatibility' : 'strict'));
  for (const p of providers) {
    if (p.kind !== kind && p.kind !== 'any') continue;
    if (p.gemm !== undefined) {
      builder.gemmProvider(p.gemm);
      if (p.engineOuterGroupedGemm === true) builder.engineOuterGroupedGemm();
    }
    if (p.layoutTransform !== undefined) builder.layoutTransformProvider(p.layoutTransform);
    if (p.generalContraction !== undefined) builder.preferGeneralContractionProvider(p.generalContraction);
    if (p.tensorPrimitives !== undefined) builder.tensorPrimitivesProvider(p.tensorPrimitives);
    for (const [key, value] of p.extensions ?? []) builder.extension(key, value);
  }
  return builder.build();
}

/** The blas kind has no built-in kernels: its provider package must be there (`BackendKindUnavailable`). */
export function assertKindAvailable(kind: CpuBackendKind, providers: readonly CpuProviderPackage[], op: string): void {
  if (kind === 'blas' && !providers.some((p) => p.kind === 'blas')) {
    const { name, factory } = providerPackageOf('blas');
    throw new TenferroError('BackendKindUnavailable', `the 'blas' kind needs ${name}: install it (it is then found by CpuBackend.create) or pass providers: [${factory}()]`, {
      op,
      detail: { kind: 'blas', package: name },
    });
  }
}

/**
 * Validate `bundle` against every domain `coordinator` can reach (R60) — and refuse a GEMM
 * provider of the BLAS family (what it declares, not the bundle's kind) on caller-managed
 * domains first (R47, R57).
 */
export function validateBundle(coordinator: Coordinator, bundle: CpuProviderBundle, op: string): void {
  for (const d of coordinator.reachableDomains()) {
    if (d.admissionMode === 'callerManaged' && bundle.gemmFamily === 'blas') {
      const cause = new TenferroError('CallerManagedBlasUnsupported', 'the BLAS family cannot be confined to a caller-managed executor', { op });
      throw new TenferroError('IncompatibleDomain', `the bundle cannot run on caller-managed domain ${String(d.id)}: ${cause.message}`, {
        op,
        cause,
        detail: { domainId: d.id, slot: 'gemm', reason: cause.code },
      });
    }
    validateBundleForDomain(bundle, d, op);
  }
}
