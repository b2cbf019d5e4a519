/**
 * Load the BLAS runtime on THIS thread and find out what it does — run where loading belongs: on
 * the engine worker of the first GEMM (src/kernels/gemm.ts `blasLoad`), or in the short-lived
 * child process that identifies the runtime before anything is loaded here (src/identify.ts).
 * The threads the runtime starts while loading (and on its first call) inherit this thread's
 * affinity mask; they are found by comparing `/proc/self/task` before and after.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { type BlasBinding, BlasStatus, Desc, type RawBlasInfo, type RawLoadOutcome, type RawLoadRequest, Trans } from './binding.js';

/** A thread and the affinity mask it had (`Cpus_allowed_list`). */
export interface ThreadMask {
  readonly tid: number;
  readonly cpus: string;
}

/** What loading and probing found (structured-cloneable: it crosses from the worker). */
export interface LoadReport {
  readonly outcome: RawLoadOutcome;
  /** Identity after the probes (MKL picks its threading layer on the first call). */
  readonly info: RawBlasInfo;
  /** `CblasConjNoTrans` accepted and correct here (OpenBLAS only; probed). */
  readonly conjNoTrans: boolean;
  /** MKL's threading layer from the libraries mapped after the first call. */
  readonly mklLayer: string | undefined;
  /** Threads that appeared while loading and probing — the runtime's own — with their masks. */
  readonly runtimeThreads: readonly ThreadMask[];
}

function tasks(): Set<number> {
  try {
    return new Set(readdirSync('/proc/self/task').map(Number));
  } catch {
    return new Set();
  }
}

/** `Cpus_allowed_list` of one thread of this process, or undefined. */
export function threadCpus(tid: number): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/self/task/${tid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/** `binding.load(request)` on this thread, then the probes; never throws. */
export function loadAndProbe(binding: BlasBinding, request: RawLoadRequest): LoadReport {
  const before = tasks();
  const outcome = binding.load(request);
  let conjNoTrans = false;
  let mklLayer: string | undefined;
  if (outcome.loaded) {
    const info = binding.info();
    runTinyGemm(binding); // MKL loads its threading layer on the first call
    if (info.vendor === 'openblas') conjNoTrans = probeConjNoTrans(binding);
    if (info.vendor === 'mkl') {
      // The layer load() selected (every isolate reads it from the addon); the mapped libraries
      // only for an older build of the addon.
      mklLayer = info.mklLayer !== undefined && info.mklLayer !== '' ? info.mklLayer : mklLayerOfMaps();
      // A threaded layer starts its OpenMP team on the first call with more than one thread: start
      // it here, on the loading (pinned) worker, so its threads inherit the domain's mask and the
      // census names them (#42).
      if (mklLayer !== 'sequential' && request.threads !== undefined && request.threads > 1) runTeamGemm(binding, request.threads);
    }
  }
  const runtimeThreads: ThreadMask[] = [];
  for (const tid of tasks()) {
    if (before.has(tid)) continue;
    const cpus = threadCpus(tid);
    if (cpus !== undefined) runtimeThreads.push({ tid, cpus });
  }
  return { outcome, info: binding.info(), conjNoTrans, mklLayer, runtimeThreads };
}

function mklLayerOfMaps(): string {
  let maps = '';
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return 'unknown';
  }
  if (maps.includes('libmkl_sequential')) return 'sequential';
  if (maps.includes('libmkl_gnu_thread')) return 'gnu-openmp';
  if (maps.includes('libmkl_intel_thread')) return 'intel-openmp';
  if (maps.includes('libmkl_tbb_thread')) return 'tbb';
  return 'unknown';
}

function descriptor(dtype: number, ta: number, tb: number, m: number, n: number, k: number, alpha: readonly [number, number], beta: readonly [number, number]): Float64Array {
  const d = new Float64Array(Desc.Header);
  d[Desc.DType] = dtype;
  d[Desc.TransA] = ta;
  d[Desc.TransB] = tb;
  d[Desc.M] = m;
  d[Desc.N] = n;
  d[Desc.K] = k;
  d[Desc.Lda] = Math.max(1, ta === Trans.No || ta === Trans.ConjNo ? m : k);
  d[Desc.Ldb] = Math.max(1, tb === Trans.No || tb === Trans.ConjNo ? k : n);
  d[Desc.Ldc] = Math.max(1, m);
  d[Desc.AlphaRe] = alpha[0];
  d[Desc.AlphaIm] = alpha[1];
  d[Desc.BetaRe] = beta[0];
  d[Desc.BetaIm] = beta[1];
  return d;
}

function bytes(t: Float32Array | Float64Array): Uint8Array {
  return new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
}

function runTeamGemm(binding: BlasBinding, threads: number): void {
  const n = 192;
  const d = descriptor(1, Trans.No, Trans.No, n, n, n, [1, 0], [0, 0]);
  d[Desc.Threads] = Math.min(threads, 1024);
  const a = bytes(new Float64Array(n * n).fill(1));
  binding.gemm(d, a, a, bytes(new Float64Array(n * n)));
}

function runTinyGemm(binding: BlasBinding): void {
  binding.gemm(descriptor(1, Trans.No, Trans.No, 1, 1, 1, [1, 0], [0, 0]), bytes(new Float64Array([2])), bytes(new Float64Array([3])), bytes(new Float64Array([0])));
}

/**
 * Does `CblasConjNoTrans` (an OpenBLAS extension) give conj(A)·conj(B) here? Checked on c64 and
 * c128 with a 3×2 · 2×2 product against values computed in JavaScript; any status other than Ok
 * or any wrong element means no.
 */
function probeConjNoTrans(binding: BlasBinding): boolean {
  const m = 3;
  const n = 2;
  const k = 2;
  // Column-major interleaved complex values.
  const A = [1, 2, -0.5, 1, 3, -1, 0.25, 2, -2, 0.5, 1.5, -3];
  const B = [2, -1, 0.5, 0.5, -1, 3, 1, 1];
  const want: number[] = [];
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < m; i++) {
      let re = 0;
      let im = 0;
      for (let p = 0; p < k; p++) {
        const ar = A[2 * (i + p * m)]!;
        const ai = -A[2 * (i + p * m) + 1]!;
        const br = B[2 * (p + j * k)]!;
        const bi = -B[2 * (p + j * k) + 1]!;
        re += ar * br - ai * bi;
        im += ar * bi + ai * br;
      }
      want.push(re, im);
    }
  }
  for (const [dtype, Ctor] of [
    [2, Float32Array],
    [3, Float64Array],
  ] as const) {
    const c = new Ctor(2 * m * n).fill(Number.NaN);
    const status = binding.gemm(descriptor(dtype, Trans.ConjNo, Trans.ConjNo, m, n, k, [1, 0], [0, 0]), bytes(new Ctor(A)), bytes(new Ctor(B)), bytes(c));
    if (status !== BlasStatus.Ok) return false;
    for (let i = 0; i < want.length; i++) {
      if (!(Math.abs(c[i]! - want[i]!) <= 1e-5 * (1 + Math.abs(want[i]!)))) return false;
    }
  }
  return true;
}
