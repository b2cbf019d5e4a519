import { SmallSet } from '../../util/small-set.js';
import { MessageChannel, type MessagePort, Worker, type WorkerOptions, receiveMessageOnPort } from 'node:worker_threads';
import { loadOs } from '@tenferro/os';
import { TenferroError } from '../../errors/tenferro-error.js';
import { type TaskEvent, taskChannel } from '../../diagnostics/channels.js';
import { CpuSet } from '../../topology/cpu-set.js';
import type { KernelRef } from '../../contract/kernel.js';
import { isKernelArgs } from '../../contract/kernel-args.js';
import { WorkerBufferTable, type WorkerBufferTableStats } from './buffer-table.js';
import { kernelFailed } from './kernel-error.js';
import { lanePosted } from './lane-spread.js';
import { type FanOutJoins, joinFanOut } from './fan-out-join.js';
import type { ResultMessage, TaskMessage, WorkerInit, WorkerStartupMessage } from './protocol.js';
import { ArgsArea, DEAD, ForgetRing, Mailbox, ResultFlag, TaskFlag } from './shared-fields.js';
import { EventLoopTurns } from './event-loop-turns.js';
import { earlyWakeNs } from './early-wake.js';
import { RARE_YIELD_MASK, sharesCpu } from './spin-yield.js';
import { workerEntryUrl } from './worker-url.js';
import { reportQueuedNudge } from '../../tensor/tensor-storage.js';

/** What a worker reported after pinning, as checked against the declared set. */
export interface WorkerObservation {
  readonly index: number;
  readonly tid: number;
  /** The mask read back with `sched_getaffinity`; `undefined` for an unpinned compatibility worker. */
  readonly cpus: CpuSet | undefined;
  /** `Cpus_allowed_list` of `/proc/thread-self/status` as the worker read it. */
  readonly statusCpus: string | undefined;
}

export interface EngineWorkerOptions {
  readonly index: number;
  /** Pin to (and verify) exactly this set; `undefined` = unpinned compatibility worker. */
  readonly cpus: CpuSet | undefined;
  readonly engineState: SharedArrayBuffer;
  readonly spinMicros: number;
  /** The CPUs the process may use (its topology's effective capacity), when known: see `early-wake.ts`. */
  readonly processCpus?: number | undefined;
  /** The pool's lane table (see `lane-spread.ts`). */
  readonly lanes?: SharedArrayBuffer;
  /** The pool's fan-out join slots (see `fan-out-join.ts`). */
  readonly joins: FanOutJoins;
  /** Called once when the worker exits without having been closed. */
  readonly onDeath: (worker: EngineWorker, exitCode: number) => void;
}

const OP = 'CpuEngine';

/**
 * The main thread polls a task's response before it parks in `Atomics.waitAsync`, for as long
 * as tasks on this worker have recently taken (three times their moving average, at most
 * 300 µs; at least 20 µs): parking and being woken through the event loop costs ~100 µs here,
 * more than short tasks themselves. Longer tasks park at once after the floor. Only a task that
 * runs alone polls this way: during a fan-out the main thread polls yielding its CPU to the lanes
 * between checks (`pollAmongLanes`).
 */
const MIN_POLL_NS = 20_000;
const MAX_POLL_NS = 300_000;

/**
 * A task that runs alone and outlasts the blocking poll is watched from the event loop (one check
 * per `setImmediate` turn, yielding the CPU each time) when its worker's tasks usually take at most
 * this long: the answer is seen within a turn rather than after a wake-up from idle (~150 µs here).
 * A longer task is not polled for (#37): watching a 2–5 ms kernel over turns kept the main thread
 * on a CPU for the whole kernel (89 % of one CPU for faer n = 512 on 1 thread, 34–41 % for blas on
 * 2 threads, measured with bench/responsiveness.bench.mjs) — CPU the workers need on a small
 * machine. A long one may be watched over its last stretch only (`early-wake.ts`).
 */
const TURN_POLL_MAX_NS = 1_000_000;

/** This isolate's run of answers since its event loop last turned for tenferro (see event-loop-turns.ts). */
const turns = new EventLoopTurns();

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Check the response once per event-loop turn until it arrives or `untilNs` passes. */
async function pollOverTurns(m: Int32Array, seq: number, untilNs: bigint): Promise<number> {
  const yieldThread = mainYield();
  for (;;) {
    await nextTurn();
    const r = Atomics.load(m, Mailbox.RESPONSE);
    if (r === seq || r === DEAD || process.hrtime.bigint() > untilNs) return r;
    yieldThread();
  }
}

/** Poll for `seq`'s answer for at most `budgetNs` (a whole number: a fraction is a heap number, on which V8's optimised poll deoptimised). */
function pollForResponse(m: Int32Array, seq: number, budgetNs: number): number {
  let r = Atomics.load(m, Mailbox.RESPONSE);
  if (r === seq || r === DEAD || budgetNs <= 0) return r;
  const until = process.hrtime.bigint() + BigInt(Math.round(budgetNs));
  const yieldThread = mainYield();
  const cpu = mainCpu();
  for (let i = 1; ; i++) {
    r = Atomics.load(m, Mailbox.RESPONSE);
    if (r === seq || r === DEAD) return r;
    if ((i & 63) === 0) {
      if (process.hrtime.bigint() > until) return r;
      // The worker may share this CPU: then let it run now rather than at our slice's end (see spin-yield.ts).
      if (sharesCpu(m, cpu(), Mailbox.MAIN_CPU, Mailbox.WORKER_CPU) || (i & RARE_YIELD_MASK) === 0) yieldThread();
    }
  }
}

let yieldFn: (() => void) | undefined;
let cpuFn: (() => number) | undefined;
/** `sched_yield` from the OS binding, loaded on first use (never at import). */
function mainYield(): () => void {
  if (yieldFn === undefined) {
    const os = loadOs();
    yieldFn = os.available ? os.binding.yieldThread : () => undefined;
  }
  return yieldFn;
}

/** `sched_getcpu` from the OS binding (-1 without it, or with a binary that predates it), loaded on first use. */
function mainCpu(): () => number {
  if (cpuFn === undefined) {
    const os = loadOs();
    cpuFn = os.available && os.binding.currentCpu !== undefined ? os.binding.currentCpu : () => -1;
  }
  return cpuFn;
}

/** Tasks in flight on the main isolate, over every engine (fan-outs make it exceed 1). */
let inFlight = 0;
/** Tasks posted on the main isolate so far: a task that saw another posted while it ran was not alone. */
let posts = 0;

interface PendingTask {
  readonly mailbox: Int32Array;
  readonly seq: number;
  /** Three times the worker's recent round trip (ns). */
  readonly expectedNs: number;
}

/** A task handed to its worker and not yet answered. */
interface PostedTask {
  readonly pending: PendingTask;
  /** When it was posted (`process.hrtime.bigint()`). */
  readonly started: bigint;
  /** The kernel's module travelled with it (forgotten again if the kernel failed). */
  readonly sendKernel: boolean;
  /** Published on `tenferro:task` once answered. */
  readonly timed: boolean;
  /** No other task was in flight on this isolate when it was posted. */
  readonly alone: boolean;
  /** The posts counter right after it was posted. */
  readonly postsBefore: number;
  /** Threads the kernel may keep busy, its native library's helpers included (wide when > 1). */
  readonly threads: number;
  /** The fan-out join slot it counted itself into (`fan-out-join.ts`), or -1. */
  readonly join: number;
  /** It parked at once (`PARK_WHEN_DUE_NS`): it waits with its siblings on their join slot. */
  joinWait: boolean;
  /** How the main thread waits for the answer (`TaskEvent.watch`): `poll` until it outlasts the blocking poll. */
  watch: TaskEvent['watch'];
}

/** Continuations chained on this run after the current synchronous code (and its microtasks so far). */
const AFTER_POSTS: Promise<void> = Promise.resolve();

/** The mailboxes of the tasks in flight on the main isolate. */
const running = new SmallSet<Int32Array>();

/**
 * Before the main thread sleeps, or polls among a fan-out's lanes (which may move it between CPUs):
 * mark it as on no CPU (-1) in the mailbox of every task in flight,
 * so that their workers, once done and spinning for their next task, yield every few checks (see
 * spin-yield.ts). Woken, the main thread needs a CPU, and with every CPU held by a spinning lane
 * it would otherwise wait for a spin to end (50–200 µs): a fan-out's answer was seen ~150 µs late.
 * The main thread publishes its CPU again with its next task.
 */
function mainSleeps(): void {
  for (const m of running) if (m[Mailbox.MAIN_CPU] !== -1) Atomics.store(m, Mailbox.MAIN_CPU, -1);
}

/**
 * Check task `seq`'s response until it answers or `budgetNs` has passed, giving the CPU away
 * (`sched_yield`) every `FAN_OUT_YIELD_EVERY` checks. For the lanes of a fan-out, where the
 * workers hold the CPUs: a lane that shares this thread's CPU runs when this thread yields, and
 * this thread is back as that lane's kernel ends, without a wake-up. Sleeping in the kernel
 * instead (`Atomics.wait`) left each answer waiting 35–130 µs for this thread to run again on a
 * 2-vCPU KVM guest (Linux 6.18, EEVDF). Measured there (provider-faer bench/split.mjs, 2 threads,
 * `dotGeneralInto`, median of 5 rounds ÷ OpenBLAS): n = 384 f64 0.98–1.13 against 0.75–0.81 with
 * the sleep, n = 512 f32 1.03–1.08 against 0.81–0.82, f64 0.98–1.10 against 0.89. The main
 * thread is marked as on no CPU first, so that lanes done before it yield to it.
 */
function pollAmongLanes(m: Int32Array, seq: number, budgetNs: number): number {
  let r = Atomics.load(m, Mailbox.RESPONSE);
  if (r === seq || r === DEAD || budgetNs <= 0) return r;
  const until = process.hrtime.bigint() + BigInt(Math.round(budgetNs));
  const yieldThread = mainYield();
  mainSleeps();
  for (let i = 1; ; i++) {
    r = Atomics.load(m, Mailbox.RESPONSE);
    if (r === seq || r === DEAD) return r;
    if (i % FAN_OUT_YIELD_EVERY === 0) {
      if (process.hrtime.bigint() > until) return r;
      yieldThread();
    }
  }
}

/**
 * How long the main thread polls among the lanes of a fan-out (or for a task with native helper
 * threads) whose expected time is `expectedNs`, before it parks. Short ones poll for their
 * expected time (at most `MAX_POLL_NS`). Ones that usually outlast that budget poll only briefly:
 * a poll up front only takes a CPU from the lanes (two 300 µs polls per 2.5 ms fan-out at n = 512,
 * #37); then they park (at once, on their join slot, when they usually run long and a turn is due:
 * `PARK_WHEN_DUE_NS`). And ones expected to
 * take longer than `LANE_PARK_NS` park at once: the poll's first yield to a lane sharing this CPU
 * lasts that lane's scheduler slice (2–4 ms on a 2-vCPU guest), all of it without an event-loop
 * turn, and a long kernel gains nothing from the early look. Measured with a `setImmediate`
 * heartbeat beside 2-thread faer streams (1.5 s, gaps over 5 ms brief poll / parked at once):
 * n = 768 f64 179 / 17, n = 1024 f64 50 / 17, f32 122 / 26; the same streams without the heartbeat
 * ran 6.8–16.9 ms a call either way (within the run-to-run spread).
 */
export function lanePollNs(expectedNs: number): number {
  if (expectedNs > LANE_PARK_NS) return 0;
  return expectedNs > 3 * MAX_POLL_NS ? MIN_POLL_NS : Math.min(Math.round(expectedNs), MAX_POLL_NS);
}

/** Fan-outs expected to take longer than this park at once (`lanePollNs`). */
export const LANE_PARK_NS = 6_000_000;

/**
 * Lanes of a fan-out that usually take at least this long park at once, without the poll, when an
 * event-loop turn would be due by their usual end (`EventLoopTurns`): the poll's first yield to a
 * lane sharing the main thread's CPU lasts that lane's kernel, and a 2-thread f32 n = 512 stream
 * (lanes ~0.75 ms) then held the event loop for a whole call before each turn — a heartbeat's p99
 * gap 0.71–1.15 ms (#37 item 1 asks ≤ 1 ms). Parked on their join slot they wake the main thread
 * once (`fan-out-join.ts`), which made parking as cheap as the poll. Shorter lanes keep polling:
 * parking 2-thread n = 256 lanes (~0.2 ms) as well cost 29–41 % of the calls (docs/performance.md,
 * 2026-12-11).
 */
export const PARK_WHEN_DUE_NS = 500_000;

/** Whether the lane `task` parks at once (see `PARK_WHEN_DUE_NS`). */
function parksAtOnce(task: PostedTask): boolean {
  if (task.join < 0) return false;
  // The lane's own usual run, as its worker measures it: the round trip the main thread sees
  // includes its own wake-up, which parking lengthens (measured so, 2-thread n = 256 lanes kept
  // parking once a busy event loop had made them look long).
  const usualNs = task.pending.mailbox[Mailbox.USUAL_RUN_US]! * 1000;
  return usualNs >= PARK_WHEN_DUE_NS && turns.due(task.started, task.started + BigInt(usualNs));
}

/** How many response checks the main thread makes between yields while the lanes of a fan-out run. */
const FAN_OUT_YIELD_EVERY = 16;

/** The parent's Node flags minus those that name the parent's own entry point (`-e`, `--input-type`, …), which a worker rejects. */
function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') {
      i++;
      continue;
    }
    if (a.startsWith('--input-type') || a.startsWith('--eval=') || a.startsWith('--print=')) continue;
    out.push(a);
  }
  return out;
}

/** The parent's flags a worker accepts, once known (see `newWorker`). */
let acceptedExecArgv: string[] | undefined;

/**
 * The stack of every engine worker thread, in MiB (`resourceLimits.stackSizeMb`: the thread's own
 * stack, and V8's limit just below it). Native kernels run on these threads, and a Node worker's
 * default 4 MiB is not enough for all of them: OpenBLAS 0.3.21's ?getrf_parallel keeps ~540 KB of
 * arrays on the stack per recursion level and recurses ~8 levels at n = 1024 on 2 threads
 * (gdb: a SIGSEGV 0x118 bytes past the worker's stack). Only the pages a thread touches are backed.
 */
export const ENGINE_WORKER_STACK_MB = 64;

/**
 * A worker with the parent's Node flags (minus entry-point flags). Flags that only a process
 * accepts (`--expose-gc`, …) make `new Worker` throw `ERR_WORKER_INVALID_EXEC_ARGV` naming them:
 * they are dropped (V8 flags already apply process-wide) and the worker is created again.
 */
function newWorker(options: Omit<WorkerOptions, 'execArgv'>): Worker {
  const execArgv = acceptedExecArgv ?? workerExecArgv();
  let worker: Worker;
  try {
    worker = new Worker(workerEntryUrl(), { ...options, execArgv });
    acceptedExecArgv = execArgv;
  } catch (e) {
    const error = e as { code?: string; message?: string };
    if (error.code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || acceptedExecArgv !== undefined) throw e;
    const named = String(error.message).split(': ').slice(1).join(': ').split(', ');
    acceptedExecArgv = execArgv.filter((a) => !named.some((bad) => a === bad || a.startsWith(`${bad}=`) || bad.startsWith(`${a}=`)));
    worker = new Worker(workerEntryUrl(), { ...options, execArgv: acceptedExecArgv });
  }
  const id = worker.threadId;
  engineThreadIds.add(id);
  worker.once('exit', () => engineThreadIds.delete(id));
  return worker;
}

/** The `threadId`s of this isolate's live engine workers. */
const engineThreadIds = new Set<number>();

/** Whether `threadId` is one of this isolate's live engine workers (they never create a backend, R89). */
export function isEngineWorkerThread(threadId: number): boolean {
  return engineThreadIds.has(threadId);
}

/**
 * One `worker_threads` worker of an engine: pinned to the whole domain set and verified before
 * `start` resolves (R21, D2), unref'd while idle, one task at a time through its shared mailbox.
 */
export class EngineWorker {
  readonly observed: WorkerObservation;
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #mailbox: Int32Array;
  readonly #argWords: Float64Array;
  readonly #argIds: Int32Array;
  /** A timed task's begin and answer times, written by the worker (`Mailbox.TIMES`). */
  readonly #times: Float64Array;
  readonly #buffers: WorkerBufferTable;
  readonly #known = new Set<number>();
  #seq = 0;
  /** The worker's doorbell (`Mailbox.REQUEST`): changed for every task and every batch of ids to forget. */
  #bell = 0;
  #busy = false;
  /** Tasks waiting for this worker, in call order. */
  readonly #waiting: (() => void)[] = [];
  /** Moving average of this worker's task round trips (ns), for the poll budget. */
  #averageNs = MIN_POLL_NS;
  /** The CPUs the process may use, when known (`early-wake.ts`). */
  readonly #processCpus: number | undefined;
  #closing = false;
  #dead = false;

  /** The pool's lane table (see `lane-spread.ts`), for a pinned worker. */
  readonly #lanes: Int32Array | undefined;
  /** The pool's fan-out join slots. */
  readonly #joins: FanOutJoins;
  /** The join slot of the task in flight, or -1 (poisoned if this worker dies meanwhile). */
  #joinInFlight = -1;

  private constructor(
    worker: Worker,
    port: MessagePort,
    mailbox: Int32Array,
    args: SharedArrayBuffer,
    forgets: SharedArrayBuffer,
    observed: WorkerObservation,
    lanes: SharedArrayBuffer | undefined,
    joins: FanOutJoins,
    processCpus: number | undefined,
  ) {
    this.#processCpus = processCpus;
    this.#joins = joins;
    this.#buffers = new WorkerBufferTable({
      ring: forgets,
      worker: { busy: () => this.#busy || this.#dead || this.#closing, wake: () => this.#ringBell() },
    });
    this.#lanes = lanes === undefined ? undefined : new Int32Array(lanes);
    this.#worker = worker;
    this.#port = port;
    this.#mailbox = mailbox;
    this.#argWords = new Float64Array(args, 0, ArgsArea.MAX_WORDS);
    this.#argIds = new Int32Array(args, ArgsArea.IDS_BYTE_OFFSET, ArgsArea.MAX_BUFFERS);
    this.#times = new Float64Array(mailbox.buffer, Mailbox.TIMES * Int32Array.BYTES_PER_ELEMENT, 2);
    this.observed = observed;
  }

  static async start(options: EngineWorkerOptions): Promise<EngineWorker> {
    const mailboxBuffer = new SharedArrayBuffer(Mailbox.LENGTH * Int32Array.BYTES_PER_ELEMENT);
    const cpus = new Int32Array(mailboxBuffer);
    cpus[Mailbox.MAIN_CPU] = -1; // unknown until each side has published its CPU
    cpus[Mailbox.WORKER_CPU] = -1;
    const argsBuffer = new SharedArrayBuffer(ArgsArea.BYTES);
    const forgetsBuffer = new SharedArrayBuffer(ForgetRing.BYTES);
    const { port1, port2 } = new MessageChannel();
    const init: WorkerInit = {
      mailbox: mailboxBuffer,
      args: argsBuffer,
      forgets: forgetsBuffer,
      engineState: options.engineState,
      taskPort: port2,
      cpus: options.cpus?.toArray(),
      workerIndex: options.index,
      spinMicros: options.spinMicros,
      lanes: options.cpus === undefined ? undefined : options.lanes,
      joins: options.joins.buffer,
    };
    const worker = newWorker({
      workerData: init,
      transferList: [port2],
      name: `tenferro-engine-${options.index}`,
      resourceLimits: { stackSizeMb: ENGINE_WORKER_STACK_MB },
    });
    worker.unref();
    port1.unref();
    let message: WorkerStartupMessage;
    try {
      message = await new Promise<WorkerStartupMessage>((resolve, reject) => {
        const onMessage = (m: WorkerStartupMessage) => {
          cleanup();
          resolve(m);
        };
        const onError = (e: Error) => {
          cleanup();
          reject(new TenferroError('WorkerStartupClosed', `worker ${options.index} failed while starting: ${e.message}`, { op: OP, cause: e }));
        };
        const onExit = (code: number) => {
          cleanup();
          reject(new TenferroError('WorkerStartupClosed', `worker ${options.index} exited with code ${code} while starting`, { op: OP }));
        };
        const cleanup = () => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
        };
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      });
    } catch (e) {
      port1.close();
      await worker.terminate();
      throw e;
    }
    const fail = async (text: string, detail: Record<string, unknown>, cause?: unknown): Promise<never> => {
      port1.close();
      await worker.terminate();
      throw new TenferroError('WorkerPinning', `worker ${options.index}: ${text}`, { op: OP, detail: { worker: options.index, ...detail }, cause });
    };
    if (message.type === 'startupFailed') {
      return fail(`could not be pinned to CPUs ${options.cpus?.toString()}: ${message.message}`, { code: message.code }, message);
    }
    const observedCpus = message.affinity === undefined ? undefined : CpuSet.of(message.affinity);
    if (options.cpus !== undefined) {
      // Verification: the mask read back, both through sched_getaffinity and /proc, equals the declared set.
      if (observedCpus === undefined || !observedCpus.equals(options.cpus)) {
        return fail(`observed mask ${observedCpus?.toString()} differs from the declared set ${options.cpus.toString()}`, {
          declared: options.cpus.toString(),
          observed: observedCpus?.toString(),
        });
      }
      if (message.statusCpus === undefined || !CpuSet.parse(message.statusCpus).equals(options.cpus)) {
        return fail(`/proc/thread-self/status shows ${message.statusCpus} instead of ${options.cpus.toString()}`, {
          declared: options.cpus.toString(),
          observed: message.statusCpus,
        });
      }
    }
    const observed = Object.freeze({ index: options.index, tid: message.tid, cpus: observedCpus, statusCpus: message.statusCpus });
    const engineWorker = new EngineWorker(worker, port1, new Int32Array(mailboxBuffer), argsBuffer, forgetsBuffer, observed, init.lanes, options.joins, options.processCpus);
    worker.on('error', () => {
      /* reported through 'exit' */
    });
    worker.once('exit', (code) => engineWorker.#onExit(code, options.onDeath));
    return engineWorker;
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** This worker's buffer table (see `buffer-table.ts`). */
  bufferTable(): WorkerBufferTableStats {
    return this.#buffers.stats();
  }

  /** Change the doorbell and wake the worker if it sleeps on it (a task, or ids in its ring). */
  #ringBell(): void {
    if (this.#dead) return;
    Atomics.store(this.#mailbox, Mailbox.REQUEST, (this.#bell = (this.#bell + 1) | 0));
    Atomics.notify(this.#mailbox, Mailbox.REQUEST);
  }


  /** Publish the task just answered on `tenferro:task`, with the worker's times from the mailbox. */
  #publishTask(op: string, kernel: string, threads: number, fanOut: boolean, posted: bigint, watch: TaskEvent['watch']): void {
    const seen = process.hrtime.bigint();
    const began = this.#times[0]!;
    const answered = this.#times[1]!;
    const postedNs = Number(posted);
    const event: TaskEvent = {
      op,
      kernel,
      worker: this.observed.index,
      tid: this.observed.tid,
      threads,
      fanOut,
      postedAt: posted,
      startLagNs: Math.max(0, began - postedNs),
      runNs: Math.max(0, answered - began),
      wakeNs: Math.max(0, Number(seen) - answered),
      time: seen,
      watch,
    };
    taskChannel().publish(event);
  }

  /**
   * Run one kernel task on this worker. Tasks run one at a time, in call order: a task asked for
   * while another runs (concurrent work of one execution, e.g. `Promise.all` over `ctx.run`)
   * waits for its turn; the worker is handed from one to the next without a gap. Not `async`: the
   * task is posted at once, and its answer awaited in one reaction after the caller's synchronous
   * code — so that the other tasks of a fan-out post first (polling blocks this thread) — one
   * promise per task instead of an async frame's three.
   *
   * `threads`: how many threads the kernel may keep busy, its native library's helpers included
   * (`KernelTask.threads`). While such a task runs, the main thread polls for its answer yielding
   * its CPU between checks, as it does for the lanes of a fan-out.
   */
  run<P, R>(kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads = 1): Promise<R> {
    if (this.#busy) return new Promise<void>((resume) => this.#waiting.push(resume)).then(() => this.#post(kernel, payload, op, threads));
    this.#busy = true;
    return this.#post(kernel, payload, op, threads);
  }

  /** The next waiting task takes the worker, or it is free. */
  #handOn(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else {
      this.#busy = false;
      this.#buffers.idle();
    }
  }

  /** Post a task on the worker this task holds, and await its answer. */
  #post<P, R>(kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads: number): Promise<R> {
    let task: PostedTask;
    try {
      task = this.#send(kernel, payload, op, threads);
    } catch (e) {
      this.#handOn();
      return Promise.reject(e);
    }
    return AFTER_POSTS.then(() => this.#answer<R>(task, kernel, op));
  }

  /** Hand the task to the worker (mailbox, argument area, a message only for what it has not seen). */
  #send<P, R>(kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads: number): PostedTask {
    if (this.#dead) throw this.#deadError(op);
    const m = this.#mailbox;
    const sendKernel = !this.#known.has(kernel.id);
    let flags = 0;
    let message: TaskMessage | undefined;
    if (isKernelArgs(payload)) {
      // Packed: words and buffer ids go through the argument area; only buffers this worker has
      // not seen yet (and the kernel's module, the first time) travel by message.
      const { words, buffers } = payload;
      this.#argWords.set(words);
      const table = this.#buffers.prepare(buffers, this.#argIds);
      m[Mailbox.WORDS] = words.length;
      m[Mailbox.BUFFERS] = buffers.length;
      flags = TaskFlag.PACKED;
      if (sendKernel || table !== undefined) {
        message = sendKernel ? { kernel: { module: kernel.module, exportName: kernel.exportName }, table } : { table };
      }
    } else if (sendKernel || payload !== undefined) {
      message = sendKernel ? { kernel: { module: kernel.module, exportName: kernel.exportName }, payload } : { payload };
    }
    if (message !== undefined) {
      try {
        this.#port.postMessage(message);
      } catch (e) {
        // Nothing reached the worker: the payload cannot cross to it (a function, a class instance with private state, …).
        throw new TenferroError('InvalidArgument', `the payload of kernel ${kernel.exportName} cannot be sent to a worker: ${e instanceof Error ? e.message : String(e)}`, {
          op,
          cause: e,
          detail: { param: 'payload' },
        });
      }
      flags |= TaskFlag.HAS_MESSAGE;
      this.#known.add(kernel.id);
    }
    const timed = taskChannel().hasSubscribers;
    if (timed) flags |= TaskFlag.TIMED;
    m[Mailbox.TASK_FLAGS] = threads > 1 ? flags | TaskFlag.WIDE : flags;
    m[Mailbox.KERNEL_ID] = kernel.id;
    const seq = ++this.#seq;
    m[Mailbox.TASK] = seq; // published by the REQUEST store below
    // A task timed for `tenferro:task` reads the clock before the post: its spans are placed on
    // that clock, and the worker may begin before a later reading.
    const postedAt = timed ? process.hrtime.bigint() : undefined;
    if (this.#lanes !== undefined) lanePosted(this.#lanes, this.observed.index);
    // Counted into the fan-out's join slot before the post (nothing after this may throw).
    const join = joinFanOut(this.#joins);
    m[Mailbox.JOIN] = join + 1;
    this.#joinInFlight = join;
    Atomics.store(m, Mailbox.REQUEST, (this.#bell = (this.#bell + 1) | 0));
    // The worker may be running the task from here on: what follows is off its critical path.
    // Untimed, the clock is read after the post (a round trip a few tens of ns short), and the CPU
    // this thread polls from is a hint for the worker's spin, which reads it atomically at each check.
    Atomics.notify(m, Mailbox.REQUEST);
    const started = postedAt ?? process.hrtime.bigint();
    const here = mainCpu()();
    if (m[Mailbox.MAIN_CPU] !== here) Atomics.store(m, Mailbox.MAIN_CPU, here);
    const alone = inFlight === 0;
    const postsBefore = ++posts;
    inFlight++;
    running.add(m);
    return { pending: { mailbox: m, seq, expectedNs: 3 * this.#averageNs }, started, sendKernel, timed, alone, postsBefore, threads, join, joinWait: false, watch: 'poll' };
  }

  /**
   * The answer of `task`: seen in the blocking poll (the common case), settled here at once;
   * otherwise watched from the event loop or slept for (`#answerLater`).
   */
  #answer<R>(task: PostedTask, kernel: KernelRef<unknown, R>, op: string): R | Promise<R> {
    const { pending } = task;
    const m = pending.mailbox;
    const seq = pending.seq;
    let r: number;
    try {
      const expected = pending.expectedNs;
      r =
        inFlight !== 1 || task.threads > 1
          ? pollAmongLanes(m, seq, (task.joinWait = parksAtOnce(task)) ? 0 : lanePollNs(expected))
          : pollForResponse(m, seq, expected > MAX_POLL_NS ? MIN_POLL_NS : Math.max(MIN_POLL_NS, Math.round(expected)));
    } catch (e) {
      this.#taskEnded(m);
      this.#handOn();
      throw e;
    }
    if (r !== seq && r !== DEAD) return this.#answerLater(task, kernel, op, r);
    const seenNs = process.hrtime.bigint();
    if (turns.due(task.started, seenNs)) return this.#answerAfterTurn(task, kernel, op, r);
    turns.counted();
    try {
      this.#taskEnded(m);
      return this.#result(task, kernel, op, r, seenNs);
    } finally {
      this.#handOn();
    }
  }

  /** An answer already seen, settled after an event-loop turn (the budget of answers without one is spent). */
  async #answerAfterTurn<R>(task: PostedTask, kernel: KernelRef<unknown, R>, op: string, r: number): Promise<R> {
    try {
      this.#taskEnded(task.pending.mailbox);
      await nextTurn();
      turns.taken(process.hrtime.bigint());
      return this.#result(task, kernel, op, r);
    } finally {
      turns.counted();
      this.#handOn();
    }
  }

  /**
   * Settle the answer `r` of a task no longer in flight: after an event-loop turn when one is due
   * (the budget of answers without one is spent), at once when one of ours just ran (`turned`) or
   * none is due — then without a promise of its own (every promise is a trip through Node's async
   * hooks).
   */
  #settle<R>(task: PostedTask, kernel: KernelRef<unknown, R>, op: string, r: number, turned: boolean): R | Promise<R> {
    if (turned) turns.taken(process.hrtime.bigint());
    else if (turns.due(task.started, process.hrtime.bigint())) {
      return nextTurn().then(() => {
        turns.taken(process.hrtime.bigint());
        return this.#result(task, kernel, op, r);
      });
    }
    return this.#result(task, kernel, op, r);
  }

  /** The answer of a task that outlasted the blocking poll. */
  async #answerLater<R>(task: PostedTask, kernel: KernelRef<unknown, R>, op: string, seen: number): Promise<R> {
    const { pending, started } = task;
    // Only now may the event loop run dry while the task is in flight (every earlier step was
    // synchronous or a microtask): the worker keeps the process alive until the answer is taken.
    // An answer seen in the blocking poll never pays the two calls.
    if (!this.#dead) this.#worker.ref();
    reportQueuedNudge();
    const m = pending.mailbox;
    const seq = pending.seq;
    let r = seen;
    /** Whether an immediate of this task's ran (`pollOverTurns`): the event loop turned meanwhile. */
    let turned = false;
    /** Whether it waited for the answer asynchronously (the event loop had control meanwhile). */
    let waited = false;
    try {
      try {
        const expected = pending.expectedNs;
        task.watch = 'park';
        if (inFlight === 1) {
          const usual = this.#averageNs;
          const early = earlyWakeNs(usual, task.threads, this.#processCpus); // undefined below 4 ms
          if (usual <= TURN_POLL_MAX_NS) {
            task.watch = 'turns';
            r = await pollOverTurns(m, seq, started + BigInt(Math.round(expected)));
            turned = true;
          } else if (early !== undefined) {
            // Sleep through most of a long task, then watch its end from the event loop for at
            // most `early` past its usual duration (then park: it runs long this time).
            task.watch = 'earlyWake';
            const sleepNs = usual - early - Number(process.hrtime.bigint() - started);
            if (sleepNs > 0) {
              mainSleeps();
              const wait = Atomics.waitAsync(m, Mailbox.RESPONSE, r, sleepNs / 1e6);
              if (wait.async) {
                await wait.value;
                waited = true;
              }
              r = Atomics.load(m, Mailbox.RESPONSE);
            }
            if (r !== seq && r !== DEAD) {
              r = await pollOverTurns(m, seq, started + BigInt(Math.round(usual + early)));
              turned = true;
            }
          }
        }
        if (r !== seq && r !== DEAD) mainSleeps();
        const joins = this.#joins.words;
        while (r !== seq && r !== DEAD) {
          // A lane of a fan-out that parked at once waits with its siblings on their join slot while
          // it counts tasks (one wake-up for all of them), then on its own mailbox (fan-out-join.ts).
          // Other tasks wait on their own mailbox: each answer is seen as it comes.
          const count = task.joinWait ? Atomics.load(joins, task.join) : 0;
          if (count > 0) {
            // The mailbox again, after the count: its worker writes the answer before it takes the
            // task out of the count, so an answer written since the last look is seen here, or
            // else the count read changes and the wait below returns at once (or is notified).
            r = Atomics.load(m, Mailbox.RESPONSE);
            if (r === seq || r === DEAD) break;
          }
          const wait = count > 0 ? Atomics.waitAsync(joins, task.join, count) : Atomics.waitAsync(m, Mailbox.RESPONSE, r);
          if (wait.async) {
            await wait.value;
            waited = true;
          }
          r = Atomics.load(m, Mailbox.RESPONSE);
        }
      } finally {
        this.#taskEnded(m);
      }
      if (waited && !turned) turns.resumed(process.hrtime.bigint());
      // Settled from a macrotask, but after the immediates only if one of ours ran: else the budget applies too.
      const settled = this.#settle(task, kernel, op, r, turned);
      return settled instanceof Promise ? await settled : settled;
    } finally {
      if (!this.#dead) this.#worker.unref();
      turns.counted();
      this.#handOn();
    }
  }

  /** The task is no longer in flight on this isolate. */
  #taskEnded(m: Int32Array): void {
    this.#joinInFlight = -1;
    running.delete(m);
    inFlight--;
  }

  /** What the worker answered (`r`: the task's sequence number, or DEAD), seen at `seenNs` when the caller has read the clock already. */
  #result<R>(task: PostedTask, kernel: KernelRef<unknown, R>, op: string, r: number, seenNs?: bigint): R {
    if (task.timed && r === task.pending.seq) this.#publishTask(op, kernel.exportName, task.threads, !task.alone || inFlight > 0 || posts !== task.postsBefore, task.started, task.watch);
    // A fan-out's other lanes, still parked, are not polled for here: their answers (or, parked on
    // a join slot, the last of them) wake this thread. Polling up to 300 µs for them (yielding every 16 checks) cost the main thread
    // ~1 to 10 involuntary switches a call and 25–40 % more CPU in 2-thread n = 512 streams, with
    // no call faster (docs/performance.md, 2026-12-11).
    if (r === DEAD) throw this.#deadError(op);
    const answeredNs = seenNs ?? process.hrtime.bigint();
    turns.answered(answeredNs);
    this.#averageNs += (Number(answeredNs - task.started) - this.#averageNs) / 8;
    const m = task.pending.mailbox;
    const resultFlags = m[Mailbox.RESULT_FLAGS]!;
    if ((resultFlags & ResultFlag.HAS_MESSAGE) === 0) return undefined as R;
    const result = receiveMessageOnPort(this.#port)?.message as ResultMessage | undefined;
    if (result === undefined) throw new TenferroError('Internal', 'a kernel result message is missing', { op });
    if ((resultFlags & ResultFlag.ERROR) !== 0) {
      if (task.sendKernel) this.#known.delete(kernel.id);
      throw kernelFailed(result.error!, kernel, op, { worker: this.observed.index });
    }
    return result.value as R;
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#buffers.close();
    if (!this.#dead) {
      Atomics.store(this.#mailbox, Mailbox.KERNEL_ID, 0);
      Atomics.store(this.#mailbox, Mailbox.TASK, ++this.#seq);
      this.#ringBell();
    }
    this.#port.close();
    await this.#worker.terminate();
  }

  #onExit(code: number, onDeath: EngineWorkerOptions['onDeath']): void {
    this.#dead = true;
    this.#buffers.close();
    Atomics.store(this.#mailbox, Mailbox.RESPONSE, DEAD);
    Atomics.notify(this.#mailbox, Mailbox.RESPONSE);
    // Its task will never leave its join slot: the siblings' waiters go back to their own mailboxes.
    if (this.#joinInFlight >= 0) this.#joins.poison(this.#joinInFlight);
    if (!this.#closing) onDeath(this, code);
  }

  #deadError(op: string): TenferroError {
    if (this.#closing) return new TenferroError('BackendClosed', `the engine was closed while worker ${this.observed.index} ran a task`, { op });
    return new TenferroError('WorkerDied', `engine worker ${this.observed.index} (tid ${this.observed.tid}) died while running a task`, {
      op,
      detail: { worker: this.observed.index, tid: this.observed.tid },
    });
  }
}
