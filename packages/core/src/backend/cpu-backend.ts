import { loadOs } from '@tenferro/os';
import type { BufferPoolStats } from '../buffer/buffer-pool.js';
import type { CpuBackendKind, CpuPlacement, ResolvedCpuPlacement } from '../contract/backend-kind.js';
import { validateKind, validatePlacement } from '../contract/backend-kind.js';
import type { CpuDomainId } from '../contract/cpu-domain.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { ExternalCpuDomain } from '../contract/external-cpu-domain.js';
import type { DotGeneralDims, DotGeneralIntoOptions, DotGeneralOptions } from '../contraction/validate-dot-general.js';
import type { GemmAnalysisCacheStats } from '../contraction/gemm-analysis-cache.js';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import * as ops from '../ops/dot-general.js';
import { gemmGrouped } from '../ops/gemm-grouped.js';
import type { GemmGroupedOptions, GemmJob } from '../contraction/validate-grouped-gemm.js';
import { reshape } from '../ops/reshape.js';
import { withMaterializedTensorRead } from '../ops/materialized-read.js';
import { type SharedTensorAllocationDomain, validateAllocationDomain } from '../buffer/allocation-domain.js';
import { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { Coordinator } from '../runtime/engine/coordinator.js';
import { type AdmissionTarget, type OperationRunner, handleRunner, openExecutionScope, runOuterLanes, runSession } from '../runtime/execution/admission.js';
import type { DType } from '../tensor/dtype.js';
import { keep, Tensor, tensorInternals } from '../tensor/tensor.js';
import { tidy } from '../tensor/tidy.js';
import { discoverCpuTopology } from '../topology/discover-topology.js';
import type { IndexedPlanCacheLimits, IndexedPlanCacheStats } from '../util/indexed-plan-cache.js';
import type { CpuTopology } from '../topology/topology-types.js';
import { type CpuBackendOptions, type ExternalBackendOptions, type RunOptions, threadsFromEnv, validateBackendOptions, validateRunOptions, validateTopology } from './backend-options.js';
import { CpuExecSession } from './backend-session.js';
import { type SessionOptions, validateSessionOptions } from './session-options.js';
import { operationTargets } from './operation-targets.js';
import { type CpuExecutionInfo, type PlacementCheck, checkWorkerPlacement, describeExecution } from './execution-info.js';
import { type ReferenceFallback, discoverDefaultKind, discoverProvider, reportDefaultKindBlas, reportReferenceFallback, reportUnpinned } from './provider-discovery.js';
import { reportIsolateArbiter } from './isolate-exclusion.js';
import { assertKindAvailable, standardBundle, validateBundle } from './standard-bundle.js';
import { type ThreadCensus, takeThreadCensus } from './thread-census.js';

/** Opaque witness token: equal for clones, fresh for every derived handle (R2). */
export type CpuRuntimeIdentity = object;

const CONSTRUCT = Symbol('CpuBackend');
const EXTERNAL_OPTIONS: ReadonlySet<string> = new Set(['defaultDomain', 'domains', 'bundle', 'topology', 'kind', 'providers']);

interface HandleState extends AdmissionTarget {
  readonly identity: CpuRuntimeIdentity;
  readonly placement: CpuPlacement;
  readonly providers: readonly CpuProviderPackage[];
  readonly bundle: CpuProviderBundle;
  /** Why no provider package was discovered, when none was (diagnostics). */
  readonly providerNote: string | undefined;
  /** Set when discovery left the kind on the reference GEMM (`executionInfo().fallback`). */
  readonly fallback: ReferenceFallback | undefined;
  /** This handle as the place operations run (built once per handle). */
  readonly runner: OperationRunner;
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
  constructor(token: typeof CONSTRUCT, state: Omit<HandleState, 'runner'>) {
    if (token !== CONSTRUCT) throw new TypeError('CpuBackend: use CpuBackend.create()');
    this.#s = { ...state, runner: handleRunner(state) };
    operationTargets.set(this, this.#s);
  }

  /**
   * Resolve the placement (R12–R14) and build its engine: workers pinned to the whole domain set
   * and verified before this resolves (D2). Errors: `InvalidArgument`, `BackendKindUnavailable`,
   * `ExternalProviderAffinityUnmanaged`, `ManagedAffinityUnavailable`, `NumaDiscoveryUnavailable`,
   * `UnknownNumaNode`, `WorkerPinning`, `WorkerStartupClosed`. Without `kind` the default follows
   * what is installed (R40, #36): faer when its package loads, else blas when provider-blas is
   * available (warning `TENFERRO_DEFAULT_KIND_BLAS`), else faer on the reference kernels
   * (`TENFERRO_REFERENCE_FALLBACK`); `executionInfo().backendKind` says which.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.kind(), backend.numThreads()); // prints: faer 2
   * await backend.close();
   * ```
   */
  static async create(options: CpuBackendOptions = {}): Promise<CpuBackend> {
    const op = 'CpuBackend.create';
    const o = validateBackendOptions(options, op);
    // R40 as #36 amends it: without `kind` (and without `providers`) the default follows what is installed.
    const chosen = o.kind === undefined && o.providers === undefined ? await discoverDefaultKind(op, o.placement === 'auto') : undefined;
    const kind: CpuBackendKind = o.kind ?? chosen?.kind ?? 'faer';
    const discovered = chosen?.discovery ?? (o.providers === undefined ? await discoverProvider(kind, op) : undefined);
    const providers = o.providers ?? discovered?.packages ?? [];
    assertKindAvailable(kind, providers, op);
    // Never silently slow: one warning per process (or an error under TENFERRO_NO_REFERENCE_FALLBACK=1).
    if (discovered?.fallback !== undefined) reportReferenceFallback(discovered.fallback, op);
    const threads = o.threads ?? threadsFromEnv(op);
    const topology = o.topology ?? discoverCpuTopology();
    const os = loadOs();
    const coordinator = new Coordinator({ topology, kind, threads: threads ?? topology.effectiveCapacity.cpus, affinityAvailable: os.available });
    const plan = coordinator.plan(o.placement, op);
    const bundle = standardBundle(kind, providers);
    validateBundle(coordinator, bundle, op);
    await coordinator.engine(plan, op);
    // Said once each, after the backend exists: blas by default, unpinned workers, lost exclusion across isolates.
    if (chosen?.blasInsteadOfFaer !== undefined) reportDefaultKindBlas(chosen.blasInsteadOfFaer, discovered?.package?.name ?? 'the blas kind');
    reportUnpinned(os);
    reportIsolateArbiter(coordinator.arbiter.kind, os);
    return new CpuBackend(CONSTRUCT, { coordinator, plan, identity: Object.freeze({}), placement: o.placement, providers, bundle, providerNote: discovered?.note, fallback: discovered?.fallback });
  }

  /**
   * A backend over application-owned executors (contract §3.F). Validated atomically in the
   * order of R39, then the bundle against every domain (strict, R54, R57). The kind is `faer`
   * whenever a caller-managed domain is present, and when `kind` is omitted whatever is installed
   * (R40, #36: the strict standard bundle refuses an uncontrolled BLAS, R54); `blas` is refused on caller-managed
   * domains before anything runs (R47). `auto` routes to `defaultDomain`; `forDomain(id)` reaches
   * any domain.
   *
   * @example
   * ```ts
   * import { CpuBackend, ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
   * const backend = await CpuBackend.fromExternalDomains({
   *   defaultDomain: 7,
   *   domains: [ExternalCpuDomain.callerManaged(7, executor, 2)],
   * });
   * console.log(backend.executionInfo().executionMode); // prints: callerManaged
   * await backend.close();
   * await executor.close(); // the executor stays the application's
   * ```
   */
  static async fromExternalDomains(options: ExternalBackendOptions): Promise<CpuBackend> {
    const op = 'CpuBackend.fromExternalDomains';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    for (const key of Object.keys(options)) {
      if (!EXTERNAL_OPTIONS.has(key)) throw invalidArgument(op, `options.${key}`, `one of ${[...EXTERNAL_OPTIONS].join(', ')}`, key);
    }
    if (options.providers !== undefined && !Array.isArray(options.providers)) throw invalidArgument(op, 'options.providers', 'an array of provider packages', options.providers);
    if (options.kind !== undefined) validateKind(options.kind, op);
    if (options.bundle !== undefined && !(options.bundle instanceof CpuProviderBundle)) throw invalidArgument(op, 'options.bundle', 'a CpuProviderBundle', options.bundle);
    const callerManaged = Array.isArray(options.domains) && options.domains.some((d) => d instanceof ExternalCpuDomain && d.admissionMode() === 'callerManaged');
    // R40: caller-managed domains run the tenferro-managed kind, whatever else is installed.
    const kind: CpuBackendKind = callerManaged ? 'faer' : (options.kind ?? 'faer');
    const coordinator = new Coordinator({
      topology: options.topology === undefined ? discoverCpuTopology() : validateTopology(options.topology, op),
      kind,
      threads: 1,
      affinityAvailable: loadOs().available,
      external: { defaultDomain: options.defaultDomain, domains: options.domains, op },
    });
    if (callerManaged && options.kind === 'blas') {
      throw new TenferroError('CallerManagedBlasUnsupported', 'the blas kind cannot run on caller-managed domains: its workers cannot be confined to the supplied executor', { op });
    }
    // As create() does: without providers (and without a bundle), the kind's installed package.
    const discovered = options.providers === undefined && options.bundle === undefined ? await discoverProvider(kind, op, 'external') : undefined;
    const providers = options.providers ?? discovered?.packages ?? [];
    assertKindAvailable(kind, providers, op);
    if (discovered?.fallback !== undefined) reportReferenceFallback(discovered.fallback, op);
    // External constructors use the strict standard bundle (R54).
    const bundle = options.bundle ?? standardBundle(kind, providers, 'strict');
    validateBundle(coordinator, bundle, op);
    const plan = coordinator.planForDomain(options.defaultDomain, op);
    reportIsolateArbiter(coordinator.arbiter.kind, loadOs());
    return new CpuBackend(CONSTRUCT, { coordinator, plan, identity: Object.freeze({}), placement: 'auto', providers, bundle, providerNote: discovered?.note, fallback: discovered?.fallback });
  }

  /**
   * A handle on the registered external domain `id`, with a fresh identity (R42):
   * `UnregisteredExternalDomain` otherwise.
   *
   * @example
   * ```ts
   * import { CpuBackend, ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executors = [await WorkerThreadsDomainExecutor.create({ workers: 1 }), await WorkerThreadsDomainExecutor.create({ workers: 1 })];
   * const backend = await CpuBackend.fromExternalDomains({
   *   defaultDomain: 1,
   *   domains: executors.map((e, i) => ExternalCpuDomain.callerManaged(i + 1, e, 1)),
   * });
   * console.log(backend.forDomain(2).executionInfo().domainId); // prints: 2
   * await backend.close();
   * for (const e of executors) await e.close();
   * ```
   */
  forDomain(id: CpuDomainId): CpuBackend {
    const op = 'CpuBackend.forDomain';
    this.#s.coordinator.assertOpen(op);
    return this.#derive({ plan: this.#s.coordinator.planForDomain(id, op), placement: 'auto' });
  }

  /**
   * Same coordinator, engines, caches and runtime identity (R1, R2). Builds nothing.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const copy = backend.clone();
   * console.log(copy.runtimeIdentity() === backend.runtimeIdentity()); // prints: true
   * await backend.close();
   * ```
   */
  clone(): CpuBackend {
    return new CpuBackend(CONSTRUCT, this.#s);
  }

  /**
   * A handle on `placement` with a fresh identity; its engine is built on first use (R4). Throws
   * placement errors (`UnknownNumaNode`, …).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const everywhere = backend.forPlacement('allAllowed');
   * console.log(everywhere.placement(), everywhere.runtimeIdentity() === backend.runtimeIdentity()); // prints: allAllowed false
   * await backend.close();
   * ```
   */
  forPlacement(placement: CpuPlacement): CpuBackend {
    const op = 'CpuBackend.forPlacement';
    const p = validatePlacement(placement, op, 'placement');
    this.#s.coordinator.assertOpen(op);
    return this.#derive({ plan: this.#s.coordinator.plan(p, op), placement: p });
  }

  /**
   * Whether `placement` resolves on this coordinator; never builds an engine (R16).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.supportsPlacement('allAllowed')); // prints: true
   * console.log(backend.supportsPlacement({ numaNode: 4095 })); // prints: false
   * await backend.close();
   * ```
   */
  supportsPlacement(placement: CpuPlacement): boolean {
    const op = 'CpuBackend.supportsPlacement';
    try {
      this.#s.coordinator.plan(validatePlacement(placement, op, 'placement'), op);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A handle with `bundle` and a fresh identity, after validating the bundle against every
   * domain this coordinator can reach (R3, R60): `IncompatibleDomain` otherwise. This handle and
   * its clones keep their bundle.
   *
   * @example
   * ```ts
   * import { CpuBackend, referenceLayoutProvider } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const bundle = backend.providerBundle().toBuilder().layoutTransformProvider(referenceLayoutProvider).build();
   * const withReferenceLayout = backend.withProviderBundle(bundle);
   * console.log(withReferenceLayout.providerBundle() === bundle); // prints: true
   * await backend.close();
   * ```
   */
  withProviderBundle(bundle: CpuProviderBundle): CpuBackend {
    const op = 'CpuBackend.withProviderBundle';
    if (!(bundle instanceof CpuProviderBundle)) throw invalidArgument(op, 'bundle', 'a CpuProviderBundle', bundle);
    this.#s.coordinator.assertOpen(op);
    validateBundle(this.#s.coordinator, bundle, op);
    return this.#derive({ bundle, fallback: undefined });
  }

  /**
   * The provider bundle operations on this handle use: the kind's standard bundle, or the one
   * given to {@link CpuBackend.withProviderBundle}.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1, providers: [] });
   * console.log(backend.providerBundle().populatedSlots().map(([slot]) => slot).join(', ')); // prints: gemm, layoutTransform, tensorPrimitives
   * await backend.close();
   * ```
   */
  providerBundle(): CpuProviderBundle {
    return this.#s.bundle;
  }

  /**
   * `dot_general` into a fresh, tagged output (R96, R102–R107): the output's axes are lhs free
   * axes, rhs free axes, then batch axes (R103); see docs/tensors-and-dot-general.md.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * // A batch of two 2×2 matrix products: contract axis 1 of lhs with axis 0 of rhs, batch over axis 2.
   * const a = Tensor.fromArray('f64', [2, 2, 2], [1, 0, 0, 1, 2, 0, 0, 2]); // [I, 2·I]
   * const b = Tensor.fromArray('f64', [2, 2, 2], [1, 2, 3, 4, 1, 2, 3, 4]);
   * const c = await backend.dotGeneral(a, b, { contracting: [[1], [0]], batch: [[2], [2]] });
   * console.log(c.shape, c.toArray()); // prints: [ 2, 2, 2 ] [ 1, 2, 3, 4, 2, 4, 6, 8 ]
   * await backend.close();
   * ```
   */
  dotGeneral<D extends DType>(lhs: Tensor<D>, rhs: Tensor<D>, dims: DotGeneralDims, options: DotGeneralOptions = {}): Promise<Tensor<D>> {
    // Not `async`: one promise less per call on the hot path; a synchronous throw still becomes a rejection.
    try {
      return ops.dotGeneral(this.#s.runner, this.#s.bundle, lhs, rhs, dims, options, 'CpuBackend.dotGeneral');
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * `out = alpha · dot_general(lhs, rhs) + beta · out` into a caller-owned output (R98); `out` is
   * untouched on failure before the provider writes. Resolves to `out`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const out = Tensor.fromArray('f64', [2, 2], [1, 1, 1, 1]);
   * await backend.dotGeneralInto(out, a, a, { contracting: [[1], [0]] }, { alpha: 2, beta: 1 });
   * console.log(out.toArray()); // prints: [ 15, 21, 31, 45 ]
   * await backend.close();
   * ```
   */
  dotGeneralInto<D extends DType>(out: Tensor<D>, lhs: Tensor<D>, rhs: Tensor<D>, dims: DotGeneralDims, options: DotGeneralIntoOptions = {}): Promise<Tensor<D>> {
    try {
      return ops.dotGeneralInto(this.#s.runner, this.#s.bundle, out, lhs, rhs, dims, options, 'CpuBackend.dotGeneralInto');
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Rank-2 matrix product `a · b` into a fresh tensor (tensors are column-major unless made with
   * `{ order: 'row' }`).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
   * const c = await backend.matmul(a, a);
   * console.log(c.toArray({ order: 'row' })); // prints: [ 7, 10, 15, 22 ]
   * await backend.close();
   * ```
   */
  matmul<D extends DType>(a: Tensor<D>, b: Tensor<D>, options: DotGeneralOptions = {}): Promise<Tensor<D>> {
    try {
      return ops.matmul(this.#s.runner, this.#s.bundle, a, b, options, 'CpuBackend.matmul');
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Grouped GEMM (R110): every job `out = alpha · op(lhs) · op(rhs) + beta · out` over rank-2
   * tensors of one dtype, outputs pairwise disjoint and overlapping no input (validated before
   * anything runs). With the bundle's `engineOuter` scheduling, more than one job and a budget
   * above 1, the engine runs the jobs over `min(jobs, budget)` outer lanes, one Sequential `gemm`
   * call per job; otherwise one provider-owned call. See docs/grouped-gemm.md.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
   * const b = Tensor.fromArray('f64', [2, 2], [0, 1, 1, 0], { order: 'row' });
   * const ab = Tensor.zeros('f64', [2, 2]);
   * const ba = Tensor.zeros('f64', [2, 2]);
   * await backend.gemmGrouped([
   *   { out: ab, lhs: a, rhs: b },
   *   { out: ba, lhs: b, rhs: a, alpha: 2 },
   * ]);
   * console.log(ab.toArray({ order: 'row' }), ba.toArray({ order: 'row' })); // prints: [ 2, 1, 4, 3 ] [ 6, 8, 2, 4 ]
   * await backend.close();
   * ```
   */
  async gemmGrouped<D extends DType>(jobs: readonly GemmJob<D>[], options?: GemmGroupedOptions): Promise<void> {
    return gemmGrouped(this.#s.runner, this.#s.bundle, jobs, options, 'CpuBackend.gemmGrouped');
  }

  /**
   * `tensor.reshape(shape)` when that is metadata-only (same storage, same tag); otherwise a
   * fresh, tagged, dense copy (R97).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const t = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]).transpose(); // a strided view
   * const r = await backend.reshape(t, [6]); // needs a copy: t.reshape([6]) would throw ReshapeNeedsCopy
   * console.log(r.toArray()); // prints: [ 1, 3, 5, 2, 4, 6 ]
   * await backend.close();
   * ```
   */
  async reshape<D extends DType>(tensor: Tensor<D>, shape: readonly number[], options?: RunOptions): Promise<Tensor<D>> {
    const op = 'CpuBackend.reshape';
    return reshape(this.#s.runner, this.#s.bundle, tensor, shape, validateRunOptions(options, op), op);
  }

  /**
   * Dispose `tensor` and let its storage go to this handle's engine pool (the contract's
   * `reclaim_buffer`): like `tensor.dispose()`, and caller-made storage (`Tensor.zeros`,
   * `fromArray`) also joins the pool once no tensor over it is left. Disposed tensors are a no-op.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const c = await backend.matmul(a, a);
   * backend.reclaim(c); // c's storage is reused by the next output of the same size
   * console.log(c.disposed, backend.bufferPoolStats().buffers); // prints: true 1
   * await backend.close();
   * ```
   */
  reclaim(tensor: Tensor): void {
    const op = 'CpuBackend.reclaim';
    if (!Tensor.isTensor(tensor)) throw invalidArgument(op, 'tensor', 'a Tensor', tensor);
    this.#s.coordinator.assertOpen(op);
    if (tensor.disposed) return;
    const engine = this.#engineIfBuilt();
    if (engine !== undefined) tensorInternals.storage(tensor).adoptInto(engine.bufferPool);
    tensor.dispose();
  }

  /**
   * Run `fn` in a tidy scope: tensors made inside it, except those returned or kept, are disposed
   * when it settles; see {@link tidy}.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * let square: Tensor<'f64'> | undefined;
   * const cube = await backend.tidy(async () => {
   *   square = await backend.matmul(a, a); // disposed when the scope settles
   *   return backend.matmul(square, a); // returned: kept
   * });
   * console.log(square?.disposed, cube.disposed); // prints: true false
   * await backend.close();
   * ```
   */
  tidy<R>(fn: () => R | Promise<R>): Promise<R> {
    return tidy(fn);
  }

  /**
   * Exempt `tensor` from the tidy scopes it was made in; see {@link keep}.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * let kept: Tensor<'f64'> | undefined;
   * await backend.tidy(async () => {
   *   kept = backend.keep(await backend.matmul(a, a));
   * });
   * console.log(kept?.disposed); // prints: false
   * await backend.close();
   * ```
   */
  keep<T extends Tensor>(tensor: T): T {
    return keep(tensor);
  }

  /**
   * Retained buffers of every built engine of this coordinator, each counted once (R6).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [64, 64], new Float64Array(64 * 64));
   * (await backend.matmul(a, a)).dispose(); // the output's storage goes back to the pool
   * const stats = backend.bufferPoolStats();
   * // 32,768 bytes of data and 48 so that the data can start on a 64-byte line, in whole lines of a slab
   * console.log(stats.buffers, stats.retainedBytes); // prints: 1 32832
   * await backend.close();
   * ```
   */
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
      returnedByDispose: sum((s) => s.returnedByDispose),
      returnedByCollection: sum((s) => s.returnedByCollection),
    };
  }

  /**
   * The retention cap, in bytes, of every engine of this coordinator (see
   * {@link CpuBackend.setBufferPoolLimitBytes}).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * backend.setBufferPoolLimitBytes(1 << 20);
   * console.log(backend.bufferPoolLimitBytes()); // prints: 1048576
   * await backend.close();
   * ```
   */
  bufferPoolLimitBytes(): number {
    return this.#s.coordinator.poolLimit.bytes;
  }

  /**
   * The retention cap of every engine of this coordinator, now and later (R113, R114); 0 retains
   * nothing.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * backend.setBufferPoolLimitBytes(0); // every returned buffer is dropped
   * console.log(backend.bufferPoolStats().limitBytes); // prints: 0
   * await backend.close();
   * ```
   */
  setBufferPoolLimitBytes(bytes: number): void {
    this.#s.coordinator.poolLimit.set(bytes, 'CpuBackend.setBufferPoolLimitBytes');
  }

  /**
   * Drop every retained buffer (outstanding loans are unaffected).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [8, 8], new Float64Array(64));
   * (await backend.matmul(a, a)).dispose();
   * backend.resetBufferPool();
   * console.log(backend.bufferPoolStats().buffers); // prints: 0
   * await backend.close();
   * ```
   */
  resetBufferPool(): void {
    for (const e of this.#s.coordinator.builtEngines()) e.bufferPool.reset();
  }

  /**
   * Entries the GEMM-analysis cache of each engine keeps (default 1024): the slots callers name
   * with `analysisSlot` and, as many again, the automatic entries of calls without one. Applies to
   * current and future engines; shrinking clears (R5, R116).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * backend.setAnalysisCacheCapacity(16);
   * const a = Tensor.fromArray('f64', [4, 4], new Float64Array(16));
   * await backend.matmul(a, a, { analysisSlot: 0 });
   * console.log(backend.analysisCacheStats()?.capacity); // prints: 16
   * await backend.close();
   * ```
   */
  setAnalysisCacheCapacity(capacity: number): void {
    this.#s.coordinator.setAnalysisCapacity(capacity, 'CpuBackend.setAnalysisCacheCapacity');
  }

  /**
   * The indexed-plan cache limits of every engine of this coordinator (R118).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * backend.setIndexedPlanCacheLimits({ maxEntries: 64, maxBytes: 1 << 20 });
   * console.log(backend.indexedPlanCacheLimits()); // prints: { maxEntries: 64, maxBytes: 1048576 }
   * await backend.close();
   * ```
   */
  indexedPlanCacheLimits(): IndexedPlanCacheLimits {
    return this.#s.coordinator.indexedPlanLimits;
  }

  /**
   * Bound the indexed-plan cache of every engine, current and future (R5, R118): `{ maxEntries,
   * maxBytes }`, a zero bound retaining nothing; shrinking evicts least recently used plans at
   * once. `InvalidArgument` (and no engine changed) for a malformed argument.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * backend.setIndexedPlanCacheLimits({ maxEntries: 0, maxBytes: 0 }); // retain no plan at all
   * console.log(backend.indexedPlanCacheStats().entries); // prints: 0
   * await backend.close();
   * ```
   */
  setIndexedPlanCacheLimits(limits: IndexedPlanCacheLimits): void {
    this.#s.coordinator.setIndexedPlanLimits(limits, 'CpuBackend.setIndexedPlanCacheLimits');
  }

  /**
   * The indexed-plan caches of every built engine, each counted once (R6), with the current limits.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * await backend.install((ctx) => ctx.indexedPlans.getOrBuild('example', [2, 3], () => ({ plan: [1, 2, 3], bytes: 24 })));
   * const stats = backend.indexedPlanCacheStats();
   * console.log(stats.entries, stats.bytes, stats.misses); // prints: 1 24 1
   * await backend.close();
   * ```
   */
  indexedPlanCacheStats(): IndexedPlanCacheStats {
    const engines = this.#s.coordinator.builtEngines();
    const sum = (f: (s: IndexedPlanCacheStats) => number) => engines.reduce((acc, e) => acc + f(e.indexedPlans.stats()), 0);
    return { ...this.#s.coordinator.indexedPlanLimits, entries: sum((s) => s.entries), bytes: sum((s) => s.bytes), hits: sum((s) => s.hits), misses: sum((s) => s.misses), evictions: sum((s) => s.evictions) };
  }

  /**
   * Drop every plan of every engine's indexed-plan cache (R5).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * await backend.install((ctx) => ctx.indexedPlans.getOrBuild('example', [2, 3], () => ({ plan: 'plan', bytes: 8 })));
   * backend.clearIndexedPlanCache();
   * console.log(backend.indexedPlanCacheStats().entries); // prints: 0
   * await backend.close();
   * ```
   */
  clearIndexedPlanCache(): void {
    for (const e of this.#s.coordinator.builtEngines()) e.indexedPlans.clear();
  }

  /**
   * R77: `fn` reads `tensor` densely — a dense tensor as it is, a view materialised into storage
   * borrowed from this handle's engine pool, which goes back to that pool when `fn` settles
   * (success or error). The dense tensor is valid only inside `fn`; `fn` runs outside any
   * execution, so it may call the backend.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
   * const column = m.slice([0, 2], [1, 2]); // a strided view: the middle column
   * const values = await backend.withMaterializedTensorRead(column, (dense) => Array.from(dense.toTypedArray()));
   * console.log(column.isDense('col'), values); // prints: false [ 2, 5 ]
   * await backend.close();
   * ```
   */
  async withMaterializedTensorRead<D extends DType, R>(tensor: Tensor<D>, fn: (dense: Tensor<D>) => R | Promise<R>, options?: RunOptions): Promise<R> {
    const op = 'CpuBackend.withMaterializedTensorRead';
    return withMaterializedTensorRead(this.#s.runner, this.#s.bundle, tensor, fn, validateRunOptions(options, op), op);
  }

  /**
   * A handle whose fresh outputs come from `domain`'s allocator (R2): a new runtime identity, the
   * same coordinator, engines, bundle and placement; everything else behaves as on this handle.
   * Storage goes back to `domain.release` when its last tensor is disposed or collected, or when
   * the operation fails. `InvalidArgument` for a malformed domain.
   *
   * @example
   * ```ts
   * import { CpuBackend, type SharedTensorAllocationDomain, Tensor } from '@tenferro/core';
   *
   * const allocated: number[] = [];
   * const arena: SharedTensorAllocationDomain = {
   *   name: 'arena',
   *   allocate: (bytes) => (allocated.push(bytes), new SharedArrayBuffer(bytes)),
   *   release: () => {},
   * };
   * const backend = await CpuBackend.create({ threads: 1 });
   * const fromArena = backend.withAllocationDomain(arena);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * await fromArena.matmul(a, a);
   * console.log(allocated); // prints: [ 32 ]
   * await backend.close();
   * ```
   */
  withAllocationDomain(domain: SharedTensorAllocationDomain): CpuBackend {
    const op = 'CpuBackend.withAllocationDomain';
    const d = validateAllocationDomain(domain, op);
    this.#s.coordinator.assertOpen(op);
    return this.#derive({ allocationDomain: d });
  }

  /**
   * The allocation domain this handle's fresh outputs come from, or `undefined` (the engine's buffer pool).
   *
   * @example
   * ```ts
   * import { CpuBackend, type SharedTensorAllocationDomain } from '@tenferro/core';
   *
   * const arena: SharedTensorAllocationDomain = { name: 'arena', allocate: (bytes) => new SharedArrayBuffer(bytes), release: () => {} };
   * const backend = await CpuBackend.create({ threads: 1 });
   * console.log(backend.sharedAllocationDomain(), backend.withAllocationDomain(arena).sharedAllocationDomain()?.name); // prints: undefined arena
   * await backend.close();
   * ```
   */
  sharedAllocationDomain(): SharedTensorAllocationDomain | undefined {
    return this.#s.allocationDomain;
  }

  /**
   * The GEMM-analysis cache of this handle's engine (R116); `undefined` until the engine is built.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [4, 4], new Float64Array(16));
   * for (let i = 0; i < 3; i++) await backend.matmul(a, a, { analysisSlot: 0 }); // analysed once
   * console.log(backend.analysisCacheStats()?.hits); // prints: 2
   * await backend.close();
   * ```
   */
  analysisCacheStats(): GemmAnalysisCacheStats | undefined {
    return this.#engineIfBuilt()?.analysisCache.stats();
  }

  /**
   * Build this handle's engine now (it is otherwise built on first use).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const everywhere = backend.forPlacement('allAllowed');
   * await everywhere.ready(); // the workers start and are verified here, not in the first operation
   * console.log(everywhere.executionInfo().engineBuilt); // prints: true
   * await backend.close();
   * ```
   */
  async ready(): Promise<void> {
    await this.#s.coordinator.engine(this.#s.plan, 'CpuBackend.ready');
  }

  /**
   * The backend kind: `'faer'` (tenferro-managed kernels) or `'blas'` (the system BLAS).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.kind()); // prints: faer
   * await backend.close();
   * ```
   */
  kind(): CpuBackendKind {
    return this.#s.coordinator.kind;
  }

  /**
   * The placement this handle was asked for (`'auto'` unless made with `forPlacement` or
   * `create({ placement })`); {@link CpuBackend.resolvedPlacement} says what it resolved to.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.placement()); // prints: auto
   * await backend.close();
   * ```
   */
  placement(): CpuPlacement {
    return this.#s.placement;
  }

  /**
   * The placement resolved against the topology, with its exact CPU set: present for managed and
   * external cooperative execution only (R20).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const resolved = backend.resolvedPlacement();
   * console.log(resolved?.kind, String(resolved?.cpus)); // e.g. allAllowed 0-1
   * await backend.close();
   * ```
   */
  resolvedPlacement(): ResolvedCpuPlacement | undefined {
    return this.#s.plan.resolvedPlacement;
  }

  /**
   * The CPU topology this coordinator was built on (discovered, or `create({ topology })`).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const topology = backend.topology();
   * console.log(String(topology.allowedCpus), topology.nodes.length); // e.g. 0-1 1
   * await backend.close();
   * ```
   */
  topology(): CpuTopology {
    return this.#s.coordinator.topology;
  }

  /**
   * This handle's opaque runtime identity (R2): kept by {@link CpuBackend.clone}, fresh for every
   * derived handle (`forPlacement`, `forDomain`, `withProviderBundle`).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.clone().runtimeIdentity() === backend.runtimeIdentity()); // prints: true
   * console.log(backend.forPlacement('auto').runtimeIdentity() === backend.runtimeIdentity()); // prints: false
   * await backend.close();
   * ```
   */
  runtimeIdentity(): CpuRuntimeIdentity {
    return this.#s.identity;
  }

  /**
   * The thread budget of this handle's domain (`create({ threads })`, `TENFERRO_NUM_THREADS`, or
   * the topology's effective capacity).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(backend.numThreads()); // prints: 2
   * await backend.close();
   * ```
   */
  numThreads(): number {
    return this.#s.plan.domain.threadBudget;
  }

  /**
   * Whether {@link CpuBackend.close} was called on this coordinator (by this handle or any other
   * handle on it).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const copy = backend.clone();
   * await copy.close();
   * console.log(backend.closed); // prints: true
   * ```
   */
  get closed(): boolean {
    return this.#s.coordinator.closed;
  }

  /**
   * Run `fn` in one Sequential execution: admission (re-entry check, then a permit on this
   * placement's CPU set), one executor entry, then `fn(ctx)` issues kernel tasks through the
   * context. Errors: `Reentered` (before any permit), `BackendClosed`, `ScopeWitnessMismatch`.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const budget = await backend.install((ctx) => [ctx.parallelMode, ctx.threadBudget]);
   * console.log(budget); // prints: [ 'sequential', 2 ]
   * await backend.close();
   * ```
   */
  install<R>(fn: (ctx: CpuExecutionContext) => R | Promise<R>, options?: RunOptions): Promise<R> {
    const op = 'CpuBackend.install';
    // Not `async`: the execution's own promise is returned (a bad argument is a rejection all the same).
    try {
      assertFunction(fn, op);
      return this.#s.runner.run(op, 'sequential', (_entry, ctx) => fn(ctx), validateRunOptions(options, op));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * One permit and one executor entry across every operation of `fn`'s session (R79–R82). The
   * session's dot-generals use `options.gemmCache` when given, else the engine's analysis cache.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const sum = await backend.withBackendSession(async (session) => {
   *   const square = await session.dotGeneral(a, a, { contracting: [[1], [0]] });
   *   return ops(session).sum(square); // same permit, same entry
   * });
   * console.log(sum.toArray()); // prints: [ 54 ]
   * await backend.close();
   * ```
   */
  async withBackendSession<R>(fn: (session: CpuExecSession) => R | Promise<R>, options?: SessionOptions): Promise<R> {
    const op = 'CpuBackend.withBackendSession';
    assertFunction(fn, op);
    const { signal, gemmCache } = validateSessionOptions(options, op);
    return runSession(
      this.#s,
      op,
      (entry, ctx) => {
        const session = new CpuExecSession(entry, ctx, this.#s.coordinator.kind, this.#s.bundle, gemmCache);
        return Promise.resolve(fn(session)).finally(() => session.end());
      },
      signal,
    );
  }

  /**
   * Outer fan-out (R70): `min(count, budget)` lanes submitted once; `fn(ctx, index)` runs once per
   * index with a Sequential context on its lane's worker. `Scheduling` when the budget is 1.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const modes: string[] = [];
   * await backend.withOuterLanes(4, (ctx, index) => {
   *   modes[index] = ctx.parallelMode;
   * });
   * console.log(modes); // prints: [ 'sequential', 'sequential', 'sequential', 'sequential' ]
   * await backend.close();
   * ```
   */
  async withOuterLanes(count: number, fn: (ctx: CpuExecutionContext, index: number) => void | Promise<void>, options?: RunOptions): Promise<void> {
    const op = 'CpuBackend.withOuterLanes';
    return runOuterLanes(this.#s, op, count, fn, validateRunOptions(options, op));
  }

  /**
   * `execution_scope.rs` (R83–R87): one permit and one executor entry shared by the sequential
   * operations that clones of this witness issue inside `fn`. The callback's value — even an
   * error object it returns — comes back unchanged; an exception releases scope and permit first.
   * Errors: `ExecutionAlreadyActive` inside an execution or scope, `Unsupported` for external domains.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const entries = () => backend.executionInfo().executorEntries.installs;
   * const before = entries();
   * const c = await backend.withExecutionScope(async () => {
   *   const b = await backend.matmul(a, a); // both products share one permit and one entry
   *   return backend.matmul(b, a);
   * });
   * console.log(c.toArray(), entries() - before); // prints: [ 37, 54, 81, 118 ] 1
   * await backend.close();
   * ```
   */
  async withExecutionScope<R>(fn: () => R | Promise<R>, options?: RunOptions): Promise<R> {
    const op = 'CpuBackend.withExecutionScope';
    assertFunction(fn, op);
    return openExecutionScope(this.#s, op, fn, validateRunOptions(options, op));
  }

  /**
   * What this handle runs on (R119): kind, execution mode, placement and domain CPUs, workers as
   * verified, the provider diagnostic, the reference fallback if any, and the arbiter's state.
   * Provider strings are for logs only (R120).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * await backend.ready();
   * const info = backend.executionInfo();
   * console.log(info.backendKind, info.workerCount, info.workers.length); // prints: faer 2 2
   * console.log(info.providerDiagnostic); // e.g. gemm tenferro faer (avx2) …
   * await backend.close();
   * ```
   */
  executionInfo(): CpuExecutionInfo {
    return describeExecution(this.#s);
  }

  /**
   * Re-check, now, that every worker of this handle's engine is still confined to the domain
   * set (`/proc/self/task/<tid>/status` against the set it was verified on). A fan-out lane
   * narrowed to one CPU of the set for its task (the scheduler had stacked it on another running
   * lane's CPU) counts as confined while it says so. Unpinned and external engines report no workers.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * await backend.ready();
   * console.log(backend.checkPlacement().ok); // prints: true
   * await backend.close();
   * ```
   */
  checkPlacement(): PlacementCheck {
    return checkWorkerPlacement(this.#engineIfBuilt());
  }

  /**
   * Every thread of the process now (`/proc/self/task`): name, tid, CPU mask and owner where known
   * — this backend's engine workers (every engine its coordinator built), threads its provider
   * packages report (`CpuProviderPackage.threads()`, e.g. OpenBLAS's pool), the main thread,
   * Node's libuv and V8 platform threads — with the threads tenferro or a provider owns whose mask
   * leaves their domain flagged (`outsideDomain`). Reads procfs only; works after `close()` too.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * await backend.ready();
   * const census = backend.census();
   * console.log(census.threads.some((t) => t.tid === process.pid)); // prints: true
   * console.log(census.outsideDomain); // prints: []
   * await backend.close();
   * ```
   */
  census(): ThreadCensus {
    return takeThreadCensus(this.#s);
  }

  /**
   * Shut every engine of this coordinator down; later calls reject with `BackendClosed`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * await backend.close();
   * const a = Tensor.fromArray('f64', [1, 1], [1]);
   * await backend.matmul(a, a).catch((e) => console.log(e.code)); // prints: BackendClosed
   * ```
   */
  close(): Promise<void> {
    return this.#s.coordinator.close();
  }

  /**
   * {@link CpuBackend.close}, for `await using` (TypeScript 5.2+ or Node with explicit resource
   * management).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * {
   *   await using backend = await CpuBackend.create({ threads: 1 });
   *   console.log(backend.closed); // prints: false
   * } // closed here
   * ```
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    const info = this.executionInfo();
    return `CpuBackend(${info.backendKind}, ${info.executionMode}, domain ${String(info.domainId)}, cpus ${info.domainCpus ?? '-'}, ${info.workerCount} workers${this.closed ? ', closed' : ''})`;
  }

  #engineIfBuilt() {
    return this.#s.coordinator.builtEngine(this.#s.plan);
  }

  #derive(change: Partial<Pick<HandleState, 'plan' | 'placement' | 'bundle' | 'fallback' | 'allocationDomain'>>): CpuBackend {
    const { runner: _runner, ...rest } = this.#s;
    return new CpuBackend(CONSTRUCT, { ...rest, identity: Object.freeze({}), ...change });
  }
}

function assertFunction(fn: unknown, op: string): void {
  if (typeof fn !== 'function') throw invalidArgument(op, 'fn', 'a function', fn);
}
