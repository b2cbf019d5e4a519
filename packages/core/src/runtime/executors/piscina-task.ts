// Runs inside a worker of an application-owned piscina pool: one tenferro kernel task. While
// the kernel runs, the worker carries the domain's shared execution record, so any backend
// entry attempted from inside the task is rejected as re-entry (R43, R89).
import { threadId } from 'node:worker_threads';
import { type KernelErrorInfo, kernelErrorInfo } from '../workers/kernel-error.js';
import type { KernelFunction } from '../workers/protocol.js';
import { WORKER_SCOPE_KEY } from '../workers/shared-fields.js';
import { threadSelfTid } from '../workers/thread-self.js';

export interface PiscinaKernelTask {
  readonly module: string;
  readonly exportName: string;
  readonly payload: unknown;
  readonly scope: SharedArrayBuffer;
}

export type PiscinaKernelResult = { readonly value: unknown } | { readonly error: KernelErrorInfo };

const kernels = new Map<string, KernelFunction>();

export async function runTenferroKernel(task: PiscinaKernelTask): Promise<PiscinaKernelResult> {
  const global = globalThis as Record<symbol, unknown>;
  const previous = global[WORKER_SCOPE_KEY];
  global[WORKER_SCOPE_KEY] = Object.freeze({ engineState: new Int32Array(task.scope), workerIndex: threadId });
  try {
    const key = `${task.module}#${task.exportName}`;
    let kernel = kernels.get(key);
    if (kernel === undefined) {
      const fn = ((await import(task.module)) as Record<string, unknown>)[task.exportName];
      if (typeof fn !== 'function') throw new Error(`${task.module} has no exported function ${JSON.stringify(task.exportName)}`);
      kernel = fn as KernelFunction;
      kernels.set(key, kernel);
    }
    return { value: await kernel(task.payload, { workerIndex: threadId, tid: threadSelfTid() ?? -1 }) };
  } catch (e) {
    return { error: kernelErrorInfo(e) };
  } finally {
    global[WORKER_SCOPE_KEY] = previous;
  }
}
