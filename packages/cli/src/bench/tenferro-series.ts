import { CpuBackend, type CpuProviderPackage, KNOWN_PROVIDER_PACKAGES, TenferroError, Tensor } from '@tenferro/core';
import { isUserInputError } from '../exit-codes.js';
import type { LoadedPackage } from '../installed-providers.js';
import type { BenchPlan, OnCase } from './bench-plan.js';
import { type BenchResult, type BenchSeries, gflopsOf } from './bench-report.js';
import { median, operandValues, timeCalls } from './timing.js';

export interface KindSeries {
  readonly series: BenchSeries;
  /** The thread budget its backend resolved to, when it ran. */
  readonly threadBudget: number | undefined;
}

const unavailable = (kind: 'faer' | 'blas', reason: string): KindSeries => ({
  series: { id: kind, label: `tenferro ${kind}`, available: false, description: null, reason, warnings: [], results: [] },
  threadBudget: undefined,
});

/** The kind's provider package as this CLI finds it, or why it cannot be used. */
function providerFor(kind: 'faer' | 'blas', packages: readonly LoadedPackage[]): CpuProviderPackage | string {
  const known = KNOWN_PROVIDER_PACKAGES.find((k) => k.kind === kind);
  const p = packages.find((q) => q.kind === kind);
  if (known === undefined || p === undefined) return `${known?.name ?? kind} is not installed`;
  const s = p.status;
  if (s !== null && !s.available) return `${p.name} cannot run here: ${s.reasons.join('; ')} (fix: ${s.possibleSolutions.join('; or ')})`;
  const create = known.factory === undefined ? undefined : p.module?.[known.factory];
  if (typeof create !== 'function') return `${p.name} ${p.version} has no ${known.factory ?? 'factory'}()`;
  return (create as () => CpuProviderPackage)();
}

/**
 * `backend.matmul(A, B)` end to end on a backend of this kind with the kind's provider package
 * passed explicitly (so a provider that cannot load is reported, never replaced by core's
 * reference kernels), each output reclaimed after the call so that the pool reuses its memory.
 * A user-input error (e.g. `TENFERRO_NUM_THREADS=abc`) is thrown; anything else makes the series
 * unavailable with the reason.
 */
export async function benchKind(kind: 'faer' | 'blas', packages: readonly LoadedPackage[], plan: BenchPlan, onCase: OnCase): Promise<KindSeries> {
  const provider = providerFor(kind, packages);
  if (typeof provider === 'string') return unavailable(kind, provider);
  let backend: CpuBackend;
  try {
    backend = await CpuBackend.create({ kind, providers: [provider], ...(plan.threads === undefined ? {} : { threads: plan.threads }) });
  } catch (e) {
    if (TenferroError.is(e) && isUserInputError(e.code)) throw e;
    return unavailable(kind, `CpuBackend.create({ kind: '${kind}' }) failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    const info = backend.executionInfo();
    const status = packages.find((q) => q.kind === kind)?.status;
    const results: BenchResult[] = [];
    for (const dtype of plan.dtypes) {
      for (const n of plan.sizes) {
        onCase(`tenferro ${kind} ${dtype} n=${n}`);
        const a = Tensor.fromArray(dtype, [n, n], operandValues(n * n, 1));
        const b = Tensor.fromArray(dtype, [n, n], operandValues(n * n, 2));
        const seconds = await timeCalls(async () => backend.reclaim(await backend.matmul(a, b)), plan.budget);
        const m = median(seconds);
        results.push({ dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: seconds.length });
      }
    }
    // A status name may carry a note after " — " (the warnings, which are listed on their own).
    const description = status?.available ? status.name.split(' — ')[0]! : info.providerDiagnostic;
    const warnings = status?.available ? [...status.warnings] : [];
    return { series: { id: kind, label: `tenferro ${kind}`, available: true, description, reason: null, warnings, results }, threadBudget: info.threadBudget };
  } finally {
    await backend.close();
  }
}
