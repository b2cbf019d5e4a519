import { invalidArgument } from '../errors/tenferro-error.js';
import type { CpuSet } from '../topology/cpu-set.js';

/** `faer`: tenferro-managed kernels on its pinned workers; `blas`: the system BLAS with provider-owned threads (D6). */
export type CpuBackendKind = 'faer' | 'blas';

/** Requested placement (D6). */
export type CpuPlacement = 'auto' | 'allAllowed' | { readonly numaNode: number };

/** A placement resolved against the topology: its kind and exact CPU set (R20). */
export type ResolvedCpuPlacement =
  | { readonly kind: 'allAllowed'; readonly cpus: CpuSet }
  | { readonly kind: 'numaNode'; readonly id: number; readonly cpus: CpuSet };

/** How a handle's executions run (R12–R14, R19, §3.F): the contract's `ResolvedCpuExecution` variants. */
export type CpuExecutionMode = 'managed' | 'externalManaged' | 'callerManaged' | 'providerDefaultExclusive' | 'compatibility';

export function validateKind(kind: unknown, op: string, param = 'options.kind'): CpuBackendKind {
  if (kind === 'faer' || kind === 'blas') return kind;
  throw invalidArgument(op, param, "'faer' or 'blas'", kind);
}

export function validatePlacement(placement: unknown, op: string, param = 'options.placement'): CpuPlacement {
  if (placement === 'auto' || placement === 'allAllowed') return placement;
  if (typeof placement === 'object' && placement !== null && 'numaNode' in placement) {
    const id = (placement as { numaNode: unknown }).numaNode;
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return Object.freeze({ numaNode: id });
    throw invalidArgument(op, `${param}.numaNode`, 'a non-negative integer NUMA node id', id);
  }
  throw invalidArgument(op, param, "'auto', 'allAllowed' or { numaNode: id }", placement);
}

/** A placement as error messages and `executionInfo()` show it. */
export function describePlacement(p: CpuPlacement): string {
  return typeof p === 'string' ? p : `{ numaNode: ${p.numaNode} }`;
}
