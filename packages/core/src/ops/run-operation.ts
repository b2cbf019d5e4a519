import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { ParallelMode } from '../contract/parallel-mode.js';
import type { OperationBody, OperationRunner } from '../runtime/execution/admission.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';

/**
 * The one operation path of core (#35). Every public operation of every family — dot-general and
 * matmul, grouped GEMM, the tensor primitives, layout transforms, materialised reads, and
 * extension calls (`runExtension`) — inside or outside a scope or session, on managed or external
 * domains, is:
 *
 * 1. validated into a spec, before any hop, allocation or write (the op's own file);
 * 2. its provider's mode decided once per slot by `ProviderDispatch` (R61, R62) — still nothing
 *    touched;
 * 3. `runOperation`: every input and caller-owned output pinned for the operation's whole life (a
 *    tensor disposed meanwhile invalidates at once, but its storage is handed out again only when
 *    the operation is done), admitted through the runner — the handle's admission (R34, R35, R43)
 *    or the scope's or session's entry (R80, R84), whose end expires the operation's contexts
 *    (R85) — run with its kernel tasks tracked, and unpinned on every exit;
 * 4. each provider call through `ProviderDispatch.call` (a `tenferro:provider` event, failures
 *    typed) and the one written-then-declined guard (`declined-guard.ts`); fresh outputs from
 *    `fresh-output.ts`.
 *
 * Not `async`: one `then` per operation instead of an async frame and its await.
 */
export function runOperation<R>(
  runner: OperationRunner,
  op: string,
  mode: ParallelMode,
  pins: readonly Tensor[],
  body: OperationBody<R>,
  signal: AbortSignal | undefined,
): Promise<R> {
  return pinned(pins, () => runner.run(op, mode, body, signal));
}

/**
 * `runOperation` for a family that may fan out over the engine (R110: grouped GEMM): `outerJob`
 * once per job on the engine's lanes when the runner may, else `body` once in `mode`.
 */
export function runOperationOuterOr(
  runner: OperationRunner,
  op: string,
  count: number,
  outerJob: (ctx: CpuExecutionContext, index: number) => Promise<void>,
  mode: ParallelMode,
  pins: readonly Tensor[],
  body: OperationBody<void>,
  signal: AbortSignal | undefined,
): Promise<'outer' | 'entered'> {
  return pinned(pins, () => runner.runOuterOr(op, count, outerJob, mode, body, signal));
}

/** Hold the storage of `tensors` while `run`'s operation runs; release it on every exit. */
function pinned<R>(tensors: readonly Tensor[], run: () => Promise<R>): Promise<R> {
  const storages = tensors.map((t) => tensorInternals.storage(t));
  for (const s of storages) s.retain();
  const unpin = () => {
    for (const s of storages) s.release();
  };
  let running: Promise<R>;
  try {
    running = run();
  } catch (e) {
    unpin();
    return Promise.reject(e);
  }
  return running.then(
    (value) => {
      unpin();
      return value;
    },
    (e: unknown) => {
      unpin();
      throw e;
    },
  );
}
