/** Typed messages between the main isolate and engine workers. */
import type { MessagePort } from 'node:worker_threads';
import type { KernelFunction, KernelTaskInfo } from '../../contract/kernel.js';
import type { TableUpdate } from './buffer-table.js';
import type { KernelErrorInfo } from './kernel-error.js';

export type { KernelErrorInfo, KernelFunction, KernelTaskInfo };

export interface WorkerInit {
  readonly mailbox: SharedArrayBuffer;
  /** The argument area of packed tasks (see `ArgsArea`). */
  readonly args: SharedArrayBuffer;
  /** Ids of buffers to drop from the worker's buffer table, and what it released (see `ForgetRing`). */
  readonly forgets: SharedArrayBuffer;
  readonly engineState: SharedArrayBuffer;
  /** Task payloads and results; read with `receiveMessageOnPort`, never through events. */
  readonly taskPort: MessagePort;
  /** CPUs to pin to (the whole domain set), or `undefined` for an unpinned compatibility worker. */
  readonly cpus: readonly number[] | undefined;
  readonly workerIndex: number;
  /** Spin this long (µs) after a task before sleeping; 0 disables spinning. */
  readonly spinMicros: number;
  /** The pool's lane table (see `lane-spread.ts`); absent for an unpinned worker. */
  readonly lanes: SharedArrayBuffer | undefined;
  /** The pool's fan-out join slots (see `fan-out-join.ts`). */
  readonly joins: SharedArrayBuffer;
}

/** First message of every worker: what it observed after pinning. */
export interface WorkerReady {
  readonly type: 'ready';
  readonly tid: number;
  /** `sched_getaffinity` of the worker thread after pinning (undefined when unpinned). */
  readonly affinity: readonly number[] | undefined;
  /** `Cpus_allowed_list` of `/proc/thread-self/status`. */
  readonly statusCpus: string | undefined;
}

export interface WorkerStartupFailed {
  readonly type: 'startupFailed';
  readonly message: string;
  readonly code: string | undefined;
}

export type WorkerStartupMessage = WorkerReady | WorkerStartupFailed;

/** Port message accompanying a task. */
export interface TaskMessage {
  /** Present the first time a worker receives a kernel id. */
  readonly kernel?: { readonly module: string; readonly exportName: string };
  readonly payload?: unknown;
  /** Buffer-table changes to apply before a packed task (see `buffer-table.ts`). */
  readonly table?: TableUpdate;
}

export interface ResultMessage {
  readonly value?: unknown;
  readonly error?: KernelErrorInfo;
}
