import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../execution/execution-context.js';
import type { CpuOperationEntry } from '../execution/operation-entry.js';
import type { ParallelMode } from '../execution/parallel-mode.js';
import type { CpuDomainId } from './cpu-domain.js';
import type { CpuBackendKind } from './placement.js';

/**
 * The session handed to `withBackendSession` callbacks: one permit and one executor entry for a
 * sequence of operations. Each operation picks its own logical mode and reuses the entry
 * (`enter_or_reuse`, R80). Valid only inside its callback.
 */
export class CpuExecSession {
  /** The context the session entered with (the preferred engine mode). */
  readonly context: CpuExecutionContext;
  readonly #entry: CpuOperationEntry;
  readonly #kind: CpuBackendKind;
  #live = true;

  /** @internal */
  constructor(entry: CpuOperationEntry, context: CpuExecutionContext, kind: CpuBackendKind) {
    this.#entry = entry;
    this.context = context;
    this.#kind = kind;
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
    return this.#entry.reuse(mode, fn, op);
  }

  /** @internal */
  end(): void {
    this.#live = false;
  }
}
