/**
 * `@tenferro/linalg/testing`: the linear-algebra section of tenferro's conformance kit. A
 * third-party `CpuLinalgKernels` runs these cases in its own CI: each case installs the kernels in
 * a provider package on a fresh backend, calls the public API, and checks that every primitive the
 * kernels implement either executed — with results within n·ε·c of the built-in kernels' (after
 * `@tenferro/linalg`'s output convention, which it applies to whichever kernel ran: a kernel
 * returns raw factorisations) — or declined with every output untouched. Every call hands the
 * kernel its outputs at a non-zero offset of a larger buffer (#35: outputs are descriptors with
 * offsets) and fails a kernel that writes anything outside an output's span, or from byte 0.
 * Plain async functions that throw on failure (no test runner needed):
 *
 *   for (const c of linalgConformanceCases(() => myKernels)) it(c.name, () => expect(c.run()).resolves.toBeUndefined());
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { type CpuBackendKind, CpuBackend, type CpuProviderPackage, DIAGNOSTICS_CHANNELS, type ExtensionProviderEvent, Tensor } from '@tenferro/core';
import { type CpuLinalgKernels, LINALG_KERNELS_KEY_NAME, LINALG_OPS, type LinalgDType, type LinalgKernel, type LinalgOp, type LinalgOutput, type LinalgRequest, linalgKernelsKey } from '../contract/index.js';
import { type Linalg, linalg } from '../linalg.js';

/** Options of {@link linalgConformanceCases}. */
export interface LinalgConformanceOptions {
  /** The backend kind to install the kernels on (default 'faer'). */
  readonly kind?: CpuBackendKind;
  /** Other provider packages of that kind (e.g. the BLAS GEMM provider for 'blas'). */
  readonly providers?: readonly CpuProviderPackage[];
  /** Matrix orders to test (default 1, 5, 17). */
  readonly sizes?: readonly number[];
  /** The dtypes to test (default all four). */
  readonly dtypes?: readonly LinalgDType[];
}

/** One conformance case: a name for the test runner and the check itself. */
export interface LinalgConformanceCase {
  /** What the case checks (a test name). */
  readonly name: string;
  /**
   * Run the case: resolves when the kernels conform, throws (an `Error` naming the case)
   * otherwise.
   *
   * @example
   * ```ts
   * import { BUILTIN_KERNELS } from '@tenferro/linalg';
   * import { linalgConformanceCases } from '@tenferro/linalg/testing';
   *
   * const [first] = linalgConformanceCases(() => BUILTIN_KERNELS, { sizes: [3], dtypes: ['f64'] });
   * await first!.run(); // throws when the kernels do not conform
   * console.log(first!.name); // prints: cholesky f64: executes matching the built-in conventions, or declines untouched
   * ```
   */
  run(): Promise<void>;
}

function fail(name: string, what: string): never {
  throw new Error(`linalg conformance: ${name}: ${what}`);
}

const ELEMENT_BYTES: Readonly<Record<string, number>> = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4 };
const GUARD = 0xa5;

/**
 * `kernels` with every method running on its request's outputs moved 3 elements into buffers with
 * guard bytes around each output's span (the span zeroed when the kernels get zeroed outputs, else
 * filled with the guard byte too) and info 2 words into its own; the spans and info are copied back
 * into the caller's (after a decline too: `@tenferro/linalg`'s written-then-declined check then
 * sees any write); a guard byte that changed fails the case.
 */
function relocating(kernels: CpuLinalgKernels, name: string): CpuLinalgKernels {
  const zeroed = !(kernels.overwritesOutputs === true && kernels.declinesBeforeWriting === true);
  const wrapped: Record<string, unknown> = {};
  const own = kernels as unknown as Record<string, unknown>;
  for (const key of new Set([...Object.keys(kernels), 'name', 'executionCapabilities', 'overwritesOutputs', 'declinesBeforeWriting'])) {
    const value = own[key];
    if (value !== undefined) wrapped[key] = typeof value === 'function' ? value.bind(kernels) : value;
  }
  for (const op of LINALG_OPS) {
    const kernel = kernels[op];
    if (typeof kernel !== 'function') continue;
    const run: LinalgKernel = async (ctx, r: LinalgRequest) => {
      const count = r.batch.reduce((p, e) => p * e, 1);
      const spans: [start: number, bytes: number][] = [];
      const moved = r.out.map((o): LinalgOutput | undefined => {
        spans.push([0, 0]);
        if (o === undefined) return undefined;
        const bytes = ELEMENT_BYTES[o.dtype]!, offset = 3, size = o.shape.reduce((p, e) => p * e, 1) * bytes;
        const buffer = new SharedArrayBuffer(offset * bytes + size + 64);
        new Uint8Array(buffer).fill(GUARD);
        if (zeroed) new Uint8Array(buffer, offset * bytes, size).fill(0);
        spans[spans.length - 1] = [offset * bytes, size];
        return Object.freeze({ buffer, offset, dtype: o.dtype, shape: o.shape });
      });
      const info = new Int32Array(new SharedArrayBuffer(4 * (count + 4)), 8, count);
      const outcome = await kernel.call(kernels, ctx, Object.freeze({ ...r, out: Object.freeze(moved), info }));
      moved.forEach((o, i) => {
        if (o === undefined) return;
        const [start, size] = spans[i]!, all = new Uint8Array(o.buffer);
        for (let b = 0; b < all.length; b++) {
          if ((b < start || b >= start + size) && all[b] !== GUARD) fail(name, `${op} wrote byte ${b} of out[${i}]'s buffer, outside its span (bytes ${start}…${start + size - 1}: write from request.out[${i}].offset)`);
        }
        // Back into the caller's output, a decline's too (so that its written-then-declined check sees a write).
        new Uint8Array(r.out[i]!.buffer, r.out[i]!.offset * ELEMENT_BYTES[o.dtype]!, size).set(all.subarray(start, start + size));
      });
      const words = new Int32Array(info.buffer);
      for (let w = 0; w < words.length; w++) if ((w < 2 || w >= 2 + count) && words[w] !== 0) fail(name, `${op} wrote info word ${w}, outside info's span (words 2…${1 + count}: write through the info view)`);
      r.info.set(info);
      return outcome;
    };
    wrapped[op] = run;
  }
  return Object.freeze(wrapped) as unknown as CpuLinalgKernels;
}

function real(d: LinalgDType): boolean {
  return d === 'f32' || d === 'f64';
}

/** A well-conditioned, symmetric positive definite test matrix (Hermitian for complex). */
function spd(dtype: LinalgDType, n: number, batch: number): Tensor<LinalgDType> {
  const c = real(dtype) ? 1 : 2;
  const d = new (dtype === 'f32' || dtype === 'c64' ? Float32Array : Float64Array)(c * n * n * batch);
  for (let b = 0; b < batch; b++)
    for (let j = 0; j < n; j++)
      for (let i = 0; i < n; i++) {
        const at = c * (b * n * n + i + j * n);
        d[at] = (i === j ? n + 1 : 0) + 1 / (2 + i + j + b);
        if (c === 2 && i !== j) d[at + 1] = (i < j ? 1 : -1) * 0.1 / (1 + i + j);
      }
  return Tensor.from(d as Float64Array, [n, n, batch], { dtype } as never) as Tensor<LinalgDType>;
}

function maxDiff(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]! - y[i]!) / (1 + Math.abs(y[i]!)));
  return m;
}

/**
 * The cases, for kernels made by `factory` (called once per case).
 *
 * @example
 * ```ts
 * import { BUILTIN_KERNELS } from '@tenferro/linalg';
 * import { linalgConformanceCases } from '@tenferro/linalg/testing';
 *
 * const cases = linalgConformanceCases(() => BUILTIN_KERNELS, { sizes: [2], dtypes: ['f64'] });
 * for (const c of cases) await c.run(); // in a test file: for (const c of cases) it(c.name, () => expect(c.run()).resolves.toBeUndefined());
 * console.log(cases.length); // prints: 10
 * ```
 */
export function linalgConformanceCases(factory: () => CpuLinalgKernels, options: LinalgConformanceOptions = {}): LinalgConformanceCase[] {
  const kind = options.kind ?? 'faer';
  const sizes = options.sizes ?? [1, 5, 17];
  const dtypes = options.dtypes ?? ['f32', 'f64', 'c64', 'c128'];
  const cases: LinalgConformanceCase[] = [];
  const prims = ['cholesky', 'solveTriangular', 'luFactor', 'lu', 'luFullPivot', 'solve', 'qr', 'svd', 'eigh', 'eig'] as const;
  for (const prim of prims) {
    for (const dtype of dtypes) {
      const name = `${prim} ${dtype}: executes matching the built-in conventions, or declines untouched`;
      cases.push({
        name,
        async run() {
          const kernels = factory();
          if (typeof kernels[prim] !== 'function') return; // not implemented: nothing to check
          const pkg: CpuProviderPackage = { kind, name: `conformance ${kernels.name}`, extensions: [[linalgKernelsKey(), relocating(kernels, name)]] };
          const withExt = await CpuBackend.create({ kind, threads: 1, providers: [...(options.providers ?? []), pkg] } as never);
          const reference = await CpuBackend.create({ threads: 1, providers: [] });
          try {
            const la = linalg(withExt), ref = linalg(reference);
            const tol = (dtype === 'f32' || dtype === 'c64' ? 2 ** -23 : 2 ** -52) * 1e3;
            for (const n of sizes) {
              const a = spd(dtype, n, 2);
              const rhs = spd(dtype, n, 2);
              const run = async (l: Linalg): Promise<Tensor[]> => {
                switch (prim) {
                  case 'cholesky': return [await l.cholesky(a)];
                  case 'luFactor': { const x = await l.luFactor(a); return [x.lu, x.pivots]; }
                  case 'solveTriangular': return [await l.solveTriangular(a, rhs, { upper: true })];
                  case 'lu': { const x = await l.lu(a); return [x.p, x.l, x.u]; }
                  case 'luFullPivot': { const x = await l.luFullPivot(a); return [x.lu, x.pivots, x.colPivots]; }
                  case 'eig': return [await l.eigvals(a)];
                  case 'solve': return [await l.solve(a, rhs)];
                  case 'qr': { const x = await l.qr(a); return [x.q!, x.r]; }
                  case 'svd': return [(await l.svd(a)).s];
                  case 'eigh': return [(await l.eigh(a)).eigenvalues];
                }
              };
              // Which kernel ran the extension backend's calls: tenferro:provider (#35).
              const { value: mine, calls } = await recordLinalgKernels(() => run(la));
              const theirs = await run(ref);
              const pairs = mine.map((x, i): [Tensor, Tensor] => [x, theirs[i]!]);
              const record = calls.at(-1);
              if (record === undefined) fail(name, 'no kernel ran');
              for (const [x, y] of pairs) {
                if (x.dtype !== y.dtype || x.shape.join() !== y.shape.join()) fail(name, `n=${n}: result ${x.dtype}[${x.shape}] but the conventions say ${y.dtype}[${y.shape}]`);
                const dx = maxDiff(x.toTypedArray() as Float64Array, y.toTypedArray() as Float64Array);
                if (!(dx <= tol * n)) fail(name, `n=${n}: ${record.kernel} result differs from the built-in conventions by ${dx} (tolerance ${tol * n})`);
              }
            }
          } finally {
            await withExt.close();
            await reference.close();
          }
        },
      });
    }
  }
  return cases;
}

/** One linalg kernel call that executed, as `tenferro:provider` told it (#35: `takeCallRecords()` is gone). */
export interface LinalgKernelCall {
  /** The primitive (`'cholesky'`, `'luFactor'`, …). */
  readonly op: LinalgOp;
  /** Which kernel ran: the bundle's `CpuLinalgKernels` extension, or the built-in one. */
  readonly kernel: 'extension' | 'builtin';
  /** On a built-in that ran because the extension declined: why (`'dtype: f64'`). */
  readonly declined?: string;
}

function describeDecline(reason: { readonly kind?: unknown; readonly detail?: unknown; readonly dtype?: unknown }): string {
  const kind = String(reason.kind);
  return typeof reason.detail === 'string' ? `${kind}: ${reason.detail}` : reason.dtype !== undefined ? `${kind}: ${String(reason.dtype)}` : kind;
}

/**
 * Run `fn` and return, with its value, every linalg kernel call that executed while it ran, in
 * order — read from the `tenferro:provider` tracing channel, where core publishes each kernel call
 * of an extension family (`slot` the extension key's name, `kernel`, `fallbackReason`). Only the
 * calls that ran are listed (an extension's decline shows as the built-in's `declined`). Calls of
 * other code running at the same time are listed too: record around calls you await.
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor } from '@tenferro/core';
 * import { linalg } from '@tenferro/linalg';
 * import { recordLinalgKernels } from '@tenferro/linalg/testing';
 *
 * const backend = await CpuBackend.create({ threads: 1 });
 * const { calls } = await recordLinalgKernels(() => linalg(backend).det(Tensor.fromArray('f64', [1, 1], [2])));
 * console.log(calls); // prints: [ { op: 'luFactor', kernel: 'builtin' } ]
 * await backend.close();
 * ```
 */
export async function recordLinalgKernels<T>(fn: () => Promise<T> | T): Promise<{ value: T; calls: LinalgKernelCall[] }> {
  const calls: LinalgKernelCall[] = [];
  const channel = tracingChannel<object, ExtensionProviderEvent>(DIAGNOSTICS_CHANNELS.provider);
  const asyncEnd = (event: ExtensionProviderEvent) => {
    if (event.slot !== LINALG_KERNELS_KEY_NAME || event.outcome !== 'executed') return;
    const declined = event.fallbackReason === undefined ? undefined : describeDecline(event.fallbackReason);
    calls.push(Object.freeze({ op: event.call as LinalgOp, kernel: event.kernel, ...(declined === undefined ? {} : { declined }) }));
  };
  const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd, error() {} };
  channel.subscribe(handlers);
  try {
    return { value: await fn(), calls };
  } finally {
    channel.unsubscribe(handlers);
  }
}
