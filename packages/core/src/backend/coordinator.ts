import { type ResourceArbiter, processArbiter } from '../arbiter/resource-arbiter.js';
import { PoolLimit, retainedBytesFromEnv } from '../buffer/pool-limit.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { ValidationDomain } from '../provider/bundle-validation.js';
import type { ExternalCpuDomain } from '../domain/external-cpu-domain.js';
import { ExternalRegistry, unregisteredDomain } from '../domain/external-registry.js';
import type { CpuDomainId } from './cpu-domain.js';
import type { CpuTopology } from '../topology/topology-types.js';
import { CpuEngine } from './cpu-engine.js';
import { type CpuBackendKind, type CpuPlacement, type ResolvedExecution, managedDomainId, resolvePlacement } from './placement.js';

/**
 * The shared state behind every clone of a backend (contract "Coordinator"): topology, kind,
 * thread budget, the process arbiter, and the engines — for a managed coordinator built lazily,
 * once per placement even under concurrent first use (R4); for an external coordinator the
 * registry of application-owned domains, built up front.
 */
export class Coordinator {
  readonly topology: CpuTopology;
  readonly kind: CpuBackendKind;
  readonly threads: number;
  readonly affinityAvailable: boolean;
  readonly arbiter: ResourceArbiter;
  /** The buffer retention cap shared by every engine of this coordinator (R114). */
  readonly poolLimit = new PoolLimit(retainedBytesFromEnv());
  readonly #engines = new Map<string, Promise<CpuEngine>>();
  readonly #ready = new Map<string, CpuEngine>();
  #closed = false;

  readonly external: ExternalRegistry | undefined;

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
  resolve(placement: CpuPlacement, op: string): ResolvedExecution {
    if (this.external !== undefined) return this.external.route(placement, op);
    return resolvePlacement(this.kind, placement, this.topology, this.affinityAvailable, op);
  }

  /** R42: a registered external domain by id; a managed coordinator has none. */
  forDomain(id: CpuDomainId, op: string): ResolvedExecution {
    if (this.external === undefined) throw unregisteredDomain(id, op);
    return this.external.forDomain(id, op);
  }

  get closed(): boolean {
    return this.#closed;
  }

  assertOpen(op: string): void {
    if (this.#closed) throw new TenferroError('BackendClosed', 'this backend was closed', { op });
  }

  /** The engine that runs `resolved`, building it on first use. */
  engine(resolved: ResolvedExecution, op: string): Promise<CpuEngine> {
    this.assertOpen(op);
    if (resolved.mode === 'externalManaged' || resolved.mode === 'callerManaged') {
      return Promise.resolve(this.external!.engine(resolved.domainId)!);
    }
    const key = engineKey(resolved, this.affinityAvailable);
    let engine = this.#engines.get(key);
    if (engine === undefined) {
      engine = this.#build(resolved).then(async (built) => {
        if (this.#closed) {
          await built.close();
          throw new TenferroError('BackendClosed', 'this backend was closed while an engine was being built', { op });
        }
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

  /** The engine for `resolved` if it is already built (no build is started). */
  builtEngine(resolved: ResolvedExecution): CpuEngine | undefined {
    if (resolved.mode === 'externalManaged' || resolved.mode === 'callerManaged') return this.external?.engine(resolved.domainId);
    return this.#ready.get(engineKey(resolved, this.affinityAvailable));
  }

  /** Engines built so far. */
  builtEngines(): CpuEngine[] {
    return [...this.#ready.values(), ...(this.external?.engines() ?? [])];
  }

  /**
   * Every domain a bundle of this coordinator can reach (R60): the all-allowed engine and every
   * lazily constructible NUMA engine (budget `min(threads, |node cpus|)`), or the one
   * compatibility engine — so a later `forPlacement` cannot bypass the bundle.
   */
  validationDomains(): ValidationDomain[] {
    if (this.external !== undefined) return this.external.engines().map((e) => e.domain);
    if (!this.affinityAvailable) {
      return [{ id: 0, threadBudget: Math.max(1, Math.min(this.threads, this.topology.effectiveCapacity.cpus)), admissionMode: 'cooperativeCpuSet' }];
    }
    return [
      { id: 0, threadBudget: Math.min(this.threads, this.topology.allowedCpus.size), admissionMode: 'cooperativeCpuSet' },
      ...this.topology.nodes.map((n, i) => ({ id: 1 + i, threadBudget: Math.min(this.threads, n.cpus.size), admissionMode: 'cooperativeCpuSet' as const })),
    ];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const engines = await Promise.allSettled(this.#engines.values());
    this.#engines.clear();
    this.#ready.clear();
    await Promise.all(engines.map((e) => (e.status === 'fulfilled' ? e.value.close() : undefined)));
    // External engines release tenferro's resources only; the executors stay the caller's (R44).
    await Promise.all((this.external?.engines() ?? []).map((e) => e.close()));
  }

  async #build(resolved: ResolvedExecution): Promise<CpuEngine> {
    if (resolved.mode === 'managed') {
      const { placement } = resolved;
      return CpuEngine.managed(
        { id: managedDomainId(placement, this.topology), admissionMode: 'cooperativeCpuSet', placement, ownership: 'managed' },
        placement.cpus,
        Math.min(this.threads, placement.cpus.size),
        this.poolLimit,
      );
    }
    // Compatibility, and provider-default-exclusive (which runs on the all-allowed engine, R19).
    const cpus = this.topology.allowedCpus;
    if (this.affinityAvailable) {
      const placement = { kind: 'allAllowed', cpus } as const;
      return CpuEngine.managed(
        { id: 0, admissionMode: 'cooperativeCpuSet', placement, ownership: 'managed' },
        cpus,
        Math.min(this.threads, cpus.size),
        this.poolLimit,
      );
    }
    return CpuEngine.managed(
      { id: 0, admissionMode: 'cooperativeCpuSet', placement: undefined, ownership: 'managed' },
      undefined,
      Math.max(1, Math.min(this.threads, this.topology.effectiveCapacity.cpus)),
      this.poolLimit,
    );
  }
}

function engineKey(resolved: ResolvedExecution, affinityAvailable: boolean): string {
  if (resolved.mode === 'managed') {
    return resolved.placement.kind === 'allAllowed' ? 'allAllowed' : `numaNode:${resolved.placement.id}`;
  }
  return affinityAvailable ? 'allAllowed' : 'compatibility';
}
