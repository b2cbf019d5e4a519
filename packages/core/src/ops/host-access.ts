import { assertHostAccess } from '../buffer/allocation-domain.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';

/**
 * Before anything is admitted: every tensor an operation reads must be readable by the runner's
 * allocation domain (R2, R77) — storage of another allocation domain that refuses foreign reads is
 * `HostAccess`. `roles` names the tensors in the error (default `tensors[i]`).
 */
export function assertReadable(runner: OperationRunner, tensors: readonly Tensor[], op: string, roles?: readonly string[]): void {
  for (let i = 0; i < tensors.length; i++) {
    assertHostAccess(tensorInternals.storage(tensors[i]!), runner.allocationDomain, op, roles?.[i] ?? `tensors[${i}]`);
  }
}
