import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { ValidationDomain } from '../contract/cpu-domain.js';
import type { ProviderParallelMode } from '../contract/parallel-mode.js';
import { TenferroError } from '../errors/tenferro-error.js';
import { type CpuProviderExecutionCapabilities, acceptsMode, enforcedThreadLimit, snapshotCapabilities } from '../provider/execution-capabilities.js';
import type { CapabilityPolicy } from '../provider/provider-bundle.js';
import type { DType } from '../tensor/dtype.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * The buffer pool `withLinalgPool` hands its callback with the entered context: fresh outputs
 * from the session's engine pool (or its allocation domain), disposable like every fresh output.
 * Zeroed unless `{ zeroed: false }` — then the kernel must write every element.
 */
export interface SessionBufferPool {
  /**
   * A fresh dense column-major tensor for a kernel to write (`CpuExecSession.freshTensor`): zeroed
   * unless `{ zeroed: false }`; its storage goes back to the pool when it is disposed.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const out = await backend.withLinalgPool((_ctx, pool) => pool.freshTensor('f32', [2, 3]));
   * console.log(out.dtype, out.shape, out.toArray()); // prints: f32 [ 2, 3 ] [ 0, 0, 0, 0, 0, 0 ]
   * out.dispose();
   * await backend.close();
   * ```
   */
  freshTensor<D extends DType>(dtype: D, shape: readonly number[], options?: { readonly zeroed?: boolean }): Tensor<D>;
}

/**
 * The linalg mode (R73): budget 1 → Sequential; the blas kind → Inner (the LAPACK runtime owns its
 * threading, bounded per call); otherwise the preferred engine mode (R72) — Inner iff the executor
 * offers a pool (`ctx.workerPool()`), else Sequential.
 */
export function linalgMode(kind: CpuBackendKind, threadBudget: number, executorHasPool: boolean): ProviderParallelMode {
  if (threadBudget <= 1) return 'sequential';
  if (kind === 'blas') return 'inner';
  return executorHasPool ? 'inner' : 'sequential';
}

/**
 * R55–R59 for a linear-algebra extension's declared capabilities on one domain, in the mode
 * `withLinalgPool` would enter there — the checks a bundle's slots get (`validateBundleForDomain`),
 * under the same policy: strict bundles and every caller-managed domain; a
 * `providerDefaultCompatibility` bundle (blas) is trusted elsewhere (R54). A failure is
 * `IncompatibleDomain` whose cause is `ThreadCountNotEnforceable`,
 * `CallerManagedPlacementNotEnforceable` or `ParallelModeNotSupported`.
 */
export function validateLinalgForDomain(
  name: string,
  caps: CpuProviderExecutionCapabilities,
  policy: CapabilityPolicy,
  domain: ValidationDomain,
  mode: ProviderParallelMode,
  op: string,
): void {
  const callerManaged = domain.admissionMode === 'callerManaged';
  if (policy !== 'strict' && !callerManaged) return;
  const budget = domain.threadBudget;
  const fail = (cause: TenferroError): never => {
    throw new TenferroError('IncompatibleDomain', `the linalg kernels ${JSON.stringify(name)} cannot run on domain ${String(domain.id)}: ${cause.message}`, {
      op,
      cause,
      detail: { domainId: domain.id, slot: 'linalg', provider: name, reason: cause.code },
    });
  };
  if (enforcedThreadLimit(caps, budget) === undefined) {
    fail(new TenferroError('ThreadCountNotEnforceable', `thread control ${caps.threadCount} cannot be bounded by the domain's thread budget ${budget}`, {
      op,
      detail: { slot: 'linalg', threadBudget: budget, control: caps.threadCount },
    }));
  }
  if (callerManaged && caps.placement !== 'engineWorkers' && caps.placement !== 'callingThread') {
    fail(new TenferroError('CallerManagedPlacementNotEnforceable', `placement control ${caps.placement} would leave the caller's executor (thread budget ${budget})`, {
      op,
      detail: { slot: 'linalg', threadBudget: budget, placement: caps.placement },
    }));
  }
  if (!acceptsMode(caps, mode)) {
    fail(new TenferroError('ParallelModeNotSupported', `the linalg kernels do not accept the ${mode} parallel mode this domain's linalg calls run in (R73)`, {
      op,
      detail: { slot: 'linalg', mode },
    }));
  }
}

/** Sample and check what a linalg extension declares (InvalidArgument naming it when malformed). */
export function linalgCapabilities(name: string, declared: CpuProviderExecutionCapabilities): CpuProviderExecutionCapabilities {
  return snapshotCapabilities({ name, executionCapabilities: () => declared }, 'linalg');
}
