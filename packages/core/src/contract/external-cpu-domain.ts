import type { CpuAdmissionMode, CpuDomainId, CpuDomainOwnership } from './cpu-domain.js';
import type { ResolvedCpuPlacement } from './backend-kind.js';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuDomainExecutor, CpuDomainExecutorCapabilities } from './executor.js';
import { CpuSet } from '../topology/cpu-set.js';

/** A cooperative domain's declared placement: a NUMA node with its CPUs, or exactly the process's allowed set. */
export type ExternalPlacement = { readonly numaNode: number; readonly cpus: CpuSet } | { readonly allAllowed: true; readonly cpus: CpuSet };

const CONSTRUCT = Symbol('ExternalCpuDomain');

/**
 * A domain whose executor the application owns (contract §3.F). Cooperative domains are
 * arbitrated on their declared CPU set; caller-managed ones declare no CPUs, never enter the
 * arbiter, and admit one execution at a time through their own guard. The executor's
 * capabilities are sampled once, here. The domain retains its executor for its lifetime (R45).
 */
export class ExternalCpuDomain {
  readonly id: CpuDomainId;
  readonly threadBudget: number;
  readonly executor: CpuDomainExecutor;
  readonly #capabilities: CpuDomainExecutorCapabilities;
  readonly #placement: ResolvedCpuPlacement | undefined;

  private constructor(
    token: typeof CONSTRUCT,
    id: CpuDomainId,
    executor: CpuDomainExecutor,
    capabilities: CpuDomainExecutorCapabilities,
    threadBudget: number,
    placement: ResolvedCpuPlacement | undefined,
  ) {
    if (token !== CONSTRUCT) throw new TypeError('ExternalCpuDomain: use cooperative() or callerManaged()');
    this.id = id;
    this.executor = executor;
    this.threadBudget = threadBudget;
    this.#placement = placement;
    this.#capabilities = capabilities;
    Object.freeze(this);
  }

  /**
   * Cooperative CPU-set admission (Rust `ExternalCpuDomain::new`): arbitrated on `placement.cpus`.
   * Errors (R37): `EmptyPlacementCpuSet`, `ZeroExecutorWorkers`, `ThreadBudgetExceedsWorkerCount`.
   *
   * @example
   * ```ts
   * import { CpuBackend, ExternalCpuDomain, WorkerThreadsDomainExecutor, discoverCpuTopology } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const cpus = discoverCpuTopology().allowedCpus;
   * const domain = ExternalCpuDomain.cooperative(1, { allAllowed: true, cpus }, executor, 1); // arbitrated on `cpus`
   * const backend = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [domain] });
   * console.log(domain.admissionMode(), backend.numThreads()); // prints: cooperativeCpuSet 1
   * await backend.close();
   * await executor.close();
   * ```
   */
  static cooperative(id: CpuDomainId, placement: ExternalPlacement, executor: CpuDomainExecutor, threadBudget: number): ExternalCpuDomain {
    const op = 'ExternalCpuDomain.cooperative';
    validateId(id, op);
    if (typeof placement !== 'object' || placement === null) throw invalidArgument(op, 'placement', '{ numaNode, cpus } or { allAllowed: true, cpus }', placement);
    if (!(placement.cpus instanceof CpuSet) || placement.cpus.size === 0) {
      throw new TenferroError('EmptyPlacementCpuSet', 'a cooperative domain must declare a non-empty CpuSet in placement.cpus', { op, detail: { domain: id } });
    }
    let resolved: ResolvedCpuPlacement;
    if ('numaNode' in placement) {
      if (!Number.isInteger(placement.numaNode) || placement.numaNode < 0) throw invalidArgument(op, 'placement.numaNode', 'a non-negative integer node id', placement.numaNode);
      resolved = Object.freeze({ kind: 'numaNode', id: placement.numaNode, cpus: placement.cpus });
    } else if (placement.allAllowed === true) {
      resolved = Object.freeze({ kind: 'allAllowed', cpus: placement.cpus });
    } else {
      throw invalidArgument(op, 'placement', '{ numaNode, cpus } or { allAllowed: true, cpus }', placement);
    }
    const capabilities = validateExecutor(executor, threadBudget, id, op);
    return new ExternalCpuDomain(CONSTRUCT, id, executor, capabilities, threadBudget, resolved);
  }

  /**
   * Caller-managed admission (Rust `new_caller_managed`): no CPU set; the executor's workers are
   * the whole CPU universe of the domain and the caller owns admission across such domains.
   *
   * @example
   * ```ts
   * import { CpuBackend, ExternalCpuDomain, Tensor, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const domain = ExternalCpuDomain.callerManaged(2, executor, 1); // no CPU set, never enters the arbiter
   * const backend = await CpuBackend.fromExternalDomains({ defaultDomain: 2, domains: [domain] });
   * const a = Tensor.fromArray('f64', [1, 1], [3]);
   * console.log((await backend.matmul(a, a)).toArray(), domain.cpus()); // prints: [ 9 ] undefined
   * await backend.close();
   * await executor.close();
   * ```
   */
  static callerManaged(id: CpuDomainId, executor: CpuDomainExecutor, threadBudget: number): ExternalCpuDomain {
    const op = 'ExternalCpuDomain.callerManaged';
    validateId(id, op);
    const capabilities = validateExecutor(executor, threadBudget, id, op);
    return new ExternalCpuDomain(CONSTRUCT, id, executor, capabilities, threadBudget, undefined);
  }

  /**
   * `cooperativeCpuSet` (arbitrated on the declared CPUs) or `callerManaged` (no CPU set, the
   * caller owns admission).
   *
   * @example
   * ```ts
   * import { ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const domain = ExternalCpuDomain.callerManaged(3, executor, 1);
   * console.log(domain.admissionMode(), domain.cpus(), domain.ownership()); // prints: callerManaged undefined externalManaged
   * await executor.close();
   * ```
   */
  admissionMode(): CpuAdmissionMode {
    return this.#placement === undefined ? 'callerManaged' : 'cooperativeCpuSet';
  }

  /**
   * The declared placement; `undefined` for caller-managed domains (no placement claim, R38).
   *
   * @example
   * ```ts
   * import { CpuSet, ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const onNode = ExternalCpuDomain.cooperative(1, { numaNode: 0, cpus: CpuSet.of([0]) }, executor, 1);
   * console.log(onNode.placement()?.kind, ExternalCpuDomain.callerManaged(2, executor, 1).placement()); // prints: numaNode undefined
   * await executor.close();
   * ```
   */
  placement(): ResolvedCpuPlacement | undefined {
    return this.#placement;
  }

  /**
   * The declared CPU set of a cooperative domain; `undefined` for caller-managed domains.
   *
   * @example
   * ```ts
   * import { ExternalCpuDomain, WorkerThreadsDomainExecutor, discoverCpuTopology } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const cpus = discoverCpuTopology().allowedCpus;
   * const domain = ExternalCpuDomain.cooperative(5, { allAllowed: true, cpus }, executor, 1);
   * console.log(domain.cpus() === cpus, domain.admissionMode()); // prints: true cooperativeCpuSet
   * await executor.close();
   * ```
   */
  cpus(): CpuSet | undefined {
    return this.#placement?.cpus;
  }

  /**
   * Always `externalManaged`: the application owns the executor (R45).
   *
   * @example
   * ```ts
   * import { ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * console.log(ExternalCpuDomain.callerManaged(1, executor, 1).ownership()); // prints: externalManaged
   * await executor.close();
   * ```
   */
  ownership(): CpuDomainOwnership {
    return 'externalManaged';
  }

  /**
   * The executor's capabilities, as sampled once when the domain was built.
   *
   * @example
   * ```ts
   * import { ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
   * const domain = ExternalCpuDomain.callerManaged(1, executor, 2);
   * console.log(domain.executorCapabilities().workerCount); // prints: 2
   * await executor.close();
   * ```
   */
  executorCapabilities(): CpuDomainExecutorCapabilities {
    return this.#capabilities;
  }
}

function validateId(id: unknown, op: string): void {
  const ok = (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) || (typeof id === 'bigint' && id >= 0n);
  if (!ok) throw invalidArgument(op, 'id', 'a non-negative integer or bigint domain id', id);
}

/** Check the executor and sample its capabilities once (a throwing `capabilities()` is `ExecutorFailed`). */
function validateExecutor(executor: CpuDomainExecutor, threadBudget: number, id: CpuDomainId, op: string): CpuDomainExecutorCapabilities {
  for (const method of ['capabilities', 'install', 'submit', 'workerPool', 'runKernel'] as const) {
    if (typeof (executor as unknown as Record<string, unknown>)?.[method] !== 'function') {
      throw invalidArgument(op, 'executor', 'a CpuDomainExecutor (capabilities, install, submit, workerPool, runKernel)', executor);
    }
  }
  if (!Number.isSafeInteger(threadBudget) || threadBudget < 1) throw invalidArgument(op, 'threadBudget', 'a positive integer', threadBudget);
  let sampled: unknown;
  try {
    sampled = executor.capabilities();
  } catch (e) {
    throw new TenferroError('ExecutorFailed', `the executor of domain ${String(id)} failed in capabilities(): ${e instanceof Error ? e.message : String(e)}`, {
      op,
      cause: e,
      detail: { domain: id },
    });
  }
  if (typeof sampled !== 'object' || sampled === null) throw invalidArgument(op, 'executor.capabilities()', 'a capabilities object', sampled);
  const capabilities = Object.freeze({ ...(sampled as CpuDomainExecutorCapabilities) });
  const workers = capabilities.workerCount;
  if (!Number.isSafeInteger(workers) || workers < 1) {
    throw new TenferroError('ZeroExecutorWorkers', `the executor of domain ${String(id)} reports ${String(workers)} workers`, { op, detail: { domain: id } });
  }
  if (threadBudget > workers) {
    throw new TenferroError('ThreadBudgetExceedsWorkerCount', `thread budget ${threadBudget} exceeds the executor's ${workers} workers`, {
      op,
      detail: { domain: id, threadBudget, workerCount: workers },
    });
  }
  return capabilities;
}
