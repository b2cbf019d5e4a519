import { isMainThread, threadId, type Worker } from 'node:worker_threads';
import { ENGINE_WORKER_STACK_MB } from '../runtime/workers/engine-worker.js';

/**
 * Lost exclusion across isolates, said out loud (#36). Without the `@tenferro/os` binding
 * `processArbiter()` is a per-isolate `ResourceArbiter`: two backends in different
 * `worker_threads` isolates may then hold overlapping CPUs at the same time (R27 holds inside one
 * isolate only). A backend created that way in a worker isolate, or in the main isolate while it
 * has live worker_threads, warns ONCE per isolate with `TENFERRO_ISOLATE_ARBITER`.
 *
 * How the main isolate knows its live workers: Node has no public API that lists them
 * (`process.getActiveResourcesInfo()` shows no `Worker` on Node 20.20), so core listens to the
 * process `'worker'` event from the first evaluation of this module in the main isolate, and
 * forgets a worker on its `'exit'`. Limits: a worker started before any copy of `@tenferro/core`
 * was evaluated is not seen; tenferro's own engine workers are told apart by their stack size
 * (`resourceLimits.stackSizeMb === ENGINE_WORKER_STACK_MB`, 64 MiB — they never create a backend,
 * R89), so an application worker created with exactly that stack size is taken for one of them.
 * A worker started after a backend on the isolate arbiter was created in the main isolate warns
 * too (same hazard, other order).
 */

const TRACKER_KEY = Symbol.for('tenferro.core.v0.isolateExclusion');

interface Tracker {
  /** Application workers of the main isolate that have not exited. */
  readonly live: Set<Worker>;
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
    t = { live: new Set(), watching: false, isolateBackend: undefined, warned: false };
    Object.defineProperty(g, TRACKER_KEY, { value: t, enumerable: false, configurable: false, writable: false });
  }
  return t;
}

/** tenferro's own engine workers (they never create a backend): see the limits above. */
function isOwnWorker(w: Worker): boolean {
  return w.resourceLimits?.stackSizeMb === ENGINE_WORKER_STACK_MB;
}

function watchWorkers(): void {
  if (!isMainThread) return;
  const t = tracker();
  if (t.watching) return;
  t.watching = true;
  process.on('worker', (w: Worker) => {
    if (isOwnWorker(w)) return;
    t.live.add(w);
    w.once('exit', () => t.live.delete(w));
    if (t.isolateBackend !== undefined) emit(t, t.isolateBackend, `a worker_thread (threadId ${w.threadId}) started while this main isolate has a backend`);
  });
}

// From the first evaluation of core in the main isolate: the only way to see workers start (see above).
watchWorkers();

/** The main isolate's live application workers, as far as {@link watchWorkers} saw them start. */
export function liveApplicationWorkers(): number {
  const t = tracker();
  for (const w of t.live) if (w.threadId === -1) t.live.delete(w);
  return t.live.size;
}

/**
 * A backend was created on `arbiterKind`: on the per-isolate arbiter, in a worker isolate or in
 * the main isolate with live application workers, warn once per isolate (`TENFERRO_ISOLATE_ARBITER`).
 */
export function reportIsolateArbiter(arbiterKind: 'process' | 'isolate', os: IsolateArbiterCause): void {
  if (arbiterKind !== 'isolate') return;
  const t = tracker();
  t.isolateBackend ??= os;
  if (!isMainThread) {
    emit(t, os, `this backend is created in a worker_thread (threadId ${threadId})`);
    return;
  }
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
