// Tiny cache blocks (set through the tuning variables before this process first computes its
// blocking), so that modest sizes cross many MC / KC / NC block boundaries, and no direct path:
// the packed engine's block loops, the first-K-block beta handling and the edge tiles.
import { describe, expect, it } from 'vitest';
import { DTS, binding, int, runCase, seededRandom } from './helpers.js';

process.env.TENFERRO_FAER_BLOCKING_F64 = '64,48,30';
process.env.TENFERRO_FAER_BLOCKING_F32 = '128,40,24';
process.env.TENFERRO_FAER_SMALL = '0';

const isas = [2, 1, 0].filter((id) => binding().info(id) !== null);

describe.each(isas)('small blocks, ISA %i', (isa) => {
  it('uses the overridden blocking', () => {
    const info = binding().info(isa)!;
    expect(info.blocking.f64.kc).toBe(48);
    expect(info.blocking.f64.nc).toBe(Math.floor(30 / info.kernel.f64.nr) * info.kernel.f64.nr);
    expect(info.blocking.f32.kc).toBe(40);
    expect(info.blocking.f64.small).toBe(0);
  });

  for (const dtype of DTS) {
    it(`${dtype}: many blocks, every layout of C, beta ≠ 0 and beta = 0`, () => {
      const rand = seededRandom(77 + isa + DTS.indexOf(dtype));
      const complex = dtype === 'c64' || dtype === 'c128';
      for (let t = 0; t < 8; t++) {
        const m = int(rand, 4, 170);
        const n = int(rand, 2, 75);
        const k = int(rand, 1, 140);
        const r = runCase({
          dtype, m, n, k, isa, seed: t,
          la: (['col', 'row', 'strided'] as const)[t % 3],
          lb: (['row', 'col', 'strided'] as const)[t % 3],
          lc: (['col', 'row', 'strided'] as const)[(t >> 1) % 3],
          beta: t % 2 ? (complex ? [0.5, 0.5] : 0.5) : complex ? [0, 0] : 0,
          alpha: complex ? [1.5, -0.5] : 1.5,
          conjA: complex && t % 4 < 2,
          conjB: complex && t % 3 === 0,
          nanC: t % 2 === 0,
          batch: t === 5 ? [2] : [],
        });
        const label = JSON.stringify({ dtype, m, n, k, t });
        expect(r.status, label).toBe(0);
        expect(r.guardViolations, label).toBe(0);
        expect(r.error, label).toBeLessThanOrEqual(r.tolerance);
      }
    });
  }
});
