// The pairwise summation of the reference reductions: the streaming accumulator and the one-loop
// line version build the same tree (bit-identical results), and the tree is pairwise: its error on
// adversarial-free data stays within the documented bound while a running sum's grows with n.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAIRWISE_BLOCK, PairwiseSum, pairwiseLine } from '../src/provider/reference/pairwise-sum.js';

describe('pairwise summation', () => {
  it('pairwiseLine equals PairwiseSum bit for bit, for any length, stride and offset', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { maxLength: 700 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 }), (values, stride, offset) => {
        const S = new Float64Array(offset + values.length * stride);
        values.forEach((v, i) => (S[offset + i * stride] = v));
        const p = new PairwiseSum();
        for (const v of values) p.add(v);
        expect(Object.is(pairwiseLine(S, offset, values.length, stride), p.total()) || pairwiseLine(S, offset, values.length, stride) === p.total()).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('sums blocks of 16 left to right and combines equal-sized partial sums', () => {
    // 32 ones then 1e16: blocks [16 ones] [16 ones] merge to 32, then the tail 1e16 is added last.
    const p = new PairwiseSum();
    for (let i = 0; i < 2 * PAIRWISE_BLOCK; i++) p.add(1);
    p.add(1e16);
    expect(p.total()).toBe(1e16 + 32);
  });
});
