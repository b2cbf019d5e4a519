import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { threadId } from 'node:worker_threads';
import { invalidArgument } from '../errors/tenferro-error.js';
import { DIAGNOSTICS_CHANNELS } from './channels.js';

/** A channel of {@link DIAGNOSTICS_CHANNELS}, by its short name. */
export type DiagnosticsChannelName = keyof typeof DIAGNOSTICS_CHANNELS;

/**
 * One tenferro diagnostics event as a structured-cloneable message: what crosses a `MessagePort`
 * from a worker isolate to a monitor (`diagnostics_channel` is per isolate).
 */
export interface ForwardedDiagnosticsEvent {
  /** The channel's name (`tenferro:execution`, …). */
  readonly channel: (typeof DIAGNOSTICS_CHANNELS)[DiagnosticsChannelName];
  /**
   * `event` for the plain channels (admission, pool, task); for the tracing channels (execution,
   * provider) `start`, `end` (the asynchronous end: `asyncEnd`) or `error`.
   */
  readonly phase: 'event' | 'start' | 'end' | 'error';
  /** `process.hrtime.bigint()` when the event was published: one monotonic clock for every isolate of the process. */
  readonly time: bigint;
  /** The `worker_threads` `threadId` of the isolate that published it (0: the main thread). */
  readonly threadId: number;
  /**
   * The payload's own fields (an `AdmissionEvent`, `ExecutionEvent`, `ProviderEvent`, `PoolEvent`
   * or `TaskEvent`), with `error` reduced to `{ name, message, code }` and without `result`.
   */
  readonly payload: Readonly<Record<string, unknown>>;
}

/** Options of {@link forwardDiagnostics}. */
export interface ForwardDiagnosticsOptions {
  /** The channels to forward (default: all five). */
  readonly channels?: readonly DiagnosticsChannelName[];
}

/** Where forwarded events go: a `MessagePort` (or anything with `postMessage`, e.g. `parentPort`), or a function. */
export type DiagnosticsSink = DiagnosticsPort | ((event: ForwardedDiagnosticsEvent) => void);

/** The part of a `MessagePort` (or `parentPort`) that {@link forwardDiagnostics} uses. */
export interface DiagnosticsPort {
  /**
   * Send one forwarded event (structured-cloned to the other end).
   *
   * @example
   * ```ts
   * import { CpuBackend, forwardDiagnostics } from '@tenferro/core';
   * import { MessageChannel } from 'node:worker_threads';
   *
   * const { port1, port2 } = new MessageChannel(); // in a worker: forwardDiagnostics(parentPort!)
   * const first = new Promise<{ channel: string }>((resolve) => port2.once('message', resolve));
   * const stop = forwardDiagnostics(port1, { channels: ['execution'] });
   * const backend = await CpuBackend.create({ threads: 1 });
   * await backend.install(() => 1);
   * console.log((await first).channel); // prints: tenferro:execution
   * stop();
   * port1.close();
   * await backend.close();
   * ```
   */
  postMessage(message: ForwardedDiagnosticsEvent): void;
}

const OP = 'forwardDiagnostics';
const NAMES = Object.keys(DIAGNOSTICS_CHANNELS) as DiagnosticsChannelName[];
const TRACED: ReadonlySet<DiagnosticsChannelName> = new Set(['execution', 'provider']);

/**
 * Subscribe to tenferro's channels in this isolate and hand every event, stamped with
 * `process.hrtime.bigint()` and this isolate's `threadId`, to `sink`: call it in a worker thread
 * with a `MessagePort` whose other end a monitor listens to (`diagnostics_channel` is per isolate,
 * so a backend created inside a worker publishes only there), or in the monitor's own isolate
 * with a function, so that every isolate's events arrive in one shape. Returns the function that
 * unsubscribes; a sink that throws (a closed port) is unsubscribed. `InvalidArgument` for a bad
 * sink, an unknown option key or channel name — before anything is subscribed.
 *
 * @example
 * ```ts
 * import { CpuBackend, type ForwardedDiagnosticsEvent, Tensor, forwardDiagnostics } from '@tenferro/core';
 *
 * const events: ForwardedDiagnosticsEvent[] = [];
 * const stop = forwardDiagnostics((e) => events.push(e), { channels: ['execution'] }); // or a MessagePort, in a worker
 * const backend = await CpuBackend.create({ threads: 1 });
 * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
 * await backend.matmul(a, a);
 * stop();
 * console.log(events.map((e) => `${e.channel} ${e.phase}`).slice(0, 2)); // prints: [ 'tenferro:execution start', 'tenferro:execution end' ]
 * await backend.close();
 * ```
 */
export function forwardDiagnostics(sink: DiagnosticsSink, options?: ForwardDiagnosticsOptions): () => void {
  const post = sinkFunction(sink);
  const channels = channelsOf(options);
  const handlers: [string, (message: unknown) => void][] = [];
  let open = true;
  const stop = (): void => {
    if (!open) return;
    open = false;
    for (const [name, handler] of handlers) unsubscribe(name, handler);
  };
  const emit = (channel: ForwardedDiagnosticsEvent['channel'], phase: ForwardedDiagnosticsEvent['phase'], message: unknown): void => {
    if (!open) return;
    const event: ForwardedDiagnosticsEvent = { channel, phase, time: process.hrtime.bigint(), threadId, payload: cloneable(message) };
    try {
      post(event);
    } catch {
      stop();
    }
  };
  for (const short of channels) {
    const name = DIAGNOSTICS_CHANNELS[short];
    if (TRACED.has(short)) {
      handlers.push([`tracing:${name}:start`, (m) => emit(name, 'start', m)]);
      handlers.push([`tracing:${name}:asyncEnd`, (m) => emit(name, 'end', m)]);
      handlers.push([`tracing:${name}:error`, (m) => emit(name, 'error', m)]);
    } else {
      handlers.push([name, (m) => emit(name, 'event', m)]);
    }
  }
  for (const [name, handler] of handlers) subscribe(name, handler);
  return stop;
}

function sinkFunction(sink: DiagnosticsSink): (event: ForwardedDiagnosticsEvent) => void {
  if (typeof sink === 'function') return sink;
  if (typeof sink === 'object' && sink !== null && typeof (sink as { postMessage?: unknown }).postMessage === 'function') {
    return (event) => sink.postMessage(event);
  }
  throw invalidArgument(OP, 'sink', 'a MessagePort (anything with postMessage) or a function', sink);
}

function channelsOf(options: ForwardDiagnosticsOptions | undefined): readonly DiagnosticsChannelName[] {
  if (options === undefined) return NAMES;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgument(OP, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'channels') throw invalidArgument(OP, `options.${key}`, 'one of the options channels', key);
  }
  const list = options.channels;
  if (list === undefined) return NAMES;
  if (!Array.isArray(list) || list.some((c) => !NAMES.includes(c as DiagnosticsChannelName))) {
    throw invalidArgument(OP, 'options.channels', `an array of ${NAMES.join(', ')}`, list);
  }
  return [...new Set(list)];
}

/** A payload's own fields as structured-cloneable data: `result` dropped, `error` reduced to name, message and code. */
function cloneable(message: unknown): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (typeof message !== 'object' || message === null) return out;
  for (const [key, value] of Object.entries(message)) {
    if (key === 'result') continue;
    if (key === 'error') {
      const e = value as { name?: unknown; message?: unknown; code?: unknown } | null;
      out.error =
        typeof e === 'object' && e !== null
          ? { name: String(e.name ?? 'Error'), message: String(e.message ?? ''), code: typeof e.code === 'string' ? e.code : undefined }
          : { name: 'Error', message: String(value), code: undefined };
      continue;
    }
    out[key] = value;
  }
  return out;
}
