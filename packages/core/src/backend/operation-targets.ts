import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';

/** Where an operation target runs and with which bundle. */
export interface OperationTarget {
  readonly runner: OperationRunner;
  readonly bundle: CpuProviderBundle;
}

/**
 * @internal Every `CpuBackend` handle and `CpuExecSession`, registered by its constructor, with
 * where its operations run: how `ops(target)` reaches them without a public accessor.
 */
export const operationTargets = new WeakMap<object, OperationTarget>();
