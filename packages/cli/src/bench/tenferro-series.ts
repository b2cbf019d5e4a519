import { CpuBackend, type CpuProviderPackage, TenferroError, Tensor } from '@tenferro/core';
import { KNOWN_PACKAGES } from '../known-packages.js';
import { isUserInputError } from '../describe-error.js';
import type { LoadedPackage } from '../installed-providers.js';
import { gflopsOf } from './bench-report.js';
import { notMeasured, type SeriesRunner } from './series-runner.js';
import { median, operandValues, timeCalls } from './timing.js';

export type TenferroKind = 'faer' | 'blas';

/** The kind's provider package as this CLI finds it, or why it cannot be used. */
function providerFor(kind: TenferroKind, packages: readonly LoadedPackage[]): CpuProviderPackage | string {
  const known = KNOWN_PACKAGES.find((k) => k.kind === kind);
  const p = packages.find((q) => q.kind === kind);
  if (known === undefined || p === undefined) return `${known?.name ?? kind} is not installed`;
  const s = p.status;
  if (s !== null && !s.available) return `${p.name} cannot run here: ${s.reasons.join('; ')} (fix: ${s.possibleSolutions.join('; or ')})`;
  const create = known.factory === undefined ? undefined : p.module?.[known.factory];
  if (typeof create !== 'function') return `${p.name} ${p.version} has no ${known.factory ?? 'factory'}()`;
  return (create as () => CpuProviderPackage)();
}

export interface OpenedKind {
  readonly runner: SeriesRunner;
  /** The thread budget its backend resolved to. */
  readonly threadBudget: number;
}

/**
 * A backend of this kind with the kind's provider package passed explicitly (so a provider that
 * cannot load is reported, never replaced by core's reference kernels). Each case times
 * `backend.matmul(A, B)` end to end, reclaiming each output after the call so that the pool
 * reuses its memory. A user-input error (e.g. `TENFERRO_NUM_THREADS=abc`) is thrown; any other
 * failure to open makes the series "not measured" with the reason.
 */
export async function openKind(kind: TenferroKind, packages: readonly LoadedPackage[], threads: number | undefined) {
  const label = `tenferro ${kind}`;
  const provider = providerFor(kind, packages);
  if (typeof provider === 'string') return notMeasured(kind, label, provider);
  let backend: CpuBackend;
  try {
    backend = await CpuBackend.create({ kind, providers: [provider], ...(threads === undefined ? {} : { threads }) });
  } catch (e) {
    if (TenferroError.is(e) && isUserInputError(e.code)) throw e;
    return notMeasured(kind, label, `CpuBackend.create({ kind: '${kind}' }) failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const info = backend.executionInfo();
  const status = packages.find((q) => q.kind === kind)?.status;
  const runner: SeriesRunner = {
    id: kind,
    label,
    // A status name may carry a note after " — " (the warnings, which are listed on their own).
    description: () => (status?.available ? status.name.split(' — ')[0]! : info.providerDiagnostic),
    warnings: status?.available ? [...status.warnings] : [],
    failSoft: false,
    async measure(dtype, n, budget) {
      const a = Tensor.fromArray(dtype, [n, n], operandValues(n * n, 1));
      const b = Tensor.fromArray(dtype, [n, n], operandValues(n * n, 2));
      const seconds = await timeCalls(async () => backend.reclaim(await backend.matmul(a, b)), budget);
      const m = median(seconds);
      return { dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: seconds.length };
    },
    close: () => backend.close(),
  };
  return { runner, threadBudget: info.threadBudget } satisfies OpenedKind;
}
