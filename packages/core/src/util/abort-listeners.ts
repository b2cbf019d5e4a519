import { invalidArgument } from '../errors/tenferro-error.js';

/**
 * One `abort` listener per `AbortSignal`, however many tenferro waits share the signal: a signal
 * passed to a thousand queued operations registers a single listener (no
 * `MaxListenersExceededWarning`), which calls each subscriber once.
 */
const subscribers = new WeakMap<AbortSignal, Set<() => void>>();

/** Call `fn` once when `signal` aborts (not at all if it already has); returns the unsubscribe. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = subscribers.get(signal);
  if (set === undefined) {
    const created = new Set<() => void>();
    set = created;
    subscribers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        subscribers.delete(signal);
        for (const f of created) f();
      },
      { once: true },
    );
  }
  const entry = () => fn();
  set.add(entry);
  return () => void set.delete(entry);
}

/** `undefined`, or a real `AbortSignal` (`InvalidArgument` otherwise). */
export function validateSignal(value: unknown, op: string, param = 'options.signal'): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (value instanceof AbortSignal) return value;
  throw invalidArgument(op, param, 'an AbortSignal', value);
}

/**
 * Wait in `queue` for a turn: `entry(resume)` makes the queue's element, which whoever hands the
 * turn over calls. When `signal` aborts first, the element leaves the queue and the wait rejects
 * with `aborted()`; the queue stays consistent either way.
 */
export function waitForTurn<T>(queue: T[], entry: (resume: () => void) => T, signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const element = entry(() => {
      unsubscribe?.();
      resolve();
    });
    const unsubscribe =
      signal === undefined
        ? undefined
        : onAbort(signal, () => {
            const i = queue.indexOf(element);
            if (i < 0) return;
            queue.splice(i, 1);
            reject(aborted());
          });
    queue.push(element);
  });
}
