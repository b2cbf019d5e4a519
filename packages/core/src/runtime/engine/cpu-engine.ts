import { type ExecutionOwner, ownerSlot } from '../../arbiter/execution-owner.js';
import { BufferPool } from '../../buffer/buffer-pool.js';
import type { PoolLimit } from '../../buffer/pool-limit.js';
import { GemmAnalysisCache } from '../../contraction/gemm-analysis-cache.js';
import { IndexedPlanCache } from '../../util/indexed-plan-cache.js';
import { TenferroError } from '../../errors/tenferro-error.js';
import { waitForTurn } from '../../util/abort-listeners.js';
import type { CpuDomainExecutor, CpuDomainExecutorCapabilities } from '../../contract/executor.js';
import type { WorkerObservation } from '../workers/engine-worker.js';
import { EngineWorkerPool } from '../workers/engine-worker-pool.js';
import type { KernelRef } from '../../contract/kernel.js';
import { ManagedExecutor } from '../executors/managed-executor.js';
import { EngineState } from '../workers/shared-fields.js';
import type { LaneRunner } from '../../contract/worker-pool.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import type { CpuDomain } from '../../contract/cpu-domain.js';

/**
 * An engine: one resource domain, its executor, its resources (buffer pool, analysis cache)
 * and its shared execution-scope record — an `Int32Array` over a `SharedArrayBuffer` that
 * every worker running the domain's kernels consults on a nested entry (R23, R91). For a
 * caller-managed domain the same record is the admission guard (R43). Engines belong to a
 * coordinator and are shared by every clone of a backend (R1).
 */
export class CpuEngine implements LaneRunner {
  readonly domain: CpuDomain;
  readonly executor: CpuDomainExecutor;
  /** The executor's capabilities, sampled once when the engine was built. */
  readonly capabilities: CpuDomainExecutorCapabilities;
  /** Executor entries made through operation entries (R69, R84): diagnostics and tests. */
  readonly entries = { installs: 0, submits: 0 };
  /** Pooled temporaries (canonical operands), shared by every clone (R1, R111). */
  readonly bufferPool: BufferPool;
  /** GEMM analyses in caller-addressed slots (R116). */
  readonly analysisCache = new GemmAnalysisCache();
  /** Plans of strided operations providers made here (R118); limits set by the coordinator. */
  readonly indexedPlans = new IndexedPlanCache();
  readonly state: Int32Array;
  readonly #pool: EngineWorkerPool | undefined;
  /**
   * Top-level claims waiting for this engine's caller-managed guard, in call order: one queue per
   * guard record, shared by every engine over the same record — two backends or two domains on one
   * executor (#35, R43) — so any release hands over to the longest waiter, whichever handle it came from.
   */
  readonly #claims: GuardClaim[];

  private constructor(
    domain: CpuDomain,
    executor: CpuDomainExecutor,
    capabilities: CpuDomainExecutorCapabilities,
    pool: EngineWorkerPool | undefined,
    state: Int32Array,
    limit: PoolLimit,
  ) {
    this.domain = domain;
    this.executor = executor;
    this.capabilities = capabilities;
    this.#pool = pool;
    this.state = state;
    this.bufferPool = new BufferPool(limit);
    const record = state.buffer as SharedArrayBuffer;
    let claims = guardQueues.get(record);
    if (claims === undefined) guardQueues.set(record, (claims = []));
    this.#claims = claims;
  }

  /**
   * Build a tenferro-managed engine for `domain`: `domain.threadBudget` workers pinned to `cpus`
   * and verified (or unpinned when `cpus` is undefined). `processCpus`: the CPUs the process may
   * use (the topology's effective capacity), which decides when the main thread may watch a
   * task's end from a CPU of its own (`early-wake.ts`).
   */
  static async managed(domain: CpuDomain, cpus: CpuSet | undefined, limit: PoolLimit, processCpus?: number): Promise<CpuEngine> {
    const pool = await EngineWorkerPool.create({ cpus, workerCount: domain.threadBudget, processCpus });
    const executor = new ManagedExecutor(pool, cpus !== undefined);
    return new CpuEngine({ ...domain, threadBudget: pool.workerCount }, executor, executor.capabilities(), pool, pool.engineState, limit);
  }

  /** An engine over an executor the application owns (external domains): tenferro never builds or shuts it down. */
  static external(domain: CpuDomain, executor: CpuDomainExecutor, capabilities: CpuDomainExecutorCapabilities, limit: PoolLimit): CpuEngine {
    const record = executor.scopeRecord?.() ?? executorRecord(executor);
    return new CpuEngine(domain, executor, capabilities, undefined, new Int32Array(record), limit);
  }

  get workerCount(): number {
    return this.capabilities.workerCount;
  }

  /** Run a kernel task on `lane` through the executor (the engine's lane runner). */
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads = 1, spawnsThreads = false): Promise<R> {
    const scope = this.state.buffer as SharedArrayBuffer;
    // The field only when set: a task of an executor the application wrote looks as before.
    return this.executor.runKernel(spawnsThreads ? { kernel, payload, lane, scope, op, threads, spawnsThreadsOnFirstUse: true } : { kernel, payload, lane, scope, op, threads });
  }

  /**
   * An execution on this engine must wait for CPUs another holds: if none of this engine's runs,
   * its workers stop spinning for a next task that cannot come before the holder is done, instead
   * of taking CPU time from the holder's lanes (#41; two joined processes streaming n = 64 matmuls
   * on the same CPUs gained within the noise of a shared machine, see docs/performance.md). While
   * one of its own executions runs, the workers keep spinning: the waiter is likely its next task
   * (a `Promise.all` on one backend).
   */
  parkIdleWorkers(): void {
    if (this.#pool !== undefined && Atomics.load(this.state, EngineState.ACTIVE_OWNER) === 0) this.#pool.parkSpinning();
  }

  /** What each worker reported at verification; empty for external executors. */
  workers(): WorkerObservation[] {
    return this.#pool?.observations() ?? [];
  }

  get pool(): EngineWorkerPool | undefined {
    return this.#pool;
  }

  /**
   * Record `owner` as the active owner (R91, R94): one store, whatever the pool size. The same
   * owner nests by depth; a different owner while active is an invariant violation (admission
   * guarantees it cannot happen).
   */
  markActive(owner: ExecutionOwner, op: string): void {
    const s = this.state;
    const slot = ownerSlot(owner);
    const active = Atomics.compareExchange(s, EngineState.ACTIVE_OWNER, 0, slot);
    if (active === 0) {
      Atomics.store(s, EngineState.DEPTH, 1);
    } else if (active === slot) {
      Atomics.add(s, EngineState.DEPTH, 1);
    } else {
      throw new TenferroError('Internal', `engine ${String(this.domain.id)} is active for owner slot ${active}, not ${slot}`, { op });
    }
  }

  markInactive(owner: ExecutionOwner): void {
    const s = this.state;
    if (Atomics.load(s, EngineState.ACTIVE_OWNER) !== ownerSlot(owner)) return;
    if (Atomics.sub(s, EngineState.DEPTH, 1) === 1) Atomics.store(s, EngineState.ACTIVE_OWNER, 0);
  }

  /**
   * The caller-managed admission guard (R43): claim the domain for `owner` unless it is active.
   * Shared with the executor's workers, so a second entry from any of them is seen too.
   */
  tryClaim(owner: ExecutionOwner): boolean {
    if (Atomics.compareExchange(this.state, EngineState.ACTIVE_OWNER, 0, ownerSlot(owner)) !== 0) return false;
    Atomics.store(this.state, EngineState.DEPTH, 1);
    return true;
  }

  /**
   * Release the guard held by `owner` — wholly: an operation that began inside a session on this
   * domain and still waits on the application's promises holds no part of it once the session's
   * execution ended (#35) — and hand the domain straight to the longest queued claim of the guard.
   */
  release(owner: ExecutionOwner): void {
    const s = this.state;
    if (Atomics.load(s, EngineState.ACTIVE_OWNER) === ownerSlot(owner)) {
      Atomics.store(s, EngineState.DEPTH, 0);
      Atomics.store(s, EngineState.ACTIVE_OWNER, 0);
    }
    const next = this.#claims[0];
    if (next !== undefined && this.tryClaim(next.owner)) {
      this.#claims.shift();
      next.resume();
    }
  }

  /**
   * Claim the caller-managed guard for `owner`, waiting in call order behind the running
   * execution: a top-level call from the main isolate queues, as it does on a managed domain
   * (an amendment of R43 for Node; entry from inside a running execution is rejected before this).
   */
  claim(owner: ExecutionOwner, signal: AbortSignal | undefined, op: string): Promise<void> {
    if (this.#claims.length === 0 && this.tryClaim(owner)) return Promise.resolve();
    return waitForTurn(
      this.#claims,
      (resume) => ({ owner, resume }),
      signal,
      () => new TenferroError('AdmissionAborted', 'the operation was aborted while it waited for the caller-managed domain', { op, cause: signal?.reason }),
    );
  }

  /** Shut down what tenferro owns: its own pool, never an external executor (R44). */
  async close(): Promise<void> {
    this.bufferPool.close();
    await this.#pool?.close();
  }
}

/** A top-level claim waiting for a caller-managed guard. */
interface GuardClaim {
  readonly owner: ExecutionOwner;
  readonly resume: () => void;
}

/** The wait queue of each caller-managed guard, by its record (#35, R43). */
const guardQueues = new WeakMap<SharedArrayBuffer, GuardClaim[]>();

/** The guard record of an executor that offers none of its own: one per executor, so every engine over it shares the guard. */
const executorRecords = new WeakMap<CpuDomainExecutor, SharedArrayBuffer>();

function executorRecord(executor: CpuDomainExecutor): SharedArrayBuffer {
  let record = executorRecords.get(executor);
  if (record === undefined) executorRecords.set(executor, (record = new SharedArrayBuffer(EngineState.LENGTH * Int32Array.BYTES_PER_ELEMENT)));
  return record;
}
