/**
 * What the loaded BLAS runtime is and what it really does: identity and diagnostics, the
 * execution capabilities tenferro may rely on, whether `CblasConjNoTrans` works (probed), and
 * the OpenBLAS core-type warning. Computed once per process on the main thread, when
 * `createBlasProvider()` or `blasProviderStatus()` is first called.
 */
import { readFileSync, realpathSync } from 'node:fs';
import type { CpuProviderExecutionCapabilities } from '@tenferro/core';
import { type IsaLevel, cpuIsa, isaOfOpenblasCore, isaRank, recommendedOpenblasCore } from './cpu-isa.js';
import { type BlasBinding, BlasStatus, Desc, type RawBlasInfo, Trans } from './native/binding.js';

export type BlasVendor = 'openblas' | 'mkl' | 'blis' | 'reference';
export type BlasThreadingLayer = 'pthreads' | 'openmp' | 'serial' | 'sequential' | 'intel-openmp' | 'gnu-openmp' | 'tbb' | 'unknown';

/** Diagnostics of the BLAS runtime this process loaded (strings for people, never dispatch keys). */
export interface BlasRuntimeDiagnostics {
  readonly vendor: BlasVendor;
  /** e.g. `OpenBLAS`, `Intel MKL`, `BLIS`, `reference BLAS (netlib)`. */
  readonly name: string;
  readonly version: string;
  readonly threadingLayer: BlasThreadingLayer;
  /** OpenBLAS core type (`openblas_get_corename()`), else undefined. */
  readonly coreType: string | undefined;
  /** The runtime's thread count when sampled (1 for runtimes without threads). */
  readonly threads: number;
  /** The library CBLAS is called in (`dladdr(cblas_dgemm)`), and its real path. */
  readonly libraryPath: string;
  readonly libraryRealPath: string;
  /** Where the runtime's own symbols live when that differs (e.g. libopenblas.so.0). */
  readonly runtimePath: string | undefined;
  /** OpenBLAS `openblas_get_config()`. */
  readonly config: string | undefined;
  /** This CPU's ISA level, as read from /proc/cpuinfo. */
  readonly cpuIsa: IsaLevel | undefined;
  /** Problems worth fixing (e.g. the OpenBLAS core-type trap), each with its fix. */
  readonly warnings: readonly string[];
}

export interface BlasRuntime {
  readonly diagnostics: BlasRuntimeDiagnostics;
  readonly capabilities: CpuProviderExecutionCapabilities;
  /** `CblasConjNoTrans` accepted and correct (probed against a hand-computed product). */
  readonly conjNoTrans: boolean;
  /** Whether the kernel sets the runtime's thread count before each call. */
  readonly setsThreads: boolean;
  /** The provider's diagnostic name (what `executionInfo().providerDiagnostic` shows). */
  readonly label: string;
}

const ISA_NAME: Readonly<Record<IsaLevel, string>> = { sse: 'SSE3', avx: 'AVX', avx2: 'AVX2', avx512: 'AVX-512' };

const SEQUENTIAL_ON_CALLER: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'sequential',
  placement: 'callingThread',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

const GLOBAL_EXTERNAL_INNER_ONLY: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'globalOrUncontrolled',
  placement: 'externalWorkers',
  workerLocalSequential: false,
  acceptsSequential: false,
  acceptsOuter: false,
  acceptsInner: true,
});

const PER_CALL_EXTERNAL: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'externalWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

/** Describe the runtime behind `binding` (main thread; may run tiny probe GEMMs). */
export function describeRuntime(binding: BlasBinding): BlasRuntime {
  const raw = binding.info();
  const conjNoTrans = raw.vendor === 'openblas' && probeConjNoTrans(binding);
  let layer: BlasThreadingLayer;
  let capabilities: CpuProviderExecutionCapabilities;
  let setsThreads = false;
  switch (raw.vendor) {
    case 'openblas':
      layer = raw.parallel === 0 ? 'serial' : raw.parallel === 1 ? 'pthreads' : raw.parallel === 2 ? 'openmp' : 'unknown';
      capabilities = layer === 'serial' ? SEQUENTIAL_ON_CALLER : GLOBAL_EXTERNAL_INNER_ONLY;
      setsThreads = layer !== 'serial' && raw.openblasSetThreads;
      break;
    case 'mkl': {
      runTinyGemm(binding); // mkl_rt picks its threading layer on the first call
      layer = mklLayer();
      capabilities = layer === 'sequential' ? SEQUENTIAL_ON_CALLER : raw.mklLocalThreads ? PER_CALL_EXTERNAL : GLOBAL_EXTERNAL_INNER_ONLY;
      setsThreads = layer !== 'sequential' && raw.mklLocalThreads;
      break;
    }
    case 'blis':
      layer = raw.parallel === 0 ? 'serial' : raw.parallel === 1 ? 'pthreads' : raw.parallel === 2 ? 'openmp' : 'unknown';
      capabilities = layer === 'serial' ? SEQUENTIAL_ON_CALLER : raw.blisThreadLocal ? PER_CALL_EXTERNAL : GLOBAL_EXTERNAL_INNER_ONLY;
      setsThreads = layer !== 'serial' && raw.blisSetEffective;
      break;
    default:
      layer = 'sequential';
      capabilities = SEQUENTIAL_ON_CALLER;
  }
  const diagnostics = diagnose(raw, layer);
  return Object.freeze({ diagnostics, capabilities, conjNoTrans, setsThreads, label: labelOf(diagnostics) });
}

function diagnose(raw: RawBlasInfo, layer: BlasThreadingLayer): BlasRuntimeDiagnostics {
  const real = realPath(raw.libraryPath);
  const cpu = cpuIsa();
  const warnings: string[] = [];
  let name: string;
  let version: string;
  switch (raw.vendor) {
    case 'openblas':
      name = 'OpenBLAS';
      version = /OpenBLAS\s+(\S+)/.exec(raw.config)?.[1] ?? 'unknown';
      break;
    case 'mkl':
      name = 'Intel MKL';
      version = /Version\s+(\S+)/i.exec(raw.version)?.[1] ?? (raw.version.trim() || 'unknown');
      break;
    case 'blis':
      name = 'BLIS';
      version = raw.version || 'unknown';
      break;
    default:
      name = 'reference BLAS (netlib)';
      version = /\.so\.(\d+(?:\.\d+)*)$/.exec(real)?.[1] ?? 'unknown';
  }
  const coreType = raw.vendor === 'openblas' && raw.coreName !== '' ? raw.coreName : undefined;
  if (coreType !== undefined && cpu !== undefined) {
    const coreLevel = isaOfOpenblasCore(coreType);
    if (coreLevel !== undefined && isaRank(coreLevel) < isaRank(cpu.level)) {
      const fix = recommendedOpenblasCore(cpu.level, cpu.vendor) ?? 'a newer core';
      warnings.push(
        `OpenBLAS runs its ${coreType} kernels (${ISA_NAME[coreLevel]}), below this CPU's ${ISA_NAME[cpu.level]}: GEMM is several times slower than it should be. ` +
          `Fix: set OPENBLAS_CORETYPE=${fix} before the library is loaded (in the environment, or createBlasProvider({ openblasCoretype: '${fix}' }) before anything loads BLAS).`,
      );
    }
  }
  return Object.freeze({
    vendor: raw.vendor,
    name,
    version,
    threadingLayer: layer,
    coreType,
    threads: raw.threads > 0 ? raw.threads : 1,
    libraryPath: raw.libraryPath,
    libraryRealPath: real,
    runtimePath: raw.runtimePath !== '' && raw.runtimePath !== raw.libraryPath ? raw.runtimePath : undefined,
    config: raw.config !== '' ? raw.config : undefined,
    cpuIsa: cpu?.level,
    warnings: Object.freeze(warnings),
  });
}

function labelOf(d: BlasRuntimeDiagnostics): string {
  const parts: string[] = [d.threadingLayer];
  if (d.coreType !== undefined) parts.push(`core ${d.coreType}`);
  parts.push(`${d.threads} thread${d.threads === 1 ? '' : 's'}`);
  parts.push(d.runtimePath !== undefined ? `${d.runtimePath} via ${d.libraryPath}` : d.libraryPath);
  const warning = d.warnings.length > 0 ? ` — WARNING: ${d.warnings.join(' ')}` : '';
  return `${d.name} ${d.version} (${parts.join(', ')})${warning}`;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function mklLayer(): BlasThreadingLayer {
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

function runTinyGemm(binding: BlasBinding): void {
  const a = new Float64Array([2]);
  const b = new Float64Array([3]);
  const c = new Float64Array([0]);
  binding.gemm(descriptor(1, Trans.No, Trans.No, 1, 1, 1, [1, 0], [0, 0]), bytes(a), bytes(b), bytes(c));
}

function bytes(t: Float32Array | Float64Array): Uint8Array {
  return new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
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
