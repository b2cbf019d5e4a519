import type { PoolLimit } from '../../buffer/pool-limit.js';
import { CpuEngine } from './cpu-engine.js';
import type { CpuDomainId } from '../../contract/cpu-domain.js';
import { type CpuPlacement, describePlacement } from '../../contract/backend-kind.js';
import { type DomainPlan, externalPlan } from '../placement.js';
import { TenferroError, invalidArgument } from '../../errors/tenferro-error.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import { ExternalCpuDomain } from '../../contract/external-cpu-domain.js';

/** The engines of an external coordinator, by domain id, with the default domain (contract "ExternalPrebuilt"). */
export class ExternalRegistry {
  readonly defaultId: CpuDomainId;
  readonly #engines: ReadonlyMap<string, CpuEngine>;

  private constructor(defaultId: CpuDomainId, engines: ReadonlyMap<string, CpuEngine>) {
    this.defaultId = defaultId;
    this.#engines = engines;
  }

  /**
   * Validate and build, atomically, in the order of R39: no domains → `EmptyRegistry`; per domain
   * in input order: `DuplicateDomainId`, `DuplicatePlacementIdentity`, `ExactAllAllowedMismatch`
   * (every all-allowed declaration: it is the exclusion identity), `CpuOutsideAllowedSet` (first
   * offending CPU ascending); then `MissingDefaultDomain`. Different placement identities may
   * overlap in CPUs.
   */
  static build(defaultDomain: CpuDomainId, domains: readonly ExternalCpuDomain[], allowed: CpuSet, limit: PoolLimit, op: string): ExternalRegistry {
    if (!Array.isArray(domains)) throw invalidArgument(op, 'options.domains', 'an array of ExternalCpuDomain', domains);
    if (domains.length === 0) throw new TenferroError('EmptyRegistry', 'an external backend needs at least one domain', { op });
    const ids = new Set<string>();
    const identities = new Set<string>();
    for (const [i, d] of domains.entries()) {
      if (!(d instanceof ExternalCpuDomain)) throw invalidArgument(op, `options.domains[${i}]`, 'an ExternalCpuDomain', d);
      const key = String(d.id);
      if (ids.has(key)) throw new TenferroError('DuplicateDomainId', `domain id ${key} is registered twice`, { op, detail: { domain: d.id } });
      ids.add(key);
      const placement = d.placement();
      if (placement === undefined) continue;
      const identity = placement.kind === 'allAllowed' ? 'allAllowed' : `numaNode:${placement.id}`;
      if (identities.has(identity)) {
        throw new TenferroError('DuplicatePlacementIdentity', `placement ${identity} is declared by more than one domain (domain ${key})`, {
          op,
          detail: { domain: d.id, identity },
        });
      }
      identities.add(identity);
      if (placement.kind === 'allAllowed' && !placement.cpus.equals(allowed)) {
        throw new TenferroError(
          'ExactAllAllowedMismatch',
          `domain ${key} declares all-allowed CPUs ${placement.cpus.toString()} but the process may use ${allowed.toString()}`,
          { op, detail: { domain: d.id, declared: placement.cpus.toString(), allowed: allowed.toString() } },
        );
      }
      const outside = placement.cpus.difference(allowed);
      if (outside !== undefined) {
        throw new TenferroError('CpuOutsideAllowedSet', `domain ${key} declares CPU ${outside.first}, outside the process affinity ${allowed.toString()}`, {
          op,
          detail: { domain: d.id, cpu: outside.first },
        });
      }
    }
    if (!ids.has(String(defaultDomain))) {
      throw new TenferroError('MissingDefaultDomain', `the default domain ${String(defaultDomain)} is not registered`, { op, detail: { domain: defaultDomain } });
    }
    const engines = new Map<string, CpuEngine>();
    for (const d of domains) {
      engines.set(
        String(d.id),
        CpuEngine.external({ id: d.id, admissionMode: d.admissionMode(), placement: d.placement(), ownership: 'externalManaged', threadBudget: d.threadBudget }, d.executor, d.executorCapabilities(), limit),
      );
    }
    return new ExternalRegistry(defaultDomain, engines);
  }

  engines(): CpuEngine[] {
    return [...this.#engines.values()];
  }

  engine(id: CpuDomainId): CpuEngine | undefined {
    return this.#engines.get(String(id));
  }

  /** R41: auto → default; a NUMA node → the domain declaring it; allAllowed → the all-allowed domain; else `UnregisteredExternalPlacement`. */
  route(placement: CpuPlacement, op: string): DomainPlan {
    if (placement === 'auto') return this.forDomain(this.defaultId, op);
    const match = this.engines().find((e) => {
      const p = e.domain.placement;
      if (p === undefined) return false;
      return placement === 'allAllowed' ? p.kind === 'allAllowed' : p.kind === 'numaNode' && p.id === placement.numaNode;
    });
    if (match === undefined) {
      throw new TenferroError('UnregisteredExternalPlacement', `no registered external domain declares placement ${describePlacement(placement)}`, {
        op,
        detail: { requested: describePlacement(placement) },
      });
    }
    return planOf(match);
  }

  /** R42: any registered domain by its stable id. */
  forDomain(id: CpuDomainId, op: string): DomainPlan {
    const engine = this.engine(id);
    if (engine === undefined) throw unregisteredDomain(id, op);
    return planOf(engine);
  }
}

export function unregisteredDomain(id: unknown, op: string): TenferroError {
  return new TenferroError('UnregisteredExternalDomain', `domain ${String(id)} is not a registered external domain of this backend`, { op, detail: { domain: id } });
}

function planOf(engine: CpuEngine): DomainPlan {
  return externalPlan(engine.domain, engine.capabilities.affinity);
}
