import { newExecutionOwner } from '../arbiter/resource-arbiter.js';
import type { ResourceRequest } from '../arbiter/resource-request.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../execution/execution-context.js';
import { type ScopeRecord, assertNotReentered, currentFrame, reentered, runInFrame } from '../execution/execution-frame.js';
import { CpuOperationEntry } from '../execution/operation-entry.js';
import type { ParallelMode } from '../execution/parallel-mode.js';
import { EngineState, WORKER_SCOPE_KEY } from '../executor/shared-fields.js';
import { loadOs } from '@tenferro/os';
import { discoverCpuTopology } from '../topology/discover-topology.js';
import type { CpuTopology } from '../topology/topology-types.js';
import type { BufferPoolStats } from '../buffer/buffer-pool.js';
import { type DotGeneralDims, type DotGeneralIntoOptions, type DotGeneralOptions, validateDotGeneral } from '../contraction/dot-general-dims.js';
import type { GemmAnalysisCacheStats } from '../contraction/gemm-analysis-cache.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import { type ValidationDomain, dispatchMode, validateBundleForDomain } from '../provider/bundle-validation.js';
import { type CapabilityPolicy, CpuProviderBundle } from '../provider/provider-bundle.js';
import { Tensor } from '../tensor/tensor.js';
import { CpuSet } from '../topology/cpu-set.js';
import { statusCpusAllowed } from '../executor/thread-self.js';
import { ExternalCpuDomain } from '../domain/external-cpu-domain.js';
import type { CpuDomain, CpuDomainId } from './cpu-domain.js';
import { type CpuBackendOptions, type CpuProviderPackage, type ExternalBackendOptions, threadsFromEnv, validateBackendOptions } from './backend-options.js';
import { dotGeneralFresh, dotGeneralOn, reshapeMaterialized } from './tensor-operations.js';
import { discoverProvider } from './provider-discovery.js';
import { CpuExecSession } from './backend-session.js';
import { Coordinator } from './coordinator.js';
import type { CpuEngine } from './cpu-engine.js';
import type { CpuExecutionInfo } from './execution-info.js';
import {
  type CpuBackendKind,
  type CpuPlacement,
  type ResolvedCpuPlacement,
  type ResolvedExecution,
  describePlacement,
  managedDomainId,
  resolvePlacement,
  validateKind,
  validatePlacement,
} from './placement.js';

/** `checkPlacement()`: each pinned worker's mask now, against the set it was verified on. */
export interface PlacementCheck {
  readonly ok: boolean;
  readonly workers: readonly { readonly tid: number; readonly expected: string; readonly observed: string | undefined; readonly ok: boolean }[];
}

/** Opaque witness token: equal for clones, fresh for every derived handle (R2). */
export type CpuRuntimeIdentity = object;

const CONSTRUCT = Symbol('CpuBackend');

interface HandleState {
  readonly coordinator: Coordinator;
  readonly identity: CpuRuntimeIdentity;
  readonly placement: CpuPlacement;
  readonly resolved: ResolvedExecution;
  readonly providers: readonly CpuProviderPackage[];
  readonly bundle: CpuProviderBundle;
  /** Why no provider package was discovered, when none was (diagnostics). */
  readonly providerNote?: string | undefined;
}

/**
 * A cheap, cloneable handle on a shared coordinator (contract glossary "CpuBackend"). Clones
 * share topology, engines, arbiter and caches and keep the runtime identity; `forPlacement`
 * gives a handle with a fresh identity on the same coordinator. Every entry point that may wait
 * for a permit returns a Promise; accessors are synchronous.
 */
export class CpuBackend {
  readonly #s: HandleState;

  /** @internal use {@link CpuBackend.create}. */
  constructor(token: typeof CONSTRUCT, state: HandleState) {
    if (token !== CONSTRUCT) throw new TypeError('CpuBackend: use CpuBackend.create()');
    this.#s = state;
  }

  /**
   * Resolve the placement (R12–R14) and build its engine: workers pinned to the whole domain set
   * and verified before this resolves (D2). Errors: `InvalidArgument`, `BackendKindUnavailable`,
   * `ExternalProviderAffinityUnmanaged`, `ManagedAffinityUnavailable`, `NumaDiscoveryUnavailable`,
   * `UnknownNumaNode`, `WorkerPinning`, `WorkerStartupClosed`.
   */
  static async create(options: CpuBackendOptions = {}): Promise<CpuBackend> {
    const op = 'CpuBackend.create';
    const o = validateBackendOptions(options, op);
    const discovered = o.providers === undefined ? await discoverProvider(o.kind, op) : undefined;
    const providers = o.providers ?? (discovered?.package === undefined ? [] : [discovered.package]);
    assertKindAvailable(o.kind, providers, op);
    const threads = o.threads ?? threadsFromEnv(op);
    const topology = o.topology ?? discoverCpuTopology();
    const affinityAvailable = loadOs().available;
    const resolved = resolvePlacement(o.kind, o.placement, topology, affinityAvailable, op);
    const coordinator = new Coordinator({
      topology,
      kind: o.kind,
      threads: threads ?? topology.effectiveCapacity.cpus,
      affinityAvailable,
    });
    const bundle = standardBundle(o.kind, providers);
    for (const domain of coordinator.validationDomains()) validateBundleForDomain(bundle, domain, op);
    const backend = new CpuBackend(CONSTRUCT, {
      coordinator,
      identity: Object.freeze({}),
      placement: o.placement,
      resolved,
      providers,
      bundle,
      providerNote: discovered?.note,
    });
    await coordinator.engine(resolved, op);
    return backend;
  }

  /**
   * A backend over application-owned executors (contract §3.F). Validated atomically in the
   * order of R39, then the bundle against every domain (strict, R54, R57). The kind is `faer`
   * whenever a caller-managed domain is present (R40); `blas` is refused on caller-managed
   * domains before anything runs (R47). `auto` routes to `defaultDomain`; `forDomain(id)` reaches
   * any domain.
   */
  static async fromExternalDomains(options: ExternalBackendOptions): Promise<CpuBackend> {
    const op = 'CpuBackend.fromExternalDomains';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    const providers = options.providers ?? [];
    if (options.kind !== undefined) validateKind(options.kind, op);
    if (options.bundle !== undefined && !(options.bundle instanceof CpuProviderBundle)) throw invalidArgument(op, 'options.bundle', 'a CpuProviderBundle', options.bundle);
    const callerManaged = Array.isArray(options.domains) && options.domains.some((d) => d instanceof ExternalCpuDomain && d.admissionMode() === 'callerManaged');
    // R40: caller-managed domains run the tenferro-managed kind, whatever else is installed.
    const kind: CpuBackendKind = callerManaged ? 'faer' : (options.kind ?? 'faer');
    const coordinator = new Coordinator({
      topology: options.topology ?? discoverCpuTopology(),
      kind,
      threads: 1,
      affinityAvailable: loadOs().available,
      external: { defaultDomain: options.defaultDomain, domains: options.domains, op },
    });
    if (callerManaged && options.kind === 'blas') {
      throw new TenferroError('CallerManagedBlasUnsupported', 'the blas kind cannot run on caller-managed domains: its workers cannot be confined to the supplied executor', { op });
    }
    assertKindAvailable(kind, providers, op);
    // External constructors use the strict standard bundle (R54).
    const bundle = options.bundle ?? standardBundle(kind, providers, 'strict');
    validateExternalBundle(coordinator, bundle, op);
    const resolved = coordinator.forDomain(options.defaultDomain, op);
    return new CpuBackend(CONSTRUCT, {
      coordinator,
      identity: Object.freeze({}),
      placement: 'auto',
      resolved,
      providers,
      bundle,
    });
  }

  /** A handle on the registered external domain `id`, with a fresh identity (R42): `UnregisteredExternalDomain` otherwise. */
  forDomain(id: CpuDomainId): CpuBackend {
    const op = 'CpuBackend.forDomain';
    const c = this.#s.coordinator;
    c.assertOpen(op);
    const resolved = c.forDomain(id, op);
    return new CpuBackend(CONSTRUCT, { ...this.#s, identity: Object.freeze({}), placement: 'auto', resolved });
  }

  /** Same coordinator, engines, caches and runtime identity (R1, R2). Builds nothing. */
  clone(): CpuBackend {
    return new CpuBackend(CONSTRUCT, this.#s);
  }

  /** A handle on `placement` with a fresh identity; its engine is built on first use (R4). Throws placement errors. */
  forPlacement(placement: CpuPlacement): CpuBackend {
    const op = 'CpuBackend.forPlacement';
    const p = validatePlacement(placement, op, 'placement');
    const c = this.#s.coordinator;
    c.assertOpen(op);
    const resolved = c.resolve(p, op);
    return new CpuBackend(CONSTRUCT, { ...this.#s, identity: Object.freeze({}), placement: p, resolved });
  }

  /** Whether `placement` resolves on this coordinator; never builds an engine (R16). */
  supportsPlacement(placement: CpuPlacement): boolean {
    const c = this.#s.coordinator;
    try {
      c.resolve(validatePlacement(placement, 'CpuBackend.supportsPlacement', 'placement'), 'CpuBackend.supportsPlacement');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A handle with `bundle` and a fresh identity, after validating the bundle against every
   * domain this coordinator can reach (R3, R60): `IncompatibleDomain` otherwise. This handle and
   * its clones keep their bundle.
   */
  withProviderBundle(bundle: CpuProviderBundle): CpuBackend {
    const op = 'CpuBackend.withProviderBundle';
    if (!(bundle instanceof CpuProviderBundle)) throw invalidArgument(op, 'bundle', 'a CpuProviderBundle', bundle);
    const c = this.#s.coordinator;
    c.assertOpen(op);
    if (c.external !== undefined) validateExternalBundle(c, bundle, op);
    else for (const domain of c.validationDomains()) validateBundleForDomain(bundle, domain, op);
    return new CpuBackend(CONSTRUCT, { ...this.#s, identity: Object.freeze({}), bundle });
  }

  providerBundle(): CpuProviderBundle {
    return this.#s.bundle;
  }

  /**
   * `dot_general` into a fresh output of shape `[lhs free…, rhs free…, batch…]` (R103), tagged
   * with the executing domain (R96). Validation (R102) and the dispatch-mode checks (R61, R62)
   * come before any allocation. Resolution and retry per R104–R107.
   */
  async dotGeneral(lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: DotGeneralOptions = {}): Promise<Tensor> {
    const op = 'CpuBackend.dotGeneral';
    const spec = validateDotGeneral(op, lhs, rhs, dims, options);
    const bundle = this.#s.bundle;
    const mode = dispatchMode(bundle, 'gemm', this.#validationDomain(), op);
    return this.#operate(op, mode, (entry, ctx) => dotGeneralFresh(entry, ctx, bundle, spec, op));
  }

  /**
   * `out = alpha · dot_general(lhs, rhs) + beta · out` into a caller-owned output, which keeps
   * its metadata (R98); on any failure before the provider writes, `out` is byte-identical.
   */
  async dotGeneralInto(out: Tensor, lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: DotGeneralIntoOptions = {}): Promise<Tensor> {
    const op = 'CpuBackend.dotGeneralInto';
    const spec = validateDotGeneral(op, lhs, rhs, dims, options, out);
    const bundle = this.#s.bundle;
    const mode = dispatchMode(bundle, 'gemm', this.#validationDomain(), op);
    await this.#operate(op, mode, (entry, ctx) => dotGeneralOn(entry, ctx, bundle, spec, out, op));
    return out;
  }

  /** Rank-2 matrix product `a · b`. */
  async matmul(a: Tensor, b: Tensor, options: DotGeneralOptions = {}): Promise<Tensor> {
    const op = 'CpuBackend.matmul';
    for (const [name, t] of [['a', a], ['b', b]] as const) {
      if (!(t instanceof Tensor)) throw invalidArgument(op, name, 'a Tensor', t);
      if (t.rank !== 2) throw invalidArgument(op, `${name}.shape`, 'a rank-2 shape', t.shape);
    }
    const spec = validateDotGeneral(op, a, b, { contracting: [[1], [0]] }, options);
    const bundle = this.#s.bundle;
    const mode = dispatchMode(bundle, 'gemm', this.#validationDomain(), op);
    return this.#operate(op, mode, (entry, ctx) => dotGeneralFresh(entry, ctx, bundle, spec, op));
  }

  /** `tensor.reshape(shape)` when that is metadata-only (same storage, same tag); otherwise a fresh, tagged, dense copy (R97). */
  async reshape(tensor: Tensor, shape: readonly number[]): Promise<Tensor> {
    const op = 'CpuBackend.reshape';
    if (!(tensor instanceof Tensor)) throw invalidArgument(op, 'tensor', 'a Tensor', tensor);
    try {
      return tensor.reshape(shape);
    } catch (e) {
      if (!TenferroError.is(e, 'ReshapeNeedsCopy')) throw e;
    }
    const bundle = this.#s.bundle;
    const mode = dispatchMode(bundle, 'layoutTransform', this.#validationDomain(), op);
    return this.#operate(op, mode, (entry) => reshapeMaterialized(entry, bundle, tensor, shape, op));
  }

  /**
   * Hand `tensor`'s storage back to this handle's engine pool (the contract's `reclaim_buffer`):
   * later fresh outputs and temporaries reuse it, so a loop that reclaims what it no longer needs
   * pays no allocation or page faults. The caller asserts that neither `tensor` nor any view of
   * its storage is used again. Storage an operation is using is refused (`InvalidArgument`).
   */
  reclaim(tensor: Tensor): void {
    const op = 'CpuBackend.reclaim';
    if (!(tensor instanceof Tensor)) throw invalidArgument(op, 'tensor', 'a Tensor', tensor);
    this.#s.coordinator.assertOpen(op);
    this.#s.coordinator.builtEngine(this.#s.resolved)?.bufferPool.adopt(tensor.dtype, tensor.buffer);
  }

  /** Retained buffers of every built engine of this coordinator, each counted once (R6). */
  bufferPoolStats(): BufferPoolStats {
    const engines = this.#s.coordinator.builtEngines();
    const sum = (f: (s: BufferPoolStats) => number) => engines.reduce((acc, e) => acc + f(e.bufferPool.stats()), 0);
    return {
      buffers: sum((s) => s.buffers),
      retainedBytes: sum((s) => s.retainedBytes),
      outstanding: sum((s) => s.outstanding),
      hits: sum((s) => s.hits),
      misses: sum((s) => s.misses),
      limitBytes: this.#s.coordinator.poolLimit.bytes,
    };
  }

  bufferPoolLimitBytes(): number {
    return this.#s.coordinator.poolLimit.bytes;
  }

  /** The retention cap of every engine of this coordinator, now and later (R113, R114). */
  setBufferPoolLimitBytes(bytes: number): void {
    this.#s.coordinator.poolLimit.set(bytes, 'CpuBackend.setBufferPoolLimitBytes');
  }

  /** Drop every retained buffer (outstanding loans are unaffected). */
  resetBufferPool(): void {
    for (const e of this.#s.coordinator.builtEngines()) e.bufferPool.reset();
  }

  /** The GEMM-analysis cache of this handle's engine (R116). */
  analysisCacheStats(): GemmAnalysisCacheStats | undefined {
    return this.#s.coordinator.builtEngine(this.#s.resolved)?.analysisCache.stats();
  }

  /** Build this handle's engine now (it is otherwise built on first use). */
  async ready(): Promise<void> {
    await this.#engine('CpuBackend.ready');
  }

  kind(): CpuBackendKind {
    return this.#s.coordinator.kind;
  }

  placement(): CpuPlacement {
    return this.#s.placement;
  }

  /** Present for managed and external cooperative execution only (R20). */
  resolvedPlacement(): ResolvedCpuPlacement | undefined {
    const r = this.#s.resolved;
    return r.mode === 'managed' || r.mode === 'externalManaged' ? r.placement : undefined;
  }

  topology(): CpuTopology {
    return this.#s.coordinator.topology;
  }

  runtimeIdentity(): CpuRuntimeIdentity {
    return this.#s.identity;
  }

  numThreads(): number {
    return this.#plannedDomain().threadBudget;
  }

  get closed(): boolean {
    return this.#s.coordinator.closed;
  }

  /**
   * Run `fn` in one Sequential execution: admission (re-entry check, then a permit on this
   * placement's CPU set), one executor entry, then `fn(ctx)` issues kernel tasks through the
   * context. Errors: `Reentered` (before any permit), `BackendClosed`, `ScopeWitnessMismatch`.
   */
  install<R>(fn: (ctx: CpuExecutionContext) => R | Promise<R>): Promise<R> {
    return this.#operate('CpuBackend.install', 'sequential', (_entry, ctx) => fn(ctx));
  }

  /** One permit and one executor entry across every operation of `fn`'s session (R79–R82). */
  withBackendSession<R>(fn: (session: CpuExecSession) => R | Promise<R>): Promise<R> {
    return this.#execute(
      'CpuBackend.withBackendSession',
      (entry) => entry.preferredEngineMode(),
      async (entry, shared, mode, op) => {
        const run = (ctx: CpuExecutionContext | undefined) => {
          const session = new CpuExecSession(entry, ctx, this.#s.coordinator.kind, this.#s.bundle);
          return Promise.resolve(fn(session)).finally(() => session.end());
        };
        // External executors keep operation-level entry (R49): no session-level entry.
        if (entry.engine.domain.ownership !== 'managed') return run(undefined);
        return shared ? entry.reuse(mode, run, op) : entry.enter(mode, run, op);
      },
    );
  }

  /**
   * Outer fan-out (R70): `min(count, budget)` lanes submitted once; `fn(ctx, index)` runs once per
   * index with a Sequential context on its lane's worker. `Scheduling` when the budget is 1.
   */
  withOuterLanes(count: number, fn: (ctx: CpuExecutionContext, index: number) => void | Promise<void>): Promise<void> {
    return this.#execute('CpuBackend.withOuterLanes', () => 'outer', (entry, shared, mode, op) =>
      shared ? entry.reuse(mode, () => undefined, op) : entry.submitOuter(count, fn, op),
    );
  }

  /**
   * `execution_scope.rs` (R83–R87): one permit and one executor entry shared by the sequential
   * operations that clones of this witness issue inside `fn`. The callback's value — even an
   * error object it returns — comes back unchanged; an exception releases scope and permit first.
   * Errors: `ExecutionAlreadyActive` inside an execution or scope, `Unsupported` for external domains.
   */
  async withExecutionScope<R>(fn: () => R | Promise<R>): Promise<R> {
    const op = 'CpuBackend.withExecutionScope';
    if (currentFrame() !== undefined || workerEngineActive()) {
      throw new TenferroError('ExecutionAlreadyActive', 'CPU execution is already active; open the shared scope outside active scopes and backend sessions', { op });
    }
    const c = this.#s.coordinator;
    c.assertOpen(op);
    const engine = await this.#engine(op);
    if (engine.domain.ownership !== 'managed') {
      throw new TenferroError('Unsupported', 'shared execution scopes require a tenferro-managed CPU domain; use ordinary operation entry for external domains', { op });
    }
    const owner = newExecutionOwner();
    return runInFrame({ owner, live: true, scope: undefined }, async () => {
      const permit = await c.arbiter.acquire(this.#request()!, { owner });
      try {
        const entry = new CpuOperationEntry(engine, permit, owner);
        return await entry.enter(
          entry.preferredEngineMode(),
          () => {
            const scope: ScopeRecord = { identity: this.#s.identity, engine, permit, entry, operationActive: false };
            return runInFrame({ owner, live: true, scope }, async () => await fn());
          },
          op,
        );
      } finally {
        permit.release();
      }
    });
  }

  executionInfo(): CpuExecutionInfo {
    const s = this.#s;
    const c = s.coordinator;
    const engine = c.builtEngine(s.resolved);
    const domain = engine?.domain ?? this.#plannedDomain();
    const caps = engine?.executor.capabilities();
    const r = s.resolved;
    const placement = r.mode === 'managed' || r.mode === 'externalManaged' ? r.placement : undefined;
    const pinned = c.affinityAvailable;
    // R46: a cooperative external domain is never upgraded beyond what tenferro can know.
    const affinity = r.mode === 'externalManaged' ? 'callerDeclaredUnverified' : (caps?.affinity ?? (pinned ? 'tenferroPinnedVerified' : 'none'));
    const domainCpus = r.mode === 'compatibility' || r.mode === 'callerManaged' ? undefined : (placement?.cpus ?? c.topology.allowedCpus).toString();
    return Object.freeze({
      backendKind: c.kind,
      executionMode: s.resolved.mode,
      requestedPlacement: describePlacement(s.placement),
      resolvedPlacement:
        placement === undefined
          ? undefined
          : placement.kind === 'numaNode'
            ? { kind: 'numaNode' as const, id: placement.id, cpus: placement.cpus.toString() }
            : { kind: 'allAllowed' as const, cpus: placement.cpus.toString() },
      topology: {
        allowedCpus: c.topology.allowedCpus.toString(),
        nodes: c.topology.nodes.map((n) => ({ id: n.id, cpus: n.cpus.toString() })),
      },
      domainId: domain.id,
      domainCpus,
      workerCount: caps?.workerCount ?? domain.threadBudget,
      threadBudget: domain.threadBudget,
      admissionMode: domain.admissionMode,
      domainOwnership: domain.ownership,
      executorAffinity: affinity,
      executorShutdown: domain.ownership === 'externalManaged' ? 'callerOwned' : (caps?.shutdown ?? 'tenferroOwned'),
      providerDiagnostic: this.#providerDiagnostic(),
      engineBuilt: engine !== undefined,
      workers: (engine?.workers() ?? []).map((w) => Object.freeze({ tid: w.tid, cpus: w.cpus?.toString() })),
      executorEntries: { installs: engine?.entries.installs ?? 0, submits: engine?.entries.submits ?? 0 },
      admission: c.arbiter.stats(),
    });
  }

  /**
   * Re-check, now, that every worker of this handle's engine is still confined to the domain
   * set: each worker's `Cpus_allowed_list` in `/proc/self/task/<tid>/status` against the set it
   * was pinned and verified to. Something outside tenferro (`taskset -p`, a cgroup change) can
   * move a thread; this says so instead of assuming. Unpinned and external engines report no
   * workers.
   */
  checkPlacement(): PlacementCheck {
    const engine = this.#s.coordinator.builtEngine(this.#s.resolved);
    const workers = (engine?.workers() ?? [])
      .filter((w) => w.cpus !== undefined)
      .map((w) => {
        const observed = statusCpusAllowed(`/proc/self/task/${w.tid}/status`);
        return Object.freeze({ tid: w.tid, expected: w.cpus!.toString(), observed, ok: observed !== undefined && CpuSet.parse(observed).equals(w.cpus!) });
      });
    return Object.freeze({ ok: workers.every((w) => w.ok), workers });
  }

  /** Shut every engine of this coordinator down; later calls reject with `BackendClosed`. */
  close(): Promise<void> {
    return this.#s.coordinator.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    const info = this.executionInfo();
    return `CpuBackend(${info.backendKind}, ${info.executionMode}, domain ${String(info.domainId)}, cpus ${info.domainCpus ?? '-'}, ${info.workerCount} workers${this.closed ? ', closed' : ''})`;
  }

  /**
   * The one admission path of every entry point (contract §6.1): scope sharing, then re-entry
   * rejection before any permit, then a permit by resolved mode (R34) in a fresh execution frame,
   * released on every exit.
   */
  async #execute<R>(
    op: string,
    modeFor: (entry: CpuOperationEntry) => ParallelMode,
    body: (entry: CpuOperationEntry, shared: boolean, mode: ParallelMode, op: string) => Promise<R>,
  ): Promise<R> {
    const scope = this.#sharedScope(op);
    if (scope !== undefined) {
      try {
        return await body(scope.entry, true, modeFor(scope.entry), op);
      } finally {
        scope.operationActive = false;
      }
    }
    assertNotReentered(op);
    const c = this.#s.coordinator;
    c.assertOpen(op);
    const engine = await this.#engine(op);
    const owner = newExecutionOwner();
    return runInFrame({ owner, live: true, scope: undefined }, async () => {
      const request = this.#request();
      if (request === undefined) {
        // Caller-managed: no arbiter (R35); the domain's guard admits one execution at a time (R43).
        if (!engine.tryClaim(owner)) throw reentered(op);
        try {
          c.assertOpen(op);
          const entry = new CpuOperationEntry(engine, undefined, owner);
          return await body(entry, false, modeFor(entry), op);
        } finally {
          engine.release(owner);
        }
      }
      const permit = await c.arbiter.acquire(request, { owner });
      try {
        c.assertOpen(op);
        const entry = new CpuOperationEntry(engine, permit, owner);
        return await body(entry, false, modeFor(entry), op);
      } finally {
        permit.release();
      }
    });
  }

  /** One operation in `mode`: enter the executor, or reuse an idle execution scope's entry. */
  #operate<R>(op: string, mode: ParallelMode, fn: (entry: CpuOperationEntry, ctx: CpuExecutionContext) => R | Promise<R>): Promise<R> {
    return this.#execute(op, () => mode, (entry, shared, m, name) =>
      shared ? entry.reuse(m, (ctx) => fn(entry, ctx), name) : entry.enter(m, (ctx) => fn(entry, ctx), name),
    );
  }

  /** This handle's domain as bundle validation sees it (before its engine is built). */
  #validationDomain(): ValidationDomain {
    const d = this.#plannedDomain();
    return { id: d.id, threadBudget: d.threadBudget, admissionMode: d.admissionMode };
  }

  /** `execution_admission`: borrow the scope's permit and entry when a scope of this witness is idle. */
  #sharedScope(op: string): ScopeRecord | undefined {
    const scope = currentFrame()?.scope;
    if (scope === undefined || scope.operationActive) return undefined;
    if (scope.identity !== this.#s.identity) {
      throw new TenferroError('ScopeWitnessMismatch', 'operation backend does not match the execution scope; use a clone of its backend witness', { op });
    }
    scope.operationActive = true;
    return scope;
  }

  /** The permit request by resolved mode (R34); `undefined` for caller-managed domains (guard, no arbiter). */
  #request(): ResourceRequest | undefined {
    const r = this.#s.resolved;
    switch (r.mode) {
      case 'providerDefaultExclusive':
        return { providerExclusive: true };
      case 'managed':
      case 'externalManaged':
        return { cpus: r.placement.cpus };
      case 'callerManaged':
        return undefined;
      default:
        return { cpus: this.#s.coordinator.topology.allowedCpus };
    }
  }

  #engine(op: string): Promise<CpuEngine> {
    return this.#s.coordinator.engine(this.#s.resolved, op);
  }

  #plannedDomain(): CpuDomain {
    const c = this.#s.coordinator;
    const r = this.#s.resolved;
    const built = c.builtEngine(r);
    if (built !== undefined) return built.domain;
    const cpus = r.mode === 'managed' ? r.placement.cpus : c.topology.allowedCpus;
    const limit = c.affinityAvailable ? cpus.size : Math.max(1, c.topology.effectiveCapacity.cpus);
    return {
      id: r.mode === 'managed' ? managedDomainId(r.placement, c.topology) : 0,
      threadBudget: Math.min(c.threads, limit),
      admissionMode: 'cooperativeCpuSet',
      placement: r.mode === 'managed' ? r.placement : undefined,
      ownership: 'managed',
    };
  }

  #providerDiagnostic(): string {
    const s = this.#s;
    const workers = {
      managed: 'tenferro-managed pinned workers',
      providerDefaultExclusive: 'tenferro-managed pinned workers, provider-exclusive',
      compatibility: 'unpinned compatibility workers',
      externalManaged: 'externally managed CPU executor',
      callerManaged: 'caller-managed CPU executor and admission',
    }[s.resolved.mode];
    const named = s.providers.filter((p) => p.kind === s.coordinator.kind).map((p) => p.name);
    if (named.length > 0) return `${named.join(', ')} (${workers})`;
    const note = s.providerNote ?? 'install @tenferro/provider-faer for native kernels';
    return `reference providers (TypeScript, sequential, slow; ${note}) on ${workers}`;
  }
}

/**
 * The standard bundle of a kind (R50, R54): built-in slots, replaced by those of the provider
 * packages passed for that kind; blas uses the provider-default-compatibility policy.
 */
function standardBundle(kind: CpuBackendKind, providers: readonly CpuProviderPackage[], policy?: CapabilityPolicy): CpuProviderBundle {
  const builder = CpuProviderBundle.builder(kind);
  builder.capabilityPolicy(policy ?? (kind === 'blas' ? 'providerDefaultCompatibility' : 'strict'));
  for (const p of providers) {
    if (p.kind !== kind) continue;
    if (p.gemm !== undefined) builder.gemmProvider(p.gemm);
    if (p.layoutTransform !== undefined) builder.layoutTransformProvider(p.layoutTransform);
    if (p.generalContraction !== undefined) builder.preferGeneralContractionProvider(p.generalContraction);
    for (const [key, value] of p.extensions ?? []) builder.extension(key, value);
  }
  return builder.build();
}

function assertKindAvailable(kind: CpuBackendKind, providers: readonly CpuProviderPackage[], op: string): void {
  if (kind === 'blas' && !providers.some((p) => p.kind === 'blas')) {
    throw new TenferroError('BackendKindUnavailable', "the 'blas' kind needs @tenferro/provider-blas: install it (it is then found by CpuBackend.create) or pass providers: [createBlasProvider()]", {
      op,
      detail: { kind: 'blas', package: '@tenferro/provider-blas' },
    });
  }
}

/** Bundle validation of an external coordinator: every registered domain, and no BLAS family on caller-managed ones (R47, R57). */
function validateExternalBundle(coordinator: Coordinator, bundle: CpuProviderBundle, op: string): void {
  for (const engine of coordinator.external!.engines()) {
    const d = engine.domain;
    if (d.admissionMode === 'callerManaged' && bundle.kind === 'blas') {
      const cause = new TenferroError('CallerManagedBlasUnsupported', 'the BLAS family cannot be confined to a caller-managed executor', { op });
      throw new TenferroError('IncompatibleDomain', `the bundle cannot run on caller-managed domain ${String(d.id)}: ${cause.message}`, {
        op,
        cause,
        detail: { domainId: d.id, slot: 'gemm', reason: cause.code },
      });
    }
    validateBundleForDomain(bundle, d, op);
  }
}

function workerEngineActive(): boolean {
  const scope = (globalThis as Record<symbol, unknown>)[WORKER_SCOPE_KEY] as { engineState: Int32Array } | undefined;
  return scope !== undefined && Atomics.load(scope.engineState, EngineState.ACTIVE_OWNER) !== 0;
}
