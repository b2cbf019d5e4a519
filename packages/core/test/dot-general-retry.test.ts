import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTRACTION_DTYPES,
  CpuBackend,
  type CpuGemmProvider,
  type CpuGemmRequest,
  type CpuLayoutTransformProvider,
  CpuProviderBundle,
  referenceGemmProvider,
  referenceLayoutProvider,
  Tensor,
  Unsupported,
} from '../src/index.js';
import { naiveDotGeneral, randomValues, relativeError, seededRandom, toleranceFor } from '../src/testing/index.js';
import { blasExpressible, expectCode } from './helpers.js';

/** A GEMM provider wrapping the reference one, recording every request and deciding per call. */
function scriptedGemm(decide: (req: CpuGemmRequest, call: number) => ReturnType<typeof Unsupported.layout> | 'run' | 'throw') {
  const calls: CpuGemmRequest[] = [];
  const provider: CpuGemmProvider = {
    name: 'scripted',
    executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
    async gemm(ctx, req) {
      calls.push(req);
      const d = decide(req, calls.length);
      if (d === 'throw') throw new Error('provider exploded');
      if (d === 'run') return referenceGemmProvider.gemm(ctx, req);
      return d;
    },
  };
  return { provider, calls };
}

/** The reference layout provider, recording the source buffer of every materialisation. */
function countedLayout() {
  const sources: SharedArrayBuffer[] = [];
  const provider: CpuLayoutTransformProvider = {
    ...referenceLayoutProvider,
    name: 'counted',
    async materialize(ctx, req) {
      sources.push(req.src.buffer);
      return referenceLayoutProvider.materialize(ctx, req);
    },
  };
  return { provider, sources };
}

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await base.close();
});

const with_ = (gemm: CpuGemmProvider, layout: CpuLayoutTransformProvider = referenceLayoutProvider) =>
  base.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(gemm).layoutTransformProvider(layout).build());

const a = Tensor.fromArray('c128', [3, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
const b = Tensor.fromArray('c128', [2, 4], Array.from({ length: 16 }, (_, i) => (i % 5) - 2));
const dims = { contracting: [[1], [0]] as [number[], number[]] };
const expectProduct = (t: Tensor, conj = {}) => expect(relativeError(t.toArray() as number[], naiveDotGeneral(a, b, dims, conj).values)).toBeLessThan(1e-12);

describe('dot-general retry (R104–R107)', () => {
  it('declines layout(lhs) once: retried exactly once on canonical operands, both temporaries back in the pool', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.layout('lhs') : 'run'));
    const h = with_(provider);
    const before = h.bufferPoolStats();
    expectProduct(await h.dotGeneral(a, b, dims));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.lhs.buffer).not.toBe(a.buffer);
    expect(calls[1]!.rhs.buffer).not.toBe(b.buffer);
    const after = h.bufferPoolStats();
    expect(after.outstanding).toBe(0);
    // two canonical temporaries, and the fresh output's storage (given away, not returned)
    expect(after.misses + after.hits - before.misses - before.hits).toBe(3);
    expect(after.buffers).toBeGreaterThanOrEqual(2);
  });

  it('declines conjugation: the retry fuses conjugation into materialisation and clears the flags', async () => {
    const { provider, calls } = scriptedGemm((req) => (req.conjLhs || req.conjRhs ? Unsupported.conjugation() : 'run'));
    const h = with_(provider);
    expectProduct(await h.dotGeneral(a, b, dims, { conjLhs: true }), { conjLhs: true });
    expect(calls.map((c) => [c.conjLhs, c.conjRhs])).toEqual([[true, false], [false, false]]);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('declines twice: terminal ProviderUnsupported after exactly two calls; the output is untouched; the pool balances', async () => {
    const { provider, calls } = scriptedGemm(() => Unsupported.layout('rhs'));
    const h = with_(provider);
    const out = Tensor.fromArray('c128', [3, 4], Array.from({ length: 24 }, () => 4));
    const snapshot = new Uint8Array(out.buffer.slice(0));
    const e = await expectCode(h.dotGeneralInto(out, a, b, dims), 'ProviderUnsupported', 'Unsupported');
    expect(e.message).toContain('second unsupported');
    expect(calls).toHaveLength(2);
    expect(new Uint8Array(out.buffer)).toEqual(snapshot);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('a provider that throws: ProviderFailed carrying the error, one call, pool balanced', async () => {
    const { provider, calls } = scriptedGemm(() => 'throw');
    const h = with_(provider);
    const e = await expectCode(h.dotGeneral(a, b, dims), 'ProviderFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('provider exploded');
    expect(calls).toHaveLength(1);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('a provider that throws during the retry still returns both temporaries', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.conjugation() : 'throw'));
    const h = with_(provider);
    await expectCode(h.dotGeneral(a, b, dims, { conjRhs: true }), 'ProviderFailed');
    expect(calls).toHaveLength(2);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it.each([
    ['layout(output)', Unsupported.layout('output')],
    ['dtype', Unsupported.dtype('c128')],
    ['accumulation', Unsupported.of({ kind: 'accumulation' })],
  ])('%s is terminal at once: one call, no retry', async (_n, reason) => {
    const { provider, calls } = scriptedGemm(() => reason);
    await expectCode(with_(provider).dotGeneral(a, b, dims), 'ProviderUnsupported');
    expect(calls).toHaveLength(1);
  });

  it('a layout provider that declines while materialising is terminal, and the pool balances', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.layout('lhs') : 'run'));
    const decline: CpuLayoutTransformProvider = { ...referenceLayoutProvider, name: 'declining', materialize: async () => Unsupported.dtype('c128') };
    const h = with_(provider, decline);
    const e = await expectCode(h.dotGeneral(a, b, dims), 'ProviderUnsupported');
    expect(e.detail.slot).toBe('layoutTransform');
    expect(calls).toHaveLength(1);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('layouts without a direct plan go straight to the canonical path (one GEMM call), materialising only the operand whose own axes do not fuse', async () => {
    const { provider, calls } = scriptedGemm(() => 'run');
    // contract two lhs axes of a padded view: their strides (2, 8) do not fuse (8 ≠ 2·3)
    const x = Tensor.fromArray('f64', [2, 4, 4], Array.from({ length: 32 }, (_, i) => i)).slice(undefined, [0, 3]);
    const y = Tensor.fromArray('f64', [4, 3, 5], Array.from({ length: 60 }, (_, i) => i % 7));
    const d = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
    const { provider: layout, sources } = countedLayout();
    const got = await with_(provider, layout).dotGeneral(x, y, d);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.lhs.buffer).not.toBe(x.buffer);
    // y's own contracting axes fuse (strides 1, 4): y is used as it is, only x is materialised
    expect(calls[0]!.rhs.buffer).toBe(y.buffer);
    expect(sources).toEqual([x.buffer]);
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(x, y, d).values)).toBeLessThan(1e-12);
  });

  it('a required general-contraction provider that declines is terminal; a preferred one falls through', async () => {
    const general = { name: 'general', executionCapabilities: () => referenceGemmProvider.executionCapabilities(), dotGeneral: async () => Unsupported.of({ kind: 'runtimeUnavailable' }) };
    const req = base.withProviderBundle(base.providerBundle().toBuilder().requireGeneralContractionProvider(general).build());
    await expectCode(req.dotGeneral(a, b, dims), 'ProviderUnsupported');
    const pref = base.withProviderBundle(base.providerBundle().toBuilder().preferGeneralContractionProvider(general).build());
    expectProduct(await pref.dotGeneral(a, b, dims));
  });
});

describe('an output layout the canonical contraction cannot represent (R106)', () => {
  // lhs [2, 3, 4] · rhs [4, 5] over lhs axis 2: output [2, 3, 5], whose first two axes are one GEMM
  // row group. A view that pads between them (strides 1 and 3 for extents 2 and 3) cannot be one
  // GEMM dimension, and no materialisation of the operands changes the output's layout.
  const x = Tensor.fromArray('f64', [2, 3, 4], Array.from({ length: 24 }, (_, i) => (i % 7) - 3));
  const y = Tensor.fromArray('f64', [4, 5], Array.from({ length: 20 }, (_, i) => (i % 5) - 1));
  const d = { contracting: [[2], [0]] as [number[], number[]] };
  const paddedOutput = () => {
    const base = Tensor.fromArray('f64', [3, 3, 5], Array.from({ length: 45 }, () => 777));
    return { base, out: base.slice([0, 2], [0, 3], [0, 5]) };
  };

  it('dotGeneralInto, on the handle and in a session: ProviderUnsupported "layout of output", no GEMM call, no loan, the output byte-identical', async () => {
    const { provider, calls } = scriptedGemm(() => 'run');
    const h = with_(provider);
    const { base, out } = paddedOutput();
    expect(out.strides).toEqual([1, 3, 9]);
    const untouched = new Uint8Array(base.buffer.slice(0));
    const before = h.bufferPoolStats();
    const e = await expectCode(h.dotGeneralInto(out, x, y, d), 'ProviderUnsupported', 'Unsupported');
    expect(e.detail).toEqual({ slot: 'gemm', reason: 'layout of output' });
    const e2 = await expectCode(h.withBackendSession((s) => s.dotGeneralInto(out, x, y, d)), 'ProviderUnsupported', 'Unsupported');
    expect(e2.detail).toEqual({ slot: 'gemm', reason: 'layout of output' });
    expect(calls).toHaveLength(0);
    expect(new Uint8Array(base.buffer)).toEqual(untouched);
    const after = h.bufferPoolStats();
    expect([after.hits + after.misses, after.outstanding]).toEqual([before.hits + before.misses, 0]);
  });

  it('the same product into a dense output, or one padded only after the row group, runs (control)', async () => {
    const { provider } = scriptedGemm(() => 'run');
    const h = with_(provider);
    const want = naiveDotGeneral(x, y, d).values;
    const dense = Tensor.fromArray('f64', [2, 3, 5], Array.from({ length: 30 }, () => 777));
    expect((await h.dotGeneralInto(dense, x, y, d)).toArray()).toEqual(want);
    const padded = Tensor.fromArray('f64', [2, 3, 7], Array.from({ length: 42 }, () => 777)).slice(undefined, undefined, [1, 6]);
    expect((await h.dotGeneralInto(padded, x, y, d)).toArray()).toEqual(want);
  });

  it('property: into any strided output view, either the exact product (nothing outside the view written) or a refusal exactly when a GEMM axis group does not fuse on the output', async () => {
    const { provider, calls } = scriptedGemm(() => 'run');
    const h = with_(provider);
    /** The rule, restated: ordered by output stride, each non-unit axis of a group continues the previous one. */
    const fuses = (extents: number[], strides: number[]) => {
      const axes = extents.map((e, i) => ({ e, s: strides[i]! })).filter((a) => a.e !== 1).sort((p, q) => p.s - q.s);
      return axes.every((a, j) => j === 0 || a.s === axes[j - 1]!.s * axes[j - 1]!.e);
    };
    const seen = { refused: 0, ran: 0 };
    const caseArb = fc.record({
      m1: fc.integer({ min: 1, max: 3 }),
      m2: fc.integer({ min: 1, max: 3 }),
      n1: fc.integer({ min: 1, max: 3 }),
      n2: fc.integer({ min: 1, max: 3 }),
      k: fc.integer({ min: 1, max: 3 }),
      perm: fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 }),
      pads: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 4, maxLength: 4 }),
      steps: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 4, maxLength: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ m1, m2, n1, n2, k, perm, pads, steps }) => {
        const lhs = Tensor.fromArray('f64', [m1, m2, k], Array.from({ length: m1 * m2 * k }, (_, i) => (i % 5) - 2));
        const rhs = Tensor.fromArray('f64', [k, n1, n2], Array.from({ length: k * n1 * n2 }, (_, i) => (i % 3) - 1));
        const dd = { contracting: [[2], [0]] as [number[], number[]] };
        const shape = [m1, m2, n1, n2];
        // A base laid out in the order `perm`, each axis stepped and padded, viewed back in logical order.
        const baseShape = perm.map((a) => shape[a]! * steps[a]! + pads[a]!);
        const base = Tensor.fromArray('f64', baseShape, Array.from({ length: baseShape.reduce((p, e) => p * e, 1) }, () => 777));
        const out = base.slice(...perm.map((a) => [0, shape[a]! * steps[a]!, steps[a]!] as [number, number, number])).permute(perm.map((_, i) => perm.indexOf(i)));
        expect(out.shape).toEqual(shape);
        const reachable = new Set<number>();
        for (let i = 0; i < m1 * m2 * n1 * n2; i++) {
          let rest = i;
          let at = out.offset;
          shape.forEach((e, ax) => {
            at += (rest % e) * out.strides[ax]!;
            rest = Math.floor(rest / e);
          });
          reachable.add(at);
        }
        const representable = fuses([m1, m2], out.strides.slice(0, 2) as number[]) && fuses([n1, n2], out.strides.slice(2) as number[]);
        const callsBefore = calls.length;
        const untouched = new Float64Array(base.buffer.slice(0));
        let refusal: unknown;
        try {
          await h.dotGeneralInto(out, lhs, rhs, dd);
        } catch (e) {
          refusal = e;
        }
        const now = new Float64Array(base.buffer);
        if (!representable) {
          expect(refusal).toMatchObject({ code: 'ProviderUnsupported', detail: { slot: 'gemm', reason: 'layout of output' } });
          expect(calls.length).toBe(callsBefore);
          expect(now).toEqual(untouched);
          seen.refused++;
          return;
        }
        seen.ran++;
        expect(refusal).toBeUndefined();
        expect(out.toArray()).toEqual(naiveDotGeneral(lhs, rhs, dd).values);
        for (let i = base.offset; i < base.offset + base.size; i++) if (!reachable.has(i)) expect(now[i]).toBe(777);
      }),
      { numRuns: 60 },
    );
    expect(h.bufferPoolStats().outstanding).toBe(0);
    // both outcomes were exercised (a property that only ever took one branch would prove little)
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.ran).toBeGreaterThan(0);
  });
  it('C[i,l] = Σ A[i,j,k]·B[k,j,l] on row-major operands: no direct plan; lhs is kept, only rhs is materialised (one layout call, one GEMM call), pool balanced', async () => {
    const { provider, calls } = scriptedGemm(() => 'run');
    const { provider: layout, sources } = countedLayout();
    const h = with_(provider, layout);
    const d = 4;
    /** Row-major storage: column-major of the reversed shape, viewed back. */
    const rowMajor = (seed: number) => Tensor.fromArray('f64', [d, d, d], Array.from({ length: d ** 3 }, (_, i) => ((i * seed) % 7) - 3)).permute([2, 1, 0]);
    const A = rowMajor(3);
    const B = rowMajor(5);
    expect(A.strides).toEqual([d * d, d, 1]);
    const dd = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
    const got = await h.dotGeneral(A, B, dd);
    expect(calls).toHaveLength(1);
    expect(sources).toEqual([B.buffer]);
    expect(calls[0]!.lhs.buffer).toBe(A.buffer);
    expect(calls[0]!.rhs.buffer).not.toBe(B.buffer);
    expect(calls[0]!.k).toBe(d * d);
    // B's unit-stride axis l stays innermost in its copy: rhs is row-major (k×n, ld n), the copy moves rows
    expect([calls[0]!.rhs.rowStride, calls[0]!.rhs.colStride]).toEqual([d, 1]);
    expect(got.toArray()).toEqual(naiveDotGeneral(A, B, dd).values);
    // conjugation requested on the candidate to keep (complex): the other operand is kept instead
    const Ac = Tensor.fromArray('c128', [d, d, d], randomValues(seededRandom(1), 'c128', d ** 3)).permute([2, 1, 0]);
    const Bc = Tensor.fromArray('c128', [d, d, d], randomValues(seededRandom(2), 'c128', d ** 3)).permute([2, 1, 0]);
    sources.length = 0;
    const conj = await h.dotGeneral(Ac, Bc, dd, { conjLhs: true });
    expect(sources).toEqual([Ac.buffer]);
    expect(calls.at(-1)!.rhs.buffer).toBe(Bc.buffer);
    expect(calls.at(-1)!.conjLhs || calls.at(-1)!.conjRhs).toBe(false);
    expect(relativeError(conj.toArray() as number[], naiveDotGeneral(Ac, Bc, dd, { conjLhs: true }).values)).toBeLessThan(1e-12);
    // both conjugated: both materialised (conjugation is fused into the copies)
    sources.length = 0;
    await h.dotGeneral(Ac, Bc, dd, { conjLhs: true, conjRhs: true });
    expect(sources).toEqual([Ac.buffer, Bc.buffer]);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('a declined direct plan still retries on both operands canonical (the one-operand path is only for layouts without a direct plan)', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.layout('lhs') : 'run'));
    const { provider: layout, sources } = countedLayout();
    expectProduct(await with_(provider, layout).dotGeneral(a, b, dims));
    expect(calls).toHaveLength(2);
    expect(sources).toEqual([a.buffer, b.buffer]);
  });

  it('property: random storage orders of both operands and random pairings, every contraction dtype, a BLAS-like GEMM provider: one GEMM call, never declined; one operand kept as it is whenever its own axis groups admit it; equal to the reference', async () => {
    const seen = { direct: 0, one: 0, two: 0 };
    const caseArb = fc.record({
      dtype: fc.constantFrom(...CONTRACTION_DTYPES),
      ext: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 4, maxLength: 4 }),
      permL: fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }),
      permR: fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }),
      swapPairs: fc.boolean(),
      conjLhs: fc.boolean(),
      conjRhs: fc.boolean(),
      seed: fc.integer({ min: 1, max: 1 << 30 }),
    });
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ dtype, ext, permL, permR, swapPairs, conjLhs, conjRhs, seed }) => {
        // BLAS's rule: an operand that is neither column- nor row-major is declined as layout(lhs|rhs).
        const { provider, calls } = scriptedGemm((req) =>
          !blasExpressible(req.m, req.k, req.lhs.rowStride, req.lhs.colStride) ? Unsupported.layout('lhs') : !blasExpressible(req.k, req.n, req.rhs.rowStride, req.rhs.colStride) ? Unsupported.layout('rhs') : 'run',
        );
        const { provider: layout, sources } = countedLayout();
        const h = with_(provider, layout);
        const [i, j, k, l] = ext as [number, number, number, number];
        const rand = seededRandom(seed);
        /** A dense tensor of logical shape `shape` stored with its axes in the order `perm` (the first fastest). */
        const stored = (shape: number[], perm: number[]) => {
          const dense = Tensor.fromArray(dtype, perm.map((p) => shape[p]!), randomValues(rand, dtype, shape.reduce((x, y) => x * y, 1)));
          return dense.permute(shape.map((_, ax) => perm.indexOf(ax)));
        };
        const A = stored([i, j, k], permL);
        const B = stored([k, j, l], permR);
        const dd = { contracting: (swapPairs ? [[2, 1], [0, 1]] : [[1, 2], [1, 0]]) as [number[], number[]] };
        const got = await h.dotGeneral(A, B, dd, { conjLhs, conjRhs });
        const want = naiveDotGeneral(A, B, dd, { conjLhs, conjRhs }).values;
        expect(relativeError(got.toArray() as number[], want)).toBeLessThanOrEqual(toleranceFor(dtype));
        // never a second decline; a retry only after a declined direct plan
        expect(calls.length).toBeLessThanOrEqual(2);
        const last = calls.at(-1)!;
        if (sources.length === 1) {
          seen.one++;
          expect(calls).toHaveLength(1);
          const keptLhs = last.lhs.buffer === A.buffer;
          expect(keptLhs || last.rhs.buffer === B.buffer).toBe(true);
          expect(sources).toEqual([keptLhs ? B.buffer : A.buffer]);
          // the kept operand carries no conjugation: it was not requested on it (conjugation of a real dtype is nothing)
          const complex = dtype === 'c64' || dtype === 'c128';
          expect(complex && (keptLhs ? conjLhs : conjRhs)).toBe(false);
          expect(last.conjLhs || last.conjRhs).toBe(false);
        } else if (sources.length === 2) {
          seen.two++;
        } else {
          seen.direct++;
          expect(calls).toHaveLength(1);
        }
        expect(h.bufferPoolStats().outstanding).toBe(0);
      }),
      { numRuns: 120 },
    );
    expect(seen.one).toBeGreaterThan(0);
    expect(seen.two).toBeGreaterThan(0);
    expect(seen.direct).toBeGreaterThan(0);
  });
});
