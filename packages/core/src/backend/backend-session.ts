import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuDomainId } from '../contract/cpu-domain.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { ParallelMode } from '../contract/parallel-mode.js';
import type { GemmAnalysisCache } from '../contraction/gemm-analysis-cache.js';
import type { DotGeneralDims, DotGeneralIntoOptions, DotGeneralOptions } from '../contraction/validate-dot-general.js';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import * as ops from '../ops/dot-general.js';
import { gemmGrouped } from '../ops/gemm-grouped.js';
import { withMaterializedTensorRead } from '../ops/materialized-read.js';
import type { SharedTensorAllocationDomain } from '../buffer/allocation-domain.js';
import type { GemmGroupedOptions, GemmJob } from '../contraction/validate-grouped-gemm.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { type OperationRunner, admissionAborted } from '../runtime/execution/admission.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import type { DType } from '../tensor/dtype.js';
import type { Tensor } from '../tensor/tensor.js';
import { operationTargets } from './operation-targets.js';

/**
 * The session handed to `withBackendSession` callbacks: one permit and one executor entry for a
 * sequence of operations. Each operation picks its own logical mode and reuses the entry
 * (`enter_or_reuse`, R80). Valid only inside its callback.
 */
export class CpuExecSession {
  readonly #context: CpuExecutionContext | undefined;
  readonly #entry: CpuOperationEntry;
  readonly #kind: CpuBackendKind;
  readonly #bundle: CpuProviderBundle;
  readonly #runner: OperationRunner;
  #live = true;

  /** @internal created by `CpuBackend.withBackendSession`. */
  constructor(entry: CpuOperationEntry, context: CpuExecutionContext | undefined, kind: CpuBackendKind, bundle: CpuProviderBundle, gemmCache?: GemmAnalysisCache) {
    this.#entry = entry;
    this.#context = context;
    this.#kind = kind;
    this.#bundle = bundle;
    this.#runner = {
      domain: entry.engine.domain,
      allocationDomain: entry.allocationDomain,
      executorHasPool: entry.engine.capabilities.innerParallelism === 'pool',
      // R82: the caller's cache, else (undefined) the engine's own is lent.
      ...(gemmCache === undefined ? {} : { analysisCache: gemmCache }),
      // The session's own signal (withBackendSession's) supervises the whole session; an
      // operation's signal is honoured until the operation starts.
      run: (op, mode, body, signal) => {
        this.#assertLive(op);
        if (signal?.aborted) throw admissionAborted(op, signal);
        return this.#enter(mode, (ctx) => body(entry, ctx), op);
      },
      // Inside an entered session there is no engine-scheduled fan-out (R110): one call in `mode`.
      runOuterOr: (op, _count, _outerJob, mode, body, signal) => this.#runner.run(op, mode, body, signal).then(() => 'entered' as const),
    };
    operationTargets.set(this, { runner: this.#runner, bundle });
  }

  /**
   * `dotGeneral` on the session's entry: no new permit, no executor entry. Same arguments and
   * result as {@link CpuBackend.dotGeneral}.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
   * const gram = await backend.withBackendSession((session) => session.dotGeneral(a, a, { contracting: [[0], [0]] })); // aᵀ·a
   * console.log(gram.shape, gram.toArray()); // prints: [ 3, 3 ] [ 5, 11, 17, 11, 25, 39, 17, 39, 61 ]
   * await backend.close();
   * ```
   */
  async dotGeneral<D extends DType>(lhs: Tensor<D>, rhs: Tensor<D>, dims: DotGeneralDims, options: DotGeneralOptions = {}): Promise<Tensor<D>> {
    this.#assertLive('CpuExecSession.dotGeneral');
    return ops.dotGeneral(this.#runner, this.#bundle, lhs, rhs, dims, options, 'CpuExecSession.dotGeneral');
  }

  /**
   * `out = alpha · dot_general(lhs, rhs) + beta · out` on the session's entry: no new permit, no
   * executor entry. Same arguments and result as {@link CpuBackend.dotGeneralInto}.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const acc = Tensor.zeros('f64', [2, 2]);
   * await backend.withBackendSession(async (session) => {
   *   for (let i = 0; i < 3; i++) await session.dotGeneralInto(acc, a, a, { contracting: [[1], [0]] }, { beta: 1 }); // acc += a·a
   * });
   * console.log(acc.toArray()); // prints: [ 21, 30, 45, 66 ]
   * await backend.close();
   * ```
   */
  async dotGeneralInto<D extends DType>(out: Tensor<D>, lhs: Tensor<D>, rhs: Tensor<D>, dims: DotGeneralDims, options: DotGeneralIntoOptions = {}): Promise<Tensor<D>> {
    this.#assertLive('CpuExecSession.dotGeneralInto');
    return ops.dotGeneralInto(this.#runner, this.#bundle, out, lhs, rhs, dims, options, 'CpuExecSession.dotGeneralInto');
  }

  /**
   * Grouped GEMM on the session's entry (R110): inside an entered session there is no engine
   * fan-out, so the group is one provider-owned call in the GEMM's dispatch mode.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
   * const aa = Tensor.zeros('f64', [2, 2]);
   * const twice = Tensor.zeros('f64', [2, 2]);
   * await backend.withBackendSession((session) =>
   *   session.gemmGrouped([
   *     { out: aa, lhs: a, rhs: a },
   *     { out: twice, lhs: a, rhs: Tensor.fromArray('f64', [2, 2], [2, 0, 0, 2]) },
   *   ]),
   * );
   * console.log(aa.toArray({ order: 'row' }), twice.toArray({ order: 'row' })); // prints: [ 7, 10, 15, 22 ] [ 2, 4, 6, 8 ]
   * await backend.close();
   * ```
   */
  async gemmGrouped<D extends DType>(jobs: readonly GemmJob<D>[], options?: GemmGroupedOptions): Promise<void> {
    this.#assertLive('CpuExecSession.gemmGrouped');
    return gemmGrouped(this.#runner, this.#bundle, jobs, options, 'CpuExecSession.gemmGrouped');
  }

  /**
   * R77 in a session: `fn` reads `tensor` densely — a dense tensor as it is, a view materialised
   * on the session's entry into storage borrowed from the session's buffer pool, returned to that
   * pool when `fn` settles (success or error). The dense tensor is valid only inside `fn`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const m = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
   * const sums = await backend.withBackendSession((session) =>
   *   session.withMaterializedTensorRead(m.transpose(), (dense) => dense.toTypedArray().reduce((s, x) => s + x, 0)),
   * );
   * console.log(sums); // prints: 10
   * await backend.close();
   * ```
   */
  async withMaterializedTensorRead<D extends DType, R>(tensor: Tensor<D>, fn: (dense: Tensor<D>) => R | Promise<R>): Promise<R> {
    const op = 'CpuExecSession.withMaterializedTensorRead';
    this.#assertLive(op);
    return withMaterializedTensorRead(this.#runner, this.#bundle, tensor, fn, undefined, op);
  }

  /**
   * The allocation domain the session's fresh outputs come from (its handle's), or `undefined` (R2).
   *
   * @example
   * ```ts
   * import { CpuBackend, type SharedTensorAllocationDomain } from '@tenferro/core';
   *
   * const arena: SharedTensorAllocationDomain = { name: 'arena', allocate: (bytes) => new SharedArrayBuffer(bytes), release: () => {} };
   * const backend = await CpuBackend.create({ threads: 1 });
   * const name = await backend.withAllocationDomain(arena).withBackendSession((session) => session.sharedAllocationDomain()?.name);
   * console.log(name); // prints: arena
   * await backend.close();
   * ```
   */
  sharedAllocationDomain(): SharedTensorAllocationDomain | undefined {
    return this.#entry.allocationDomain;
  }

  /**
   * The context the session entered with (the preferred engine mode). External domains keep
   * operation-level entry (R49) and have none: use `run`.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const mode = await backend.withBackendSession((session) => session.context.parallelMode);
   * console.log(mode); // prints: inner
   * await backend.close();
   * ```
   */
  get context(): CpuExecutionContext {
    if (this.#context === undefined) {
      throw new TenferroError('Unsupported', 'sessions on external domains enter the executor per operation; use session.run(mode, fn)', {
        op: 'CpuExecSession.context',
      });
    }
    return this.#context;
  }

  /**
   * The kind of the backend that opened this session.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(await backend.withBackendSession((session) => session.kind())); // prints: faer
   * await backend.close();
   * ```
   */
  kind(): CpuBackendKind {
    return this.#kind;
  }

  /**
   * The id of the domain this session's permit and entry are on (the backend's default domain
   * unless the handle came from `forDomain` or `forPlacement`).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const id = await backend.withBackendSession((session) => session.domainId());
   * console.log(id === backend.executionInfo().domainId); // prints: true
   * await backend.close();
   * ```
   */
  domainId(): CpuDomainId {
    return this.#entry.engine.domain.id;
  }

  /**
   * Run one operation on the session's entry with a fresh context of `mode`: no new permit, no
   * executor call. Outer → `Scheduling`.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * const modes = await backend.withBackendSession(async (session) => [
   *   await session.run('sequential', (ctx) => ctx.parallelMode),
   *   await session.run('inner', (ctx) => ctx.nativeThreadCount()),
   * ]);
   * console.log(modes); // prints: [ 'sequential', 2 ]
   * await backend.close();
   * ```
   */
  async run<R>(mode: ParallelMode, fn: (ctx: CpuExecutionContext) => R | Promise<R>): Promise<R> {
    const op = 'CpuExecSession.run';
    if (mode !== 'sequential' && mode !== 'inner' && mode !== 'outer') throw invalidArgument(op, 'mode', "'sequential', 'inner' or 'outer'", mode);
    if (typeof fn !== 'function') throw invalidArgument(op, 'fn', 'a function', fn);
    return this.#runner.run(op, mode, (_entry, ctx) => fn(ctx));
  }

  /** @internal */
  end(): void {
    this.#live = false;
  }

  /** Reuse the session's entry (managed) or enter the executor for this operation (external, R49). */
  #enter<R>(mode: ParallelMode, fn: (ctx: CpuExecutionContext) => R | Promise<R>, op: string): Promise<R> {
    if (this.#context === undefined) return this.#entry.enter(mode, fn, op);
    if (mode === this.#context.parallelMode) return Promise.resolve(fn(this.#context));
    return this.#entry.reuse(mode, fn, op);
  }

  #assertLive(op: string): void {
    if (!this.#live) throw new TenferroError('ContextExpired', 'this session has ended', { op });
  }
}
