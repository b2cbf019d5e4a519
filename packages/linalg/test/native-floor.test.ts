// #38 item 6, linear algebra at the native floor — what its benches rely on, tested functionally
// (no timing):
// - bench/breakdown.mjs calls provider-blas's worker kernel on its own thread with the words the
//   provider's own packing makes (`lapackKernelArgs`): those words factor as the la.* call does,
//   bit for bit, and a request the kernels would refuse is refused there too;
// (The drop loop's pool hits at n = 1024 are in drop-loop-reuse.serial.test.ts: they depend on
// how soon a collection finishes, so they run alone.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor, TenferroError } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { linalg, linalgOutputSpecs } from '../src/index.js';
import { spd } from './helpers.js';

const haveBlas = blasStatus().available;
const blasDist = new URL('../node_modules/@tenferro/provider-blas/dist/', import.meta.url);

const FLAGS = Object.freeze({ upper: false, left: true, unitDiagonal: false, full: false, vectors: true, rOnly: false });

describe.skipIf(!haveBlas)("bench/breakdown.mjs's direct native call: provider-blas's own packing (skipped: without provider-blas's OpenBLAS)", () => {
  type Args = { words: Float64Array; buffers: readonly SharedArrayBuffer[] };
  let lapackKernelArgs: (name: string, r: unknown, threads: number) => Args;
  let blasLapack: (args: Args) => void;
  let backend: CpuBackend;
  beforeAll(async () => {
    ({ lapackKernelArgs } = (await import(new URL('lapack-kernels.js', blasDist).href)) as { lapackKernelArgs: typeof lapackKernelArgs });
    ({ blasLapack } = (await import(new URL('kernels/lapack.js', blasDist).href)) as { blasLapack: typeof blasLapack });
    const { loadBlas } = (await import(new URL('native/load.js', blasDist).href)) as { loadBlas: () => { available: boolean; binding: { load(o: object): unknown } } };
    const load = loadBlas();
    expect(load.available).toBe(true);
    load.binding.load({ candidates: [] });
    backend = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
  });
  afterAll(async () => {
    await backend?.close();
  });

  const n = 48;
  const shared = (values: ArrayLike<number>): SharedArrayBuffer => {
    const b = new SharedArrayBuffer(8 * values.length);
    new Float64Array(b).set(values);
    return b;
  };
  /** The request the kernels get, over buffers of this test, at element offsets 3 (outputs 5: not 0, as the pool's). */
  function run(op: 'luFactor' | 'cholesky' | 'solve', a: Float64Array, b?: Float64Array): { out: (Float64Array | Int32Array | undefined)[]; info: number } {
    const cols = op === 'solve' ? 1 : n;
    const specs = linalgOutputSpecs(op, 'f64', n, cols, [], FLAGS);
    const A = shared([0, 0, 0, ...a]);
    const B = b === undefined ? undefined : shared([0, 0, 0, ...b]);
    const outs = specs.map((s) => (s === undefined ? undefined : new SharedArrayBuffer((5 + s[1].reduce((p, e) => p * e, 1)) * (s[0] === 'i32' ? 4 : 8))));
    const info = new Int32Array(new SharedArrayBuffer(16), 4, 1);
    info[0] = -7;
    const operand = (buffer: SharedArrayBuffer) => ({ buffer, offset: 3, rowStride: 1, colStride: n, batchStrides: [] });
    const request = {
      op,
      dtype: 'f64',
      m: n,
      n: cols,
      batch: [],
      flags: FLAGS,
      a: operand(A),
      ...(B === undefined ? {} : { b: operand(B) }),
      out: specs.map((s, o) => (s === undefined ? undefined : { buffer: outs[o]!, offset: 5, dtype: s[0], shape: s[1] })),
      info,
    };
    blasLapack(lapackKernelArgs(op, request, 1));
    return {
      out: specs.map((s, o) => (s === undefined ? undefined : s[0] === 'i32' ? new Int32Array(outs[o]!, 20) : new Float64Array(outs[o]!, 40))),
      info: info[0]!,
    };
  }

  it('luFactor, cholesky and solve: the same results as the la.* call, bit for bit', async () => {
    const a = spd(n);
    const b = new Float64Array(n).map((_, i) => Math.cos(i));
    const la = linalg(backend);
    const A = Tensor.from(a, [n, n]) as Tensor<'f64'>;
    const B = Tensor.from(b, [n, 1]) as Tensor<'f64'>;
    try {
      const lu = await la.luFactor(A);
      const direct = run('luFactor', a);
      expect(direct.info).toBe(0);
      expect(Array.from(direct.out[0]!)).toEqual(lu.lu.toArray());
      expect(Array.from(direct.out[1]!)).toEqual(lu.pivots.toArray());
      lu.lu.dispose();
      lu.pivots.dispose();

      const l = await la.cholesky(A);
      const chol = run('cholesky', a);
      expect(chol.info).toBe(0);
      // la applies its output convention after the kernel (the strict upper triangle zeroed).
      const raw = Array.from(chol.out[0]!).map((x, k) => (k % n < Math.floor(k / n) ? 0 : x));
      expect(raw).toEqual(l.toArray());
      l.dispose();

      const x = await la.solve(A, B);
      const sol = run('solve', a, b);
      expect(sol.info).toBe(0);
      expect(Array.from(sol.out[0]!)).toEqual(x.toArray());
      x.dispose();
    } finally {
      A.dispose();
      B.dispose();
    }
  });

  it('refuses what the kernels refuse, before anything is packed: an unknown op, a wrong output dtype, an output past its buffer', () => {
    const a = shared(spd(4));
    const req = (out: object[]) => ({ op: 'cholesky', dtype: 'f64', m: 4, n: 4, batch: [], flags: FLAGS, a: { buffer: a, offset: 0, rowStride: 1, colStride: 4, batchStrides: [] }, out, info: new Int32Array(new SharedArrayBuffer(4)) });
    const good = { buffer: new SharedArrayBuffer(128), offset: 0, dtype: 'f64', shape: [4, 4] };
    expect(lapackKernelArgs('cholesky', req([good]), 1).words[0]).toBe(0);
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return TenferroError.is(e) ? e.code : `untyped: ${String(e)}`;
      }
      return undefined;
    };
    expect(code(() => lapackKernelArgs('toString', req([good]), 1))).toBe('InvalidArgument');
    expect(code(() => lapackKernelArgs('cholesky', req([{ ...good, dtype: 'f32' }]), 1))).toBe('InvalidArgument');
    expect(code(() => lapackKernelArgs('cholesky', req([{ ...good, offset: 1 }]), 1))).toBe('InvalidArgument');
    expect(code(() => lapackKernelArgs('cholesky', req([{ ...good, shape: [4, 4, 1] }]), 1))).toBe('InvalidArgument');
  });
});
