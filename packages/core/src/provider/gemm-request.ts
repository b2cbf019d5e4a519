import type { DType, Scalar } from '../tensor/dtype.js';

export type { Scalar };


/**
 * One operand of a (batched) GEMM, as strides into shared storage (elements, not bytes):
 * element (i, j, batch b…) is at `offset + i·rowStride + j·colStride + Σ b[t]·batchStrides[t]`.
 * Strides are ≥ 0; zero is allowed on inputs (broadcast) but never on an output's non-unit axes.
 * A side of extent 1 (`m`, `n` or `k` is 1, or the operand has no axis there, as a matrix-vector
 * product's lhs has no M) is never stepped along; core gives it the stride a dense layout gives it,
 * never 0 (#40): a `1 × c` operand whose column stride is 1 has row stride `c`, an `r × 1` one whose
 * row stride is 1 has column stride `r`, any other such side 1 — so a `1 × 1` operand is `(1, 1)`
 * and "one of the strides is 1" or a BLAS leading dimension holds whenever the other side is dense.
 */
export interface GemmOperand {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/**
 * Summed axes of a GEMM (`CpuGemmRequest.summed`): axis `t` has extent `extents[t]` and moves lhs
 * by `lhsStrides[t]` and rhs by `rhsStrides[t]` elements (≥ 0; the output does not move). They
 * are contracting axes that do not fuse with `k` on the operands as they are: summing over them
 * spares the copy that would fuse them.
 */
export interface GemmSummedAxes {
  readonly extents: readonly number[];
  readonly lhsStrides: readonly number[];
  readonly rhsStrides: readonly number[];
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
  /**
   * Optional summed axes (see {@link GemmSummedAxes}): then
   * `out[b] = alpha · Σ_s op(lhs[b, s]) · op(rhs[b, s]) + beta · out[b]` over every multi-index
   * `s` of `summed.extents`, lhs[b, s] being lhs[b] moved by `Σ s[t]·lhsStrides[t]` (rhs
   * likewise) — beta applies once, and an empty sum (an extent 0) leaves `beta · out[b]`. Core
   * sends it only to a GEMM provider that declares `summedAxes` (`DeclaredSupport`); absent or
   * with no axes, the request is an ordinary GEMM.
   */
  readonly summed?: GemmSummedAxes;
}
