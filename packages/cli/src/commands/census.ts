import { CpuBackend, Tensor, type CensusThread, type CpuProviderPackage, type ThreadCensus } from '@tenferro/core';
import { type LoadedPackage, loadInstalledProviders } from '../installed-providers.js';
import { KNOWN_PACKAGES } from '../known-packages.js';
import type { CliIo } from '../cli-io.js';
import { makeStyle, styleFor, type Style } from '../style.js';

/** `tenferro info --census --json` schema (docs/schemas/census.schema.json). Bump the suffix on any breaking change. */
export const CENSUS_SCHEMA = 'tenferro.census/1';

/** The census document: every thread of the `tenferro` process once a backend of each available kind has run a GEMM. */
export interface CensusReport {
  readonly schema: typeof CENSUS_SCHEMA;
  readonly pid: number;
  readonly takenAt: string;
  /** The backends created for the census (one per available provider kind), or why one failed. */
  readonly backends: readonly ({ readonly kind: string; readonly domainCpus: string | null; readonly providers: string } | { readonly kind: string; readonly error: string })[];
  readonly threads: readonly CensusThread[];
  readonly outsideDomain: readonly number[];
}

/** The kinds whose provider package is installed and available, each with its package. */
function availableKinds(packages: readonly LoadedPackage[]): [string, CpuProviderPackage[] | undefined][] {
  const kinds: [string, CpuProviderPackage[] | undefined][] = [];
  for (const kind of ['faer', 'blas'] as const) {
    const p = packages.find((q) => q.kind === kind && q.status?.available === true);
    const factory = KNOWN_PACKAGES.find((k) => k.name === p?.name)?.factory;
    const create = factory === undefined ? undefined : p?.module?.[factory];
    if (typeof create === 'function') kinds.push([kind, [(create as () => CpuProviderPackage)()]]);
    else if (kind === 'faer') kinds.push([kind, undefined]); // the reference GEMM: the default kind always runs
  }
  return kinds;
}

/**
 * Create a backend of every available kind, run one 64×64 GEMM on each (so that provider runtimes
 * start their threads, as OpenBLAS does when it is loaded), and take the census of the process:
 * per thread the most specific owner any backend knows, flagged when any says it left its domain.
 */
export async function collectCensus(): Promise<CensusReport> {
  const packages = await loadInstalledProviders();
  const backends: CpuBackend[] = [];
  const described: CensusReport['backends'][number][] = [];
  try {
    for (const [kind, providers] of availableKinds(packages)) {
      try {
        const b = await CpuBackend.create({ kind: kind as 'faer' | 'blas', ...(providers === undefined ? {} : { providers }) });
        backends.push(b);
        const a = Tensor.fromArray('f64', [64, 64], Array.from({ length: 64 * 64 }, (_, i) => (i % 7) - 3));
        (await b.matmul(a, a)).dispose();
        const info = b.executionInfo();
        described.push({ kind, domainCpus: info.domainCpus ?? null, providers: info.providerDiagnostic });
      } catch (e) {
        described.push({ kind, error: e instanceof Error ? e.message : String(e) });
      }
    }
    const censuses = backends.map((b) => b.census());
    const merged = mergeCensuses(censuses);
    return { schema: CENSUS_SCHEMA, pid: process.pid, takenAt: merged.takenAt, backends: described, threads: merged.threads, outsideDomain: merged.outsideDomain };
  } finally {
    await Promise.all(backends.map((b) => b.close()));
  }
}

/** One census from several backends' (the same threads, each backend knowing its own). */
function mergeCensuses(censuses: readonly ThreadCensus[]): Pick<ThreadCensus, 'takenAt' | 'threads' | 'outsideDomain'> {
  const last = censuses.at(-1);
  if (last === undefined) return { takenAt: process.hrtime.bigint().toString(), threads: [], outsideDomain: [] };
  const rank = (t: CensusThread) => (t.identifiedBy === 'tenferro' || t.identifiedBy === 'provider' ? 2 : t.identifiedBy === 'unknown' ? 0 : 1);
  const threads = last.threads.map((t) => {
    let best = t;
    for (const c of censuses) {
      const other = c.threads.find((u) => u.tid === t.tid);
      if (other !== undefined && rank(other) > rank(best)) best = other;
    }
    return best;
  });
  return { takenAt: last.takenAt, threads, outsideDomain: threads.filter((t) => t.outsideDomain).map((t) => t.tid) };
}

/** An owner in words. */
export function describeOwner(t: CensusThread): string {
  const o = t.owner;
  switch (o.kind) {
    case 'main':
      return 'main thread';
    case 'engineWorker':
      return `tenferro ${o.backendKind} engine worker (domain ${o.domainId}, lane ${o.lane})`;
    case 'provider':
      return `${o.role} (${o.provider.split(': ')[0]})`;
    case 'libuv':
      return 'libuv thread pool';
    case 'v8Platform':
      return 'V8 platform';
    case 'workerThread':
      return 'worker thread';
    case 'node':
      return `node: ${o.role}`;
    default:
      return 'other (unnamed Node thread: libuv pool, worker thread, …)';
  }
}

/** The human census. */
export function formatCensus(r: CensusReport, style: Style = makeStyle(false)): string {
  const lines = [style.bold(`thread census of pid ${r.pid}`)];
  for (const b of r.backends) lines.push('error' in b ? `  backend ${b.kind}: ${style.red('failed')} — ${b.error}` : `  backend ${b.kind}: domain CPUs ${b.domainCpus ?? 'unpinned'} — ${b.providers}`);
  lines.push(`  ${'tid'.padEnd(8)} ${'name'.padEnd(16)} ${'CPUs'.padEnd(10)} owner`);
  for (const t of r.threads) {
    const flag = t.outsideDomain ? style.yellow(`  OUTSIDE its domain ${t.domainCpus}`) : '';
    lines.push(`  ${String(t.tid).padEnd(8)} ${t.name.padEnd(16)} ${(t.cpus ?? '?').padEnd(10)} ${describeOwner(t)}${t.identifiedBy === 'startupOrder' ? ' (by startup order)' : ''}${flag}`);
  }
  lines.push(
    r.outsideDomain.length === 0
      ? '  every thread tenferro or a provider owns runs inside its domain'
      : style.yellow(`  WARNING: ${r.outsideDomain.length} thread(s) tenferro or a provider owns run outside their domain: ${r.outsideDomain.join(', ')}`),
  );
  return lines.join('\n');
}

/** `tenferro info --census [--json]`. */
export async function censusCommand(options: { readonly json?: boolean }, io: CliIo): Promise<void> {
  const report = await collectCensus();
  io.stdout.write(options.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${formatCensus(report, styleFor(io.stdout, false, io.env))}\n`);
}
