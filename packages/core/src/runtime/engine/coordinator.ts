import { SmallSet } from '../../util/small-set.js';
import type { Arbiter } from '../../arbiter/arbiter.js';
import { processArbiter } from '../../arbiter/process-wide-arbiter.js';
import { PoolLimit, retainedBytesFromEnv } from '../../buffer/pool-limit.js';
import type { CpuBackendKind, CpuPlacement } from '../../contract/backend-kind.js';
import type { CpuDomain, CpuDomainId } from '../../contract/cpu-domain.js';
import type { ExternalCpuDomain } from '../../contract/external-cpu-domain.js';
import { invalidArgument, TenferroError } from '../../errors/tenferro-error.js';
import { DEFAULT_ANALYSIS_SLOTS } from '../../contraction/gemm-analysis-cache.js';
import { DEFAULT_INDEXED_PLAN_LIMITS, type IndexedPlanCacheLimits, validIndexedPlanLimits } from '../../util/indexed-plan-cache.js';
import type { CpuTopology } from '../../topology/topology-types.js';
import { type DomainPlan, planPlacement, reachableManagedDomains } from '../placement.js';
import { CpuEngine } from './cpu-engine.js';
import { ExternalRegistry, unregisteredDomain } from './external-registry.js';

/**
 * The shared state behind every clone of a backend (contract "Coordinator"): topology, kind,
 * thread budget, the process arbiter, and the engines — for a managed coordinator built lazily,
 * once per plan's engine even under concurrent first use (R4); for an external coordinator the
 * registry of application-owned domains, built up front.
 */
export class Coordinator {
  readonly topology: CpuTopology;
  readonly kind: CpuBackendKind;
  readonly threads: number;
  readonly affinityAvailable: boolean;
  readonly arbiter: Arbiter;
  /** The buffer retention cap shared by every engine of this coordinator (R114). */
  readonly poolLimit = new PoolLimit(retainedBytesFromEnv());
  /** GEMM-analysis cache capacity of every engine, current and future (R5, R116). */
  #analysisCapacity = DEFAULT_ANALYSIS_SLOTS;
  /** Indexed-plan cache limits of every engine, current and future (R5, R118). */
  #planLimits: IndexedPlanCacheLimits = DEFAULT_INDEXED_PLAN_LIMITS;
  readonly external: ExternalRegistry | undefined;
  readonly #engines = new Map<string, Promise<CpuEngine>>();
  readonly #ready = new Map<string, CpuEngine>();
  /** What running executions do when the backend closes (settle at once, raise their abort word). */
  readonly #closeListeners = new SmallSet<() => void>();
  #closing: Promise<void> | undefined;

  constructor(options: {
    topology: CpuTopology;
    kind: CpuBackendKind;
    threads: number;
    affinityAvailable: boolean;
    external?: { defaultDomain: CpuDomainId; domains: readonly ExternalCpuDomain[]; op: string };
  }) {
    this.topology = options.topology;
    this.kind = options.kind;
    this.threads = options.threads;
    this.affinityAvailable = options.affinityAvailable;
    this.arbiter = processArbiter();
    const ext = options.external;
    this.external = ext === undefined ? undefined : ExternalRegistry.build(ext.defaultDomain, ext.domains, options.topology.allowedCpus, this.poolLimit, ext.op);
  }

  /** How `placement` runs here: managed resolution (R12–R14) or external routing (R41). */
  plan(placement: CpuPlacement, op: string): DomainPlan {
    if (this.external !== undefined) return this.external.route(placement, op);
    return planPlacement(this, placement, op);
  }

  /** R42: a registered external domain by id; a managed coordinator has none. */
  planForDomain(id: CpuDomainId, op: string): DomainPlan {
    if (this.external === undefined) throw unregisteredDomain(id, op);
    return this.external.forDomain(id, op);
  }

  /** Every domain a bundle of this coordinator can reach (R60), built or not. */
  reachableDomains(): CpuDomain[] {
    if (this.external !== undefined) return this.external.engines().map((e) => e.domain);
    return reachableManagedDomains(this);
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  assertOpen(op: string): void {
    if (this.closed) throw new TenferroError('BackendClosed', 'this backend was closed', { op });
  }

  /** The engine that runs `plan`, building it on first use. */
  engine(plan: DomainPlan, op: string): Promise<CpuEngine> {
    this.assertOpen(op);
    const external = this.external?.engine(plan.domain.id);
    if (external !== undefined) return Promise.resolve(external);
    const key = plan.engineKey;
    let engine = this.#engines.get(key);
    if (engine === undefined) {
      engine = CpuEngine.managed(plan.domain, plan.pinCpus, this.poolLimit, this.topology.effectiveCapacity.cpus).then(async (built) => {
        if (this.closed) {
          await built.close();
          throw new TenferroError('BackendClosed', 'this backend was closed while an engine was being built', { op });
        }
        built.analysisCache.setCapacity(this.#analysisCapacity);
        built.indexedPlans.setLimits(this.#planLimits);
        this.#ready.set(key, built);
        return built;
      });
      this.#engines.set(key, engine);
      // A failed build is not cached: the next use tries again.
      engine.catch(() => {
        if (this.#engines.get(key) === engine) this.#engines.delete(key);
      });
    }
    return engine;
  }

  /** Set the GEMM-analysis cache capacity of every engine, built or future (shrinking clears). */
  setAnalysisCapacity(capacity: number, op: string): void {
    if (!Number.isSafeInteger(capacity) || capacity < 0) throw invalidArgument(op, 'capacity', 'a non-negative integer', capacity);
    this.#analysisCapacity = capacity;
    for (const e of this.builtEngines()) e.analysisCache.setCapacity(capacity);
  }

  /** The GEMM-analysis cache capacity of every engine of this coordinator. */
  get analysisCapacity(): number {
    return this.#analysisCapacity;
  }

  /** The indexed-plan cache limits of every engine of this coordinator. */
  get indexedPlanLimits(): IndexedPlanCacheLimits {
    return this.#planLimits;
  }

  /**
   * Set the indexed-plan cache limits of every engine, built or future (R5, R118): validated
   * first (`InvalidArgument`, nothing changed), then applied to all in one step; shrinking evicts
   * least recently used plans at once.
   */
  setIndexedPlanLimits(limits: unknown, op: string): void {
    const next = validIndexedPlanLimits(limits, op);
    this.#planLimits = next;
    for (const e of this.builtEngines()) e.indexedPlans.setLimits(next);
  }

  /** The engine of `plan` if it is already built (no build is started). */
  builtEngine(plan: DomainPlan): CpuEngine | undefined {
    return this.external?.engine(plan.domain.id) ?? this.#ready.get(plan.engineKey);
  }

  /** Engines built so far. */
  builtEngines(): CpuEngine[] {
    return [...this.#ready.values(), ...(this.external?.engines() ?? [])];
  }

  /** Call `fn` when `close()` is called (once); returns the unsubscribe. */
  onClose(fn: () => void): () => void {
    this.#closeListeners.add(fn);
    return () => void this.#closeListeners.delete(fn);
  }

  /** Resolves when `close()` has shut every engine down (every worker has exited). */
  whenClosed(): Promise<void> {
    return this.#closing ?? Promise.resolve();
  }

  /**
   * Shut every engine down. Running executions settle with `BackendClosed` at once (their abort
   * words raised); their permits are released when the engines' workers have exited — a
   * non-polling native call (a BLAS routine) holds its worker, and so its CPUs, until it returns.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    await null; // `closed` and `whenClosed()` hold from here on, also for the listeners
    for (const fn of this.#closeListeners.drain()) fn();
    const engines = await Promise.allSettled(this.#engines.values());
    this.#engines.clear();
    this.#ready.clear();
    await Promise.all(engines.map((e) => (e.status === 'fulfilled' ? e.value.close() : undefined)));
    // External engines release tenferro's resources only; the executors stay the caller's (R44).
    await Promise.all((this.external?.engines() ?? []).map((e) => e.close()));
  }
}
