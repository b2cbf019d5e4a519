import type { GemmPlan } from './gemm-plan.js';

/**
 * Element-equivalents of the costs the summed plan trades (f64 timings on the reference machine,
 * provider-faer; provider-tprims bench/summed-vs-copy.mjs): each summed item re-reads and
 * re-writes the m×n output block (about 0.6 ns per element, the block staying in cache), while
 * the copy it saves moves every element of the copied operand once through a strided read
 * (about 0.9 ns per element) and costs one more provider call (a worker round trip, about 30 µs).
 * Scaled to integers: an output element updated per item weighs 2, a copied element 3, the
 * saved call 100,000.
 */
const OUTPUT_UPDATE_WEIGHT = 2;
const COPIED_ELEMENT_WEIGHT = 3;
const SAVED_CALL_WEIGHT = 100_000;

/**
 * Thin summed items — k below GATHERED_ITEM_K into an m×n output of at least GATHERED_MIN_OUTPUT
 * elements — are what provider-faer gathers into one K (native/src/gemm.cc run_gather_task): no
 * pass over the output per item, each operand packed once from its strides, as fast as the GEMM on
 * a copied operand (m = n = 64, 256 items of k = 4: 0.25 ms either way, f64 on a Zen 3) without the
 * copy. The summed plan always wins there.
 */
const GATHERED_ITEM_K = 64;
const GATHERED_MIN_OUTPUT = 1024;

/**
 * Whether the summed plan `plan` beats the canonical retry, which copies `copiedElements`
 * elements (one operand when the other is kept, else both) and then runs one GEMM with every
 * contracting pair fused (R105's summed plan, a cost model). Both do the same multiply-adds; the
 * summed plan pays one update of the m×n output block (per batch item) for each summed item —
 * except for thin items into a large output, which are gathered and always win.
 */
export function summedWins(plan: GemmPlan, copiedElements: number): boolean {
  if (plan.k < GATHERED_ITEM_K && plan.m * plan.n >= GATHERED_MIN_OUTPUT) return true;
  const items = plan.summed === undefined ? 1 : plan.summed.extents.reduce((a, b) => a * b, 1);
  const batches = plan.batch.reduce((a, b) => a * b, 1);
  return OUTPUT_UPDATE_WEIGHT * items * batches * plan.m * plan.n <= COPIED_ELEMENT_WEIGHT * copiedElements + SAVED_CALL_WEIGHT;
}
