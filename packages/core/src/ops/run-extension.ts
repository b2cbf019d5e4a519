/**
 * The extension entry (#35): an operation family that is not core's — `@tenferro/linalg`, or a
 * third party's — runs each of its public operations as ONE call of `runExtension`, and gets what
 * core's own operations get: validation before any hop, allocation or write; the extension's
 * declared capabilities validated against the domain once per (bundle, domain, key); the one mode
 * decision (the extension-mode rule); inputs and outputs pinned for the operation's whole life;
 * admission through the runner every core operation uses (a handle admits each call, a session
 * lends its entry, scopes work); fresh outputs from the engine pool; one `tenferro:provider` event
 * per kernel call; the one written-then-declined guard.
 */
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { ProviderParallelMode } from '../contract/parallel-mode.js';
import { type ProviderDeclineReason, type ProviderEvent, providerTracing, traceAsync, tracingActive } from '../diagnostics/channels.js';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import { type CpuExtensionProvider, extensionCapabilities, extensionMode, validateExtensionForDomain } from '../provider/extension-validation.js';
import { enforcedThreadLimit } from '../provider/execution-capabilities.js';
import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { type CpuProviderOutcome, EXECUTED, describeUnsupported } from '../provider/provider-outcome.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import { DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { checkDType, checkShape, elementCount } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { type HeldOutput, eventLoopTurn, holdOutput, outputsWantTurn } from './fresh-output.js';
import { assertReadable } from './host-access.js';
import { runOperation } from './run-operation.js';
import { checkDeclined, guardMark } from './declined-guard.js';

export type { CpuExtensionProvider } from '../provider/extension-validation.js';

/** One operation of an extension family: what it reads, the fresh outputs it writes, and its abort signal. */
export interface ExtensionRequest {
  /** The public operation's name (`'linalg.solve'`): errors, `tenferro:admission`, `tenferro:provider` and warnings name it. */
  readonly op: string;
  /** The tensors the operation reads: validated (live, readable by the handle's allocation domain) and pinned for its whole life. */
  readonly inputs: readonly Tensor[];
  /** The fresh outputs, as `[dtype, shape]`: dense column-major, from the engine's buffer pool (or the handle's allocation domain). */
  readonly outputs: readonly (readonly [DType, readonly number[]])[];
  /** Abort the operation: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The family's built-in kernels write every element of every output they are given (R108): the
   * outputs are then handed over unzeroed when every kernel that may run declares so — the
   * extension's `overwritesOutputs` too, when one is installed. Default false: zeroed.
   */
  readonly builtinOverwrites?: boolean;
  /**
   * The operation's own scratch, as `[dtype, shape]`: pooled storage like the outputs (zeroed by
   * the same rule), for the body and its kernels (a status word per batch item, an identity to solve
   * against), never a tensor: it goes back to the pool when the body has settled, on every exit.
   */
  readonly scratch?: readonly (readonly [DType, readonly number[]])[];
}

/** What `tenferro:provider` says of one kernel call ({@link ExtensionKernelCall.facts}). */
export interface ExtensionKernelFacts {
  readonly dtype?: string;
  readonly shapes?: readonly (readonly number[])[];
  readonly flops?: number | null;
}

/** A built-in kernel of the family: core's fallback when the extension is absent, has no kernel for the call, or declined. */
export interface ExtensionBuiltin {
  /** Its diagnostic name on `tenferro:provider` (`'tenferro built-in (Eigen)'`). */
  readonly name: string;
  /** Run the kernel on the entered context; it may return an outcome (a decline is `ProviderUnsupported`). */
  run(ctx: CpuExecutionContext): unknown;
}

/** One kernel call of an operation (see {@link ExtensionOperation.kernel}). */
export interface ExtensionKernelCall {
  /** What is called (`'solve'`): `ExtensionProviderEvent.call`, the fallback warning. Default: the request's `op`. */
  readonly name?: string;
  /**
   * The installed extension's kernel for this call, or undefined when it has none. Called with a
   * context of the call's mode, capped at the extension's enforced thread limit (R55, R75).
   */
  readonly extension?: ((ctx: CpuExecutionContext) => CpuProviderOutcome | Promise<CpuProviderOutcome>) | undefined;
  /** The family's built-in kernel; without one a decline is `ProviderUnsupported`. */
  readonly builtin?: ExtensionBuiltin | undefined;
  /**
   * What `tenferro:provider` says of the call: dtype and shapes (default: the first output's dtype,
   * every input's and output's shape), FLOPs (default null) — or a function that returns them,
   * called only when `tenferro:provider` has subscribers (nothing is built per call otherwise).
   */
  readonly facts?: ExtensionKernelFacts | (() => ExtensionKernelFacts);
}

/** What ran for a kernel call: the extension's kernel, or the family's built-in. */
export type ExtensionKernelRan = 'extension' | 'builtin';

/**
 * What `runExtension` hands its body with the entered context: descriptors of the pinned inputs
 * and of the fresh outputs (never `Tensor.buffer`, which would mark storage escaped and stop its
 * recycling), the installed extension, and the kernel caller.
 */
export interface ExtensionOperation<T> {
  readonly inputs: readonly TensorDescriptor[];
  /** Dense column-major, each from its `offset` (its first 64-byte line from 256 bytes on), zeroed when `zeroed`. */
  readonly outputs: readonly TensorDescriptor[];
  /** The request's scratch ({@link ExtensionRequest.scratch}), laid out as the outputs; back to the pool when the body settles. */
  readonly scratch: readonly TensorDescriptor[];
  /** The bundle's extension under the key, validated for this domain; undefined when none is installed. */
  readonly extension: T | undefined;
  /** Whether the outputs were zero-filled (see {@link ExtensionRequest.builtinOverwrites}). */
  readonly zeroed: boolean;
  /**
   * One kernel call, traced on `tenferro:provider` (one event per kernel that ran): the extension's
   * kernel when given; a thrown error that is not a `TenferroError` becomes `ProviderFailed`; a
   * decline is checked against the outputs' fingerprint (unless the extension declares
   * `declinesBeforeWriting`) — written then declined is `ProviderContractViolation` — and then the
   * built-in runs (its event names the extension and the reason it declined; the first such
   * fallback per extension and call warns once, `TENFERRO_EXTENSION_FALLBACK`). Resolves to what ran.
   *
   * @example
   * ```ts
   * import { CpuBackend, EXECUTED, Unsupported, defineExtensionKey, runExtension } from '@tenferro/core';
   *
   * // An extension that declines: the built-in runs, and the call says so.
   * const key = defineExtensionKey<{ name: string; fill?(): ReturnType<typeof Unsupported.of> }>('example.fill');
   * const backend = await CpuBackend.create({ threads: 1 });
   * const picky = { name: 'picky', executionCapabilities: () => ({ threadCount: 'sequential', placement: 'callingThread', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: true }) as const, fill: () => Unsupported.of({ kind: 'runtimeUnavailable' }) };
   * const handle = backend.withProviderBundle(backend.providerBundle().toBuilder().extension(key, picky).build());
   * const { outputs, value } = await runExtension(handle, key, { op: 'example.fill', inputs: [], outputs: [['f64', [2]]] }, (_ctx, { outputs, extension, kernel }) =>
   *   kernel({
   *     name: 'fill',
   *     extension: extension?.fill && (() => extension.fill!()),
   *     builtin: { name: 'built-in fill', run: () => void new Float64Array(outputs[0]!.buffer, outputs[0]!.offset * 8, 2).fill(7) },
   *   }),
   * );
   * console.log(value, outputs[0]!.toArray(), EXECUTED.executed); // prints: builtin [ 7, 7 ] true
   * await backend.close();
   * ```
   */
  kernel(call: ExtensionKernelCall): Promise<ExtensionKernelRan>;
}

/** What an extension operation resolves to: its fresh outputs (in request order; dispose them) and the body's value. */
export interface ExtensionResult<R> {
  readonly outputs: Tensor[];
  readonly value: R;
}

/**
 * `tenferro:provider` event of an extension kernel call (a {@link ProviderEvent} whose `slot` is
 * the extension key's name, with these fields added).
 */
export interface ExtensionProviderEvent extends ProviderEvent {
  /** The kernel that ran: the installed extension's, or the family's built-in. */
  readonly kernel: ExtensionKernelRan;
  /** The kernel call's name ({@link ExtensionKernelCall.name}). */
  readonly call: string;
  /** A built-in that ran because the extension declined: the extension's name… */
  readonly fallbackFrom?: string;
  /** …and why it declined. */
  readonly fallbackReason?: ProviderDeclineReason;
}

/** Where an extension operation runs: the target's runner and bundle, its kind, and whether its executor offers a pool (R72). */
export interface ExtensionSite {
  readonly runner: OperationRunner;
  readonly bundle: CpuProviderBundle;
  readonly kind: CpuBackendKind;
  readonly executorHasPool: boolean;
}

/** The mode, thread limit and validated extension of one (bundle, domain, key). */
interface Decision {
  readonly extension: CpuExtensionProvider | undefined;
  readonly name: string;
  readonly mode: ProviderParallelMode;
  readonly threadLimit: number;
  readonly overwritesOutputs: boolean;
  readonly declinesBeforeWriting: boolean;
  /** It declared `spawnsThreadsOnFirstUse` (#36): its kernel tasks are never narrowed. */
  readonly spawnsThreads: boolean;
}

type Verdict = { readonly ok: Decision } | { readonly refused: TenferroError };

const verdicts = new WeakMap<CpuProviderBundle, Map<string, Verdict>>();

const REQUEST_KEYS: ReadonlySet<string> = new Set(['op', 'inputs', 'outputs', 'signal', 'builtinOverwrites', 'scratch']);
const CALL_KEYS: ReadonlySet<string> = new Set(['name', 'extension', 'builtin', 'facts']);
const ENTRY = 'runExtension';

/**
 * Run one extension operation on `site` (see `runExtension` in `@tenferro/core`): validate, decide,
 * pin, admit, allocate, run `body`, hand the outputs over — or give everything back.
 */
export function runExtensionOn<T, R>(
  site: ExtensionSite,
  key: ExtensionKey<T>,
  request: ExtensionRequest,
  body: (ctx: CpuExecutionContext, operation: ExtensionOperation<T>) => R | Promise<R>,
): Promise<ExtensionResult<R>> {
  let op: string;
  let decision: Decision;
  let specs: readonly (readonly [DType, readonly number[], number])[];
  let outCount: number;
  let tensors: readonly Tensor[];
  try {
    checkKey(key);
    const r = checkRequest(request);
    op = r.op;
    specs = r.specs;
    outCount = r.outCount;
    tensors = r.inputs;
    if (typeof body !== 'function') throw invalidArgument(op, 'body', 'a function (ctx, operation) => …', body);
    for (let i = 0; i < r.inputs.length; i++) tensorInternals.check(r.inputs[i]!, op, `inputs[${i}]`);
    assertReadable(site.runner, r.inputs, op, r.inputs.map((_, i) => `inputs[${i}]`));
    decision = decide(site, key, op);
  } catch (e) {
    return Promise.reject(e);
  }
  const zeroed = !(request.builtinOverwrites === true && (decision.extension === undefined || decision.overwritesOutputs));
  const inputs = Object.freeze(tensors.map((t) => tensorInternals.descriptor(t)));
  const extension = decision.extension as T | undefined;
  // The one operation path (run-operation.ts): the inputs pinned before admission — one disposed
  // while the call waits keeps its storage until the call ends — admitted, unpinned on every exit.
  try {
    return runOperation(
      site.runner,
      op,
      decision.mode,
      tensors,
      (entry, ctx) => {
        const run = () => runBody(entry, ctx, key.name, op, decision, specs, outCount, zeroed, inputs, extension, body);
        // Storage of dropped outputs may be waiting for its finalizer: one event-loop turn brings it home.
        return outputsWantTurn(entry, specs) ? eventLoopTurn().then(run) : run();
      },
      request.signal,
    );
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * The outputs and the scratch held (`specs`: the first `outCount` are outputs), `body` run on
 * them, the outputs handed over and the scratch given back — or every one given back. One `then`,
 * no async frame. Storage given back when the body settles is not handed out again before the
 * operation ends: the engine's pool serves only operations its permit admits.
 */
function runBody<T, R>(
  entry: CpuOperationEntry,
  ctx: CpuExecutionContext,
  slot: string,
  op: string,
  decision: Decision,
  specs: readonly (readonly [DType, readonly number[], number])[],
  outCount: number,
  zeroed: boolean,
  inputs: readonly TensorDescriptor[],
  extension: T | undefined,
  body: (ctx: CpuExecutionContext, operation: ExtensionOperation<T>) => R | Promise<R>,
): Promise<ExtensionResult<R>> {
  const held: HeldOutput[] = [];
  const giveBack = (e: unknown): never => {
    for (const o of held) o.fail();
    throw e;
  };
  let running: R | Promise<R>;
  try {
    for (const [dtype, shape] of specs) held.push(holdOutput(entry, dtype, shape, zeroed, op));
    const all = held.map((o) => o.descriptor);
    const outputs = Object.freeze(outCount === all.length ? all : all.slice(0, outCount));
    const scratch = outCount === all.length ? NO_SCRATCH : Object.freeze(all.slice(outCount));
    const kernel = (call: ExtensionKernelCall) => callKernel(entry, ctx, slot, op, decision, inputs, outputs, call);
    running = body(ctx, Object.freeze({ inputs, outputs, scratch, extension, zeroed, kernel }));
  } catch (e) {
    for (const o of held) o.fail();
    return Promise.reject(e);
  }
  return Promise.resolve(running).then((value) => {
    try {
      const outputs: Tensor[] = [];
      for (let i = 0; i < outCount; i++) outputs.push(held[i]!.finish());
      for (let i = outCount; i < held.length; i++) held[i]!.fail(); // the scratch goes back
      return { outputs, value };
    } catch (e) {
      return giveBack(e);
    }
  }, giveBack);
}

const NO_SCRATCH: readonly TensorDescriptor[] = Object.freeze([]);

/**
 * The kernel calls of one operation: the extension's (traced, guarded), then the built-in after a
 * decline. Promise chains rather than async frames: each await is a promise more per call (two
 * while AsyncLocalStorage's hooks are on), and the event of `tenferro:provider` (with the call's
 * facts) is built only when someone listens.
 */
function callKernel(
  entry: CpuOperationEntry,
  ctx: CpuExecutionContext,
  slot: string,
  op: string,
  decision: Decision,
  inputs: readonly TensorDescriptor[],
  outputs: readonly TensorDescriptor[],
  call: ExtensionKernelCall,
): Promise<ExtensionKernelRan> {
  try {
    checkCall(call, op);
  } catch (e) {
    return Promise.reject(e);
  }
  const name = call.name ?? op;
  const facts = () => factsOf(call, inputs, outputs);
  const builtin = call.builtin;
  if (call.extension === undefined) {
    if (builtin === undefined) return Promise.reject(invalidArgument(op, 'call', 'an extension kernel or a built-in', call));
    return runBuiltin(ctx, op, slot, decision, builtin, name, facts, undefined).then(ranBuiltin);
  }
  const fn = call.extension;
  // The one written-then-declined guard (ops/declined-guard.ts), on every output.
  const marks = decision.declinesBeforeWriting ? undefined : outputs.map((o) => guardMark(o, true));
  const run = () => extensionCall(entry, ctx, op, decision, fn, name);
  const traced = tracedCall(run, () => ({ op, slot, provider: decision.name, mode: decision.mode, threadLimit: decision.threadLimit, ...facts(), kernel: 'extension', call: name }));
  return traced.then((outcome): ExtensionKernelRan | Promise<ExtensionKernelRan> => {
    if (outcome.executed) return 'extension';
    for (let i = 0; i < outputs.length; i++) checkDeclined(outputs[i]!, marks?.[i], op, slot as ProviderSlot, { provider: decision.name, call: name, output: i });
    if (builtin === undefined) {
      throw new TenferroError('ProviderUnsupported', `the ${decision.name} ${name} kernel reported unsupported: ${describeUnsupported(outcome.reason)}`, {
        op,
        detail: { slot, provider: decision.name, call: name, reason: outcome.reason },
      });
    }
    warnFallback(slot, decision.name, name, op, describeUnsupported(outcome.reason));
    return runBuiltin(ctx, op, slot, decision, builtin, name, facts, { fallbackFrom: decision.name, fallbackReason: outcome.reason as ProviderDeclineReason }).then(ranBuiltin);
  });
}

const ranBuiltin = (): ExtensionKernelRan => 'builtin';

/** The extension's kernel in the decided mode, on a context capped at its enforced thread limit; its own errors as `ProviderFailed`, a non-outcome too. */
function extensionCall(
  entry: CpuOperationEntry,
  ctx: CpuExecutionContext,
  op: string,
  decision: Decision,
  fn: (ctx: CpuExecutionContext) => CpuProviderOutcome | Promise<CpuProviderOutcome>,
  name: string,
): Promise<CpuProviderOutcome> {
  let running: CpuProviderOutcome | Promise<CpuProviderOutcome>;
  try {
    // An extension that starts threads on first use gets a context whose kernel tasks are never narrowed (#36).
    const spawns = decision.spawnsThreads;
    running = !spawns && decision.mode === ctx.parallelMode && decision.threadLimit >= ctx.threadBudget ? fn(ctx) : entry.reuse(decision.mode, fn, op, decision.threadLimit, spawns);
  } catch (e) {
    return Promise.reject(providerFailed(e, op, decision.name, name));
  }
  return Promise.resolve(running).then(
    (outcome: unknown) => {
      if (typeof outcome !== 'object' || outcome === null || typeof (outcome as CpuProviderOutcome).executed !== 'boolean') {
        throw new TenferroError('ProviderFailed', `the ${decision.name} ${name} kernel returned no outcome`, { op, detail: { provider: decision.name, call: name } });
      }
      return outcome as CpuProviderOutcome;
    },
    (e: unknown) => {
      throw providerFailed(e, op, decision.name, name);
    },
  );
}

function runBuiltin(
  ctx: CpuExecutionContext,
  op: string,
  slot: string,
  decision: Decision,
  builtin: ExtensionBuiltin,
  name: string,
  facts: () => Pick<ProviderEvent, 'dtype' | 'shapes' | 'flops'>,
  fallback: { readonly fallbackFrom: string; readonly fallbackReason: ProviderDeclineReason } | undefined,
): Promise<void> {
  const run = (): Promise<CpuProviderOutcome> => {
    let value: unknown;
    try {
      value = builtin.run(ctx);
    } catch (e) {
      return Promise.reject(providerFailed(e, op, builtin.name, name));
    }
    return Promise.resolve(value).then(
      (v) => (typeof v === 'object' && v !== null && (v as CpuProviderOutcome).executed === false ? (v as CpuProviderOutcome) : EXECUTED),
      (e: unknown) => {
        throw providerFailed(e, op, builtin.name, name);
      },
    );
  };
  return tracedCall(run, () => ({ op, slot, provider: builtin.name, mode: decision.mode, threadLimit: ctx.threadBudget, ...facts(), kernel: 'builtin', call: name, ...fallback })).then((outcome) => {
    if (!outcome.executed) {
      throw new TenferroError('ProviderUnsupported', `the built-in ${name} kernel reported unsupported: ${describeUnsupported(outcome.reason)}`, {
        op,
        detail: { slot, provider: builtin.name, call: name, reason: outcome.reason },
      });
    }
  });
}

/**
 * `fn` as one `tenferro:provider` call when someone listens (its event, built by `fields` only
 * then, completed with outcome, duration and decline reason), else `fn` alone.
 */
function tracedCall(fn: () => Promise<CpuProviderOutcome>, fields: () => Omit<ExtensionProviderEvent, 'startTime'>): Promise<CpuProviderOutcome> {
  const channel = providerTracing();
  if (!tracingActive(channel)) return fn();
  let event: ExtensionProviderEvent;
  try {
    event = { ...fields(), startTime: process.hrtime.bigint() };
  } catch (e) {
    return Promise.reject(e); // a `facts` function of the family's that threw
  }
  return traceAsync(
    channel,
    event,
    () =>
      fn().then((outcome) => {
        if (!outcome.executed) event.declineReason = outcome.reason as ProviderDeclineReason;
        return outcome;
      }),
    (outcome) => (outcome.executed ? 'executed' : 'declined'),
    'failed',
  );
}

function providerFailed(e: unknown, op: string, provider: string, call: string): unknown {
  if (TenferroError.is(e)) return e;
  return new TenferroError('ProviderFailed', `the ${provider} ${call} kernel failed: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e, detail: { provider, call } });
}

/** The call's facts for `tenferro:provider`. */
function factsOf(call: ExtensionKernelCall, inputs: readonly TensorDescriptor[], outputs: readonly TensorDescriptor[]): Pick<ProviderEvent, 'dtype' | 'shapes' | 'flops'> {
  const given = call.facts;
  const f = typeof given === 'function' ? given() : given;
  return {
    dtype: f?.dtype ?? outputs[0]?.dtype ?? inputs[0]?.dtype ?? 'unknown',
    shapes: f?.shapes ?? [...inputs.map((d) => d.shape), ...outputs.map((d) => d.shape)],
    flops: f?.flops ?? null,
  };
}

const warned = new Set<string>();

/**
 * Never silently slow: the first time an extension declines a call and the family's built-in runs
 * instead, the process is told once per (key, extension, call) (`TENFERRO_EXTENSION_FALLBACK`);
 * every fallback is on `tenferro:provider` (`fallbackFrom`, `fallbackReason`).
 */
function warnFallback(slot: string, provider: string, call: string, op: string, why: string): void {
  const id = `${slot}\u0000${provider}\u0000${call}`;
  if (warned.has(id)) return;
  warned.add(id);
  process.emitWarning(`${provider} declined ${call} for ${op} (${why}): the built-in kernel ran instead; later declines of it are on tenferro:provider only`, {
    type: 'TenferroWarning',
    code: 'TENFERRO_EXTENSION_FALLBACK',
  });
}

/**
 * The verdict of (bundle, domain, key), decided once and kept — a bundle's extensions never
 * change, and the verdict depends on the domain only through what it is (thread budget, admission
 * mode, the kind and whether its executor offers a pool), so a handle's and a session's view of
 * one domain share it.
 */
function decide(site: ExtensionSite, key: ExtensionKey<unknown>, op: string): Decision {
  const domain = site.runner.domain;
  const hasPool = site.executorHasPool;
  const id = `${key.name}\u0000${String(domain.id)}\u0000${domain.threadBudget}\u0000${domain.admissionMode}\u0000${site.kind}\u0000${hasPool ? 'pool' : 'none'}`;
  let byDomain = verdicts.get(site.bundle);
  if (byDomain === undefined) verdicts.set(site.bundle, (byDomain = new Map()));
  let verdict = byDomain.get(id);
  if (verdict === undefined) {
    verdict = judge(site, key, hasPool);
    byDomain.set(id, verdict);
  }
  if ('refused' in verdict) {
    // The kept verdict, raised for this call's operation (its cause too).
    const e = verdict.refused;
    const c = e.cause;
    const cause = TenferroError.is(c) ? new TenferroError(c.code, c.message, { op, cause: c.cause, detail: c.detail }) : c;
    throw new TenferroError(e.code, e.message, { op, cause, detail: e.detail });
  }
  return verdict.ok;
}

function judge(site: ExtensionSite, key: ExtensionKey<unknown>, executorHasPool: boolean): Verdict {
  const domain = site.runner.domain;
  const mode = extensionMode(site.kind, domain.threadBudget, executorHasPool);
  const value = site.bundle.extension(key) as unknown;
  if (value === undefined) {
    return { ok: Object.freeze({ extension: undefined, name: key.name, mode, threadLimit: domain.threadBudget, overwritesOutputs: false, declinesBeforeWriting: false, spawnsThreads: false }) };
  }
  try {
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) {
      throw invalidArgument(ENTRY, `the extension under ${JSON.stringify(key.name)}`, 'an object', value);
    }
    const ext = value as CpuExtensionProvider;
    const name = typeof ext.name === 'string' ? ext.name : key.name;
    const declared = ext.executionCapabilities;
    if (declared !== undefined && typeof declared !== 'function') throw invalidArgument(ENTRY, `${key.name}.executionCapabilities`, 'a function', declared);
    const caps = extensionCapabilities(name, key.name, declared === undefined ? undefined : () => declared.call(ext), ENTRY);
    let family: 'blas' | undefined;
    try {
      family = ext.declaredSupport?.().family === 'blas' ? 'blas' : undefined;
    } catch {
      family = undefined;
    }
    validateExtensionForDomain(key.name, name, caps, family, site.bundle.capabilityPolicy, domain, mode, ENTRY);
    const threadLimit = caps.placement === 'callingThread' ? 1 : (enforcedThreadLimit(caps, domain.threadBudget) ?? domain.threadBudget);
    return {
      ok: Object.freeze({
        extension: ext,
        name,
        mode,
        threadLimit,
        overwritesOutputs: ext.overwritesOutputs === true,
        declinesBeforeWriting: ext.declinesBeforeWriting === true,
        spawnsThreads: caps.spawnsThreadsOnFirstUse === true,
      }),
    };
  } catch (e) {
    if (!TenferroError.is(e)) throw e;
    return { refused: e };
  }
}

function checkKey(key: unknown): void {
  if (typeof key !== 'object' || key === null || typeof (key as { name?: unknown }).name !== 'string') {
    throw invalidArgument(ENTRY, 'key', 'an ExtensionKey (defineExtensionKey(name))', key);
  }
}

/** The request, checked: known keys only, a name, tensors, `[dtype, shape]` outputs then scratch (with their element counts; the first `outCount` are outputs), a signal. */
function checkRequest(request: unknown): { op: string; inputs: readonly Tensor[]; specs: readonly (readonly [DType, readonly number[], number])[]; outCount: number } {
  if (typeof request !== 'object' || request === null) throw invalidArgument(ENTRY, 'request', 'a request object { op, inputs, outputs, signal? }', request);
  for (const k in request) {
    if (Object.hasOwn(request, k) && !REQUEST_KEYS.has(k)) throw invalidArgument(ENTRY, `request.${k}`, `one of ${[...REQUEST_KEYS].join(', ')}`, k);
  }
  const r = request as Record<string, unknown>;
  if (typeof r.op !== 'string' || r.op.trim() === '') throw invalidArgument(ENTRY, 'request.op', 'a non-empty operation name', r.op);
  const op = r.op;
  if (!Array.isArray(r.inputs)) throw invalidArgument(op, 'request.inputs', 'an array of Tensors', r.inputs);
  const inputs = r.inputs as unknown[];
  for (let i = 0; i < inputs.length; i++) if (!Tensor.isTensor(inputs[i])) throw invalidArgument(op, `request.inputs[${i}]`, 'a Tensor', inputs[i]);
  if (!Array.isArray(r.outputs)) throw invalidArgument(op, 'request.outputs', 'an array of [dtype, shape]', r.outputs);
  if (r.scratch !== undefined && !Array.isArray(r.scratch)) throw invalidArgument(op, 'request.scratch', 'an array of [dtype, shape]', r.scratch);
  const outCount = r.outputs.length;
  const specs: (readonly [DType, readonly number[], number])[] = [];
  const spec = (o: unknown, param: string) => {
    if (!Array.isArray(o) || o.length !== 2) throw invalidArgument(op, param, 'a [dtype, shape] pair', o);
    const [dtype, shape] = o as [unknown, unknown];
    checkDType(dtype, op, `${param}[0]`);
    checkShape(shape, op, `${param}[1]`);
    const copy = Object.freeze([...shape]);
    specs.push(Object.freeze([dtype, copy, elementCount(copy, op)] as const));
  };
  for (let i = 0; i < outCount; i++) spec(r.outputs[i], `request.outputs[${i}]`);
  const scratch = (r.scratch ?? []) as unknown[];
  for (let i = 0; i < scratch.length; i++) spec(scratch[i], `request.scratch[${i}]`);
  if (r.signal !== undefined && !(r.signal instanceof AbortSignal)) throw invalidArgument(op, 'request.signal', 'an AbortSignal', r.signal);
  if (r.builtinOverwrites !== undefined && typeof r.builtinOverwrites !== 'boolean') throw invalidArgument(op, 'request.builtinOverwrites', 'a boolean', r.builtinOverwrites);
  // Sizes in bytes are checked here too: an output too large for one buffer fails before admission.
  for (const [dtype, , length] of specs) {
    if (length * DTYPE_INFO[dtype].bytes > Number.MAX_SAFE_INTEGER) throw invalidArgument(op, 'request.outputs', 'outputs and scratch of at most 2^53-1 bytes each', length);
  }
  return { op, inputs: inputs as Tensor[], specs, outCount };
}

function checkCall(call: unknown, op: string): void {
  if (typeof call !== 'object' || call === null) throw invalidArgument(op, 'call', 'a kernel call { name?, extension?, builtin?, facts? }', call);
  // `for…in` over a plain object: its own keys, without an array per call.
  for (const k in call) if (Object.hasOwn(call, k) && !CALL_KEYS.has(k)) throw invalidArgument(op, `call.${k}`, `one of ${[...CALL_KEYS].join(', ')}`, k);
  const c = call as ExtensionKernelCall;
  if (c.name !== undefined && typeof c.name !== 'string') throw invalidArgument(op, 'call.name', 'a string', c.name);
  if (c.extension !== undefined && typeof c.extension !== 'function') throw invalidArgument(op, 'call.extension', 'a function (ctx) => outcome', c.extension);
  if (c.builtin !== undefined && (typeof c.builtin !== 'object' || c.builtin === null || typeof c.builtin.run !== 'function' || typeof c.builtin.name !== 'string')) {
    throw invalidArgument(op, 'call.builtin', 'a built-in { name, run(ctx) }', c.builtin);
  }
  if (c.facts !== undefined && typeof c.facts !== 'function' && (typeof c.facts !== 'object' || c.facts === null)) {
    throw invalidArgument(op, 'call.facts', 'an object { dtype?, shapes?, flops? } or a function returning one', c.facts);
  }
}
