import type { GemmPlan } from './gemm-plan.js';

/**
 * Fused `k` below which a summed plan loses to copying an operand: every summed item re-reads
 * and re-writes the m×n output tile, which costs as much as about this many steps along K
 * (bench/contraction.mjs --d 8, 16, 32, 64, 96 in provider-tprims: measured, see docs/tensors-and-dot-general.md).
 */
export const SUMMED_MIN_K = 16;

/**
 * Whether the summed plan `plan` beats the canonical retry that copies an operand (R105's
 * summed plan, a cost model): both do the same multiply-adds; the summed plan saves the copy
 * (a pass over one operand) and a provider call, and pays one output update per summed item,
 * which is small next to an item's m·n·k multiply-adds once k ≥ {@link SUMMED_MIN_K}.
 */
export function summedWins(plan: GemmPlan): boolean {
  return plan.k >= SUMMED_MIN_K;
}
