import { kitExpect as expect, vitestSuite } from './kit-vitest.js';
import { CpuBackend } from '../backend/cpu-backend.js';
import { type TensorOps, ops } from '../backend/ops-facade.js';
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { enforcedThreadLimit } from '../provider/execution-capabilities.js';
import type { CpuProviderOutcome } from '../provider/provider-outcome.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { referenceTensorPrimitivesProvider } from '../provider/reference/reference-tensor-primitives.js';
import { BINARY_DTYPES, BINARY_OPS, REDUCE_DTYPES, REDUCE_OPS, UNARY_DTYPES, UNARY_OPS } from '../provider/tensor-primitive-dtypes.js';
import type { CpuTensorPrimitivesProvider } from '../provider/tensor-primitives.js';
import { DTYPES, DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { reachableSpan } from '../tensor/layout.js';
import { Tensor } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import type { ProviderConformanceCase } from './run-provider-conformance.js';
import { int, seededRandom } from './random-operands.js';
import { randomView } from './random-views.js';
import { peakThreadsDuring } from './thread-census.js';
import { watchedContext } from './watched-context.js';

/** Options of {@link runTensorPrimitivesConformance} and {@link tensorPrimitivesConformanceCases}. */
export interface TensorPrimitivesConformanceOptions {
  /** Backend kind to test under (default: the package's, `faer` for `'any'`). */
  readonly kind?: CpuBackendKind;
  /** Thread budgets to run every case with (default `[1, 2]`). */
  readonly budgets?: readonly number[];
  /** Random cases per operation and budget (default 6). */
  readonly cases?: number;
  readonly seed?: number;
  /** Elements of the tensors the thread census watches (default 2^18). */
  readonly censusSize?: number;
  /** Per-test timeout in ms (default 120 s). */
  readonly timeout?: number;
}

/** Operations whose result must equal the reference exactly (IEEE-exact, integer or selection); the others within {@link primitiveTolerance}. */
const EXACT: ReadonlySet<string> = new Set(['add', 'sub', 'maximum', 'minimum', 'eq', 'lt', 'le', 'gt', 'ge', 'neg', 'conj', 'real', 'imag', 'cast', 'max', 'min', 'argmax', 'argmin']);
/** Exact on real operands only (correctly rounded in IEEE arithmetic); complex ones combine several roundings. */
const EXACT_IF_REAL: ReadonlySet<string> = new Set(['mul', 'div', 'scale', 'sqrt', 'abs']);

/**
 * Relative tolerance of the non-exact operations: 2^-20 for f32/c64 results, 2^-45 for f64/c128 (a few hundred ulps: summation order, FMA, libm).
 *
 * @example
 * ```ts
 * import { primitiveTolerance } from '@tenferro/core/testing';
 *
 * console.log(primitiveTolerance('c64') === 2 ** -20, primitiveTolerance('f64') === 2 ** -45); // prints: true true
 * ```
 */
export function primitiveTolerance(dtype: DType): number {
  return dtype === 'f32' || dtype === 'c64' ? 2 ** -20 : 2 ** -45;
}

interface Recorder {
  /** Every call's outcome, with whether its declined calls left the output as it was. */
  readonly calls: { readonly op: string; readonly dtype: DType; readonly executed: boolean; readonly untouched: boolean }[];
  readonly lanes: Set<number>;
  watching: boolean;
}

function bytesOf(d: TensorDescriptor): Uint8Array {
  const span = reachableSpan(d);
  if (span === undefined) return new Uint8Array(0);
  const b = DTYPE_INFO[d.dtype].bytes;
  return new Uint8Array(d.buffer, span.first * b, (span.last - span.first + 1) * b).slice();
}

/** `p` with every call recorded: its outcome, whether a decline left the output untouched, the pool lanes it used. */
function recording(p: CpuTensorPrimitivesProvider, rec: Recorder): CpuTensorPrimitivesProvider {
  const wrap =
    <R extends { readonly op: string; readonly out: TensorDescriptor }>(call: (ctx: CpuExecutionContext, r: R) => Promise<CpuProviderOutcome>, dtypeOf: (r: R) => DType) =>
    async (ctx: CpuExecutionContext, r: R): Promise<CpuProviderOutcome> => {
      const before = bytesOf(r.out);
      const outcome = await call(watchedContext(ctx, (lane) => void (rec.watching && rec.lanes.add(lane))), r);
      const after = outcome.executed ? before : bytesOf(r.out);
      rec.calls.push({ op: r.op, dtype: dtypeOf(r), executed: outcome.executed, untouched: after.every((x, i) => x === before[i]) });
      return outcome;
    };
  return {
    name: p.name,
    executionCapabilities: () => p.executionCapabilities(),
    ...(p.declaredSupport === undefined ? {} : { declaredSupport: () => p.declaredSupport!() }),
    binary: wrap((c, r) => p.binary(c, r), (r) => r.lhs.dtype),
    unary: wrap((c, r) => p.unary(c, r), (r) => r.src.dtype),
    reduce: wrap((c, r) => p.reduce(c, r), (r) => r.src.dtype),
  };
}

type AnyOp = (...args: unknown[]) => Promise<Tensor>;

/**
 * The conformance cases of the tensor-primitives slot, unregistered (run them with `await c.run()`):
 * every operation on every dtype it is defined for, on random strided, permuted, stepped and
 * broadcast views of rank 0–4 into fresh and guard-banded caller-owned outputs, against core's
 * reference implementation (exact for IEEE-exact, integer, selection and layout results; within
 * {@link primitiveTolerance} otherwise); every request of a declared dtype executed, every decline
 * before writing; and no more threads or pool lanes than the declared controls allow.
 *
 * @example
 * ```ts
 * import { referenceGemmProvider, referenceLayoutProvider, referenceTensorPrimitivesProvider } from '@tenferro/core';
 * import { tensorPrimitivesConformanceCases } from '@tenferro/core/testing';
 *
 * const pkg = { kind: 'faer', name: 'reference', gemm: referenceGemmProvider, layoutTransform: referenceLayoutProvider, tensorPrimitives: referenceTensorPrimitivesProvider } as const;
 * const cases = tensorPrimitivesConformanceCases(() => pkg, { budgets: [1], cases: 1 });
 * const outcome = await cases[0]!.run(); // throws when the provider does not conform
 * console.log(cases.length > 1, outcome === undefined || 'skipped' in outcome); // prints: true true
 * ```
 */
export function tensorPrimitivesConformanceCases(factory: () => CpuProviderPackage | Promise<CpuProviderPackage>, options: TensorPrimitivesConformanceOptions = {}): ProviderConformanceCase[] {
  const budgets = options.budgets ?? [1, 2];
  const cases = options.cases ?? 6;
  const seed = options.seed ?? 0x7e91;
  const all: ProviderConformanceCase[] = [];
  const add = (name: string, run: ProviderConformanceCase['run']) => void all.push(Object.freeze({ name, run }));

  const withBackend = async <R>(threads: number, rec: Recorder, fn: (b: CpuBackend, tested: TensorOps, oracle: TensorOps, declared: readonly DType[]) => Promise<R>): Promise<R | { skipped: string }> => {
    const pkg = await factory();
    if (pkg.tensorPrimitives === undefined) return { skipped: `${pkg.name} has no tensorPrimitives provider` };
    const declared = pkg.tensorPrimitives.declaredSupport?.().dtypes ?? DTYPES;
    const wrapped = { ...pkg, tensorPrimitives: recording(pkg.tensorPrimitives, rec) };
    const b = await CpuBackend.create({ kind: options.kind ?? (pkg.kind === 'any' ? 'faer' : pkg.kind), threads, providers: [wrapped] });
    try {
      const oracle = b.withProviderBundle(b.providerBundle().toBuilder().tensorPrimitivesProvider(referenceTensorPrimitivesProvider).build());
      return await fn(b, ops(b), ops(oracle), declared);
    } finally {
      await b.close();
    }
  };

  for (const threads of budgets) {
    add(`tensor primitives match the reference on every dtype, view and output kind; declared dtypes execute, declines leave the output untouched (budget ${threads})`, async () => {
      const rec: Recorder = { calls: [], lanes: new Set(), watching: false };
      const rand = seededRandom(seed + threads);
      const result = await withBackend(threads, rec, async (_b, tested, oracle, declared) => {
        const run = async (name: string, dtype: DType, outDType: DType, shape: readonly number[], call: (o: TensorOps, opt: object | undefined) => Promise<Tensor>) => {
          const want = await call(oracle, undefined);
          const got = await call(tested, undefined);
          const out = randomView(rand, outDType, want.shape, { values: (_r, d, n) => Array.from({ length: n * DTYPE_INFO[d].components }, () => (d === 'i64' ? 55n : d === 'bool' ? 1 : 55)) });
          const base = new Uint8Array(out.buffer).slice();
          const into = await call(tested, { out });
          const label = `${name} ${dtype} [${shape.join(', ')}]`;
          for (const t of [got, into]) {
            expect(t.shape, label).toEqual(want.shape);
            expect(t.dtype, label).toBe(want.dtype);
            compare(name, dtype, t, want, label);
          }
          // Guard bands: nothing outside the output view was written.
          const after = new Uint8Array(out.buffer);
          const inside = new Set<number>();
          const bytes = DTYPE_INFO[outDType].bytes;
          const size = out.shape.reduce((a, e) => a * e, 1);
          for (let p = 0; p < size; p++) {
            let e = out.offset;
            let q = p;
            out.shape.forEach((ext, k) => {
              e += (q % ext) * out.strides[k]!;
              q = Math.floor(q / ext);
            });
            for (let x = 0; x < bytes; x++) inside.add(e * bytes + x);
          }
          for (let x = 0; x < base.length; x++) if (!inside.has(x)) expect(after[x], `${label}: byte ${x} outside the output view`).toBe(base[x]);
        };
        const shape = () => Array.from({ length: int(rand, 0, 4) }, () => int(rand, 1, 4));
        for (let c = 0; c < cases; c++) {
          for (const op of BINARY_OPS) {
            for (const dtype of BINARY_DTYPES[op]) {
              const s = shape();
              const lhsShape = s.slice(0, int(rand, 0, s.length)).map((e) => (rand() < 0.3 ? 1 : e));
              const lhs = randomView(rand, dtype, lhsShape, { broadcast: true });
              const rhs = randomView(rand, dtype, s, { broadcast: true });
              const outDType = ['eq', 'lt', 'le', 'gt', 'ge'].includes(op) ? 'bool' : dtype;
              await run(op, dtype, outDType, s, (o, opt) => (o[op] as AnyOp)(lhs, rhs, opt));
            }
          }
          for (const op of UNARY_OPS) {
            for (const dtype of UNARY_DTYPES[op]) {
              const s = shape();
              const src = randomView(rand, dtype, s, { broadcast: true });
              const complex = DTYPE_INFO[dtype].complex;
              const target = DTYPES[int(rand, 0, DTYPES.length - 1)]!;
              const outDType = op === 'cast' ? target : ['abs', 'real', 'imag'].includes(op) && complex ? (dtype === 'c64' ? 'f32' : 'f64') : dtype;
              const alpha = complex ? [int(rand, -3, 3) / 2, int(rand, -3, 3) / 2] : int(rand, -3, 3);
              const extra = op === 'scale' ? [alpha] : op === 'cast' ? [target] : [];
              await run(op, dtype, outDType, s, (o, opt) => (o[op as 'neg'] as AnyOp)(src, ...extra, opt));
            }
          }
          for (const op of REDUCE_OPS) {
            for (const dtype of REDUCE_DTYPES[op]) {
              const s = shape();
              const src = randomView(rand, dtype, s, { broadcast: true });
              const axes = s.map((_, t) => t).filter(() => rand() < 0.5);
              const outDType = op === 'argmax' || op === 'argmin' ? 'i64' : op === 'norm' && DTYPE_INFO[dtype].complex ? (dtype === 'c64' ? 'f32' : 'f64') : dtype;
              const keepDims = rand() < 0.5;
              await run(op, dtype, outDType, s, (o, opt) => (o[op] as AnyOp)(src, { axes, keepDims, ...opt }));
            }
          }
        }
        return declared;
      });
      if (!Array.isArray(result)) return result as { skipped: string };
      const declared = result as readonly DType[];
      for (const call of rec.calls) {
        if (declared.includes(call.dtype)) expect(call.executed, `${call.op} of declared dtype ${call.dtype} was declined`).toBe(true);
        if (!call.executed) expect(call.untouched, `${call.op} ${call.dtype} wrote the output and then declined`).toBe(true);
      }
      return undefined;
    });
  }

  add('tensor primitives use no more threads or pool lanes than their declared controls allow', async () => {
    const rec: Recorder = { calls: [], lanes: new Set(), watching: false };
    const threads = budgets[budgets.length - 1] ?? 1;
    const result = await withBackend(threads, rec, async (b, tested) => {
      const n = options.censusSize ?? 1 << 18;
      const x = Tensor.fromArray('f64', [n], Array.from({ length: n }, (_, i) => i % 7));
      await tested.add(x, x); // warm
      rec.watching = true;
      const { newThreads } = await peakThreadsDuring(async () => {
        await tested.add(x, x);
        await tested.sum(x);
        await tested.exp(x);
      });
      rec.watching = false;
      const caps = b.providerBundle().capabilities('tensorPrimitives')!;
      const limit = caps.placement === 'callingThread' ? 1 : (enforcedThreadLimit(caps, b.numThreads()) ?? b.numThreads());
      expect(rec.lanes.size, `pool lanes used by a ${caps.threadCount}/${caps.placement} tensorPrimitives provider`).toBeLessThanOrEqual(limit);
      expect(newThreads.length, 'threads created by a tensorPrimitives provider on engine workers').toBe(0);
      return true;
    });
    return result === true ? undefined : (result as { skipped: string });
  });

  return all;
}

function compare(op: string, src: DType, got: Tensor, want: Tensor, label: string): void {
  const g = got.toArray() as (number | bigint)[];
  const w = want.toArray() as (number | bigint)[];
  expect(g.length, label).toBe(w.length);
  const exact = EXACT.has(op) || !DTYPE_INFO[want.dtype].float || (EXACT_IF_REAL.has(op) && !DTYPE_INFO[src].complex);
  const tol = primitiveTolerance(want.dtype);
  for (let i = 0; i < w.length; i++) {
    const a = g[i]!;
    const b = w[i]!;
    if (exact || typeof b !== 'number') {
      if (!Object.is(a, b) && !(typeof a === 'number' && typeof b === 'number' && a === b)) expect(a, `${label}: element ${i}`).toBe(b);
      continue;
    }
    const x = a as number;
    if (Number.isNaN(b)) expect(Number.isNaN(x), `${label}: element ${i} should be NaN`).toBe(true);
    else if (!Number.isFinite(b)) expect(x, `${label}: element ${i}`).toBe(b);
    else expect(Math.abs(x - b), `${label}: element ${i}: ${x} vs ${b}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b)));
  }
}

/**
 * Register {@link tensorPrimitivesConformanceCases} as vitest tests (a provider package's own test file calls this).
 *
 * It registers a vitest suite (`describe`/`it`), so it runs only in a vitest test file — no
 * standalone `@example`; {@link tensorPrimitivesConformanceCases} has one. In a test file:
 *
 * ```ts
 * import { runTensorPrimitivesConformance } from '@tenferro/core/testing';
 * import { createMyProvider } from '../src/index.js';
 *
 * runTensorPrimitivesConformance(() => createMyProvider(), { budgets: [1, 2] });
 * ```
 */
export function runTensorPrimitivesConformance(factory: () => CpuProviderPackage | Promise<CpuProviderPackage>, options: TensorPrimitivesConformanceOptions = {}): void {
  const timeout = options.timeout ?? 120_000;
  const { describe, it } = vitestSuite('runTensorPrimitivesConformance');
  describe('tensor-primitives conformance', () => {
    for (const c of tensorPrimitivesConformanceCases(factory, options)) {
      it(
        c.name,
        async (context) => {
          const outcome = await c.run();
          if (outcome !== undefined) context.skip(outcome.skipped);
        },
        timeout,
      );
    }
  });
}
