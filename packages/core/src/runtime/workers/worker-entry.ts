// The only module that runs inside an engine worker. It pins the thread to the whole domain
// CPU set before anything else loads (R21), reports what it observed, registers the engine's
// shared execution-scope state once (R23), then serves tasks from its shared mailbox:
// `Atomics.wait` for the next request, payloads and results through `receiveMessageOnPort`
// (no event-loop hop), `Atomics.notify` on completion.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { kernelErrorInfo } from './kernel-error.js';
import type { KernelFunction, ResultMessage, TaskMessage, WorkerInit, WorkerStartupMessage } from './protocol.js';
import { ArgsArea, Mailbox, ResultFlag, TaskFlag, WORKER_SCOPE_KEY } from './shared-fields.js';
import { LaneSpreader } from './lane-spread.js';
import { RARE_YIELD_MASK, sharesCpu } from './spin-yield.js';
import { statusCpusAllowed, threadSelfTid } from './thread-self.js';

const init = workerData as WorkerInit;
const port = init.taskPort;
const mailbox = new Int32Array(init.mailbox);
const engineState = new Int32Array(init.engineState);
const argWords = new Float64Array(init.args, 0, ArgsArea.MAX_WORDS);
/** A timed task's begin and answer times (`Mailbox.TIMES`). */
const times = new Float64Array(init.mailbox, Mailbox.TIMES * Int32Array.BYTES_PER_ELEMENT, 2);
const argIds = new Int32Array(init.args, ArgsArea.IDS_BYTE_OFFSET, ArgsArea.MAX_BUFFERS);
/** This worker's buffer table: the storage packed tasks name by id (see `buffer-table.ts`). */
const buffers = new Map<number, SharedArrayBuffer>();

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
  const spinNs = BigInt(init.spinMicros) * 1000n;
  let seen = 0;
  for (;;) {
    // Spin briefly for back-to-back tasks, then sleep. When the main thread shares this CPU the
    // spin yields it every few checks, so that it runs at once; on a CPU of our own only now and
    // then (it may have moved here unseen): a system call just before a kernel slows the kernel.
    if (spinNs > 0n && Atomics.load(mailbox, Mailbox.REQUEST) === seen) {
      const until = process.hrtime.bigint() + spinNs;
      for (let i = 1; Atomics.load(mailbox, Mailbox.REQUEST) === seen; i++) {
        if ((i & 63) === 0) {
          if (process.hrtime.bigint() >= until) break;
          const here = currentCpu();
          spreader?.waitsOn(here);
          if (sharesCpu(mailbox, here, Mailbox.WORKER_CPU, Mailbox.MAIN_CPU) || (i & RARE_YIELD_MASK) === 0) yieldThread();
        }
      }
    }
    if (Atomics.load(mailbox, Mailbox.REQUEST) === seen) {
      spreader?.waitsOn(-1); // asleep: woken on whichever CPU
      while (Atomics.load(mailbox, Mailbox.REQUEST) === seen) Atomics.wait(mailbox, Mailbox.REQUEST, seen);
    }
    seen = Atomics.load(mailbox, Mailbox.REQUEST);
    const taskFlags = Atomics.load(mailbox, Mailbox.TASK_FLAGS);
    const timed = (taskFlags & TaskFlag.TIMED) !== 0;
    if (timed) times[0] = Number(process.hrtime.bigint());
    const kernelId = Atomics.load(mailbox, Mailbox.KERNEL_ID);
    if (kernelId === 0) process.exit(0);
    let cpu = currentCpu(); // where this task runs, for the main thread's poll
    // Never narrowed: a task that may keep more threads busy, or one that imports its kernel's
    // module here (a module may start threads as it loads; they would inherit the narrowed mask).
    if (spreader !== undefined) cpu = spreader.begin(cpu, (taskFlags & TaskFlag.WIDE) === 0 && kernels.has(kernelId));
    if (mailbox[Mailbox.WORKER_CPU] !== cpu) Atomics.store(mailbox, Mailbox.WORKER_CPU, cpu);
    const message = (taskFlags & TaskFlag.HAS_MESSAGE) !== 0 ? (receiveMessageOnPort(port)?.message as TaskMessage | undefined) : undefined;
    if (message?.table !== undefined) {
      for (const id of message.table.forget ?? []) buffers.delete(id);
      for (const [id, buffer] of message.table.register ?? []) buffers.set(id, buffer);
    }
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
    Atomics.store(mailbox, Mailbox.RESULT_FLAGS, flags);
    Atomics.store(mailbox, Mailbox.RESPONSE, seen);
    Atomics.notify(mailbox, Mailbox.RESPONSE);
    spreader?.widen();
  }
}

export {};
