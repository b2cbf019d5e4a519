import type { CpuAdmissionMode, CpuDomainId } from './cpu-domain.js';
import type { KernelRef } from './kernel.js';
import type { ProviderParallelMode } from './parallel-mode.js';
import type { WorkerPool } from './worker-pool.js';
import type { CpuSet } from '../topology/cpu-set.js';

/**
 * What a provider receives: the always-already-entered, immutable view of one execution
 * (contract glossary "CpuExecutionContext", R67, R75, R76). It cannot install, submit, change
 * mode or own the permit; it runs kernel tasks on its own worker and, in Inner mode with a budget
 * above one, exposes the worker pool capped at the budget. It is valid only while its execution
 * runs: afterwards every method rejects with `ContextExpired`. Only tenferro creates contexts.
 */
export interface CpuExecutionContext {
  readonly domainId: CpuDomainId;
  /** The domain's CPU set; `undefined` for caller-managed domains (no placement claim). */
  readonly cpus: CpuSet | undefined;
  readonly admissionMode: CpuAdmissionMode;
  readonly threadBudget: number;
  readonly parallelMode: ProviderParallelMode;
  /** Whether the execution that entered this context is still running. */
  readonly live: boolean;
  /** The pool an Inner-mode provider may fan out on, capped at `threadBudget`; `undefined` unless Inner ∧ pool ∧ budget > 1 (R75). */
  workerPool(): WorkerPool | undefined;
  /** Threads native kernels may use: the budget in Inner mode on a pool-backed executor, else 1 (R75). */
  nativeThreadCount(): number;
  /** Run one kernel task on this context's worker. */
  run<P, R>(kernel: KernelRef<P, R>, payload?: P): Promise<R>;
}
