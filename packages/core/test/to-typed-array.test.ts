// toTypedArray on any view (permuted, offset, stepped, broadcast) equals toArray in both orders:
// two independent walks (the strided copy's tight inner loop vs the element visitor).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DTYPES } from '../src/index.js';
import { randomView, seededRandom } from '../src/testing/index.js';

describe('toTypedArray', () => {
  it('equals toArray for random strided and broadcast views of every dtype, in both orders', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DTYPES),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 0, maxLength: 5 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('col' as const, 'row' as const),
        (dtype, shape, seed, order) => {
          const t = randomView(seededRandom(seed), dtype, shape, { strided: true, broadcast: true });
          const typed = Array.from(t.toTypedArray({ order }) as ArrayLike<number | bigint>);
          expect(typed).toEqual(t.toArray({ order }));
          expect(typed.length).toBe(shape.reduce((p, e) => p * e, 1) * (dtype === 'c64' || dtype === 'c128' ? 2 : 1));
        },
      ),
      { numRuns: 400 },
    );
  });
});
