import { availableParallelism } from 'node:os';
import { CpuBackend, discoverCpuTopology, TenferroError, type CpuExecutionInfo, type CpuProviderPackage, type CpuTopology } from '@tenferro/core';
import { loadOs } from '@tenferro/os';
import { findInstalledProviders, KNOWN_PROVIDER_PACKAGES, type InstalledPackage } from '../installed-providers.js';

/** `tenferro info --json` schema; documented in docs/cli.md. Bump the suffix on any breaking change. */
export const INFO_SCHEMA = 'tenferro.info/1';

export interface InfoReport {
  readonly schema: typeof INFO_SCHEMA;
  readonly node: { readonly version: string; readonly abi: string; readonly platform: string; readonly arch: string };
  readonly osBinding: { readonly available: boolean; readonly path?: string; readonly reason?: string };
  readonly allowedCpus: string;
  readonly allowedCpusSource: string;
  readonly onlineCpus: string | null;
  readonly effectiveCapacity: {
    readonly cpus: number;
    readonly quota: number | null;
    readonly limits: readonly { readonly source: string; readonly cpus: number; readonly detail: string }[];
  };
  readonly availableParallelism: number;
  readonly numa: {
    readonly available: boolean;
    readonly nodes: readonly { readonly id: number; readonly cpus: string; readonly hasMemory: boolean; readonly memoryBytes: number | null }[];
  };
  readonly providers: readonly InstalledPackage[];
  /** The system BLAS as `@tenferro/provider-blas` sees it; `null` when that package is not installed. */
  readonly blas:
    | {
        readonly available: true;
        readonly name: string;
        readonly version: string;
        readonly threadingLayer: string;
        readonly coreType: string | null;
        readonly threads: number;
        readonly libraryPath: string;
        readonly cpuIsa: string | null;
        readonly threadControl: string;
        readonly placementControl: string;
        readonly warnings: readonly string[];
      }
    | { readonly available: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] }
    | null;
  /** What `CpuBackend.create()` resolves to here (its engine is built, verified and closed again), or why it failed. */
  readonly backend:
    | {
        readonly kind: string;
        readonly executionMode: string;
        readonly resolvedPlacement: CpuExecutionInfo['resolvedPlacement'] | null;
        readonly domainId: number;
        readonly domainCpus: string | null;
        readonly workerCount: number;
        readonly threadBudget: number;
        readonly executorAffinity: string;
        readonly providerDiagnostic: string;
        readonly workers: readonly { readonly tid: number; readonly cpus: string | null }[];
      }
    | { readonly error: { readonly code: string; readonly message: string } };
}

export interface CollectInfoOptions {
  readonly sysfsRoot?: string;
  readonly procRoot?: string;
}

export async function collectInfo(options: CollectInfoOptions = {}): Promise<InfoReport> {
  const os = loadOs();
  const topology: CpuTopology = discoverCpuTopology(options);
  const backend = await describeDefaultBackend(options.sysfsRoot === undefined && options.procRoot === undefined ? undefined : topology);
  const blas = await describeBlas();
  return {
    schema: INFO_SCHEMA,
    node: { version: process.version, abi: process.versions.modules, platform: process.platform, arch: process.arch },
    osBinding: os.available ? { available: true, path: os.path } : { available: false, reason: os.reason },
    allowedCpus: topology.allowedCpus.toString(),
    allowedCpusSource: topology.source.allowedCpus,
    onlineCpus: topology.onlineCpus?.toString() ?? null,
    effectiveCapacity: {
      cpus: topology.effectiveCapacity.cpus,
      quota: topology.effectiveCapacity.quota ?? null,
      limits: topology.effectiveCapacity.limits.map((l) => ({ source: l.source, cpus: l.cpus, detail: l.detail })),
    },
    availableParallelism: availableParallelism(),
    numa: {
      available: topology.source.numa === 'sysfs',
      nodes: topology.nodes.map((n) => ({
        id: n.id,
        cpus: n.cpus.toString(),
        hasMemory: n.hasMemory,
        memoryBytes: n.memoryBytes ?? null,
      })),
    },
    providers: findInstalledProviders(),
    blas,
    backend,
  };
}

/** The CLI's own @tenferro/provider-faer (an optional dependency), when it is installed and loads. */
async function faerProviders(): Promise<CpuProviderPackage[] | undefined> {
  try {
    const { createFaerProvider, faerProviderStatus } = await import('@tenferro/provider-faer');
    return faerProviderStatus().available ? [createFaerProvider()] : undefined;
  } catch {
    return undefined;
  }
}

async function describeBlas(): Promise<InfoReport['blas']> {
  let mod: typeof import('@tenferro/provider-blas');
  try {
    mod = await import('@tenferro/provider-blas');
  } catch {
    return null;
  }
  const s = mod.blasProviderStatus();
  if (!s.available) return { available: false, reasons: s.reasons, possibleSolutions: s.possibleSolutions };
  const r = s.runtime;
  return {
    available: true,
    name: r.name,
    version: r.version,
    threadingLayer: r.threadingLayer,
    coreType: r.coreType ?? null,
    threads: r.threads,
    libraryPath: r.libraryRealPath,
    cpuIsa: r.cpuIsa ?? null,
    threadControl: s.capabilities.threadCount,
    placementControl: s.capabilities.placement,
    warnings: s.warnings,
  };
}

async function describeDefaultBackend(topology: CpuTopology | undefined): Promise<InfoReport['backend']> {
  let backend: CpuBackend | undefined;
  try {
    const providers = await faerProviders();
    backend = await CpuBackend.create({ ...(topology === undefined ? {} : { topology }), ...(providers === undefined ? {} : { providers }) });
    const i = backend.executionInfo();
    return {
      kind: i.backendKind,
      executionMode: i.executionMode,
      resolvedPlacement: i.resolvedPlacement ?? null,
      domainId: Number(i.domainId),
      domainCpus: i.domainCpus ?? null,
      workerCount: i.workerCount,
      threadBudget: i.threadBudget,
      executorAffinity: i.executorAffinity,
      providerDiagnostic: i.providerDiagnostic,
      workers: i.workers.map((w) => ({ tid: w.tid, cpus: w.cpus ?? null })),
    };
  } catch (e) {
    return { error: { code: TenferroError.is(e) ? e.code : 'Internal', message: e instanceof Error ? e.message : String(e) } };
  } finally {
    await backend?.close();
  }
}

export function formatInfo(r: InfoReport): string {
  const lines: string[] = [];
  const row = (label: string, value: string) => lines.push(`  ${label.padEnd(22)} ${value}`);
  lines.push('tenferro info');
  row('node', `${r.node.version} (ABI ${r.node.abi}, ${r.node.platform}-${r.node.arch})`);
  row('OS binding', r.osBinding.available ? `loaded (${r.osBinding.path})` : `unavailable — ${r.osBinding.reason}`);
  if (!r.osBinding.available) row('', 'placement: compatibility mode only (no verified worker affinity)');
  lines.push('CPUs');
  row('process affinity', `${r.allowedCpus}  [${r.allowedCpusSource}]`);
  row('online', r.onlineCpus ?? 'unknown');
  row('effective capacity', `${r.effectiveCapacity.cpus} CPU${r.effectiveCapacity.cpus === 1 ? '' : 's'}` +
    (r.effectiveCapacity.quota !== null ? ` (CFS quota ${r.effectiveCapacity.quota} CPUs)` : ''));
  for (const l of r.effectiveCapacity.limits) row(`  ${l.source}`, `${l.cpus} — ${l.detail}`);
  row('os.availableParallelism', String(r.availableParallelism));
  lines.push('NUMA');
  if (!r.numa.available) row('nodes', 'no NUMA information (all-allowed placement only)');
  else if (r.numa.nodes.length === 0) row('nodes', 'none usable with this affinity');
  for (const n of r.numa.nodes) {
    const mem = n.memoryBytes === null ? (n.hasMemory ? 'memory' : 'no memory') : n.hasMemory ? formatBytes(n.memoryBytes) : 'no memory';
    row(`node ${n.id}`, `CPUs ${n.cpus}, ${mem}`);
  }
  lines.push('providers');
  if (r.providers.length === 0) {
    row('installed', `none (known: ${KNOWN_PROVIDER_PACKAGES.join(', ')})`);
  }
  for (const p of r.providers) row(p.name, p.version);
  lines.push('BLAS (@tenferro/provider-blas)');
  if (r.blas === null) row('status', 'package not installed');
  else if (!r.blas.available) {
    row('status', 'unavailable');
    for (const reason of r.blas.reasons) row('  reason', reason);
    for (const fix of r.blas.possibleSolutions) row('  fix', fix);
  } else {
    const b = r.blas;
    row('runtime', `${b.name} ${b.version}`);
    row('threading layer', `${b.threadingLayer}, ${b.threads} thread${b.threads === 1 ? '' : 's'}`);
    row('core type', `${b.coreType ?? 'n/a'} (CPU ISA ${b.cpuIsa ?? 'unknown'})`);
    row('library', b.libraryPath);
    row('thread control', `${b.threadControl} / ${b.placementControl}`);
    for (const w of b.warnings) row('WARNING', w);
  }
  lines.push('CpuBackend.create()');
  if ('error' in r.backend) {
    row('fails with', `${r.backend.error.code}: ${r.backend.error.message}`);
  } else {
    const b = r.backend;
    row('kind', b.kind);
    row('execution mode', b.executionMode);
    row('domain', `${b.domainId} (CPUs ${b.domainCpus ?? 'unpinned'})`);
    row('workers', `${b.workerCount} (thread budget ${b.threadBudget}, affinity ${b.executorAffinity})`);
    for (const w of b.workers) row(`  tid ${w.tid}`, w.cpus === null ? 'unpinned' : `pinned to ${w.cpus}`);
    row('providers', b.providerDiagnostic);
  }
  return lines.join('\n');
}

function formatBytes(n: number): string {
  const gib = n / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(0)} MiB`;
}

export function describeError(error: unknown): string {
  if (TenferroError.is(error)) return `tenferro: ${error.message} [${error.code}]`;
  return `tenferro: ${error instanceof Error ? error.message : String(error)}`;
}
