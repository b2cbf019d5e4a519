/**
 * tenferro's `node:diagnostics_channel` channels: their names, the payloads they carry, and the
 * publish helpers the runtime calls. The one place channels are defined (docs/observability.md).
 *
 * - `tenferro:admission` (plain channel): one {@link AdmissionEvent} per admission decided.
 * - `tenferro:execution` (tracing channel): one {@link ExecutionEvent} context per executor entry.
 * - `tenferro:provider` (tracing channel): one {@link ProviderEvent} context per provider call.
 * - `tenferro:pool` (plain channel): one {@link PoolEvent} per buffer-pool hit, miss, eviction or pre-fault.
 * - `tenferro:task` (plain channel): one {@link TaskEvent} per kernel task an engine worker ran.
 *
 * A tracing channel `tenferro:x` is the five channels `tracing:tenferro:x:{start,end,asyncStart,
 * asyncEnd,error}` (`diagnostics_channel.tracingChannel`); tenferro's executions and provider
 * calls are asynchronous, so the context object is complete (duration, outcome) at `asyncEnd`.
 * Nothing is built, timed or published while a channel has no subscriber: every publisher checks
 * `hasSubscribers` first. Channels are per isolate: see `forwardDiagnostics` for worker threads.
 * Ground layer: imports nothing of tenferro above it.
 */
import { channel, tracingChannel, type TracingChannel } from 'node:diagnostics_channel';

/** The channel names, as subscribers write them. */
export const DIAGNOSTICS_CHANNELS = Object.freeze({
  admission: 'tenferro:admission',
  execution: 'tenferro:execution',
  provider: 'tenferro:provider',
  pool: 'tenferro:pool',
  task: 'tenferro:task',
} as const);

/** What an execution asked the arbiter for, as plain data: a CPU list, or provider exclusion (`cpus` null). */
export interface DiagnosticsRequest {
  /** The requested CPUs as a cpulist (`'0-3'`); `null` for a provider-exclusive request or a caller-managed guard. */
  readonly cpus: string | null;
  /** Whether the request excludes every other execution of the process (the BLAS permit, R28). */
  readonly exclusive: boolean;
}

/**
 * `tenferro:admission`: one admission decided — a permit granted by the arbiter or a caller-managed
 * guard claimed (`granted`), or the wait given up (`aborted` by its signal, `failed` otherwise).
 */
export interface AdmissionEvent extends DiagnosticsRequest {
  /** The execution owner (an integer unique in its isolate). */
  readonly owner: number;
  /** The public operation that asked (`CpuBackend.matmul`, …). */
  readonly op: string;
  /** The domain the execution runs on. */
  readonly domainId: number;
  /** `arbiter` for a permit, `guard` for a caller-managed domain's guard (R35). */
  readonly via: 'arbiter' | 'guard';
  /** Nanoseconds between the request and its outcome (0 on the fast path). */
  readonly waitNs: number;
  readonly outcome: 'granted' | 'aborted' | 'failed';
  /** `process.hrtime.bigint()` when the outcome was known. */
  readonly time: bigint;
}

/**
 * `tenferro:execution` (tracing channel): one executor entry — `install` in `sequential` or
 * `inner` mode, or an `outer` fan-out (`submit`) — from entry to the settling of all its kernel
 * tasks. The same object is published at `start` and, completed, at `asyncEnd` (and `error`).
 */
export interface ExecutionEvent extends DiagnosticsRequest {
  readonly owner: number;
  readonly op: string;
  readonly domainId: number;
  /** The domain's CPUs (cpulist); `null` when unpinned (compatibility, external, caller-managed). */
  readonly domainCpus: string | null;
  readonly mode: 'sequential' | 'inner' | 'outer';
  readonly threadBudget: number;
  /** `process.hrtime.bigint()` at entry. */
  readonly startTime: bigint;
  /** Set at the end: nanoseconds from entry until every kernel task settled. */
  durationNs?: number;
  /** Set at the end: whether the entry returned or threw. */
  outcome?: 'ok' | 'error';
  /** Set by `diagnostics_channel` on failure (`error` channel). */
  error?: unknown;
}

/** Why a provider declined before writing (a `CpuProviderUnsupported`, contract §4). */
export interface ProviderDeclineReason {
  readonly kind: string;
  readonly [detail: string]: unknown;
}

/**
 * `tenferro:provider` (tracing channel): one provider call of an operation. `flops` is set where
 * it is defined (GEMM: 2·m·n·k per matrix, 8·m·n·k for complex dtypes) and `null` elsewhere.
 */
export interface ProviderEvent {
  readonly op: string;
  readonly slot: string;
  /** The provider's diagnostic name (`tenferro faer GEMM (avx512f)`, `reference`, …). */
  readonly provider: string;
  readonly mode: 'sequential' | 'inner' | 'outer';
  /** The most threads the provider was allowed (R55, R75). */
  readonly threadLimit: number;
  readonly dtype: string;
  /** The shapes the call works on (e.g. `[[m, k], [k, n], [m, n]]` for a GEMM, batch dims first). */
  readonly shapes: readonly (readonly number[])[];
  readonly flops: number | null;
  readonly startTime: bigint;
  durationNs?: number;
  /** `executed`, `declined` (with `declineReason`) or `failed` (with `error`). */
  outcome?: 'executed' | 'declined' | 'failed';
  declineReason?: ProviderDeclineReason;
  error?: unknown;
}

/** `tenferro:pool`: one buffer-pool event of an engine. */
export interface PoolEvent {
  /**
   * `hit`/`miss`: an acquisition served from a retained buffer or freshly allocated; `evict`: a
   * retained buffer dropped to fit the cap; `prefault`: fresh storage an operation overwrites was
   * touched by the engine's workers inside its execution, before its kernel (#38; `bytes` is the
   * data touched, `time` when the last page was in).
   */
  readonly kind: 'hit' | 'miss' | 'evict' | 'prefault';
  readonly dtype: string;
  /** Bytes of the buffer concerned (its capacity); for `prefault`, the bytes touched. */
  readonly bytes: number;
  /** Bytes the pool retains after the event. */
  readonly retainedBytes: number;
  readonly time: bigint;
}

/**
 * `tenferro:task`: one kernel task on one engine worker, published on the main isolate once its
 * answer was seen — the round trip of a task split where its time went. All three spans are
 * measured with `process.hrtime.bigint()` on both threads (one monotonic clock).
 */
export interface TaskEvent {
  /** The entry point that posted the task: `CpuExecutionContext.run`, or `CpuExecutionContext.workerPool` for a lane of an Inner-mode provider (the public operation is on `tenferro:provider` and `tenferro:execution`, over the same span of time). */
  readonly op: string;
  /** The kernel's export name (`faerGemm`, …). */
  readonly kernel: string;
  /** The engine worker's index in its pool (its lane), and its OS thread id. */
  readonly worker: number;
  readonly tid: number;
  /** Threads the task was posted as keeping busy, its native library's helpers included: `KernelRunOptions.threads` when given, else the context's `nativeThreadCount()`; 1 for a lane of a fan-out. */
  readonly threads: number;
  /** Whether another task was in flight on this isolate while this one was (a lane of a fan-out). */
  readonly fanOut: boolean;
  /** `process.hrtime.bigint()` on the main thread just before the task was posted. */
  readonly postedAt: bigint;
  /** Posted → the worker began it (a spinning worker: ~1 µs; a sleeping one: its wake-up). */
  readonly startLagNs: number;
  /** The worker's run of the kernel, its arguments' unpacking included. */
  readonly runNs: number;
  /** The worker's answer → the main thread saw it (its poll, or its wake-up from a park). */
  readonly wakeNs: number;
  /**
   * How the main thread waited for the answer: `poll` — checking it without returning to the event
   * loop (short tasks, and the lanes of a fan-out); `turns` — once per event-loop turn (tasks that
   * usually take at most 1 ms); `earlyWake` — asleep until shortly before the task's usual end,
   * then once per turn (long tasks; from 4 ms when the task leaves one of the process's CPUs free,
   * else from 24 ms); `park` — asleep until the worker's answer woke it (through the event loop:
   * `wakeNs` is then that wake-up).
   */
  readonly watch: 'poll' | 'turns' | 'earlyWake' | 'park';
  /** `process.hrtime.bigint()` when the main thread saw the answer. */
  readonly time: bigint;
}

/** The facts of a provider call known before it runs (what `ProviderEvent` adds to slot and mode). */
export interface ProviderCallFacts {
  readonly provider?: string;
  readonly dtype: string;
  readonly shapes: readonly (readonly number[])[];
  readonly flops: number | null;
}

// Channels are created on first use (nothing at import time) and then kept: `channel(name)` would
// return the same object each time, but a lookup per call is what the hot path avoids.
let admission: ReturnType<typeof channel> | undefined;
let pool: ReturnType<typeof channel> | undefined;
let task: ReturnType<typeof channel> | undefined;
let execution: TracingChannel<object, object> | undefined;
let provider: TracingChannel<object, object> | undefined;

/** The `tenferro:admission` channel. */
export function admissionChannel(): ReturnType<typeof channel> {
  return (admission ??= channel(DIAGNOSTICS_CHANNELS.admission));
}

/** The `tenferro:pool` channel. */
export function poolChannel(): ReturnType<typeof channel> {
  return (pool ??= channel(DIAGNOSTICS_CHANNELS.pool));
}

/** The `tenferro:task` channel. */
export function taskChannel(): ReturnType<typeof channel> {
  return (task ??= channel(DIAGNOSTICS_CHANNELS.task));
}

/** The `tenferro:execution` tracing channel. */
export function executionTracing(): TracingChannel<object, object> {
  return (execution ??= tracingChannel(DIAGNOSTICS_CHANNELS.execution));
}

/** The `tenferro:provider` tracing channel. */
export function providerTracing(): TracingChannel<object, object> {
  return (provider ??= tracingChannel(DIAGNOSTICS_CHANNELS.provider));
}

/** Whether any of a tracing channel's five channels has a subscriber (Node < 20.13 lacks `TracingChannel.hasSubscribers`). */
export function tracingActive(tc: TracingChannel<object, object>): boolean {
  const own = (tc as { hasSubscribers?: boolean }).hasSubscribers;
  if (own !== undefined) return own;
  return tc.start.hasSubscribers || tc.end.hasSubscribers || tc.asyncStart.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers;
}

/**
 * Run `fn` as one traced asynchronous call with `event` as its context (start, end, asyncStart,
 * asyncEnd, error — `TracingChannel.tracePromise`), setting `durationNs` and `outcome` before
 * the async end. Call it only when {@link tracingActive}; otherwise call `fn` directly.
 */
export function traceAsync<R, E extends { readonly startTime: bigint; durationNs?: number; outcome?: string }>(
  tc: TracingChannel<object, object>,
  event: E,
  fn: () => Promise<R>,
  outcomeOf: (value: R) => E['outcome'],
  failure: E['outcome'],
): Promise<R> {
  return tc.tracePromise(async () => {
    try {
      const value = await fn();
      event.outcome = outcomeOf(value);
      return value;
    } catch (e) {
      event.outcome = failure;
      throw e;
    } finally {
      event.durationNs = Number(process.hrtime.bigint() - event.startTime);
    }
  }, event);
}

/** Publish a pool event (call only when `poolChannel().hasSubscribers`). */
export function publishPool(kind: PoolEvent['kind'], dtype: string, bytes: number, retainedBytes: number): void {
  const event: PoolEvent = { kind, dtype, bytes, retainedBytes, time: process.hrtime.bigint() };
  poolChannel().publish(event);
}
