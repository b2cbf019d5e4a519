import type { ExecutionOwner } from '../arbiter/resource-arbiter.js';
import { BufferPool } from '../buffer/buffer-pool.js';
import type { PoolLimit } from '../buffer/pool-limit.js';
import { GemmAnalysisCache } from '../contraction/gemm-analysis-cache.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuDomainExecutor } from '../executor/cpu-domain-executor.js';
import type { WorkerObservation } from '../executor/engine-worker.js';
import { EngineWorkerPool } from '../executor/engine-worker-pool.js';
import type { KernelRef } from '../executor/kernel-ref.js';
import { ManagedExecutor } from '../executor/managed-executor.js';
import { EngineState } from '../executor/shared-fields.js';
import type { LaneRunner } from '../executor/worker-pool.js';
import type { CpuSet } from '../topology/cpu-set.js';
import type { CpuDomain } from './cpu-domain.js';

/**
 * An engine: one resource domain, its executor and (for tenferro-built engines) its worker
 * pool and shared execution-scope record. Engines belong to a coordinator and are shared by
 * every clone of a backend (R1).
 */
export class CpuEngine {
  readonly domain: CpuDomain;
  readonly executor: CpuDomainExecutor;
  /** The lanes kernel tasks run on. */
  readonly runner: LaneRunner;
  /** Executor entries made through operation entries (R69, R84): diagnostics and tests. */
  readonly entries = { installs: 0, submits: 0 };
  /** Pooled temporaries (canonical operands), shared by every clone (R1, R111). */
  readonly bufferPool: BufferPool;
  /** GEMM analyses in caller-addressed slots (R116). */
  readonly analysisCache = new GemmAnalysisCache();
  readonly #pool: EngineWorkerPool | undefined;
  readonly #state: Int32Array | undefined;

  private constructor(domain: CpuDomain, executor: CpuDomainExecutor, runner: LaneRunner, pool: EngineWorkerPool | undefined, limit: PoolLimit) {
    this.domain = domain;
    this.bufferPool = new BufferPool(limit);
    this.executor = executor;
    this.runner = runner;
    this.#pool = pool;
    this.#state = pool?.engineState;
  }

  /** Build a tenferro-managed engine: `workerCount` workers pinned to `cpus` and verified (or unpinned when `cpus` is undefined). */
  static async managed(domain: Omit<CpuDomain, 'threadBudget'>, cpus: CpuSet | undefined, workerCount: number, limit: PoolLimit): Promise<CpuEngine> {
    const pool = await EngineWorkerPool.create({ cpus, workerCount });
    const executor = new ManagedExecutor(pool, cpus !== undefined);
    return new CpuEngine({ ...domain, threadBudget: pool.workerCount }, executor, pool, pool, limit);
  }

  /** An engine over an executor someone else owns (external domains). */
  static external(domain: CpuDomain, executor: CpuDomainExecutor, runner: LaneRunner, limit: PoolLimit): CpuEngine {
    return new CpuEngine(domain, executor, runner, undefined, limit);
  }

  /** What each worker reported at verification; empty for external executors. */
  workers(): WorkerObservation[] {
    return this.#pool?.observations() ?? [];
  }

  get pool(): EngineWorkerPool | undefined {
    return this.#pool;
  }

  /**
   * Record `owner` as the active owner in the engine's shared record (R91, R94): one store,
   * whatever the pool size. The same owner nests by depth; a different owner while active is
   * an invariant violation (admission guarantees it cannot happen).
   */
  markActive(owner: ExecutionOwner, op: string): void {
    const s = this.#state;
    if (s === undefined) return;
    const active = Atomics.load(s, EngineState.ACTIVE_OWNER);
    if (active === 0) {
      Atomics.store(s, EngineState.ACTIVE_OWNER, owner);
      Atomics.store(s, EngineState.DEPTH, 1);
    } else if (active === owner) {
      Atomics.add(s, EngineState.DEPTH, 1);
    } else {
      throw new TenferroError('Internal', `engine ${String(this.domain.id)} is active for owner ${active}, not ${owner}`, { op });
    }
  }

  markInactive(owner: ExecutionOwner): void {
    const s = this.#state;
    if (s === undefined || Atomics.load(s, EngineState.ACTIVE_OWNER) !== owner) return;
    if (Atomics.sub(s, EngineState.DEPTH, 1) === 1) Atomics.store(s, EngineState.ACTIVE_OWNER, 0);
  }

  /** Run a kernel directly on a lane (internal: tests and benchmarks of the pool). */
  runOnLane<P, R>(lane: number, kernel: KernelRef<P, R>, payload?: P): Promise<R> {
    return this.runner.runOn(lane, kernel, payload, 'CpuEngine.runOnLane');
  }

  async close(): Promise<void> {
    this.bufferPool.close();
    await this.#pool?.close();
  }
}
