// How long an engine worker spins for its next task after one (`spinNsAfter`): its base spin, or a
// tenth of its usual task when that is longer, never more than 1 ms — a whole number of ns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SPIN_MOST_NS, spinNsAfter } from '../src/runtime/workers/spin-yield.js';

describe('spinNsAfter', () => {
  it('is the base spin or a tenth of the usual task, whichever is longer, capped at 1 ms (the base above it stays)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e10, noNaN: true }), fc.integer({ min: 0, max: 2_000_000 }), (usual, base) => {
        const spin = spinNsAfter(usual, base);
        expect(Number.isInteger(spin)).toBe(true);
        expect(spin).toBeGreaterThanOrEqual(base);
        expect(spin).toBeLessThanOrEqual(Math.max(base, SPIN_MOST_NS));
        if (usual / 10 > base && usual / 10 <= SPIN_MOST_NS) expect(Math.abs(spin - usual / 10)).toBeLessThanOrEqual(0.5);
      }),
    );
  });

  it('at the boundaries: short tasks keep the base spin; a 10 ms task spins 1 ms, a 100 ms one too', () => {
    expect(spinNsAfter(0, 200_000)).toBe(200_000);
    expect(spinNsAfter(1_500_000, 200_000)).toBe(200_000);
    expect(spinNsAfter(5_000_000, 200_000)).toBe(500_000);
    expect(spinNsAfter(10_000_000, 200_000)).toBe(SPIN_MOST_NS);
    expect(spinNsAfter(100_000_000, 200_000)).toBe(SPIN_MOST_NS);
    expect(spinNsAfter(1.5e6 + 0.3, 0.4)).toBe(150_000);
  });
});
