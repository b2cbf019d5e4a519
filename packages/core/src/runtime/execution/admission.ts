import { type ExecutionOwner, newExecutionOwner } from '../../arbiter/execution-owner.js';
import type { AcquireOptions, Arbiter } from '../../arbiter/arbiter.js';
import { Permit } from '../../arbiter/permit.js';
import type { ResourceRequest } from '../../arbiter/resource-request.js';
import { type AdmissionEvent, admissionChannel } from '../../diagnostics/channels.js';
import type { ValidationDomain } from '../../contract/cpu-domain.js';
import { ABORT_CLOSED, ABORT_SIGNALLED, type CpuExecutionContext } from '../../contract/execution-context.js';
import type { ParallelMode } from '../../contract/parallel-mode.js';
import { TenferroError, invalidArgument } from '../../errors/tenferro-error.js';
import { onAbort, waitForTurn } from '../../util/abort-listeners.js';
import type { GemmAnalysisCache } from '../../contraction/gemm-analysis-cache.js';
import type { SharedTensorAllocationDomain } from '../../buffer/allocation-domain.js';
import type { Coordinator } from '../engine/coordinator.js';
import type { CpuEngine } from '../engine/cpu-engine.js';
import type { DomainPlan } from '../placement.js';
import { type ExecutionFrame, type ScopeRecord, assertNotReentered, currentFrame, endFrame, executionActive, runInFrame, withFrame } from './execution-frame.js';
import { CpuOperationEntry } from './operation-entry.js';

/** What a handle is admitted with: its coordinator, its resolved plan and its runtime identity (the scope witness, R83). */
export interface AdmissionTarget {
  readonly coordinator: Coordinator;
  readonly plan: DomainPlan;
  readonly identity: object;
  /** Where the handle's fresh outputs come from (R2); the engine's buffer pool when absent. */
  readonly allocationDomain?: SharedTensorAllocationDomain | undefined;
}

/** The body of one entered operation: it runs with the entry and a context of the operation's mode. */
export type OperationBody<R> = (entry: CpuOperationEntry, ctx: CpuExecutionContext) => R | Promise<R>;

/**
 * Where operations (`ops/`) run: a handle, which admits each operation anew, or a session,
 * which reuses its entry (R80). `domain` is known before admission, so dispatch decisions and
 * validation come before any permit, allocation or worker hop (R61, R62, R99).
 */
export interface OperationRunner {
  readonly domain: ValidationDomain;
  /** The GEMM-analysis cache a session's caller supplied (R82); otherwise operations use their engine's. */
  readonly analysisCache?: GemmAnalysisCache;
  /** The allocation domain of the handle (R2): its fresh outputs come from it, and its inputs are checked against it (`HostAccess`). */
  readonly allocationDomain?: SharedTensorAllocationDomain | undefined;
  /** Whether the executor this runner enters offers a pool (R72), when known before admission (a session's entry knows it). */
  readonly executorHasPool?: boolean;
  run<R>(op: string, mode: ParallelMode, body: OperationBody<R>, signal?: AbortSignal): Promise<R>;
  /**
   * Engine-scheduled fan-out when this runner may use it (R110): a handle outside any entered
   * session or execution scope, more than one job, a budget above 1 and an executor with outer
   * parallelism — then `outerJob(ctx, i)` runs once per job on `min(count, budget)` lanes, each
   * with a Sequential context, under the exactly-once audit of R70 (`'outer'`). Otherwise `body`
   * runs once in `mode`, as `run` would (`'entered'`).
   */
  runOuterOr(
    op: string,
    count: number,
    outerJob: (ctx: CpuExecutionContext, index: number) => Promise<void>,
    mode: ParallelMode,
    body: OperationBody<void>,
    signal?: AbortSignal,
  ): Promise<'outer' | 'entered'>;
}

/**
 * The one admission path of every entry point (contract §6.1): an idle execution scope of this
 * witness lends its entry (`execution_admission`), in call order; otherwise re-entry is rejected
 * before any permit, the permit is requested as the plan says (R34) — or the caller-managed
 * guard claimed (R35, R43) — in a fresh execution frame, the execution is supervised (abort,
 * close), and the permit released on every exit, never before the execution's kernel tasks have
 * settled. `signal` aborts the wait (`AdmissionAborted`) and the execution (`ExecutionAborted`).
 */
export function admit<R>(
  target: AdmissionTarget,
  op: string,
  body: (entry: CpuOperationEntry, scoped: boolean) => Promise<R>,
  signal?: AbortSignal,
): Promise<R> {
  if (signal?.aborted) return Promise.reject(admissionAborted(op, signal));
  const frame = currentFrame();
  if (frame?.scope !== undefined) return admitScoped(frame, frame.scope, target, op, body, signal);
  const c = target.coordinator;
  let engine: CpuEngine | undefined;
  try {
    assertNotReentered(op);
    c.assertOpen(op);
    engine = c.builtEngine(target.plan);
  } catch (e) {
    return Promise.reject(e);
  }
  if (engine !== undefined) return admitOn(engine, target, op, body, signal);
  return (async () => admitOn(await c.engine(target.plan, op), target, op, body, signal))();
}

/** `execution_admission` inside a live execution scope: its entry, lent in call order. */
async function admitScoped<R>(
  frame: ExecutionFrame,
  scopeRecord: ScopeRecord,
  target: AdmissionTarget,
  op: string,
  body: (entry: CpuOperationEntry, scoped: boolean) => Promise<R>,
  signal: AbortSignal | undefined,
): Promise<R> {
  const scope = await borrowScope(scopeRecord, target, op, signal);
  try {
    // The operation's own body runs without the scope: a call from inside it is a re-entry.
    return await runInFrame({ owner: frame.owner, live: true, scope: undefined }, () => body(scope.entry, true));
  } finally {
    returnScope(scope);
  }
}

/**
 * Admission on a built engine, in a fresh execution frame. The frame ends (`live = false`) when
 * the execution settles. A permit granted at once, with nobody timing admissions, costs no promise
 * of its own: the frame's only promise is the supervised execution's (every promise on this path
 * is paid per operation, and more so while AsyncLocalStorage's hooks are on).
 */
function admitOn<R>(
  engine: CpuEngine,
  target: AdmissionTarget,
  op: string,
  body: (entry: CpuOperationEntry, scoped: boolean) => Promise<R>,
  signal: AbortSignal | undefined,
): Promise<R> {
  const c = target.coordinator;
  const owner = newExecutionOwner();
  const request = target.plan.request;
  const own: ExecutionFrame = { owner, live: true, scope: undefined };
  const end = () => endFrame(own);
  return withFrame(own, () => {
    if (request !== undefined) {
      const t0 = admissionStart();
      let got: Permit | Promise<Permit>;
      try {
        got = admitOrWait(c.arbiter, request, { owner, signal });
      } catch (e) {
        end();
        return Promise.reject(rephraseAborted(e, op, signal));
      }
      // Admitted at once and nobody timing: no promise on the uncontended path (R33).
      if (got instanceof Permit && t0 === undefined) {
        const permit = got;
        return enterSupervised(c, engine, permit, () => permit.release(), target, owner, op, body, signal, end);
      }
      if (!(got instanceof Permit)) engine.parkIdleWorkers();
      return timedAdmission(t0, Promise.resolve(got), owner, target, op, request).then(
        (permit) => enterSupervised(c, engine, permit, () => permit.release(), target, owner, op, body, signal, end),
        (e: unknown) => {
          end();
          throw rephraseAborted(e, op, signal);
        },
      );
    }
    // A caller-managed domain: its guard is claimed (R35, R43).
    const t0 = admissionStart();
    let claimed: Promise<void>;
    try {
      claimed = engine.claim(owner, signal, op);
    } catch (e) {
      end();
      return Promise.reject(e);
    }
    return timedAdmission(t0, claimed, owner, target, op, undefined).then(
      () => enterSupervised(c, engine, undefined, () => engine.release(owner), target, owner, op, body, signal, end),
      (e: unknown) => {
        end();
        throw e;
      },
    );
  });
}

/**
 * Enter and supervise an admitted execution — under `permit`, or under the caller-managed guard
 * (`permit` undefined) — `release` freeing either. If the backend closed meanwhile, `release`
 * first and reject.
 */
function enterSupervised<R>(
  c: Coordinator,
  engine: CpuEngine,
  permit: Permit | undefined,
  release: () => void,
  target: AdmissionTarget,
  owner: ExecutionOwner,
  op: string,
  body: (entry: CpuOperationEntry, scoped: boolean) => Promise<R>,
  signal: AbortSignal | undefined,
  end: () => void,
): Promise<R> {
  let entry: CpuOperationEntry;
  try {
    c.assertOpen(op);
    entry = new CpuOperationEntry(engine, permit, owner, target.allocationDomain);
  } catch (e) {
    release();
    end();
    return Promise.reject(e);
  }
  return supervise(c, entry, op, signal, () => body(entry, false), release, end);
}

/** `AdmissionAborted` of the arbiter, rephrased for `op`. */
function rephraseAborted(e: unknown, op: string, signal: AbortSignal | undefined): unknown {
  return TenferroError.is(e, 'AdmissionAborted') && signal !== undefined ? admissionAborted(op, signal) : e;
}

/** The permit when `arbiter` (one of tenferro's) admits `request` at once, else a promise of it; throws what `acquire` would reject with. */
function admitOrWait(arbiter: Arbiter, request: ResourceRequest, options: AcquireOptions): Permit | Promise<Permit> {
  const fast = (arbiter as Arbiter & { admitOrWait?: (r: ResourceRequest, o: AcquireOptions) => Permit | Promise<Permit> }).admitOrWait;
  return fast !== undefined ? fast.call(arbiter, request, options) : arbiter.acquire(request, options);
}

/** A permit from the arbiter (`AdmissionAborted` rephrased for `op`), `tenferro:admission` told of the outcome. */
async function acquirePermit(target: AdmissionTarget, request: ResourceRequest, owner: ExecutionOwner, op: string, signal: AbortSignal | undefined): Promise<Permit> {
  const t0 = admissionStart();
  const wait = target.coordinator.arbiter.acquire(request, { owner, signal });
  try {
    return await timedAdmission(t0, wait, owner, target, op, request);
  } catch (e) {
    throw rephraseAborted(e, op, signal);
  }
}

/** When `tenferro:admission` has a subscriber, the time an admission starts waiting. */
function admissionStart(): bigint | undefined {
  return admissionChannel().hasSubscribers ? process.hrtime.bigint() : undefined;
}

/** `wait` as it is, or — when it was timed from `t0` for a subscriber — published on settling. */
function timedAdmission<T>(t0: bigint | undefined, wait: Promise<T>, owner: ExecutionOwner, target: AdmissionTarget, op: string, request: ResourceRequest | undefined): Promise<T> {
  if (t0 === undefined) return wait;
  return wait.then(
    (value) => {
      admitted(t0, owner, target, op, request, 'granted');
      return value;
    },
    (e: unknown) => {
      admitted(t0, owner, target, op, request, TenferroError.is(e, 'AdmissionAborted') ? 'aborted' : 'failed');
      throw e;
    },
  );
}

/** Publish one {@link AdmissionEvent} (`request` undefined: a caller-managed guard). */
function admitted(t0: bigint, owner: ExecutionOwner, target: AdmissionTarget, op: string, request: ResourceRequest | undefined, outcome: AdmissionEvent['outcome']): void {
  if (!admissionChannel().hasSubscribers) return;
  const time = process.hrtime.bigint();
  const event: AdmissionEvent = {
    owner,
    op,
    domainId: Number(target.plan.domain.id),
    via: request === undefined ? 'guard' : 'arbiter',
    cpus: request === undefined || 'providerExclusive' in request ? null : request.cpus.toString(),
    exclusive: request !== undefined && 'providerExclusive' in request,
    waitNs: Number(time - t0),
    outcome,
    time,
  };
  admissionChannel().publish(event);
}

/**
 * Run an admitted execution until it settles, or until it is stopped:
 * - its `signal` fires → the abort word is raised, no further kernel task starts, and once the
 *   running ones have returned (tenferro's kernels stop at their next block boundary) the
 *   execution settles with `ExecutionAborted`, whatever its body did meanwhile;
 * - the backend closes → the abort word is raised and the execution settles with `BackendClosed`
 *   at once, even if its body never would, once the engines' workers have exited.
 * `release` (the permit, or the caller-managed guard) is called exactly once, when both the body
 * has ended (its engine marked idle again) and the execution has settled: an aborted body that
 * is still unwinding keeps its CPUs, so no overlapping execution can start beside it (R27). After
 * a close it is called once the workers have exited, whether or not the body ever ends.
 */
function supervise<R>(
  c: Coordinator,
  entry: CpuOperationEntry,
  op: string,
  signal: AbortSignal | undefined,
  run: () => Promise<R>,
  release: () => void,
  onSettled?: () => void,
): Promise<R> {
  // One promise settled by whichever comes first — the operation, or its stop (an abort once the
  // running tasks have settled; a close at once) — instead of a race over a second promise.
  return new Promise<R>((resolve, reject) => {
    let stopped: 'aborted' | 'closed' | undefined;
    let settled = false;
    let pending = 2; // the body, and the execution's outcome
    const done = () => {
      if (--pending === 0) release();
    };
    const releaseNow = () => {
      if (pending > 0) {
        pending = 0;
        release();
      }
    };
    let unsubscribeAbort: (() => void) | undefined;
    let unsubscribeClose: (() => void) | undefined;
    const settle = (ok: boolean, value: R | undefined, error: unknown) => {
      if (settled) return;
      settled = true;
      onSettled?.();
      unsubscribeAbort?.();
      unsubscribeClose?.();
      if (stopped === 'aborted') {
        done();
        return reject(executionAborted(op, signal!));
      }
      if (stopped === 'closed') {
        const closed = new TenferroError('BackendClosed', 'the backend was closed while this operation ran', { op, cause: error });
        // The engines are gone: their CPUs are free whether or not the body ever ends.
        const end = () => {
          releaseNow();
          reject(closed);
        };
        return void c.whenClosed().then(end, end);
      }
      done();
      if (ok) resolve(value as R);
      else reject(error);
    };
    if (signal !== undefined) {
      unsubscribeAbort = onAbort(signal, () => {
        if (stopped !== undefined || settled) return;
        stopped = 'aborted';
        const error = executionAborted(op, signal);
        entry.stop(ABORT_SIGNALLED, error);
        void entry.settleTasks().then(() => settle(false, undefined, error));
      });
    }
    unsubscribeClose = c.onClose(() => {
      if (stopped === 'closed' || settled) return;
      stopped = 'closed';
      const error = new TenferroError('BackendClosed', 'the backend was closed while this operation ran', { op });
      entry.stop(ABORT_CLOSED, error);
      settle(false, undefined, error);
    });
    let running: Promise<R>;
    try {
      running = run();
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then(
      (value) => {
        settle(true, value, undefined);
        done();
      },
      (e: unknown) => {
        settle(false, undefined, e);
        done();
      },
    );
  });
}

export function handleRunner(target: AdmissionTarget): OperationRunner {
  return {
    domain: target.plan.domain,
    allocationDomain: target.allocationDomain,
    run: <R>(op: string, mode: ParallelMode, body: OperationBody<R>, signal?: AbortSignal) =>
      admit(
        target,
        op,
        (entry, scoped) => (scoped ? entry.reuse(mode, (ctx) => body(entry, ctx), op) : entry.enter(mode, (ctx) => body(entry, ctx), op)),
        signal,
      ),
    runOuterOr: (op, count, outerJob, mode, body, signal) =>
      admit(
        target,
        op,
        async (entry, scoped) => {
          if (!scoped && count > 1 && entry.supportsOuter()) {
            await entry.submitOuter(count, outerJob, op);
            return 'outer' as const;
          }
          const run = (ctx: CpuExecutionContext) => body(entry, ctx);
          await (scoped ? entry.reuse(mode, run, op) : entry.enter(mode, run, op));
          return 'entered' as const;
        },
        signal,
      ),
  };
}

/**
 * One permit and one executor entry, in the engine's preferred mode, for a whole session
 * (R79–R82). External executors keep operation-level entry (R49): `body` then gets no context
 * and each operation enters on its own.
 */
export function runSession<R>(
  target: AdmissionTarget,
  op: string,
  body: (entry: CpuOperationEntry, ctx: CpuExecutionContext | undefined) => Promise<R>,
  signal?: AbortSignal,
): Promise<R> {
  return admit(
    target,
    op,
    (entry, scoped) => {
      // Sessions on external domains enter the executor per operation (R49): when the callback
      // settles, the session's execution ends — operations begun in it that resume later are
      // refused — and the guard is released once the tasks they posted have settled (#35).
      if (entry.engine.domain.ownership !== 'managed') return endsExecution(entry, () => body(entry, undefined), true);
      const mode = entry.preferredEngineMode();
      // Inside a scope the session borrows the scope's entry, whose end expires it.
      if (scoped) return entry.reuse(mode, (ctx) => body(entry, ctx), op);
      return entry.enter(mode, (ctx) => endsExecution(entry, () => body(entry, ctx), false), op);
    },
    signal,
  );
}

/**
 * Run a session's callback and end the session's execution the moment it settles (#35: no context
 * of it posts a kernel task afterwards); with `settle`, also wait for the tasks its operations
 * posted before passing the outcome on (an external domain's session has no entry of its own that
 * would).
 */
function endsExecution<R>(entry: CpuOperationEntry, fn: () => Promise<R>, settle: boolean): Promise<R> {
  let running: Promise<R>;
  try {
    running = fn();
  } catch (e) {
    entry.expire();
    return settle ? entry.settleTasks().then(() => Promise.reject(e)) : Promise.reject(e);
  }
  return running.then(
    async (value) => {
      entry.expire();
      if (settle) await entry.settleTasks();
      return value;
    },
    async (e: unknown) => {
      entry.expire();
      if (settle) await entry.settleTasks().catch(() => undefined);
      throw e;
    },
  );
}

/** Outer fan-out (R70) under one admission; from inside a scope it is refused as Outer-through-install. */
export function runOuterLanes(
  target: AdmissionTarget,
  op: string,
  count: number,
  body: (ctx: CpuExecutionContext, index: number) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  if (!Number.isSafeInteger(count) || count < 0 || count > MAX_OUTER_JOBS) {
    return Promise.reject(invalidArgument(op, 'count', `an integer job count in [0, ${MAX_OUTER_JOBS}]`, count));
  }
  if (typeof body !== 'function') return Promise.reject(invalidArgument(op, 'fn', 'a function (ctx, index) => …', body));
  return admit(target, op, (entry, scoped) => (scoped ? entry.reuse('outer', () => undefined, op) : entry.submitOuter(count, body, op)), signal);
}

/** The most logical jobs one outer fan-out takes (each is tracked with a byte). */
const MAX_OUTER_JOBS = 2 ** 31 - 1;

/**
 * `execution_scope.rs` (R83–R87): one permit and one executor entry shared by the operations
 * that clones of the witness issue inside `fn`, in call order; the callback's value comes back
 * unchanged, and an exception releases scope and permit first.
 */
export async function openExecutionScope<R>(target: AdmissionTarget, op: string, fn: () => R | Promise<R>, signal?: AbortSignal): Promise<R> {
  if (executionActive()) {
    throw new TenferroError('ExecutionAlreadyActive', 'CPU execution is already active; open the shared scope outside active scopes and backend sessions', { op });
  }
  if (signal?.aborted) throw admissionAborted(op, signal);
  const c = target.coordinator;
  c.assertOpen(op);
  const engine = c.builtEngine(target.plan) ?? (await c.engine(target.plan, op));
  if (engine.domain.ownership !== 'managed') {
    throw new TenferroError('Unsupported', 'shared execution scopes require a tenferro-managed CPU domain; use ordinary operation entry for external domains', { op });
  }
  const owner = newExecutionOwner();
  return runInFrame({ owner, live: true, scope: undefined }, async () => {
    const permit = await acquirePermit(target, target.plan.request!, owner, op, signal);
    const entry = new CpuOperationEntry(engine, permit, owner, target.allocationDomain);
    return await supervise(
      c,
      entry,
      op,
      signal,
      () =>
        entry.enter(
          entry.preferredEngineMode(),
          async () => {
            const scope: ScopeRecord = { identity: target.identity, engine, permit, entry, operationActive: false, closed: false, waiting: [] };
            try {
              return await runInFrame({ owner, live: true, scope }, async () => await fn());
            } finally {
              scope.closed = true;
              // The scope's execution ends with its callback (#35, R85, R87): operations still
              // queued on it are refused now, and one that began inside it but still waits on the
              // application's promises gets ContextExpired for any kernel task it asks for later.
              // The tasks already posted settle before the permit is released (the entry's end).
              entry.expire();
              for (const turn of scope.waiting.splice(0)) turn();
            }
          },
          op,
        ),
      () => permit.release(),
    );
  });
}

/**
 * `execution_admission`: borrow the scope's entry — at once when no scoped operation runs, else
 * after those called earlier (their turn is handed over without a gap). `signal` aborts the wait.
 */
async function borrowScope(scope: ScopeRecord, target: AdmissionTarget, op: string, signal: AbortSignal | undefined): Promise<ScopeRecord> {
  if (scope.identity !== target.identity) {
    throw new TenferroError('ScopeWitnessMismatch', 'operation backend does not match the execution scope; use a clone of its backend witness', { op });
  }
  if (!scope.operationActive) {
    scope.operationActive = true;
  } else {
    await waitForTurn(scope.waiting, (resume) => resume, signal, () => admissionAborted(op, signal!));
  }
  if (scope.closed) {
    returnScope(scope);
    throw new TenferroError('ContextExpired', 'the execution scope this operation was queued on has ended', { op });
  }
  return scope;
}

/** Hand the scope to the next queued operation, or mark it idle. */
function returnScope(scope: ScopeRecord): void {
  const next = scope.waiting.shift();
  if (next !== undefined) next();
  else scope.operationActive = false;
}

export function admissionAborted(op: string, signal: AbortSignal): TenferroError {
  return new TenferroError('AdmissionAborted', 'the operation was aborted while it waited to be admitted', { op, cause: signal.reason });
}

function executionAborted(op: string, signal: AbortSignal): TenferroError {
  return new TenferroError('ExecutionAborted', 'the operation was aborted while it ran', { op, cause: signal.reason });
}
