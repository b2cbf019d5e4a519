import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { referenceLayoutProvider } from '../provider/reference/reference-providers.js';
import { referenceTensorPrimitivesProvider } from '../provider/reference/reference-tensor-primitives.js';
import { providerPackageOf } from '../provider/provider-packages.js';

let warned = false;

/**
 * Never silently slow: the first time an operation runs a tensor primitive or a layout transform
 * on core's TypeScript reference provider because the bundle has no native one (no
 * `@tenferro/provider-tprims`), the process is told once (`TENFERRO_PRIMITIVE_REFERENCE`) with the
 * fix. A native provider's decline is reported separately (`TENFERRO_PRIMITIVE_FALLBACK`).
 */
export function warnIfReference(bundle: CpuProviderBundle, slot: ProviderSlot, op: string): void {
  if (warned) return;
  const reference =
    (slot === 'tensorPrimitives' && bundle.tensorPrimitives === referenceTensorPrimitivesProvider) ||
    (slot === 'layoutTransform' && bundle.layoutTransform === referenceLayoutProvider);
  if (!reference) return;
  warned = true;
  const tprims = providerPackageOf('any');
  process.emitWarning(
    `${op} runs on core's TypeScript reference ${slot === 'layoutTransform' ? 'layout transform' : 'tensor primitives'} (sequential, 10–100× slower than native kernels): no native provider of the ${slot} slot is installed. Possible solution: npm install ${tprims.name} (found automatically by CpuBackend.create without providers; else pass ${tprims.factory}() in providers)`,
    { type: 'TenferroWarning', code: 'TENFERRO_PRIMITIVE_REFERENCE' },
  );
}

/** Test seam: forget that the warning was emitted. @internal */
export function resetReferenceWarningForTests(): void {
  warned = false;
}
