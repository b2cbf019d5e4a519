import { availableParallelism } from 'node:os';
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import type { Coordinator } from '../runtime/engine/coordinator.js';
import type { DomainPlan } from '../runtime/placement.js';
import { CpuSet } from '../topology/cpu-set.js';
import { type ProcessThread, pidMax, processThreads } from '../topology/process-threads.js';

/** Who a thread of the process belongs to, as far as the census can tell. */
export type CensusThreadOwner =
  | { readonly kind: 'main' }
  /** A worker of one of the backend's engines (`lane` k of its pool). */
  | { readonly kind: 'engineWorker'; readonly backendKind: CpuBackendKind; readonly domainId: number; readonly lane: number }
  /** A thread a registered provider package reports (`CpuProviderPackage.threads()`), e.g. OpenBLAS's pool. */
  | { readonly kind: 'provider'; readonly provider: string; readonly role: string }
  /** The libuv thread pool (`fs`, `crypto`, `dns`, native async work). */
  | { readonly kind: 'libuv' }
  /** V8's platform workers (GC, compilation) and Node's delayed-task scheduler. */
  | { readonly kind: 'v8Platform' }
  /** Another `worker_threads` thread (not one of the backend's engine workers). */
  | { readonly kind: 'workerThread' }
  /** A thread of the Node runtime named for another purpose (the inspector's signal thread …). */
  | { readonly kind: 'node'; readonly role: string }
  | { readonly kind: 'other' };

/** One thread of the process in a {@link ThreadCensus}. */
export interface CensusThread {
  readonly tid: number;
  /** The kernel's name for it (`comm`). */
  readonly name: string;
  /** Its CPU mask (cpulist), `null` if it exited while being read. */
  readonly cpus: string | null;
  readonly owner: CensusThreadOwner;
  /**
   * How the owner was found: `tenferro` (an engine's own record), `provider` (the package's
   * report), `process` (the main thread: tid = pid), `name` (the thread's name, as Node ≥ 22
   * sets them), `startupOrder` (Node 20 names no thread: the V8 platform's threads are the first
   * ones after the main thread), or `unknown`.
   */
  readonly identifiedBy: 'tenferro' | 'provider' | 'process' | 'name' | 'startupOrder' | 'unknown';
  /** The CPUs of the domain it belongs to (tenferro's and providers' threads), `null` for others or an unpinned domain. */
  readonly domainCpus: string | null;
  /** Whether its mask has a CPU outside `domainCpus` — a thread tenferro or a provider owns running outside its domain. */
  readonly outsideDomain: boolean;
}

/** `CpuBackend.census()`: every thread of the process, attributed and checked against its domain. */
export interface ThreadCensus {
  readonly pid: number;
  /** `process.hrtime.bigint()` when the census was taken, as a decimal string (JSON-safe). */
  readonly takenAt: string;
  readonly threads: readonly CensusThread[];
  /** The threads flagged `outsideDomain` (tids). */
  readonly outsideDomain: readonly number[];
}

/** What the census knows from one backend handle: its coordinator's engines, its plan and its provider packages. */
export interface CensusSources {
  readonly coordinator: Coordinator;
  readonly plan: DomainPlan;
  readonly providers: readonly CpuProviderPackage[];
}

interface Known {
  readonly owner: CensusThreadOwner;
  readonly identifiedBy: CensusThread['identifiedBy'];
  readonly domain: CpuSet | undefined;
}

/**
 * The census of `/proc/self/task` with owners: the backend's engine workers (their domain's
 * CPUs), threads its provider packages report (the handle's domain: they serve its operations), the
 * main thread, Node's threads by name or — on Node 20, which names none — the V8 platform's by
 * startup order; every other thread is `other`. A thread of tenferro or a provider whose mask
 * leaves its domain is flagged. `procRoot` is for tests.
 */
export function takeThreadCensus(sources: CensusSources | undefined, procRoot?: string): ThreadCensus {
  const known = new Map<number, Known>();
  // A provider's threads serve the operations of this handle: they belong to its domain.
  const providerDomain = sources?.plan.domainCpus;
  for (const engine of sources?.coordinator.builtEngines() ?? []) {
    const domain = engine.domain.admissionMode === 'callerManaged' ? undefined : engine.domain.placement?.cpus;
    engine.workers().forEach((w, lane) => {
      known.set(w.tid, {
        owner: { kind: 'engineWorker', backendKind: sources!.coordinator.kind, domainId: Number(engine.domain.id), lane },
        identifiedBy: 'tenferro',
        domain: w.cpus === undefined ? undefined : domain,
      });
    });
  }
  for (const p of sources?.providers ?? []) {
    const threads = typeof p.threads === 'function' ? p.threads() : [];
    for (const t of threads) {
      if (!known.has(t.tid)) known.set(t.tid, { owner: { kind: 'provider', provider: p.name, role: t.role }, identifiedBy: 'provider', domain: providerDomain });
    }
  }
  const threads = processThreads(procRoot);
  const platform = v8PlatformThreads();
  // Node names its threads (≥ 22) or none of them (20).
  const unnamed = !threads.some((t) => NAMED.some(([pattern]) => pattern.test(t.name)));
  const position = startupPositions(threads, pidMax(procRoot));
  const census = threads.map((t): CensusThread => {
    const k = known.get(t.tid) ?? unowned(t, position.get(t.tid)!, unnamed, platform);
    const outside = k.domain !== undefined && t.cpus !== undefined && !safeParse(t.cpus)?.isSubsetOf(k.domain);
    return Object.freeze({
      tid: t.tid,
      name: t.name,
      cpus: t.cpus ?? null,
      owner: Object.freeze(k.owner),
      identifiedBy: k.identifiedBy,
      domainCpus: k.domain?.toString() ?? null,
      outsideDomain: outside,
    });
  });
  return Object.freeze({
    pid: process.pid,
    takenAt: process.hrtime.bigint().toString(),
    threads: Object.freeze(census),
    outsideDomain: Object.freeze(census.filter((t) => t.outsideDomain).map((t) => t.tid)),
  });
}

/** Names Node gives its threads (Node ≥ 22; Node 20 names them all after the process). */
const NAMED: readonly [RegExp, CensusThreadOwner][] = [
  [/^libuv-worker/i, { kind: 'libuv' }],
  [/^(V8Worker|V8 ?DefaultWorker|DelayedTaskSch)/i, { kind: 'v8Platform' }],
  [/^WorkerThread/i, { kind: 'workerThread' }],
  [/^SignalInspector/i, { kind: 'node', role: 'inspector signal handler' }],
];

function unowned(t: ProcessThread, position: number, unnamed: boolean, platform: number): Known {
  if (t.tid === process.pid) return { owner: { kind: 'main' }, identifiedBy: 'process', domain: undefined };
  for (const [pattern, owner] of NAMED) if (pattern.test(t.name)) return { owner, identifiedBy: 'name', domain: undefined };
  // Node 20 names no thread; its platform starts `--v8-pool-size` workers and a delayed-task
  // scheduler right after the main thread, before any JavaScript runs.
  if (unnamed && position >= 1 && position <= platform) return { owner: { kind: 'v8Platform' }, identifiedBy: 'startupOrder', domain: undefined };
  return { owner: { kind: 'other' }, identifiedBy: 'unknown', domain: undefined };
}

/**
 * Each thread's place in the order the threads started, the main thread first. The kernel hands
 * out thread ids in increasing order, wrapping from `pid_max` to 300: a process started just
 * before a wrap (32,768 by default on many machines, reached in a long CI run) has platform
 * threads with ids *below* its own, so the order is the distance after the main thread's id,
 * modulo `pid_max`.
 */
function startupPositions(threads: readonly { readonly tid: number }[], pidMax: number): Map<number, number> {
  const after = (tid: number) => (((tid - process.pid) % pidMax) + pidMax) % pidMax;
  const ordered = threads.map((t) => t.tid).sort((a, b) => after(a) - after(b));
  return new Map(ordered.map((tid, i) => [tid, i]));
}

/** How many threads Node's platform starts at startup: `--v8-pool-size` workers (default 4) and the delayed-task scheduler. */
function v8PlatformThreads(): number {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  let size = 4;
  for (let i = 0; i < flags.length; i++) {
    const m = /^--v8-pool-size(?:=(\d+))?$/.exec(flags[i]!);
    if (m !== null) size = Number(m[1] ?? flags[i + 1]);
  }
  if (!Number.isInteger(size) || size < 1) size = Math.max(1, availableParallelism() - 1);
  return size + 1;
}

function safeParse(list: string): CpuSet | undefined {
  try {
    return CpuSet.parse(list);
  } catch {
    return undefined;
  }
}
