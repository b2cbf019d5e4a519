import { availableParallelism } from 'node:os';
import {
  CpuBackend,
  discoverCpuTopology,
  TenferroError,
  hugePagePolicy,
  machineArbiter,
  processArbiter,
  type CpuBackendKind,
  type MachineArbiterCensus,
  type CpuExecutionInfo,
  type CpuProviderPackage,
  type CpuTopology,
  type ProviderPackageStatus,
} from '@tenferro/core';
import { loadOs } from '@tenferro/os';
import { KNOWN_PACKAGES } from '../known-packages.js';
import { type InstalledPackage, type LoadedPackage, loadInstalledProviders } from '../installed-providers.js';
import type { CliIo } from '../cli-io.js';
import { isUserInputError } from '../describe-error.js';
import { EXIT } from '../exit-codes.js';
import { makeStyle, styleFor, type Style } from '../style.js';
import { describeOwner } from './census.js';

/** `tenferro info --json` schema; documented in docs/cli.md. Bump the suffix on any breaking change. */
export const INFO_SCHEMA = 'tenferro.info/2';


/** An installed provider package and what its `status()` says (`null`: the installed version has no `status()`). */
export interface ProviderReport extends InstalledPackage {
  readonly status: ProviderPackageStatus | null;
}

export interface InfoReport {
  readonly schema: typeof INFO_SCHEMA;
  readonly node: { readonly version: string; readonly abi: string; readonly platform: string; readonly arch: string };
  readonly osBinding:
    | { readonly available: true; readonly path: string }
    | { readonly available: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] };
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
  /**
   * Large fresh storage (#38): the kernel's transparent-huge-page mode and defrag mode, whether
   * tenferro places storage of 2 MiB or more on a huge-page boundary and advises it
   * (`MADV_HUGEPAGE`), whether it pre-faults fresh outputs, and why not (core's `hugePagePolicy()`).
   */
  readonly memory: {
    readonly thp: string;
    readonly defrag: string;
    readonly hugePagePlacement: boolean;
    readonly hugePageAdvice: boolean;
    readonly prefault: boolean;
    readonly reason: string | null;
  };
  /** Every package of the CLI's `KNOWN_PACKAGES` installed here, with its `status()`. */
  readonly providers: readonly ProviderReport[];
  /** What `CpuBackend.create()` resolves to here (its engine is built, verified and closed again), or why it failed. */
  readonly backend:
    | {
        readonly kind: string;
        /** Why the default kind is not faer (faer's package is not installed or unavailable here, #36), else `null`. */
        readonly kindReason: string | null;
        readonly executionMode: string;
        readonly resolvedPlacement: CpuExecutionInfo['resolvedPlacement'] | null;
        readonly domainId: number;
        readonly domainCpus: string | null;
        readonly workerCount: number;
        readonly threadBudget: number;
        readonly executorAffinity: string;
        readonly providerDiagnostic: string;
        /** `'machine'`: one arbiter for every process that joined it (#41); `'process'`: one arbiter for every worker_thread isolate of the process; `'isolate'`: this isolate only (no os binding). */
        readonly arbiter: 'machine' | 'process' | 'isolate';
        readonly workers: readonly { readonly tid: number; readonly cpus: string | null }[];
        /** Threads of tenferro or a provider whose CPU mask leaves their domain (`CpuBackend.census()`; `tenferro info --census` lists every thread). */
        readonly threadsOutsideDomain: readonly { readonly tid: number; readonly owner: string; readonly cpus: string | null; readonly domainCpus: string | null }[];
      }
    | { readonly error: { readonly code: string; readonly message: string } };
  /**
   * The machine arbiter this process joined (`TENFERRO_MACHINE_ARBITER`, #41): its name, how many
   * live processes joined it, and those that hold or wait for permits (pid, CPUs, since when, ms
   * since the epoch); `null` when not joined. `--census` keeps its meaning (this process's threads).
   */
  readonly machineArbiter: MachineArbiterCensus | null;
}

export interface CollectInfoOptions {
  readonly sysfsRoot?: string;
  readonly procRoot?: string;
}

export async function collectInfo(options: CollectInfoOptions = {}): Promise<InfoReport> {
  const os = loadOs();
  const topology: CpuTopology = discoverCpuTopology(options);
  const packages = await loadInstalledProviders();
  const backend = await describeDefaultBackend(options.sysfsRoot === undefined && options.procRoot === undefined ? undefined : topology, packages);
  return {
    schema: INFO_SCHEMA,
    node: { version: process.version, abi: process.versions.modules, platform: process.platform, arch: process.arch },
    osBinding: os.available ? { available: true, path: os.path } : { available: false, reasons: os.reasons, possibleSolutions: os.possibleSolutions },
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
    memory: memoryReport(),
    providers: packages.map(({ name, version, path, kind, status }) => ({ name, version, path, kind, status })),
    backend,
    machineArbiter: machineArbiterReport(),
  };
}

/** The joined machine arbiter's census, or null (not joined, or joining failed — the backend row says why). */
function machineArbiterReport(): MachineArbiterCensus | null {
  try {
    return processArbiter().kind === 'machine' ? machineArbiter().census() : null;
  } catch {
    return null;
  }
}

function memoryReport(): InfoReport['memory'] {
  const p = hugePagePolicy();
  return { thp: p.thp, defrag: p.defrag, hugePagePlacement: p.placement, hugePageAdvice: p.advice, prefault: p.prefault, reason: p.reason === '' ? null : p.reason };
}

/**
 * What `CpuBackend.create()` without `kind` picks (R40 as #36 amends it), from the provider
 * packages as this CLI finds them (core's own discovery looks from core and the current directory,
 * which may not see the CLI's optional dependencies): faer when its package is available, else
 * blas when its package is available (with faer's failure as the reason), else nothing passed —
 * core's own discovery decides (and warns).
 */
function defaultKindOptions(packages: readonly LoadedPackage[]): { readonly kind?: CpuBackendKind; readonly providers?: CpuProviderPackage[]; readonly kindReason: string | null } {
  const usable = (kind: CpuBackendKind): CpuProviderPackage | undefined => {
    const p = packages.find((q) => q.kind === kind && q.status?.available === true);
    const factory = KNOWN_PACKAGES.find((k) => k.name === p?.name)?.factory;
    const create = factory === undefined ? undefined : p?.module?.[factory];
    return typeof create === 'function' ? (create as () => CpuProviderPackage)() : undefined;
  };
  const faer = usable('faer');
  if (faer !== undefined) return { providers: [faer], kindReason: null };
  const blas = usable('blas');
  if (blas === undefined) return { kindReason: null };
  const faerName = KNOWN_PACKAGES.find((k) => k.kind === 'faer')?.name ?? 'the faer package';
  const faerStatus = packages.find((q) => q.kind === 'faer')?.status;
  const why = faerStatus === undefined ? 'is not installed' : faerStatus === null || faerStatus.available ? 'cannot be used' : `is unavailable: ${faerStatus.reasons.join('; ')}`;
  return { kind: 'blas', providers: [blas], kindReason: `${faerName} ${why}` };
}

async function describeDefaultBackend(topology: CpuTopology | undefined, packages: readonly LoadedPackage[]): Promise<InfoReport['backend']> {
  let backend: CpuBackend | undefined;
  try {
    const { kindReason, ...chosen } = defaultKindOptions(packages);
    backend = await CpuBackend.create({ ...(topology === undefined ? {} : { topology }), ...chosen });
    const i = backend.executionInfo();
    return {
      kind: i.backendKind,
      kindReason,
      executionMode: i.executionMode,
      resolvedPlacement: i.resolvedPlacement ?? null,
      domainId: Number(i.domainId),
      domainCpus: i.domainCpus ?? null,
      workerCount: i.workerCount,
      threadBudget: i.threadBudget,
      executorAffinity: i.executorAffinity,
      providerDiagnostic: i.providerDiagnostic,
      arbiter: i.arbiter,
      workers: i.workers.map((w) => ({ tid: w.tid, cpus: w.cpus ?? null })),
      threadsOutsideDomain: backend
        .census()
        .threads.filter((t) => t.outsideDomain)
        .map((t) => ({ tid: t.tid, owner: describeOwner(t), cpus: t.cpus, domainCpus: t.domainCpus })),
    };
  } catch (e) {
    return { error: { code: TenferroError.is(e) ? e.code : 'Internal', message: e instanceof Error ? e.message : String(e) } };
  } finally {
    await backend?.close();
  }
}

/** The human report; `style` colours it (plain by default). */
export function formatInfo(r: InfoReport, style: Style = makeStyle(false)): string {
  const lines: string[] = [];
  const row = (label: string, value: string, paint: (s: string) => string = (x) => x) => lines.push(`  ${paint(label.padEnd(22))} ${value}`);
  const section = (title: string) => lines.push(style.bold(title));
  section('tenferro info');
  row('node', `${r.node.version} (ABI ${r.node.abi}, ${r.node.platform}-${r.node.arch})`);
  if (r.osBinding.available) row('OS binding', `loaded (${r.osBinding.path})`);
  else {
    row('OS binding', style.red('unavailable') + ' — placement: compatibility mode only (no verified worker affinity)');
    unavailableRows(row, r.osBinding);
  }
  section('CPUs');
  row('process affinity', `${r.allowedCpus}  [${r.allowedCpusSource}]`);
  row('online', r.onlineCpus ?? 'unknown');
  row('effective capacity', `${r.effectiveCapacity.cpus} CPU${r.effectiveCapacity.cpus === 1 ? '' : 's'}` +
    (r.effectiveCapacity.quota !== null ? ` (CFS quota ${r.effectiveCapacity.quota} CPUs)` : ''));
  for (const l of r.effectiveCapacity.limits) row(`  ${l.source}`, `${l.cpus} — ${l.detail}`);
  row('os.availableParallelism', String(r.availableParallelism));
  section('NUMA');
  if (!r.numa.available) row('nodes', 'no NUMA information (all-allowed placement only)');
  else if (r.numa.nodes.length === 0) row('nodes', 'none usable with this affinity');
  for (const n of r.numa.nodes) {
    const mem = n.memoryBytes === null ? (n.hasMemory ? 'memory' : 'no memory') : n.hasMemory ? formatBytes(n.memoryBytes) : 'no memory';
    row(`node ${n.id}`, `CPUs ${n.cpus}, ${mem}`);
  }
  section('memory');
  const m = r.memory;
  row('transparent huge pages', `${m.thp} (defrag ${m.defrag})`);
  row(
    'huge pages',
    m.hugePageAdvice
      ? 'advised: storage of 2 MiB or more starts on a 2 MiB boundary, madvise(MADV_HUGEPAGE) applied'
      : m.hugePagePlacement
        ? 'placed: storage of 2 MiB or more starts on a 2 MiB boundary (THP always: no advice needed)'
        : `not applied — ${m.reason ?? 'off'}`,
    m.hugePagePlacement ? undefined : style.yellow,
  );
  row('pre-faulting', m.prefault ? 'on: fresh outputs of 4 MiB or more on backends of 2+ threads (TENFERRO_PREFAULT=0 turns it off)' : 'off (TENFERRO_PREFAULT=0)');
  section('providers');
  if (r.providers.length === 0) {
    row('installed', `none (known: ${KNOWN_PACKAGES.map((k) => k.name).join(', ')})`);
  }
  for (const p of r.providers) {
    const s = p.status;
    row(p.name, `${p.version} — ${s === null ? 'no status() in this version' : s.available ? style.green('available') : style.red('unavailable')}`);
    if (s === null) continue;
    if (!s.available) {
      unavailableRows(row, s);
      continue;
    }
    for (const [key, value] of Object.entries(s.details)) row(`  ${words(key)}`, value === null ? 'n/a' : typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value));
    for (const w of s.warnings) row('  WARNING', w, style.yellow);
    if (s.addonPath !== undefined) row('  addon', s.addonPath);
  }
  section('CpuBackend.create()');
  if ('error' in r.backend) {
    row('fails with', `${style.red(r.backend.error.code)}: ${r.backend.error.message}`);
  } else {
    const b = r.backend;
    row('kind', b.kindReason === null ? b.kind : `${b.kind} (the default: ${b.kindReason})`, b.kindReason === null ? undefined : style.yellow);
    row('execution mode', b.executionMode);
    row('domain', `${b.domainId} (CPUs ${b.domainCpus ?? 'unpinned'})`);
    row('workers', `${b.workerCount} (thread budget ${b.threadBudget}, affinity ${b.executorAffinity})`);
    for (const w of b.workers) row(`  tid ${w.tid}`, w.cpus === null ? 'unpinned' : `pinned to ${w.cpus}`);
    row('providers', b.providerDiagnostic);
    row(
      'arbiter',
      b.arbiter === 'machine'
        ? 'machine (one for every process that joined it: backends in joined processes never overlap)'
        : b.arbiter === 'process'
        ? 'process (one for every worker_thread isolate: backends in workers never overlap)'
        : style.yellow('isolate') + ' (this isolate only: exclusion across worker_threads isolates is NOT enforced — backends in other worker_threads may run on the same CPUs; load the OS binding)',
    );
    if (b.threadsOutsideDomain.length === 0) row('thread masks', 'every thread of tenferro and its providers inside its domain (tenferro info --census lists all)');
    for (const t of b.threadsOutsideDomain) {
      row('  WARNING', `tid ${t.tid} (${t.owner}) runs on CPUs ${t.cpus ?? '?'}, outside its domain ${t.domainCpus ?? '?'}`, style.yellow);
    }
  }
  section('machine arbiter');
  const ma = r.machineArbiter;
  if (ma === null) row('joined', 'no (TENFERRO_MACHINE_ARBITER unset: this process arbitrates alone)');
  else {
    row('joined', `${ma.name} (/dev/shm/tenferro-${ma.name}), ${ma.joined} live process${ma.joined === 1 ? '' : 'es'}`);
    if (ma.processes.length === 0) row('permits', 'none held or waited for');
    const what = (e: { readonly cpus: readonly number[]; readonly exclusive: boolean; readonly since: number }) =>
      `${e.exclusive ? 'provider-exclusive' : `CPUs ${e.cpus.join(',')}`} since ${new Date(e.since).toISOString()}`;
    for (const p of ma.processes) {
      for (const h of p.holds) row(`  pid ${p.pid}`, `holds ${what(h)}`);
      for (const w of p.waits) row(`  pid ${p.pid}`, `waits for ${what(w)}`);
    }
  }
  return lines.join('\n');
}

function unavailableRows(row: (label: string, value: string) => void, s: { readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] }): void {
  for (const reason of s.reasons) row('  reason', reason);
  for (const fix of s.possibleSolutions) row('  fix', fix);
}

/** A details key as words: `threadingLayer` → `threading layer`. */
function words(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

function formatBytes(n: number): string {
  const gib = n / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(0)} MiB`;
}

/**
 * `tenferro info [--json]`: print the report. When the backend cannot be created because of
 * something the user set (an `InvalidArgument` such as `TENFERRO_NUM_THREADS=abc`), the report is
 * still printed, the error goes to stderr too, and the exit code is 1.
 */
export async function infoCommand(options: { readonly json?: boolean }, io: CliIo): Promise<void> {
  const report = await collectInfo();
  const json = options.json === true;
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : `${formatInfo(report, styleFor(io.stdout, false, io.env))}\n`);
  if ('error' in report.backend && isUserInputError(report.backend.error.code)) {
    io.stderr.write(`tenferro: ${report.backend.error.message} [${report.backend.error.code}]\n`);
    io.exitCode = EXIT.failure;
  }
}
