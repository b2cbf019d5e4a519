/**
 * `runExtension(target, key, request, body)`: the public door of extension families (#35). The
 * work is in `ops/run-extension.ts`; this file only resolves the target — a `CpuBackend` handle or
 * a `CpuExecSession` — to where its operations run (the layer rule keeps that lookup here).
 */
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuDomain } from '../contract/cpu-domain.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import { type ExtensionOperation, type ExtensionRequest, type ExtensionResult, runExtensionOn } from '../ops/run-extension.js';
import type { AdmissionTarget } from '../runtime/execution/admission.js';
import type { CpuExecSession } from './backend-session.js';
import type { CpuBackend } from './cpu-backend.js';
import { operationTargets } from './operation-targets.js';

/**
 * Run one operation of an extension family — a package that is not core (e.g. `@tenferro/linalg`,
 * or your own) — with everything core's own operations get:
 *
 * 1. **Validation first.** `request` (`{ op, inputs, outputs, signal?, builtinOverwrites? }`; an
 *    unknown key is `InvalidArgument`) and every input (`TensorDisposed`, `HostAccess`) are checked
 *    before any worker hop, permit or allocation.
 * 2. **The extension validated once.** The extension stored under `key` in the target's bundle is
 *    checked against the target's domain once per (bundle, domain, key) and the verdict kept:
 *    R55–R59 on its `executionCapabilities()` (absent: `DEFAULT_EXECUTION_CAPABILITIES`, so an
 *    undeclared extension is refused wherever the default is — strict bundles, caller-managed
 *    domains), and R47 for a BLAS-family one (`declaredSupport().family === 'blas'`) on
 *    caller-managed domains. A refusal is `IncompatibleDomain` before anything runs.
 * 3. **One mode** (the extension-mode rule): Sequential at budget 1, Inner on the `blas` kind,
 *    otherwise the engine's preferred mode (Inner iff the executor offers a pool).
 * 4. **Pinned.** The inputs' storage is held from the call until the operation ends: an input
 *    disposed meanwhile is not handed to anything else while the kernels read it.
 * 5. **Admitted like every operation.** A backend handle takes a permit (or a caller-managed
 *    guard) and an executor entry per call — inside `withExecutionScope` the scope's entry; a
 *    session lends its entry. Kernel tasks are tracked; `signal` aborts the wait
 *    (`AdmissionAborted`) or the run (`ExecutionAborted`).
 * 6. **Fresh outputs.** One per `[dtype, shape]` of `request.outputs`, dense column-major, from
 *    the engine's buffer pool (or the handle's allocation domain), aligned like every fresh output;
 *    zeroed unless every kernel that may write them declares it overwrites them all (the
 *    extension's `overwritesOutputs` and `request.builtinOverwrites`). Given back on any failure.
 * 7. **Traced kernel calls.** `body(ctx, operation)` gets the entered context, descriptors of the
 *    inputs and outputs (never `Tensor.buffer`, which would stop the storage's recycling), the
 *    extension, and `operation.kernel({ name, extension, builtin })`: the extension's kernel, then
 *    the built-in after a decline — one `tenferro:provider` event per kernel that ran (which one,
 *    and why the extension declined), a thrown error that is no `TenferroError` as
 *    `ProviderFailed`, written-then-declined as `ProviderContractViolation`, and one
 *    `TENFERRO_EXTENSION_FALLBACK` warning for the first fallback of each call.
 *
 * Resolves to `{ outputs, value }`: the fresh outputs as tensors (the caller owns them: dispose
 * them, or let them be collected — their storage goes back to the pool either way) and the body's
 * value.
 *
 * @example
 * ```ts
 * import { CpuBackend, EXECUTED, Tensor, defineExtensionKey, runExtension } from '@tenferro/core';
 *
 * // A family "scale": out = 2·x, with an optional provider kernel under its key.
 * interface ScaleKernels {
 *   readonly name: string;
 *   double?(ctx: unknown, x: Float64Array, out: Float64Array): typeof EXECUTED;
 * }
 * const key = defineExtensionKey<ScaleKernels>('example.scale');
 * const backend = await CpuBackend.create({ threads: 1 });
 * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
 * const { outputs, value } = await runExtension(backend, key, { op: 'scale.double', inputs: [x], outputs: [['f64', [3]]] }, async (_ctx, { inputs, outputs, kernel }) => {
 *   const [i, o] = [inputs[0]!, outputs[0]!];
 *   const read = new Float64Array(i.buffer, i.offset * 8, 3);
 *   const write = new Float64Array(o.buffer, o.offset * 8, 3);
 *   // No extension is installed: the built-in runs (on the main thread here; a real one posts a kernel with ctx.run).
 *   return kernel({ name: 'double', builtin: { name: 'scale built-in', run: () => write.forEach((_, k) => (write[k] = 2 * read[k]!)) } });
 * });
 * console.log(value, outputs[0]!.toArray()); // prints: builtin [ 2, 4, 6 ]
 * outputs[0]!.dispose();
 * await backend.close();
 * ```
 */
export function runExtension<T, R>(
  target: CpuBackend | CpuExecSession,
  key: ExtensionKey<T>,
  request: ExtensionRequest,
  body: (ctx: CpuExecutionContext, operation: ExtensionOperation<T>) => R | Promise<R>,
): Promise<ExtensionResult<R>> {
  const resolved = typeof target === 'object' && target !== null ? operationTargets.get(target) : undefined;
  if (resolved === undefined) return Promise.reject(invalidArgument('runExtension', 'target', 'a CpuBackend or a CpuExecSession', target));
  const handle = 'coordinator' in resolved ? (resolved as unknown as AdmissionTarget) : undefined;
  const domain = resolved.runner.domain as CpuDomain;
  // Whether the executor offers a pool (R72): managed executors do above one worker; a session's
  // entry knows its engine; an external domain's engine is built (no worker is started for it)
  // before the mode is decided, so the extension-mode rule never has to guess.
  const kind: CpuBackendKind = handle !== undefined ? handle.coordinator.kind : (target as CpuExecSession).kind();
  const run = (executorHasPool: boolean) => runExtensionOn({ runner: resolved.runner, bundle: resolved.bundle, kind, executorHasPool }, key, request, body);
  if (domain.ownership === 'managed') return run(domain.threadBudget > 1);
  if (resolved.runner.executorHasPool !== undefined) return run(resolved.runner.executorHasPool);
  if (handle === undefined) return run(true);
  const built = handle.coordinator.builtEngine(handle.plan);
  if (built !== undefined) return run(built.capabilities.innerParallelism === 'pool');
  return handle.coordinator.engine(handle.plan, 'runExtension').then((engine) => run(engine.capabilities.innerParallelism === 'pool'));
}
