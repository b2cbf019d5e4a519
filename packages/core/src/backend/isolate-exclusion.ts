import { isMainThread, threadId, type Worker } from 'node:worker_threads';
import { isEngineWorkerThread } from '../runtime/workers/engine-worker.js';

/**
 * Lost exclusion across isolates, said out loud (#36). Without the `@tenferro/os` binding
 * `processArbiter()` is a per-isolate `ResourceArbiter`: two backends in different
 * `worker_threads` isolates may then hold overlapping CPUs at the same time (R27 holds inside one
 * isolate only). A backend created that way in a worker isolate, or in the main isolate while it
 * has live worker_threads, warns ONCE per isolate with `TENFERRO_ISOLATE_ARBITER`; so does a
 * worker started in the main isolate after such a backend was created there.
 *
 * How the main isolate knows its live workers: Node has no public API that lists them
 * (`process.getActiveResourcesInfo()` shows no `Worker` on Node 20.20), but the diagnostic report
 * has one sub-report per live worker, with its `threadId`. So the first backend created on the
 * per-isolate arbiter in the main isolate reads `process.report.getReport().workers` (~15 ms, on
 * this path only: no os binding, main isolate, not yet warned) and counts the workers that are not
 * tenferro's own engine workers; from then on a process `'worker'` listener sees workers start.
 * Nothing of this happens at import (no listener, no global until a backend asks). A worker busy in
 * a long native call delays the report until it returns to JavaScript.
 */

const TRACKER_KEY = Symbol.for('tenferro.core.v0.isolateExclusion');

interface Tracker {
  /** The `'worker'` listener is installed (one per isolate, whatever the copies of core). */
  watching: boolean;
  /** A backend on the per-isolate arbiter was created in this isolate. */
  isolateBackend: IsolateArbiterCause | undefined;
  /** `TENFERRO_ISOLATE_ARBITER` was emitted in this isolate. */
  warned: boolean;
}

/** Why the arbiter is per-isolate (the os binding's load outcome). */
export interface IsolateArbiterCause {
  readonly available: boolean;
  readonly reasons?: readonly string[];
  readonly possibleSolutions?: readonly string[];
}

function tracker(): Tracker {
  const g = globalThis as Record<symbol, unknown>;
  let t = g[TRACKER_KEY] as Tracker | undefined;
  if (t === undefined) {
    t = { watching: false, isolateBackend: undefined, warned: false };
    Object.defineProperty(g, TRACKER_KEY, { value: t, enumerable: false, configurable: false, writable: false });
  }
  return t;
}

/** From the first backend on the per-isolate arbiter in the main isolate: workers that start later. */
function watchWorkers(t: Tracker): void {
  if (t.watching) return;
  t.watching = true;
  process.on('worker', (w: Worker) => {
    // The engine worker registers its threadId right after `new Worker` returns, i.e. after this event.
    queueMicrotask(() => {
      if (isEngineWorkerThread(w.threadId) || t.isolateBackend === undefined) return;
      emit(t, t.isolateBackend, `a worker_thread (threadId ${w.threadId}) started while this main isolate has a backend`);
    });
  });
}

/** The main isolate's live application workers (every live worker but tenferro's engine workers). */
function liveApplicationWorkers(): number {
  const report = process.report?.getReport() as { workers?: { header?: { threadId?: number } }[] } | undefined;
  return (report?.workers ?? []).filter((w) => typeof w.header?.threadId === 'number' && !isEngineWorkerThread(w.header.threadId)).length;
}

/**
 * A backend was created on `arbiterKind`: on the per-isolate arbiter, in a worker isolate or in
 * the main isolate with live application workers, warn once per isolate (`TENFERRO_ISOLATE_ARBITER`).
 */
export function reportIsolateArbiter(arbiterKind: 'machine' | 'process' | 'isolate', os: IsolateArbiterCause): void {
  if (arbiterKind !== 'isolate') return;
  const t = tracker();
  t.isolateBackend ??= os;
  if (!isMainThread) {
    emit(t, os, `this backend is created in a worker_thread (threadId ${threadId})`);
    return;
  }
  if (t.warned) return;
  watchWorkers(t);
  const live = liveApplicationWorkers();
  if (live > 0) emit(t, os, `this backend is created in the main thread while ${live} worker_thread${live === 1 ? ' is' : 's are'} live`);
}

function emit(t: Tracker, os: IsolateArbiterCause, where: string): void {
  if (t.warned) return;
  t.warned = true;
  const reasons = os.reasons?.length ? ` (${os.reasons.join('; ')})` : '';
  const solutions = [
    'rebuild the OS binding: npm rebuild @tenferro/os (needs python3, make and g++: apt-get install -y python3 make g++)',
    'in a clone of the tenferro repository: npx pnpm@12.4.2 --filter @tenferro/os run build:native',
    'or create every backend in one isolate',
  ];
  process.emitWarning(
    `tenferro's OS binding (@tenferro/os) is unavailable${reasons}, so its arbiter is this isolate's alone, and ${where}: exclusion across worker_threads isolates is NOT enforced — backends in different isolates may run on the same CPUs at the same time (executionInfo().arbiter === 'isolate'). Possible solutions: ${solutions.join('; ')}`,
    { type: 'TenferroWarning', code: 'TENFERRO_ISOLATE_ARBITER' },
  );
}
