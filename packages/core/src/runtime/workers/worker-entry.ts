// The only module that runs inside an engine worker. It pins the thread to the whole domain
// CPU set before anything else loads (R21), reports what it observed, registers the engine's
// shared execution-scope state once (R23), then serves tasks from its shared mailbox:
// `Atomics.wait` for the next request, payloads and results through `receiveMessageOnPort`
// (no event-loop hop), `Atomics.notify` on completion.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { kernelErrorInfo } from './kernel-error.js';
import type { KernelFunction, ResultMessage, TaskMessage, WorkerInit, WorkerStartupMessage } from './protocol.js';
import { ArgsArea, EngineState, ForgetRing, Mailbox, ResultFlag, TaskFlag, WORKER_SCOPE_KEY } from './shared-fields.js';
import { LaneSpreader } from './lane-spread.js';
import { RARE_YIELD_MASK, sharesCpu, spinNsAfter } from './spin-yield.js';
import { statusCpusAllowed, threadSelfTid } from './thread-self.js';

const init = workerData as WorkerInit;
const port = init.taskPort;
const mailbox = new Int32Array(init.mailbox);
const engineState = new Int32Array(init.engineState);
const joins = new Int32Array(init.joins);
const argWords = new Float64Array(init.args, 0, ArgsArea.MAX_WORDS);
/** A timed task's begin and answer times (`Mailbox.TIMES`). */
const times = new Float64Array(init.mailbox, Mailbox.TIMES * Int32Array.BYTES_PER_ELEMENT, 2);
const argIds = new Int32Array(init.args, ArgsArea.IDS_BYTE_OFFSET, ArgsArea.MAX_BUFFERS);
/** This worker's buffer table: the storage packed tasks name by id (see `buffer-table.ts`). */
const buffers = new Map<number, SharedArrayBuffer>();
/** Ids the main isolate tells this worker to drop while it has no task (see `ForgetRing`). */
const ring = new Int32Array(init.forgets);
const releasedBytes = new Float64Array(init.forgets, 0, ForgetRing.SLOTS / 2);

/**
 * Storage this worker lets go of is released only when its own heap is collected: V8 does not
 * count a `SharedArrayBuffer` towards when to collect, and this thread's event loop, where a
 * collection could otherwise be scheduled, never runs while it serves tasks. So the worker counts
 * the bytes it let go of — table entries it dropped, the buffers of structured-clone payloads —
 * and collects once {@link COLLECT_BYTES} are pending after a task, or once it has been idle for
 * {@link IDLE_COLLECT_MS} with any pending (#35).
 */
const COLLECT_BYTES = 32 * 1024 * 1024;
const IDLE_COLLECT_MS = 20;
/**
 * Bytes since the last collection: of table entries dropped (`DROPPED`), and of storage let go of
 * (`GARBAGE`: dropped entries and payload buffers). Cells of a `Float64Array`, doubles from the
 * start (as util/running-total.ts, not imported: a worker loads as few modules as it can): while
 * collections are spaced out (`COLLECT_DUTY`), a stream of payloads naming large buffers passes
 * 2^30 and 2^31 bytes between two of them, and small-integer counts deoptimised `serve` there.
 */
const counts = new Float64Array(2);
const DROPPED = 0;
const GARBAGE = 1;
/** When the last collection ended, and what it cost (ns). */
let collectedAt = 0n;
let collectCost = 0n;
/**
 * Between tasks a collection for payload garbage alone waits until the worker has run at least
 * this many times the last collection's cost since it: the buffers of a structured-clone payload
 * may be memory the main isolate still holds (the same buffer sent again and again), so they must
 * not buy a full collection per task — at most 1/COLLECT_DUTY of the worker's time. Dropped table
 * entries (storage nobody can name any more) collect at once; an idle worker collects either.
 */
const COLLECT_DUTY = 20n;

/** `adjustExternalMemory` of the OS binding, when it loads here (without it the worker cannot force a collection). */
let adjustExternal: ((deltaBytes: number) => number) | undefined;
/** Reported for an instant to make V8 collect the whole heap at once: far above any heap's hard limit for external memory. */
const FORCE_COLLECTION_BYTES = 2 ** 40;

/**
 * Collect this worker's heap now, releasing the storage it let go of. External memory reported
 * far above V8's hard limit makes V8 run a full, synchronous collection at once — the one way to
 * ask for it without `--expose-gc` (process-wide) or this thread's event loop. It costs what a
 * full collection of a worker's small heap costs (5–16 ms measured on the loaded 2-vCPU machine,
 * the same as `gc()`), once per 32 MiB let go of. The report is taken back in the next call.
 */
function collect(): void {
  if (adjustExternal === undefined) return;
  const t0 = process.hrtime.bigint();
  adjustExternal(FORCE_COLLECTION_BYTES);
  adjustExternal(-FORCE_COLLECTION_BYTES);
  collectedAt = process.hrtime.bigint();
  collectCost = collectedAt - t0;
  releasedBytes[ForgetRing.RELEASED_F64] = releasedBytes[ForgetRing.RELEASED_F64]! + counts[DROPPED]!;
  counts[DROPPED] = 0;
  counts[GARBAGE] = 0;
  Atomics.add(ring, ForgetRing.COLLECTIONS, 1);
}

function drop(id: number): void {
  const buffer = buffers.get(id);
  if (buffer === undefined) return;
  buffers.delete(id);
  counts[DROPPED] = counts[DROPPED]! + buffer.byteLength;
  counts[GARBAGE] = counts[GARBAGE]! + buffer.byteLength;
}

/** Drop every id the main isolate wrote into the ring so far. */
function drain(): void {
  const head = Atomics.load(ring, ForgetRing.HEAD);
  let tail = ring[ForgetRing.TAIL]!;
  if (head === tail) return;
  for (; tail !== head; tail = (tail + 1) | 0) drop(ring[ForgetRing.SLOTS + (tail & (ForgetRing.CAPACITY - 1))]!);
  Atomics.store(ring, ForgetRing.TAIL, tail);
}

/** Count the bytes of the shared buffers in a structured-clone payload as garbage (a bounded walk: at most 64 values, 4 levels). */
function countShared(payload: unknown): void {
  let budget = 64;
  const visit = (v: unknown, depth: number): void => {
    if (typeof v !== 'object' || v === null || budget-- <= 0) return;
    if (v instanceof SharedArrayBuffer) counts[GARBAGE] = counts[GARBAGE]! + v.byteLength;
    else if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof SharedArrayBuffer) counts[GARBAGE] = counts[GARBAGE]! + v.buffer.byteLength;
    } else if (depth < 4) {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length && budget > 0; i++) visit(v[i], depth + 1);
      } else {
        for (const key in v) {
          if (budget <= 0) break;
          visit((v as Record<string, unknown>)[key], depth + 1);
        }
      }
    }
  };
  visit(payload, 0);
}

/** The payload of a packed task: its words (a view of the argument area) and its buffers. */
function unpack(): { words: Float64Array; buffers: SharedArrayBuffer[] } {
  const words = argWords.subarray(0, Atomics.load(mailbox, Mailbox.WORDS));
  const count = Atomics.load(mailbox, Mailbox.BUFFERS);
  const list = new Array<SharedArrayBuffer>(count);
  for (let i = 0; i < count; i++) {
    const buffer = buffers.get(argIds[i]!);
    if (buffer === undefined) throw new Error(`buffer ${argIds[i]} is unknown to this worker`);
    list[i] = buffer;
  }
  return { words, buffers: list };
}

/** `sched_yield` from the OS binding when it loads here; spin-waits call it (see `serve`). */
let yieldThread: () => void = () => undefined;
/** `sched_getcpu` from the OS binding when it loads here (-1: unknown, then the spin yields as if the CPU were shared). */
let currentCpu: () => number = () => -1;
/** Keeps this lane off a CPU another running lane holds (pinned workers with the OS binding; see `lane-spread.ts`). */
let spreader: LaneSpreader | undefined;

async function pin(): Promise<WorkerStartupMessage> {
  let affinity: number[] | undefined;
  let tid = threadSelfTid() ?? -1;
  try {
    const os = await import('@tenferro/os');
    const loaded = os.loadOs();
    if (loaded.available) {
      yieldThread = os.yieldThread;
      adjustExternal = loaded.binding.adjustExternalMemory;
      if (loaded.binding.currentCpu !== undefined) currentCpu = loaded.binding.currentCpu;
    }
  } catch {
    // unpinned compatibility worker without the binding: spin without yielding
  }
  if (init.cpus !== undefined) {
    try {
      const os = await import('@tenferro/os');
      os.setThreadAffinity([...init.cpus]);
      affinity = os.getThreadAffinity();
      tid = os.gettid();
      if (init.lanes !== undefined && init.cpus.length > 1) spreader = new LaneSpreader(init.lanes, init.workerIndex, init.cpus, os.setThreadAffinity);
    } catch (e) {
      const err = e as { message?: string; code?: string };
      return { type: 'startupFailed', message: String(err.message ?? e), code: err.code };
    }
  }
  return { type: 'ready', tid, affinity, statusCpus: statusCpusAllowed() };
}

const ready = await pin();
(globalThis as Record<symbol, unknown>)[WORKER_SCOPE_KEY] = Object.freeze({ engineState, workerIndex: init.workerIndex });
parentPort!.postMessage(ready);
if (ready.type === 'ready') void serve(ready.tid);

async function serve(tid: number): Promise<never> {
  const kernels = new Map<number, KernelFunction>();
  const info = Object.freeze({ workerIndex: init.workerIndex, tid });
  const baseSpinNs = init.spinMicros * 1000;
  /** The usual run of this worker's tasks, from taking one to answering it (ns, a moving average over ~8; `Mailbox.USUAL_RUN_US`). */
  let usualRunNs = 0;
  /** When the current task was taken. */
  let taken = 0n;
  /** The doorbell as last seen (`Mailbox.REQUEST`: rung for each task and each batch of ids to forget). */
  let bell = 0;
  /** The last task run (`Mailbox.TASK`). */
  let seen = 0;
  /** A spin for the next task is due (after a task), or the current one ends then (0n: none). */
  let spinFresh = true;
  let spinUntil = 0n;
  /**
   * `EngineState.PARK` as the last task was taken: a change ends the spin that follows it (the engine
   * waits for CPUs another execution holds). Read when the task is taken, not when the spin begins, so
   * that a park asked while the task ran or its answer was on its way is not missed.
   */
  let parkSeen = Atomics.load(engineState, EngineState.PARK);
  /** The CPU the current spin last saw this thread on (`sched_getcpu`), -1 when not known since the last task or sleep. */
  let spinCpu = -1;
  for (;;) {
    // Spin for back-to-back tasks (the base spin, or a tenth of the usual task: `spinNsAfter`),
    // then sleep. When the main thread shares this CPU the spin yields it every few checks, so that
    // it runs at once; on a CPU of our own only now and then (it may have moved here unseen): a
    // system call just before a kernel slows the kernel. Ids to forget that ring the bell during
    // the spin do not end it.
    if (baseSpinNs > 0 && (spinFresh || spinUntil !== 0n) && Atomics.load(mailbox, Mailbox.REQUEST) === bell) {
      if (spinFresh) {
        spinUntil = process.hrtime.bigint() + BigInt(spinNsAfter(usualRunNs, baseSpinNs));
      }
      spinFresh = false;
      for (let i = 1; Atomics.load(mailbox, Mailbox.REQUEST) === bell; i++) {
        if ((i & 63) === 0) {
          if (process.hrtime.bigint() >= spinUntil || Atomics.load(engineState, EngineState.PARK) !== parkSeen) {
            spinUntil = 0n;
            break;
          }
          const here = (spinCpu = currentCpu());
          spreader?.waitsOn(here);
          if (sharesCpu(mailbox, here, Mailbox.WORKER_CPU, Mailbox.MAIN_CPU) || (i & RARE_YIELD_MASK) === 0) yieldThread();
        }
      }
    }
    if (Atomics.load(mailbox, Mailbox.REQUEST) === bell) {
      spinFresh = false;
      spinUntil = 0n;
      spinCpu = -1;
      spreader?.waitsOn(-1); // asleep: woken on whichever CPU
      while (Atomics.load(mailbox, Mailbox.REQUEST) === bell) {
        // Idle with storage let go of: collect once nothing came for a while.
        if (counts[GARBAGE] === 0) Atomics.wait(mailbox, Mailbox.REQUEST, bell);
        else if (Atomics.wait(mailbox, Mailbox.REQUEST, bell, IDLE_COLLECT_MS) === 'timed-out') collect();
      }
    }
    bell = Atomics.load(mailbox, Mailbox.REQUEST);
    drain();
    const posted = mailbox[Mailbox.TASK]!; // published by the REQUEST store
    if (posted === seen) continue; // the bell rang for ids to forget only
    seen = posted;
    spinFresh = true;
    taken = process.hrtime.bigint();
    parkSeen = Atomics.load(engineState, EngineState.PARK);
    const taskFlags = Atomics.load(mailbox, Mailbox.TASK_FLAGS);
    // Read now: once the answer is out, the main thread may post the next task over it.
    const join = mailbox[Mailbox.JOIN]!;
    const timed = (taskFlags & TaskFlag.TIMED) !== 0;
    if (timed) times[0] = Number(taken);
    const kernelId = Atomics.load(mailbox, Mailbox.KERNEL_ID);
    if (kernelId === 0) process.exit(0);
    // Where this task runs, for the main thread's poll: as the spin it ended last saw it (at most
    // 64 checks ago), else read now — one call fewer between the post and the kernel.
    let cpu = spinCpu >= 0 ? spinCpu : currentCpu();
    spinCpu = -1; // the kernel may move this thread: the next task reads it afresh, or its spin does
    // Never narrowed: a task that may keep more threads busy (or whose provider starts threads on
    // first use: posted wide, #36), or one that imports its kernel's module here (a module may
    // start threads as it loads; they would inherit the narrowed mask).
    if (spreader !== undefined) cpu = spreader.begin(cpu, (taskFlags & TaskFlag.WIDE) === 0 && kernels.has(kernelId));
    if (mailbox[Mailbox.WORKER_CPU] !== cpu) Atomics.store(mailbox, Mailbox.WORKER_CPU, cpu);
    const message = (taskFlags & TaskFlag.HAS_MESSAGE) !== 0 ? (receiveMessageOnPort(port)?.message as TaskMessage | undefined) : undefined;
    if (message?.table !== undefined) {
      for (const id of message.table.forget ?? []) drop(id);
      for (const [id, buffer] of message.table.register ?? []) buffers.set(id, buffer);
    }
    // A structured-clone payload's buffers become garbage here once the task ends.
    if (message?.payload !== undefined) countShared(message.payload);
    let result: ResultMessage | undefined;
    let flags = 0;
    try {
      let kernel = kernels.get(kernelId);
      if (kernel === undefined) {
        if (message?.kernel === undefined) throw new Error(`kernel ${kernelId} is unknown to this worker`);
        const mod = (await import(message.kernel.module)) as Record<string, unknown>;
        const fn = mod[message.kernel.exportName];
        if (typeof fn !== 'function') {
          throw new Error(`${message.kernel.module} has no exported function ${JSON.stringify(message.kernel.exportName)}`);
        }
        kernel = fn as KernelFunction;
        kernels.set(kernelId, kernel);
      }
      let value = kernel((taskFlags & TaskFlag.PACKED) !== 0 ? unpack() : message?.payload, info);
      if (value instanceof Promise) value = await value;
      if (value !== undefined) {
        result = { value };
        flags = ResultFlag.HAS_MESSAGE;
      }
    } catch (e) {
      result = { error: kernelErrorInfo(e) };
      flags = ResultFlag.HAS_MESSAGE | ResultFlag.ERROR;
    }
    if (result !== undefined) {
      try {
        port.postMessage(result);
      } catch (e) {
        port.postMessage({ error: kernelErrorInfo(e) } satisfies ResultMessage);
        flags = ResultFlag.HAS_MESSAGE | ResultFlag.ERROR;
      }
    }
    if (timed) times[1] = Number(process.hrtime.bigint()); // published by the RESPONSE store
    spreader?.idle();
    // Widened before the answer, not after it: once the main thread sees the answer, this worker
    // has its whole domain set back, so a placement check right after the operation reports it so
    // (after, a worker preempted between its notify and the widening was seen narrowed). Only a
    // task that was narrowed pays the system call.
    spreader?.widen();
    Atomics.store(mailbox, Mailbox.RESULT_FLAGS, flags);
    Atomics.store(mailbox, Mailbox.RESPONSE, seen);
    Atomics.notify(mailbox, Mailbox.RESPONSE);
    // A lane of a fan-out: out of its join slot's count, after the answer (see fan-out-join.ts);
    // the last one wakes the main thread's waiters on the slot, and so does a failed one (its
    // failure is seen at once, as a lane's that waits on its own mailbox is).
    if (join > 0 && join <= joins.length && (Atomics.sub(joins, join - 1, 1) === 1 || (flags & ResultFlag.ERROR) !== 0)) Atomics.notify(joins, join - 1);
    usualRunNs += (Number(process.hrtime.bigint() - taken) - usualRunNs) / 8;
    mailbox[Mailbox.USUAL_RUN_US] = Math.round(usualRunNs / 1000);
    if (counts[DROPPED]! >= COLLECT_BYTES || (counts[GARBAGE]! >= COLLECT_BYTES && process.hrtime.bigint() - collectedAt >= collectCost * COLLECT_DUTY)) collect();
  }
}

export {};
