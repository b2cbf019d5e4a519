import { AsyncLocalStorage } from 'node:async_hooks';
import { IdleStorage } from '../../util/idle-storage.js';
import type { ExecutionOwner } from '../../arbiter/execution-owner.js';
import type { Permit } from '../../arbiter/permit.js';
import type { CpuEngine } from '../engine/cpu-engine.js';
import { TenferroError } from '../../errors/tenferro-error.js';
import { EngineState, WORKER_SCOPE_KEY } from '../workers/shared-fields.js';
import type { CpuOperationEntry } from './operation-entry.js';

/**
 * The Rust code's thread-local records live in the async context (D4): a frame is visible to
 * every continuation of the execution that opened it and to every child promise started inside
 * it, and to nothing else. A frame stops counting when its execution ends (`live = false`), so a
 * timer that outlives an execution starts a new top-level execution, not a re-entry.
 */
export interface ExecutionFrame {
  readonly owner: ExecutionOwner;
  live: boolean;
  readonly scope: ScopeRecord | undefined;
}

/**
 * `execution_scope.rs`'s `Scope`: shared admission for the operations of one witness. On one
 * event loop a concurrently started child and a sequential continuation look alike, so scoped
 * operations take turns in call order (`waiting`) instead of the second being refused — the
 * Node reading of R85/R87. An operation's own body runs in a frame without the scope, so a
 * nested call from inside it is still `Reentered`.
 */
export interface ScopeRecord {
  readonly identity: object;
  readonly engine: CpuEngine;
  readonly permit: Permit | undefined;
  readonly entry: CpuOperationEntry;
  operationActive: boolean;
  /** Set when the scope's callback has settled: queued operations are refused. */
  closed: boolean;
  readonly waiting: (() => void)[];
}

const storage = new AsyncLocalStorage<ExecutionFrame>();
/** Frames entered and not yet ended. */
let liveFrames = 0;
/** Off again when no frame has been live for a while: the application's promises then pay no hooks. */
const idle = new IdleStorage(storage, () => liveFrames === 0);

/** How many execution frames are live now (diagnostics and tests: 0 whenever no execution runs). */
export function liveFrameCount(): number {
  return liveFrames;
}

/** The live frame of the current async context, if any. */
export function currentFrame(): ExecutionFrame | undefined {
  const frame = storage.getStore();
  return frame?.live === true ? frame : undefined;
}

/**
 * Run `fn` inside `frame` (live) without a wrapper of its own: `fn` must call {@link endFrame}
 * when it settles, in its own `finally` (one promise less per operation).
 */
export function withFrame<R>(frame: ExecutionFrame, fn: () => Promise<R>): Promise<R> {
  liveFrames++;
  return storage.run(frame, fn);
}

/** The execution of `frame` has ended: it stops counting (idempotent). */
export function endFrame(frame: ExecutionFrame): void {
  if (!frame.live) return;
  frame.live = false;
  if (--liveFrames === 0) idle.closed();
}

/** Run `fn` inside `frame` (live); the frame ends when `fn` settles. */
export async function runInFrame<R>(frame: ExecutionFrame, fn: () => Promise<R>): Promise<R> {
  liveFrames++;
  try {
    return await storage.run(frame, fn);
  } finally {
    endFrame(frame);
  }
}

interface WorkerScope {
  readonly engineState: Int32Array;
}

/**
 * Whether a CPU execution is active here: a live frame in this async context (the callback, a
 * session, provider code, a concurrently started child), or — on a worker thread that runs an
 * engine's kernels — an active execution on that engine (its shared record, R91).
 */
export function executionActive(): boolean {
  if (currentFrame() !== undefined) return true;
  const workerScope = (globalThis as Record<symbol, unknown>)[WORKER_SCOPE_KEY] as WorkerScope | undefined;
  return workerScope !== undefined && Atomics.load(workerScope.engineState, EngineState.ACTIVE_OWNER) !== 0;
}

/** Reject backend entry from an active execution before any permit is requested (R89). */
export function assertNotReentered(op: string): void {
  if (executionActive()) throw reentered(op);
}

export function reentered(op: string): TenferroError {
  return new TenferroError(
    'Reentered',
    'CpuBackend cannot be re-entered while another CPU backend execution is active in this async context or on this engine\'s workers',
    { op },
  );
}
