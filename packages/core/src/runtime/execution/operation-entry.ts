import type { ExecutionOwner } from '../../arbiter/execution-owner.js';
import type { Permit } from '../../arbiter/permit.js';
import type { CpuEngine } from '../engine/cpu-engine.js';
import type { SharedTensorAllocationDomain } from '../../buffer/allocation-domain.js';
import { TenferroError } from '../../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../../contract/execution-context.js';
import { EnteredContext, type EntryLifetime } from './execution-context.js';
import { TaskTracker } from './task-tracker.js';
import { PoolExecutor } from '../executors/pool-executor.js';
import type { ParallelMode, ProviderParallelMode } from '../../contract/parallel-mode.js';
import { type ExecutionEvent, executionTracing, traceAsync, tracingActive } from '../../diagnostics/channels.js';

/** Abort words are handed out from slabs of this many words, each word to one execution only. */
const ABORT_SLAB_WORDS = 1024;
let abortSlab: SharedArrayBuffer | undefined;
let abortNext = ABORT_SLAB_WORDS;

/**
 * A fresh abort word. Words are never reused — a late `stop` of a finished execution cannot reach
 * a later one — and come from shared slabs, so that a worker learns one buffer per slab instead of
 * one per execution (see `buffer-table.ts`).
 */
function freshAbortWord(): Int32Array {
  if (abortNext === ABORT_SLAB_WORDS || abortSlab === undefined) {
    abortSlab = new SharedArrayBuffer(ABORT_SLAB_WORDS * Int32Array.BYTES_PER_ELEMENT);
    abortNext = 0;
  }
  return new Int32Array(abortSlab, abortNext++ * Int32Array.BYTES_PER_ELEMENT, 1);
}

/**
 * The unentered capability `(domain, permit)`: the only value allowed to call an executor's
 * `install` or `submit` (R67). Not exported from the package; providers and operation families
 * only ever receive already-entered contexts.
 */
export class CpuOperationEntry {
  readonly engine: CpuEngine;
  /** The arbiter permit; `undefined` for caller-managed domains, admitted by their guard (R35). */
  readonly permit: Permit | undefined;
  readonly owner: ExecutionOwner;
  /** Where fresh outputs come from (R2): the handle's allocation domain, or the engine's pool when absent. */
  readonly allocationDomain: SharedTensorAllocationDomain | undefined;
  /** Every kernel task this execution started, through any of its contexts. */
  readonly #tasks: TaskTracker;
  /**
   * The admitted execution's lifetime, shared by every context this entry creates: it ends when
   * the execution's callback settles (`expire`), after which no context of it posts a kernel task
   * (#35: a scope's or session's operation that resumes later gets `ContextExpired`).
   */
  readonly #execution: EntryLifetime = { live: true };
  #abortWord: Int32Array | undefined;

  constructor(engine: CpuEngine, permit: Permit | undefined, owner: ExecutionOwner, allocationDomain?: SharedTensorAllocationDomain) {
    this.engine = engine;
    this.permit = permit;
    this.owner = owner;
    this.allocationDomain = allocationDomain;
    this.#tasks = new TaskTracker(engine);
  }

  /** The execution's abort word (see `CpuExecutionContext.abortWord`), created on first use. */
  get abortWord(): Int32Array {
    this.#abortWord ??= freshAbortWord();
    return this.#abortWord;
  }

  /**
   * Stop the execution: raise the abort word (`ABORT_SIGNALLED` or `ABORT_CLOSED`) for kernels
   * that poll it, and refuse every further kernel task with `error`. Tasks already running finish
   * or stop on their own; `settleTasks` waits for them.
   */
  stop(word: number, error: TenferroError): void {
    Atomics.store(this.abortWord, 0, word);
    this.#tasks.stop(error);
  }

  /**
   * End the execution's lifetime: every context it created — the scope's or session's own, and
   * those of operations begun inside it that are still running — refuses further kernel tasks
   * with `ContextExpired` from now on. Tasks already posted keep running; `settleTasks` waits for
   * them, and the permit or guard is released only after.
   */
  expire(): void {
    this.#execution.live = false;
  }

  /** Whether {@link expire} was called. */
  get expired(): boolean {
    return !this.#execution.live;
  }

  /** Wait until no kernel task of this execution is in flight. */
  async settleTasks(): Promise<void> {
    await this.#tasks.settle();
  }

  /** Inner iff budget > 1 and the executor offers a pool, else Sequential (R72). */
  preferredEngineMode(): ProviderParallelMode {
    const caps = this.engine.capabilities;
    return this.engine.domain.threadBudget > 1 && caps.innerParallelism === 'pool' ? 'inner' : 'sequential';
  }

  /** Whether Outer fan-out is possible: budget > 1 and the executor runs indexed jobs in parallel (R70). */
  supportsOuter(): boolean {
    return this.engine.domain.threadBudget > 1 && this.engine.capabilities.outerParallelism;
  }

  /**
   * Enter the executor once with `mode` and run `body` with a fresh entered context (R69: one
   * install, no submit). Outer is refused before any executor call (R68); a job the executor
   * runs twice, or not at all, is a `Scheduling` error (R71).
   */
  enter<R>(mode: ParallelMode, body: (ctx: CpuExecutionContext) => Promise<R> | R, op: string): Promise<R> {
    if (!this.#execution.live) return Promise.reject(contextExpired(op));
    const enter = this.engine.executor.install === OWN_INSTALL ? this.#enterOwn : this.#enter;
    if (!tracingActive(executionTracing())) return enter.call(this, mode, body, op) as Promise<R>;
    return this.#traced(mode, op, () => enter.call(this, mode, body, op) as Promise<R>);
  }

  /** `fn`, one executor entry in `mode`, published on `tenferro:execution` (start, asyncEnd, error). */
  #traced<R>(mode: ParallelMode, op: string, fn: () => Promise<R>): Promise<R> {
    const domain = this.engine.domain;
    const request = this.permit?.request;
    const exclusive = request !== undefined && 'providerExclusive' in request;
    const event: ExecutionEvent = {
      owner: this.owner,
      op,
      domainId: Number(domain.id),
      domainCpus: domain.admissionMode === 'callerManaged' ? null : (domain.placement?.cpus.toString() ?? null),
      cpus: request === undefined || 'providerExclusive' in request ? null : request.cpus.toString(),
      exclusive,
      mode,
      threadBudget: domain.threadBudget,
      startTime: process.hrtime.bigint(),
    };
    return traceAsync(executionTracing(), event, fn, () => 'ok', 'error');
  }

  /**
   * `#enter` on one of tenferro's own executors, whose `install` runs the job once, at once, on
   * this isolate (`PoolExecutor.install`): nothing of R71 to check, so the body runs directly and
   * the entry ends when its value settles — with one promise instead of four per operation (each
   * costs more while AsyncLocalStorage's hooks are on). Same outcome, same order of ending: the
   * contexts expire, the tasks the body left behind settle, the engine is marked idle.
   */
  #enterOwn<R>(mode: ParallelMode, body: (ctx: CpuExecutionContext) => Promise<R> | R, op: string): Promise<R> {
    if (mode === 'outer') return Promise.reject(outerThroughInstall(op));
    const lifetime: EntryLifetime = { live: true };
    this.engine.markActive(this.owner, op);
    this.engine.entries.installs++;
    /** End the entry with the body's outcome, once the tasks it left behind have settled; a task that failed unawaited is the outcome of a body that succeeded. */
    const end = (ok: boolean, value: R | undefined, error: unknown): R | Promise<R> => {
      lifetime.live = false;
      const orphans = this.#tasks.inFlight();
      if (orphans.length === 0) {
        this.engine.markInactive(this.owner);
        if (!ok) throw error;
        return value as R;
      }
      return this.#tasks.settle(orphans).then((orphanError) => {
        this.engine.markInactive(this.owner);
        if (!ok) throw error;
        if (orphanError !== undefined) throw orphanError;
        return value as R;
      });
    };
    let value: R | Promise<R>;
    try {
      value = body(this.context(mode, 0, lifetime));
      if (!isThenable(value)) return Promise.resolve(end(true, value, undefined));
    } catch (e) {
      try {
        return Promise.resolve(end(false, undefined, e));
      } catch (failure) {
        return Promise.reject(failure);
      }
    }
    return Promise.resolve(value).then(
      (v) => end(true, v, undefined),
      (e: unknown) => end(false, undefined, e),
    );
  }

  async #enter<R>(mode: ParallelMode, body: (ctx: CpuExecutionContext) => Promise<R> | R, op: string): Promise<R> {
    if (mode === 'outer') throw outerThroughInstall(op);
    const lifetime: EntryLifetime = { live: true };
    let runs = 0;
    let returned = false;
    const failures = new Set<unknown>();
    this.engine.markActive(this.owner, op);
    let failed = true;
    /** The tasks still in flight when the body ended: nobody awaited them, so their failure is the outcome. */
    let orphans: readonly Promise<unknown>[] = NO_TASKS;
    const bodyEnded = () => {
      if (!lifetime.live) return;
      lifetime.live = false;
      orphans = this.#tasks.inFlight();
    };
    try {
      this.engine.entries.installs++;
      let result: R;
      try {
        result = await this.engine.executor.install(async () => {
          // A second run, or one after install returned, runs none of the operation (R71) —
          // and is reported even when the executor swallows this refusal.
          if (++runs > 1) throw new TenferroError('Scheduling', 'the executor ran a scoped job twice', { op });
          if (returned) throw new TenferroError('Scheduling', 'the executor ran the scoped job after install returned', { op });
          try {
            const value = body(this.context(mode, 0, lifetime));
            // A synchronous body ends here, before any task it left behind can settle unseen.
            if (!(value instanceof Promise)) bodyEnded();
            return await value;
          } catch (e) {
            failures.add(e);
            throw e;
          } finally {
            bodyEnded();
          }
        });
      } catch (e) {
        throw failures.has(e) || TenferroError.is(e, 'Scheduling') ? e : executorFailed(e, op);
      }
      returned = true;
      if (runs === 0) throw new TenferroError('Scheduling', 'the executor returned without running the scoped job', { op });
      if (runs > 1) throw new TenferroError('Scheduling', 'the executor ran a scoped job twice', { op });
      failed = false;
      return result;
    } finally {
      returned = true;
      lifetime.live = false;
      const orphanError = this.#tasks.busy || orphans.length > 0 ? await this.#tasks.settle(orphans) : undefined;
      this.engine.markInactive(this.owner);
      // The body succeeded but left a task behind that then failed: that failure is the outcome.
      if (!failed && orphanError !== undefined) throw orphanError; // eslint-disable-line no-unsafe-finally
    }
  }

  /**
   * Run `body` inline on an execution this entry already entered, with a fresh context of `mode`
   * (`enter_or_reuse` with an entered context, R80, R84): no executor call.
   */
  async reuse<R>(mode: ParallelMode, body: (ctx: CpuExecutionContext) => Promise<R> | R, op: string, threadLimit?: number, spawnsThreads?: boolean): Promise<R> {
    if (mode === 'outer') throw outerThroughInstall(op);
    if (!this.#execution.live) throw contextExpired(op);
    const lifetime: EntryLifetime = { live: true };
    try {
      return await endsWithBody(body(this.context(mode, 0, lifetime, threadLimit, spawnsThreads)), lifetime);
    } finally {
      lifetime.live = false;
    }
  }

  /**
   * Outer fan-out (R70): `L = min(count, budget)` lanes submitted once; lane k runs logical jobs
   * k, k+L, … in order, each with a fresh Sequential context on worker k. Every logical job runs
   * exactly once; a lane index the executor invents is a `Scheduling` error.
   */
  submitOuter(count: number, body: (ctx: CpuExecutionContext, index: number) => Promise<void> | void, op: string): Promise<void> {
    if (!tracingActive(executionTracing())) return this.#submitOuter(count, body, op);
    return this.#traced('outer', op, () => this.#submitOuter(count, body, op));
  }

  async #submitOuter(count: number, body: (ctx: CpuExecutionContext, index: number) => Promise<void> | void, op: string): Promise<void> {
    if (!Number.isInteger(count) || count < 0) {
      throw new TenferroError('InvalidArgument', `expected a non-negative integer job count for count but received ${String(count)}`, { op });
    }
    const budget = this.engine.domain.threadBudget;
    if (!this.supportsOuter()) {
      throw new TenferroError('Scheduling', `outer fan-out needs a thread budget above 1 and an executor with outer parallelism (budget ${budget})`, {
        op,
      });
    }
    if (count === 0) return;
    const lanes = Math.min(count, budget);
    const ran = new Uint8Array(count);
    let badLane: number | undefined;
    let submitted = false;
    const lifetime: EntryLifetime = { live: true };
    this.engine.markActive(this.owner, op);
    const failures = new Set<unknown>();
    try {
      this.engine.entries.submits++;
      try {
        await this.engine.executor.submit({
          length: lanes,
          run: async (lane: number) => {
            // A lane run after submit returned runs none of the jobs (R71): its execution has ended.
            if (submitted) throw new TenferroError('Scheduling', `the executor ran lane ${lane} after submit returned`, { op });
            if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) {
              badLane = lane;
              return;
            }
            for (let i = lane; i < count; i += lanes) {
              if ((ran[i] = Math.min(ran[i]! + 1, 2)) !== 1) throw new TenferroError('Scheduling', `logical job ${i} ran twice`, { op });
              try {
                await body(this.context('sequential', lane, lifetime), i);
              } catch (e) {
                failures.add(e);
                throw e;
              }
            }
          },
        });
      } catch (e) {
        throw failures.has(e) || TenferroError.is(e, 'Scheduling') ? e : executorFailed(e, op);
      }
    } finally {
      submitted = true;
      lifetime.live = false;
      await this.#tasks.settle();
      this.engine.markInactive(this.owner);
    }
    if (badLane !== undefined) throw new TenferroError('Scheduling', `the executor requested lane ${badLane} of ${lanes}`, { op });
    // A job run twice is reported even when the executor swallowed the refusal (R71).
    const twice = ran.indexOf(2);
    if (twice >= 0) throw new TenferroError('Scheduling', `logical job ${twice} ran twice`, { op });
    const missing = ran.indexOf(0);
    if (missing >= 0) throw new TenferroError('Scheduling', `logical job ${missing} never ran`, { op });
  }

  /**
   * A context of `mode` on `lane`; `threadLimit` caps its pool and native threads below the budget
   * (a provider's enforced limit, R55, R75); `spawnsThreads`: for a provider that starts threads on
   * first use, whose kernel tasks are never narrowed (#36).
   */
  context(mode: ProviderParallelMode, lane: number, lifetime: EntryLifetime, threadLimit?: number, spawnsThreads?: boolean): CpuExecutionContext {
    const domain = this.engine.domain;
    return new EnteredContext({
      threadLimit: threadLimit ?? domain.threadBudget,
      domainId: domain.id,
      cpus: domain.admissionMode === 'callerManaged' ? undefined : domain.placement?.cpus,
      admissionMode: domain.admissionMode,
      threadBudget: domain.threadBudget,
      parallelMode: mode,
      lane,
      runner: this.#tasks,
      abortWord: () => this.abortWord,
      executorHasPool: this.engine.capabilities.innerParallelism === 'pool',
      lifetime,
      execution: this.#execution,
      indexedPlans: this.engine.indexedPlans,
      spawnsThreads,
    });
  }
}

const NO_TASKS: readonly Promise<unknown>[] = Object.freeze([]);

/** The `install` of tenferro's own executors: runs the job once, synchronously, and returns its promise. */
const OWN_INSTALL = PoolExecutor.prototype.install;

function isThenable<R>(value: R | Promise<R>): value is Promise<R> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * A body's value, with its contexts expired the moment it returned: synchronously for a plain
 * value, so that a task a body schedules (a microtask, a timer) to start after it returned is
 * refused; when the returned promise settles otherwise.
 */
function endsWithBody<R>(value: R | Promise<R>, lifetime: EntryLifetime): R | Promise<R> {
  if (!(value instanceof Promise)) lifetime.live = false;
  return value;
}

/** An executor's own refusal or failure, carrying the original error (R49). */
function executorFailed(cause: unknown, op: string): TenferroError {
  return new TenferroError('ExecutorFailed', `the domain's executor failed: ${cause instanceof Error ? cause.message : String(cause)}`, { op, cause });
}

function contextExpired(op: string): TenferroError {
  return new TenferroError('ContextExpired', 'the execution this operation began in has ended', { op });
}

function outerThroughInstall(op: string): TenferroError {
  return new TenferroError('Scheduling', 'Outer mode cannot be entered through install; use outer lanes', { op });
}
