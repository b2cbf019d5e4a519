import { kitExpect as expect, vitestSuite } from './kit-vitest.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { CpuBackend } from '../backend/cpu-backend.js';
import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { watchedContext } from './watched-context.js';
import type { CpuGemmProvider, DeclaredSupport } from '../provider/cpu-providers.js';
import { type CpuProviderExecutionCapabilities, enforcedThreadLimit } from '../provider/execution-capabilities.js';
import type { CpuGemmRequest, GemmOperand } from '../provider/gemm-request.js';
import { CpuProviderBundle } from '../provider/provider-bundle.js';
import { CONTRACTION_DTYPES, DTYPE_INFO, type DType, type Scalar } from '../tensor/dtype.js';
import { Tensor } from '../tensor/tensor.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { GemmJob } from '../contraction/validate-grouped-gemm.js';
import { expectedGroupedJob } from './grouped-gemm-oracle.js';
import { naiveDotGeneral, relativeError, toleranceFor } from './naive-dot-general.js';
import { int, randomOperand, randomValues, seededRandom } from './random-operands.js';
import { peakThreadsDuring } from './thread-census.js';

/** Options of {@link runProviderConformance} and {@link providerConformanceCases}. */
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
  /**
   * How many threads the provider's runtime says it runs with (for a BLAS, e.g. OpenBLAS's
   * `openblas_get_num_threads()`), asked when the census runs. Required when the GEMM provider's
   * thread control is `globalOrUncontrolled`: tenferro cannot bound such a provider, so the census
   * holds it to what its runtime reports instead of letting it create any number of threads.
   */
  readonly runtimeThreads?: () => number | Promise<number>;
}

/**
 * One case of the conformance suite as a plain function: it resolves when the provider passes,
 * rejects with the failed assertion otherwise, and resolves to `{ skipped }` when the case does
 * not apply to what the provider declares. `runProviderConformance` registers each as a vitest
 * test; tests of the kit itself (or of a deliberately broken provider) can run them directly.
 */
/** One conformance case: a test name and the check itself. */
export interface ProviderConformanceCase {
  /** What the case checks (a test name). */
  readonly name: string;
  /**
   * Run the case: resolves (to `{ skipped }` when it does not apply here, e.g. too few CPUs) when
   * the provider conforms; throws otherwise.
   *
   * @example
   * ```ts
   * import { referenceGemmProvider, referenceLayoutProvider } from '@tenferro/core';
   * import { providerConformanceCases } from '@tenferro/core/testing';
   *
   * const cases = providerConformanceCases(() => ({ kind: 'faer', name: 'reference', gemm: referenceGemmProvider, layoutTransform: referenceLayoutProvider }), { budgets: [1], cases: 1 });
   * const outcome = await cases[0]!.run(); // throws when the provider does not conform
   * console.log(outcome === undefined || 'skipped' in outcome); // prints: true
   * ```
   */
  run(): Promise<void | { readonly skipped: string }>;
}

/**
 * The one conformance suite every provider package runs in its own tests (vitest). Cases are
 * chosen from the provider's **declared** support and capabilities: results against the oracle
 * within dtype tolerances, guard bands around output views, every declared request executed and
 * every undeclared one declined with the output byte-identical, every job of a grouped GEMM run
 * exactly once on both scheduling paths (R110: engine-scheduled and provider-owned, the provider's
 * `groupedGemm` and its ledger audited when it has one), and thread-control honesty — the
 * threads created (a census of `/proc/self/task`) and the pool lanes used during a GEMM, against
 * what its thread and placement controls allow.
 *
 * It registers a vitest suite (`describe`/`it`), so it runs only in a vitest test file — no
 * standalone `@example`; {@link providerConformanceCases} has one. In `test/conformance.test.ts`:
 *
 * ```ts
 * import { runProviderConformance } from '@tenferro/core/testing';
 * import { createMyProvider } from '../src/index.js';
 *
 * runProviderConformance(() => createMyProvider(), { budgets: [1, 2] });
 * ```
 */
export function runProviderConformance(factory: () => CpuProviderPackage | Promise<CpuProviderPackage>, options: ProviderConformanceOptions = {}): void {
  const timeout = options.timeout ?? 60_000;
  const { describe, it } = vitestSuite('runProviderConformance');
  describe('provider conformance', () => {
    for (const c of providerConformanceCases(factory, options)) {
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

/**
 * The cases of {@link runProviderConformance}, unregistered: run them yourself with `await c.run()`.
 *
 * @example
 * ```ts
 * import { referenceGemmProvider, referenceLayoutProvider } from '@tenferro/core';
 * import { providerConformanceCases } from '@tenferro/core/testing';
 *
 * const pkg = { kind: 'faer', name: 'reference', gemm: referenceGemmProvider, layoutTransform: referenceLayoutProvider } as const;
 * const cases = providerConformanceCases(() => pkg, { budgets: [1], cases: 1 });
 * // In a vitest file: for (const c of cases) it(c.name, async () => void (await c.run()));
 * const outcome = await cases[0]!.run(); // throws when the provider does not conform
 * console.log(cases.length > 1, outcome === undefined || 'skipped' in outcome); // prints: true true
 * ```
 */
export function providerConformanceCases(factory: () => CpuProviderPackage | Promise<CpuProviderPackage>, options: ProviderConformanceOptions = {}): ProviderConformanceCase[] {
  const budgets = options.budgets ?? [1, 2];
  const cases = options.cases ?? 10;
  const seed = options.seed ?? 0x7e4f;
  const largest = budgets[budgets.length - 1] ?? 1;

  const withBackend = async <R>(threads: number, fn: (b: CpuBackend, pkg: CpuProviderPackage) => Promise<R>, wrap?: (pkg: CpuProviderPackage) => CpuProviderPackage): Promise<R> => {
    const original = await factory();
    const pkg = wrap === undefined ? original : wrap(original);
    const backend = await CpuBackend.create({ kind: options.kind ?? (pkg.kind === 'any' ? 'faer' : pkg.kind), threads, providers: [pkg] });
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
    const support: DeclaredSupport = gemm.declaredSupport?.() ?? { dtypes: CONTRACTION_DTYPES, stridedOperands: true, conjugation: true };
    return { pkg, gemm, support };
  };

  const all: ProviderConformanceCase[] = [];
  const add = (name: string, run: ProviderConformanceCase['run']) => void all.push(Object.freeze({ name, run }));

  add('declares well-formed capabilities, sampled into a bundle that validates on this machine', async () => {
    const { pkg, gemm, support } = await declared();
    expect(typeof pkg.name).toBe('string');
    const bundle = CpuProviderBundle.customBuilder().gemmProvider(gemm).layoutTransformProvider(pkg.layoutTransform ?? (await import('../provider/reference/reference-providers.js')).referenceLayoutProvider).build();
    expect(bundle.capabilities('gemm')).toBeDefined();
    for (const d of support.dtypes) expect(CONTRACTION_DTYPES).toContain(d);
    const backend = await CpuBackend.create({ kind: options.kind ?? (pkg.kind === 'any' ? 'faer' : pkg.kind), threads: 1, providers: [pkg] });
    try {
      expect(backend.providerBundle().gemm).toBe(gemm);
    } finally {
      await backend.close();
    }
  });

  for (const threads of budgets) {
    add(`matches the oracle on every declared dtype and layout (budget ${threads})`, async () => {
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
    });
  }

  add('never writes outside the output view (guard bands), with alpha and beta', async () => {
    const { support } = await declared();
    const rand = seededRandom(seed ^ 0x55);
    await withBackend(largest, async (b) => {
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
            const at = (base.offset + j * rows + i) * elementBytes;
            for (let q = 0; q < elementBytes; q++) expect(after[at + q], `${dtype} guard byte at (${i}, ${j})`).toBe(before[at + q]);
          }
        }
      }
    });
  });

  add('with beta = 0 overwrites every output element without reading it, when it declares so', async () => {
    const { support } = await declared();
    if (support.overwritesOutput !== true) return { skipped: 'the provider does not declare overwritesOutput: core zero-fills its fresh outputs' };
    const rand = seededRandom(seed ^ 0x77);
    await withBackend(largest, async (b) => {
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
    return undefined;
  });

  add('executes every declared request and declines every undeclared one, leaving the output byte-identical', async () => {
    const { gemm, support } = await declared();
    // Every probe of the space (dtype × conjugation × strided operands): a request inside what the
    // provider declares must execute and equal the oracle; one outside must be declined before
    // anything is written. So the case checks something whatever the provider declares.
    const probes: { dtype: DType; conj: boolean; strided: boolean }[] = [];
    for (const dtype of CONTRACTION_DTYPES) {
      for (const conj of DTYPE_INFO[dtype].complex ? [false, true] : [false]) {
        for (const strided of [false, true]) probes.push({ dtype, conj, strided });
      }
    }
    const isDeclared = (p: (typeof probes)[number]) => support.dtypes.includes(p.dtype) && (!p.conj || support.conjugation) && (!p.strided || support.stridedOperands);
    expect(probes.some(isDeclared), 'the provider declares no request at all').toBe(true);
    await withBackend(1, async (b) => {
      for (const [i, p] of probes.entries()) {
        const why = `${p.dtype}${p.conj ? ', conjugated' : ''}${p.strided ? ', non-unit row stride' : ''} (${isDeclared(p) ? 'declared' : 'not declared'})`;
        const { req, outBuffer } = probeRequest(p.dtype, p.conj, p.strided, seed + i);
        const before = new Uint8Array(outBuffer.slice(0));
        const outcome = await b.install((ctx) => gemm.gemm(ctx, req));
        if (isDeclared(p)) {
          expect(outcome.executed, why).toBe(true);
          expect(relativeError(readOperand(req.dtype, req.out, req.m, req.n), naiveGemm(req)), why).toBeLessThanOrEqual(toleranceFor(p.dtype));
        } else {
          expect(outcome.executed, why).toBe(false);
          expect(new Uint8Array(outBuffer), why).toEqual(before);
        }
      }
    });
  });

  for (const threads of budgets) {
    add(`sums over summed axes when it declares summedAxes (else is never sent any), equal to the oracle — requests and dot-generals (budget ${threads})`, async () => {
      const { gemm, support } = await declared();
      const rand = seededRandom(seed ^ (0x5e3 + threads));
      // A dot-general whose contracting axes do not fuse into one K on row-major operands:
      // C[i,l] = Σ_{j,k} A[i,j,k]·B[k,j,l], which core sends as k fused, j summed — to a provider
      // that declares summedAxes; any other gets plain requests (the canonical retry) (#39: this
      // case ran nowhere for such providers; now it checks that promise).
      const summedDotGeneral = async (b: CpuBackend, dtype: DType) => {
        const [d1, d2, d3] = [int(rand, 2, 12), int(rand, 16, 20), int(rand, 2, 12)];
        const rowMajor = (shape: number[]) => Tensor.fromArray(dtype, [...shape].reverse(), randomValues(rand, dtype, shape[0]! * shape[1]! * shape[2]!)).permute([2, 1, 0]);
        const A = rowMajor([d1, 3, d2]);
        const B = rowMajor([d2, 3, d3]);
        const dims = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
        const got = await b.dotGeneral(A, B, dims);
        expect(relativeError((got.toArray() as number[]).map(Number), naiveDotGeneral(A, B, dims).values), `${dtype} dot-general`).toBeLessThanOrEqual(toleranceFor(dtype));
      };
      if (support.summedAxes !== true) {
        const requests: CpuGemmRequest[] = [];
        await withBackend(
          threads,
          async (b) => {
            for (const dtype of support.dtypes) await summedDotGeneral(b, dtype);
          },
          (pkg) => ({ ...pkg, gemm: recordRequests(pkg.gemm!, requests) }),
        );
        expect(requests.length, 'the dot-generals reached the provider').toBeGreaterThan(0);
        expect(requests.filter((r) => r.summed !== undefined).map((r) => `${r.dtype} m=${r.m} n=${r.n} k=${r.k}`), 'requests with summed axes sent to a provider that does not declare summedAxes').toEqual([]);
        return undefined;
      }
      await withBackend(threads, async (b) => {
        for (const dtype of support.dtypes) {
          const complex = DTYPE_INFO[dtype].complex;
          // Requests: m×k lhs and k×n rhs moved along two summed axes; the output starts as NaN
          // (beta = 0 overwrites it); an empty sum (an extent 0) leaves zeros.
          for (const extents of [[int(rand, 1, 3), int(rand, 2, 4)], [3, 0]]) {
            const [m, n, k] = [int(rand, 1, 40), int(rand, 1, 40), int(rand, 1, 24)];
            const items = extents[0]! * extents[1]!;
            const storage = (count: number) => Tensor.fromArray(dtype, [count], randomValues(rand, dtype, count)).buffer;
            const lhs: GemmOperand = { buffer: storage(m * k * Math.max(1, items)), offset: 0, rowStride: 1, colStride: m, batchStrides: [] };
            const rhs: GemmOperand = { buffer: storage(k * n * Math.max(1, items)), offset: 0, rowStride: n * extents[0]!, colStride: 1, batchStrides: [] };
            const out: GemmOperand = { buffer: Tensor.fromArray(dtype, [m * n], Array.from({ length: m * n * DTYPE_INFO[dtype].components }, () => Number.NaN)).buffer, offset: 0, rowStride: 1, colStride: m, batchStrides: [] };
            const summed = { extents, lhsStrides: [m * k, m * k * extents[0]!], rhsStrides: [n, k * n * extents[0]!] };
            const req: CpuGemmRequest = { dtype, m, n, k, batch: [], lhs, rhs, out, alpha: complex ? [0.5, -0.25] : 0.5, beta: complex ? [0, 0] : 0, conjLhs: complex, conjRhs: false, summed };
            const outcome = await b.install((ctx) => gemm.gemm(ctx, req));
            expect(outcome.executed).toBe(true);
            const want = new Array<number>(m * n * DTYPE_INFO[dtype].components).fill(0);
            for (let s0 = 0; s0 < extents[0]!; s0++) {
              for (let s1 = 0; s1 < extents[1]!; s1++) {
                const at = (o: GemmOperand, strides: number[]) => ({ ...o, offset: s0 * strides[0]! + s1 * strides[1]! });
                naiveGemm({ ...req, lhs: at(lhs, summed.lhsStrides), rhs: at(rhs, summed.rhsStrides) }).forEach((v, e) => (want[e]! += v));
              }
            }
            expect(relativeError(readOperand(dtype, out, m, n), want), `${dtype} m=${m} n=${n} k=${k} summed ${JSON.stringify(extents)}`).toBeLessThanOrEqual(toleranceFor(dtype));
          }
          await summedDotGeneral(b, dtype);
        }
      });
      return undefined;
    });
  }

  add('runs every job of a grouped GEMM exactly once, engine-scheduled and provider-owned (R110)', async () => {
    const { pkg, gemm, support } = await declared();
    const kind = options.kind ?? (pkg.kind === 'any' ? 'faer' : pkg.kind);
    const { referenceLayoutProvider } = await import('../provider/reference/reference-providers.js');
    const rand = seededRandom(seed ^ 0x610);
    let ran = 0;
    for (const threads of budgets) {
      await withBackend(threads, async (b) => {
        for (const engineOuter of [true, false]) {
          const builder = CpuProviderBundle.builder(kind).gemmProvider(gemm).layoutTransformProvider(pkg.layoutTransform ?? referenceLayoutProvider);
          if (kind === 'blas') builder.capabilityPolicy('providerDefaultCompatibility');
          if (engineOuter) builder.engineOuterGroupedGemm();
          let h: CpuBackend;
          try {
            h = b.withProviderBundle(builder.build());
          } catch (e) {
            // A provider that does not accept Outer cannot be engine-scheduled (R58): nothing to run.
            if (engineOuter && TenferroError.is(e, 'IncompatibleDomain')) continue;
            throw e;
          }
          for (const dtype of support.dtypes) {
            const complex = DTYPE_INFO[dtype].complex;
            const jobs: GemmJob[] = [];
            for (let i = 0; i < 5; i++) {
              const [m, n, k] = [int(rand, 1, 13), int(rand, 1, 13), int(rand, 1, 13)];
              jobs.push({
                out: Tensor.fromArray(dtype, [m, n], randomValues(rand, dtype, m * n)),
                lhs: randomOperand(rand, dtype, [m, k], support.stridedOperands),
                rhs: randomOperand(rand, dtype, [k, n], support.stridedOperands),
                // beta ≠ 0: a job run twice shows in its output
                alpha: complex ? [0.5, -1] : 0.5,
                beta: complex ? [2, 0.25] : 2,
              });
            }
            const before = jobs.map((j) => (j.out.toArray() as number[]).map(Number));
            await h.gemmGrouped(jobs);
            jobs.forEach((job, i) => {
              const err = relativeError((job.out.toArray() as number[]).map(Number), expectedGroupedJob(job, before[i]!));
              expect(err, `${engineOuter ? 'engineOuter' : 'providerOwned'} scheduling, ${dtype} job ${i} at budget ${threads}`).toBeLessThanOrEqual(toleranceFor(dtype));
            });
            ran++;
          }
        }
      });
    }
    expect(ran).toBeGreaterThan(0);
  });

  add('uses no more threads or pool lanes than its declared thread and placement controls allow', async () => {
    const { support } = await declared();
    const size = options.censusSize ?? 96;
    const lanes = new Set<number>();
    let watching = false;
    await withBackend(
      largest,
      async (b) => {
        const budget = b.numThreads(); // the domain's budget: the requested one, capped by this machine's CPUs
        const caps = b.providerBundle().capabilities('gemm')!;
        const limit = await threadLimit(caps, budget, options.runtimeThreads);
        const dtype = support.dtypes.includes('f64') ? 'f64' : support.dtypes[0]!;
        const lhs = Tensor.fromArray(dtype, [size, size], randomValues(seededRandom(1), dtype, size * size));
        const rhs = Tensor.fromArray(dtype, [size, size], randomValues(seededRandom(2), dtype, size * size));
        await b.matmul(lhs, rhs); // warm: lazily loaded runtimes start their pools here
        watching = true;
        const { newThreads } = await peakThreadsDuring(() => b.matmul(lhs, rhs));
        watching = false;
        const used = lanes.size;
        const said = `a ${caps.threadCount}/${caps.placement} provider at budget ${budget} (limit ${limit})`;
        // Lanes: tenferro's workers the provider kept busy. A provider on the calling thread uses its own only.
        expect(used, `pool lanes used during a GEMM by ${said}`).toBeLessThanOrEqual(caps.placement === 'callingThread' ? 1 : limit);
        // Threads: a provider on tenferro's workers or the calling thread creates none; one with its own
        // workers may add threads up to its limit, counting the worker it was called on.
        const ownThreads = caps.placement === 'engineWorkers' || caps.placement === 'callingThread' ? 0 : Math.max(0, limit - Math.max(1, used));
        expect(newThreads.length, `threads created during a GEMM by ${said}, which used ${used} lane(s)`).toBeLessThanOrEqual(ownThreads);
      },
      (pkg) => ({ ...pkg, gemm: watchLanes(pkg.gemm!, lanes, () => watching) }),
    );
  });

  return all;
}

/** The threads a provider declaring `caps` may use at `budget` (R55); `globalOrUncontrolled` is held to what its runtime reports. */
async function threadLimit(caps: CpuProviderExecutionCapabilities, budget: number, runtimeThreads: ProviderConformanceOptions['runtimeThreads']): Promise<number> {
  const enforced = enforcedThreadLimit(caps, budget);
  if (enforced !== undefined) return enforced;
  expect(runtimeThreads, 'a globalOrUncontrolled provider must pass options.runtimeThreads (the thread count its runtime reports) to be held to it').toBeTypeOf('function');
  const reported = await runtimeThreads!();
  expect(Number.isSafeInteger(reported) && reported >= 1, `options.runtimeThreads() must be a positive integer (got ${String(reported)})`).toBe(true);
  return reported;
}

/** `gemm` with every request it receives pushed to `requests`. */
function recordRequests(gemm: CpuGemmProvider, requests: CpuGemmRequest[]): CpuGemmProvider {
  return Object.freeze({
    name: gemm.name,
    executionCapabilities: () => gemm.executionCapabilities(),
    ...(gemm.declaredSupport === undefined ? {} : { declaredSupport: () => gemm.declaredSupport!() }),
    gemm: (ctx: CpuExecutionContext, req: CpuGemmRequest) => {
      requests.push(req);
      return gemm.gemm(ctx, req);
    },
  });
}

/** `gemm` with every context it receives wrapped (`watchedContext`), the lanes its kernel tasks run on recorded while `watching()`. */
function watchLanes(gemm: CpuGemmProvider, lanes: Set<number>, watching: () => boolean): CpuGemmProvider {
  const note = (lane: number) => {
    if (watching()) lanes.add(lane);
  };
  return Object.freeze({
    name: gemm.name,
    executionCapabilities: () => gemm.executionCapabilities(),
    ...(gemm.declaredSupport === undefined ? {} : { declaredSupport: () => gemm.declaredSupport!() }),
    gemm: (ctx: CpuExecutionContext, req: CpuGemmRequest) => gemm.gemm(watchedContext(ctx, note), req),
  });
}

/** A 4×4×4 GEMM request over fresh storage: dense operands, or operands with row stride 2; conjugated or not. */
function probeRequest(dtype: DType, conj: boolean, strided: boolean, seed: number): { req: CpuGemmRequest; outBuffer: SharedArrayBuffer } {
  const m = 4;
  const storage = (n: number, s: number) => Tensor.fromArray(dtype, [n], randomValues(seededRandom(s), dtype, n)).buffer;
  const operand = (buffer: SharedArrayBuffer, s: number): GemmOperand => ({ buffer, offset: 0, rowStride: s, colStride: s * m, batchStrides: [] });
  const complex = DTYPE_INFO[dtype].complex;
  const outBuffer = storage(16, seed + 3);
  return {
    req: {
      dtype, m, n: 4, k: 4, batch: [],
      lhs: operand(storage(64, seed + 1), strided ? 2 : 1),
      rhs: operand(storage(64, seed + 2), strided ? 2 : 1),
      out: operand(outBuffer, 1),
      alpha: complex ? [0.5, -0.25] : 0.5,
      beta: complex ? [0, 0] : 0,
      conjLhs: conj,
      conjRhs: conj,
    },
    outBuffer,
  };
}

/** The `rows × cols` matrix `op` addresses, column-major, interleaved for complex dtypes. */
function readOperand(dtype: DType, op: GemmOperand, rows: number, cols: number): number[] {
  const info = DTYPE_INFO[dtype];
  const data = new (info.array as unknown as new (buffer: SharedArrayBuffer) => ArrayLike<number>)(op.buffer);
  const values: number[] = [];
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < rows; i++) {
      const at = (op.offset + i * op.rowStride + j * op.colStride) * info.components;
      for (let c = 0; c < info.components; c++) values.push(data[at + c]!);
    }
  }
  return values;
}

/** The oracle of one unbatched request with `beta = 0`: `alpha · op(lhs) · op(rhs)`, column-major. */
function naiveGemm(req: CpuGemmRequest): number[] {
  const complex = DTYPE_INFO[req.dtype].complex;
  const a = readOperand(req.dtype, req.lhs, req.m, req.k);
  const b = readOperand(req.dtype, req.rhs, req.k, req.n);
  const [ar, ai] = scalar(req.alpha);
  const out: number[] = [];
  for (let j = 0; j < req.n; j++) {
    for (let i = 0; i < req.m; i++) {
      let re = 0;
      let im = 0;
      for (let p = 0; p < req.k; p++) {
        if (!complex) {
          re += a[i + p * req.m]! * b[p + j * req.k]!;
          continue;
        }
        const [xr, xi] = [a[2 * (i + p * req.m)]!, (req.conjLhs ? -1 : 1) * a[2 * (i + p * req.m) + 1]!];
        const [yr, yi] = [b[2 * (p + j * req.k)]!, (req.conjRhs ? -1 : 1) * b[2 * (p + j * req.k) + 1]!];
        re += xr * yr - xi * yi;
        im += xr * yi + xi * yr;
      }
      if (complex) out.push(ar * re - ai * im, ar * im + ai * re);
      else out.push(ar * re);
    }
  }
  return out;
}

function scalar(s: Scalar): [number, number] {
  return typeof s === 'number' ? [s, 0] : [s[0], s[1]];
}
