import { describe, expect, it } from 'vitest';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { CpuBackend } from '../backend/cpu-backend.js';
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuGemmRequest } from '../provider/gemm-request.js';
import { CpuProviderBundle } from '../provider/provider-bundle.js';
import { CONTRACTION_DTYPES, DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { Tensor } from '../tensor/tensor.js';
import { naiveDotGeneral, relativeError, toleranceFor } from './naive-dot-general.js';
import { int, randomOperand, randomValues, seededRandom } from './random-operands.js';
import { peakThreadsDuring } from './thread-census.js';

export interface ProviderConformanceOptions {
  /** Backend kind to test under (default: the package's). */
  readonly kind?: CpuBackendKind;
  /** Thread budgets to run every case with (default `[1, 2]`). */
  readonly budgets?: readonly number[];
  /** Random cases per dtype and budget (default 10). */
  readonly cases?: number;
  readonly seed?: number;
  /** Square size of the GEMM watched by the thread census (default 96). */
  readonly censusSize?: number;
  /** Per-test timeout in ms (default 60 s). */
  readonly timeout?: number;
}

/**
 * The one conformance suite every provider package runs in its own tests (vitest). Cases are
 * chosen from the provider's **declared** support and capabilities: results against the oracle
 * within dtype tolerances, guard bands around output views, "unsupported leaves the output
 * byte-identical", and thread-control honesty by a census of `/proc/self/task`.
 */
export function runProviderConformance(factory: () => CpuProviderPackage | Promise<CpuProviderPackage>, options: ProviderConformanceOptions = {}): void {
  const budgets = options.budgets ?? [1, 2];
  const cases = options.cases ?? 10;
  const seed = options.seed ?? 0x7e4f;
  const timeout = options.timeout ?? 60_000;

  describe('provider conformance', () => {
    const withBackend = async <R>(threads: number, fn: (b: CpuBackend, pkg: CpuProviderPackage) => Promise<R>): Promise<R> => {
      const pkg = await factory();
      const backend = await CpuBackend.create({ kind: options.kind ?? pkg.kind, threads, providers: [pkg] });
      try {
        return await fn(backend, pkg);
      } finally {
        await backend.close();
      }
    };
    const declared = async () => {
      const pkg = await factory();
      const gemm = pkg.gemm;
      if (gemm === undefined) throw new Error(`${pkg.name} has no GEMM provider to test`);
      const support = gemm.declaredSupport?.() ?? { dtypes: CONTRACTION_DTYPES, stridedOperands: true, conjugation: true };
      return { pkg, gemm, support };
    };

    it('declares well-formed capabilities, sampled into a bundle that validates on this machine', async () => {
      const { pkg, gemm, support } = await declared();
      expect(typeof pkg.name).toBe('string');
      const bundle = CpuProviderBundle.customBuilder().gemmProvider(gemm).layoutTransformProvider(pkg.layoutTransform ?? (await import('../provider/reference/reference-providers.js')).referenceLayoutProvider).build();
      expect(bundle.capabilities('gemm')).toBeDefined();
      for (const d of support.dtypes) expect(CONTRACTION_DTYPES).toContain(d);
      const backend = await CpuBackend.create({ kind: options.kind ?? pkg.kind, threads: 1, providers: [pkg] });
      try {
        expect(backend.providerBundle().gemm).toBe(gemm);
      } finally {
        await backend.close();
      }
    }, timeout);

    for (const threads of budgets) {
      it(`matches the oracle on every declared dtype and layout (budget ${threads})`, async () => {
        const { support } = await declared();
        const rand = seededRandom(seed + threads);
        await withBackend(threads, async (b) => {
          for (const dtype of support.dtypes) {
            for (let c = 0; c < cases; c++) {
              const batched = c % 3 === 2;
              const [m, n, k, bsz] = [int(rand, 1, 19), int(rand, 1, 19), int(rand, 1, 23), int(rand, 1, 3)];
              const lhsShape = batched ? [m, k, bsz] : [m, k];
              const rhsShape = batched ? [k, n, bsz] : [k, n];
              const lhs = randomOperand(rand, dtype, lhsShape, support.stridedOperands);
              const rhs = randomOperand(rand, dtype, rhsShape, support.stridedOperands);
              const complex = DTYPE_INFO[dtype].complex;
              const conj = complex && support.conjugation ? { conjLhs: rand() < 0.5, conjRhs: rand() < 0.5 } : {};
              const dims = batched ? { contracting: [[1], [0]] as const, batch: [[2], [2]] as const } : { contracting: [[1], [0]] as const };
              const got = await b.dotGeneral(lhs, rhs, dims as never, conj);
              const want = naiveDotGeneral(lhs, rhs, dims as never, conj);
              expect(got.shape).toEqual(want.shape);
              const err = relativeError((got.toArray() as number[]).map(Number), want.values);
              expect(err, `${dtype} m=${m} n=${n} k=${k}${batched ? ` batch=${bsz}` : ''} ${JSON.stringify(conj)}`).toBeLessThanOrEqual(toleranceFor(dtype));
            }
          }
        });
      }, timeout);
    }

    it('never writes outside the output view (guard bands), with alpha and beta', async () => {
      const { support } = await declared();
      const rand = seededRandom(seed ^ 0x55);
      await withBackend(budgets[budgets.length - 1] ?? 1, async (b) => {
        for (const dtype of support.dtypes) {
          const [m, n, k] = [int(rand, 2, 17), int(rand, 2, 17), int(rand, 1, 17)];
          const lhs = randomOperand(rand, dtype, [m, k], support.stridedOperands);
          const rhs = randomOperand(rand, dtype, [k, n], support.stridedOperands);
          const pad = 3;
          const components = DTYPE_INFO[dtype].components;
          const base = Tensor.fromArray(dtype, [m + 2 * pad, n + 2 * pad], Array.from({ length: (m + 2 * pad) * (n + 2 * pad) * components }, () => 12345.5));
          const out = base.slice([pad, pad + m], [pad, pad + n]);
          const before = new Uint8Array(base.buffer.slice(0));
          const complex = DTYPE_INFO[dtype].complex;
          const alpha = complex ? ([0.5, -1] as const) : 0.5;
          const beta = complex ? ([2, 0.25] as const) : 2;
          await b.dotGeneralInto(out, lhs, rhs, { contracting: [[1], [0]] }, { alpha, beta });
          const prod = naiveDotGeneral(lhs, rhs, { contracting: [[1], [0]] }).values;
          const expected = prod.map(() => 0);
          for (let e = 0; e < m * n; e++) {
            if (!complex) expected[e] = 0.5 * prod[e]! + 2 * 12345.5;
            else {
              const [pr, pi] = [prod[2 * e]!, prod[2 * e + 1]!];
              expected[2 * e] = 0.5 * pr + 1 * pi + (2 * 12345.5 - 0.25 * 12345.5);
              expected[2 * e + 1] = 0.5 * pi - 1 * pr + (2 * 12345.5 + 0.25 * 12345.5);
            }
          }
          expect(relativeError((out.toArray() as number[]).map(Number), expected)).toBeLessThanOrEqual(toleranceFor(dtype));
          const after = new Uint8Array(base.buffer);
          const elementBytes = DTYPE_INFO[dtype].bytes;
          const rows = m + 2 * pad;
          for (let j = 0; j < n + 2 * pad; j++) {
            for (let i = 0; i < rows; i++) {
              const inside = i >= pad && i < pad + m && j >= pad && j < pad + n;
              if (inside) continue;
              const at = (j * rows + i) * elementBytes;
              for (let q = 0; q < elementBytes; q++) expect(after[at + q], `${dtype} guard byte at (${i}, ${j})`).toBe(before[at + q]);
            }
          }
        }
      });
    }, timeout);

    it('with beta = 0 overwrites every output element without reading it, when it declares so', async () => {
      const { support } = await declared();
      if (support.overwritesOutput !== true) return;
      const rand = seededRandom(seed ^ 0x77);
      await withBackend(budgets[budgets.length - 1] ?? 1, async (b) => {
        for (const dtype of support.dtypes) {
          for (const [m, n, k] of [[int(rand, 1, 33), int(rand, 1, 33), int(rand, 1, 33)], [3, 5, 0]] as const) {
            const lhs = randomOperand(rand, dtype, [m, k], support.stridedOperands);
            const rhs = randomOperand(rand, dtype, [k, n], support.stridedOperands);
            const out = Tensor.fromArray(dtype, [m, n], Array.from({ length: m * n * DTYPE_INFO[dtype].components }, () => Number.NaN));
            await b.dotGeneralInto(out, lhs, rhs, { contracting: [[1], [0]] }, { beta: 0 });
            const want = naiveDotGeneral(lhs, rhs, { contracting: [[1], [0]] }).values;
            expect(relativeError((out.toArray() as number[]).map(Number), want), `${dtype} m=${m} n=${n} k=${k}`).toBeLessThanOrEqual(toleranceFor(dtype));
          }
        }
      });
    }, timeout);

    it('declines what it does not declare, leaving the output byte-identical', async () => {
      const { gemm, support } = await declared();
      await withBackend(1, async (b) => {
        const requestFor = (dtype: DType, conj: boolean, strided: boolean): { req: CpuGemmRequest; out: Uint8Array; buffer: SharedArrayBuffer } => {
          const m = 4;
          const mk = (n: number) => {
            const t = Tensor.fromArray(dtype, [n], randomValues(seededRandom(n), dtype, n));
            return t.buffer;
          };
          const lhs = mk(64);
          const rhs = mk(64);
          const out = mk(16);
          const op = (buffer: SharedArrayBuffer, s: number) => ({ buffer, offset: 0, rowStride: s, colStride: s * m, batchStrides: [] });
          return {
            req: {
              dtype, m, n: 4, k: 4, batch: [],
              lhs: op(lhs, strided ? 2 : 1), rhs: op(rhs, strided ? 2 : 1), out: op(out, 1),
              alpha: DTYPE_INFO[dtype].complex ? [1, 0] : 1, beta: DTYPE_INFO[dtype].complex ? [0, 0] : 0,
              conjLhs: conj, conjRhs: false,
            },
            out: new Uint8Array(out.slice(0)),
            buffer: out,
          };
        };
        const probes: { dtype: DType; conj: boolean; strided: boolean; why: string }[] = [];
        for (const dtype of CONTRACTION_DTYPES) if (!support.dtypes.includes(dtype)) probes.push({ dtype, conj: false, strided: false, why: 'undeclared dtype' });
        const complexDeclared = support.dtypes.find((d) => DTYPE_INFO[d].complex);
        if (!support.conjugation && complexDeclared) probes.push({ dtype: complexDeclared, conj: true, strided: false, why: 'conjugation' });
        if (!support.stridedOperands && support.dtypes[0]) probes.push({ dtype: support.dtypes[0], conj: false, strided: true, why: 'non-unit row stride' });
        for (const p of probes) {
          const { req, out, buffer } = requestFor(p.dtype, p.conj, p.strided);
          const outcome = await b.install((ctx) => gemm.gemm(ctx, req));
          expect(outcome.executed, p.why).toBe(false);
          expect(new Uint8Array(buffer), p.why).toEqual(out);
        }
      });
    }, timeout);

    it('creates no more threads than its declared thread control allows', async () => {
      const { gemm, support } = await declared();
      const caps = gemm.executionCapabilities();
      const size = options.censusSize ?? 96;
      const budget = budgets[budgets.length - 1] ?? 1;
      await withBackend(budget, async (b) => {
        const dtype = support.dtypes.includes('f64') ? 'f64' : support.dtypes[0]!;
        const lhs = Tensor.fromArray(dtype, [size, size], randomValues(seededRandom(1), dtype, size * size));
        const rhs = Tensor.fromArray(dtype, [size, size], randomValues(seededRandom(2), dtype, size * size));
        await b.matmul(lhs, rhs); // warm: lazily loaded runtimes start their pools here
        const { newThreads } = await peakThreadsDuring(() => b.matmul(lhs, rhs));
        const allowed = caps.placement === 'externalWorkers' ? (caps.threadCount === 'globalOrUncontrolled' ? Infinity : Math.max(0, budget - 1)) : 0;
        expect(newThreads.length, `threads created during a GEMM by a ${caps.threadCount}/${caps.placement} provider`).toBeLessThanOrEqual(allowed);
      });
    }, timeout);
  });
}
