import type { DType, Scalar } from '../tensor/dtype.js';

export type { Scalar };


/**
 * One operand of a (batched) GEMM, as strides into shared storage (elements, not bytes):
 * element (i, j, batch b…) is at `offset + i·rowStride + j·colStride + Σ b[t]·batchStrides[t]`.
 * Strides are ≥ 0; zero is allowed on inputs (broadcast) but never on an output's non-unit axes.
 */
export interface GemmOperand {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/**
 * `out[b] = alpha · op(lhs[b]) · op(rhs[b]) + beta · out[b]` for every batch index `b` of
 * `batch` (row-major iteration order is irrelevant: batches are independent), with lhs `m×k`,
 * rhs `k×n`, out `m×n`; `op` conjugates when `conjLhs`/`conjRhs` (complex dtypes only).
 * `beta = 0` means the output is overwritten without being read (NaN in it does not propagate).
 * Every index reachable from the shape lies inside its buffer: core validated it.
 */
export interface CpuGemmRequest {
  readonly dtype: DType;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Batch extents (empty: one GEMM). */
  readonly batch: readonly number[];
  readonly lhs: GemmOperand;
  readonly rhs: GemmOperand;
  readonly out: GemmOperand;
  readonly alpha: Scalar;
  readonly beta: Scalar;
  readonly conjLhs: boolean;
  readonly conjRhs: boolean;
}
