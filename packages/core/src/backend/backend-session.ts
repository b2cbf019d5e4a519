import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../execution/execution-context.js';
import type { CpuOperationEntry } from '../execution/operation-entry.js';
import type { ParallelMode } from '../execution/parallel-mode.js';
import { type DotGeneralDims, type DotGeneralIntoOptions, type DotGeneralOptions, validateDotGeneral } from '../contraction/dot-general-dims.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { Tensor } from '../tensor/tensor.js';
import type { CpuDomainId } from './cpu-domain.js';
import { dotGeneralFresh, dotGeneralOn, domainOf } from './tensor-operations.js';
import { dispatchMode } from '../provider/bundle-validation.js';
import type { CpuBackendKind } from './placement.js';

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
  #live = true;

  /** @internal */
  constructor(entry: CpuOperationEntry, context: CpuExecutionContext | undefined, kind: CpuBackendKind, bundle: CpuProviderBundle) {
    this.#entry = entry;
    this.#context = context;
    this.#kind = kind;
    this.#bundle = bundle;
  }

  /** The extension the session's bundle stores under `key`, or `undefined` (R53). */
  providerExtension<T>(key: ExtensionKey<T>): T | undefined {
    return this.#bundle.extension(key);
  }

  /** `dotGeneral` on the session's entry: no new permit, no executor entry. */
  async dotGeneral(lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: DotGeneralOptions = {}): Promise<Tensor> {
    const op = 'CpuExecSession.dotGeneral';
    this.#assertLive(op);
    const spec = validateDotGeneral(op, lhs, rhs, dims, options);
    return this.#enter(this.#gemmMode(op), (ctx) => dotGeneralFresh(this.#entry, ctx, this.#bundle, spec, op), op);
  }

  async dotGeneralInto(out: Tensor, lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: DotGeneralIntoOptions = {}): Promise<Tensor> {
    const op = 'CpuExecSession.dotGeneralInto';
    this.#assertLive(op);
    const spec = validateDotGeneral(op, lhs, rhs, dims, options, out);
    await this.#enter(this.#gemmMode(op), (ctx) => dotGeneralOn(this.#entry, ctx, this.#bundle, spec, out, op), op);
    return out;
  }

  /** Reuse the session's entry (managed) or enter the executor for this operation (external, R49). */
  #enter<R>(mode: ParallelMode, fn: (ctx: CpuExecutionContext) => R | Promise<R>, op: string): Promise<R> {
    if (this.#context === undefined) return this.#entry.enter(mode, fn, op);
    if (mode === this.#context.parallelMode) return Promise.resolve(fn(this.#context));
    return this.#entry.reuse(mode, fn, op);
  }

  #gemmMode(op: string): ParallelMode {
    return dispatchMode(this.#bundle, 'gemm', domainOf(this.#entry), op);
  }

  #assertLive(op: string): void {
    if (!this.#live) throw new TenferroError('ContextExpired', 'this session has ended', { op });
  }

  /**
   * The context the session entered with (the preferred engine mode). External domains keep
   * operation-level entry (R49) and have none: use `run`.
   */
  get context(): CpuExecutionContext {
    if (this.#context === undefined) {
      throw new TenferroError('Unsupported', 'sessions on external domains enter the executor per operation; use session.run(mode, fn)', {
        op: 'CpuExecSession.context',
      });
    }
    return this.#context;
  }

  kind(): CpuBackendKind {
    return this.#kind;
  }

  domainId(): CpuDomainId {
    return this.#entry.engine.domain.id;
  }

  /** Run one operation on the session's entry with a fresh context of `mode`: no new permit, no executor call. Outer → `Scheduling`. */
  run<R>(mode: ParallelMode, fn: (ctx: CpuExecutionContext) => R | Promise<R>): Promise<R> {
    const op = 'CpuExecSession.run';
    if (!this.#live) return Promise.reject(new TenferroError('ContextExpired', 'this session has ended', { op }));
    return this.#enter(mode, fn, op);
  }

  /** @internal */
  end(): void {
    this.#live = false;
  }
}
