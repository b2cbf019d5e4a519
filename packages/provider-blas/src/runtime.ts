/**
 * What the loaded BLAS runtime is and what it really does: identity and diagnostics, the
 * execution capabilities tenferro may rely on, whether `CblasConjNoTrans` works (probed), and
 * the OpenBLAS core-type warning. Computed from a {@link LoadReport}: first the identification
 * child's (before anything is loaded here), then the engine worker's that loaded the runtime.
 */
import { realpathSync } from 'node:fs';
import type { CpuProviderExecutionCapabilities } from '@tenferro/core';
import { type IsaLevel, cpuIsa, isaOfOpenblasCore, isaRank, recommendedOpenblasCore } from './cpu-isa.js';
import { type CoretypePlan, describeCoretype } from './coretype.js';
import { LIBRARY_ALIASES } from './native/candidates.js';
import type { LoadReport, ThreadMask } from './native/probe.js';

/** The BLAS implementation the runtime was identified as. */
export type BlasVendor = 'openblas' | 'mkl' | 'blis' | 'reference';
/** The threading layer the loaded BLAS runtime was built with (`unknown` when it cannot say). */
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
  /**
   * Whether the runtime is loaded in this process. Until the first GEMM it is not: these
   * diagnostics then describe what a child process found (src/identify.ts).
   */
  readonly loaded: boolean;
  /** The engine worker that loaded it (dlopen), with its affinity mask then. */
  readonly loadedOn: ThreadMask | undefined;
  /** The threads the runtime started while loading (OpenBLAS's pool…), each with the mask it got. */
  readonly runtimeThreads: readonly ThreadMask[];
  /** The OpenBLAS core-type decision made before loading. */
  readonly coretype: CoretypePlan | undefined;
  /** That decision in words. */
  readonly coretypeDecision: string | undefined;
  /** The candidate library that was dlopen()ed (a soname or path, src/native/candidates.ts). */
  readonly library: string;
  /** Who chose it: the `library` option, `TENFERRO_BLAS_LIBRARY`, or the system (`libblas.so.3` first). */
  readonly librarySource: 'option' | 'environment' | 'system';
  /** Candidates tried before it, each with why it was not used (a refused MKL ILP64 among them). */
  readonly skipped: readonly string[];
  /** MKL: how its threading layer was chosen (`MKL_THREADING_LAYER`, or tenferro from the runtime present) and that OpenMP runtime. */
  readonly threadingLayerSource: 'environment' | 'tenferro' | undefined;
  readonly openmpRuntime: string | undefined;
  /**
   * The threads one BLAS call computes on, in words (#42): `1` for a sequential runtime whatever
   * the backend's thread budget; the budget where tenferro sets the count per call — and then a
   * thread count from the environment (`MKL_NUM_THREADS`, `OPENBLAS_NUM_THREADS`) is overridden,
   * which this says.
   */
  readonly threadsPerCall: string;
  /** `MKL_NUM_THREADS` / `OPENBLAS_NUM_THREADS` / `BLIS_NUM_THREADS` in the environment, when set. */
  readonly envThreads: string | undefined;
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

/**
 * Describe the runtime a {@link LoadReport} found — in this process (`inProcess`: loaded on an
 * engine worker) or in the identification child (before anything is loaded here). Pure.
 */
export function describeRuntime(report: LoadReport, coretype: CoretypePlan | undefined, inProcess: boolean, librarySource: BlasRuntimeDiagnostics['librarySource'] = 'system'): BlasRuntime {
  const raw = report.info;
  const conjNoTrans = raw.vendor === 'openblas' && report.conjNoTrans;
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
      // The layer the addon selected (every isolate reads it there, #42), else what the load probe saw.
      layer = (raw.mklLayer !== undefined && raw.mklLayer !== '' ? raw.mklLayer : (report.mklLayer ?? 'unknown')) as BlasThreadingLayer;
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
  const diagnostics = diagnose(report, layer, coretype, inProcess, capabilities, setsThreads, librarySource);
  return Object.freeze({ diagnostics, capabilities, conjNoTrans, setsThreads, label: labelOf(diagnostics) });
}

const ENV_THREADS: Readonly<Record<string, string>> = { mkl: 'MKL_NUM_THREADS', openblas: 'OPENBLAS_NUM_THREADS', blis: 'BLIS_NUM_THREADS' };

/** What one call computes on (see `BlasRuntimeDiagnostics.threadsPerCall`). */
function threadsPerCall(vendor: string, layer: BlasThreadingLayer, capabilities: CpuProviderExecutionCapabilities, setsThreads: boolean, envThreads: string | undefined): string {
  const env = envThreads !== undefined ? `; ${ENV_THREADS[vendor]}=${envThreads} from the environment is overridden per call` : '';
  if (capabilities.threadCount === 'sequential') {
    const how = vendor === 'mkl' ? ` (MKL's sequential layer; MKL_THREADING_LAYER=GNU with libgomp1 computes on the budget's threads)` : '';
    return `1: a sequential runtime computes every call on one thread, whatever the backend's thread budget${how}`;
  }
  if (setsThreads) return `the backend's thread budget (${vendor === 'mkl' ? 'MKL_Set_Num_Threads_Local' : vendor === 'openblas' ? 'openblas_set_num_threads' : 'bli_thread_set_num_threads'} before each call, 1 in Sequential mode)${env}`;
  return `the runtime's own count (tenferro cannot set it)${envThreads !== undefined ? `; ${ENV_THREADS[vendor]}=${envThreads} from the environment` : ''}`;
}

function diagnose(
  report: LoadReport,
  layer: BlasThreadingLayer,
  coretype: CoretypePlan | undefined,
  inProcess: boolean,
  capabilities: CpuProviderExecutionCapabilities,
  setsThreads: boolean,
  librarySource: BlasRuntimeDiagnostics['librarySource'],
): BlasRuntimeDiagnostics {
  const raw = report.info;
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
          (coretype?.action === 'userEnvironment'
            ? `OPENBLAS_CORETYPE=${coretype.userValue} comes from your environment: unset it (tenferro then picks the right core) or set OPENBLAS_CORETYPE=${fix}.`
            : `Fix: set OPENBLAS_CORETYPE=${fix} before the library is loaded (in the environment, or createBlasProvider({ openblasCoretype: '${fix}' }) before the first GEMM).`),
      );
    }
  }
  if (raw.vendor === 'mkl' && cpu !== undefined && cpu.vendor !== '' && !/intel/i.test(cpu.vendor)) {
    warnings.push(
      `Intel MKL runs its generic kernels on this CPU (${cpu.vendor}) (MKL 2020 selects its optimised code paths on Intel CPUs only: about half of OpenBLAS's f64 GEMM speed was measured on AMD EPYC). The system's OpenBLAS is usually faster here: leave the library option and TENFERRO_BLAS_LIBRARY unset.`,
    );
  }
  // A library tried under another name of the same choice and not installed under it (`'mkl'`:
  // libmkl_rt.so.2 of oneMKL, then Debian's libmkl_rt.so) was not skipped for a reason: left out.
  const sameChoice = Object.values(LIBRARY_ALIASES).find((names) => names.includes(report.outcome.library)) ?? [];
  const otherName = (e: string) => sameChoice.some((n) => n !== report.outcome.library && e.startsWith(`${n}: `) && e.includes('cannot open shared object file'));
  const skipped = report.outcome.loaded ? report.outcome.errors.filter((e) => !otherName(e)) : [];
  if (report.outcome.refused === 'ILP64') warnings.push(`MKL was not used: its ILP64 interface (MKL_INTERFACE_LAYER) was refused (${skipped.find((e) => e.includes('ILP64')) ?? 'ILP64'}).`);
  const envThreads = raw.envThreads ?? undefined;
  return Object.freeze({
    vendor: raw.vendor === 'none' ? 'reference' : raw.vendor,
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
    loaded: inProcess,
    loadedOn: inProcess ? Object.freeze({ tid: report.outcome.loaderTid, cpus: report.outcome.loaderCpus }) : undefined,
    runtimeThreads: inProcess ? Object.freeze(report.runtimeThreads.map((t) => Object.freeze({ ...t }))) : Object.freeze([]),
    coretype,
    coretypeDecision: coretype === undefined ? undefined : describeCoretype(coretype),
    library: report.outcome.library,
    librarySource,
    skipped: Object.freeze([...skipped]),
    threadingLayerSource: raw.vendor === 'mkl' && (raw.mklLayerSource === 'environment' || raw.mklLayerSource === 'tenferro') ? raw.mklLayerSource : undefined,
    openmpRuntime: raw.vendor === 'mkl' && raw.mklOpenmpRuntime !== undefined && raw.mklOpenmpRuntime !== '' ? raw.mklOpenmpRuntime : undefined,
    threadsPerCall: threadsPerCall(raw.vendor, layer, capabilities, setsThreads, envThreads),
    envThreads,
  });
}

function labelOf(d: BlasRuntimeDiagnostics): string {
  const parts: string[] = [d.openmpRuntime !== undefined ? `${d.threadingLayer} (${d.openmpRuntime})` : d.threadingLayer];
  if (d.coreType !== undefined) parts.push(`core ${d.coreType}${d.coretype?.action === 'set' ? ` (set by tenferro; OpenBLAS alone picks ${d.coretype.predicted})` : ''}`);
  if (d.threadsPerCall.startsWith('1:')) parts.push('1 thread per call whatever the thread budget');
  else {
    parts.push(`${d.threads} thread${d.threads === 1 ? '' : 's'}`);
    if (d.envThreads !== undefined && d.threadsPerCall.includes('overridden')) parts.push(`${d.vendor === 'mkl' ? 'MKL' : d.vendor === 'openblas' ? 'OPENBLAS' : 'BLIS'}_NUM_THREADS=${d.envThreads} overridden per call by the thread budget`);
  }
  parts.push(d.runtimePath !== undefined ? `${d.runtimePath} via ${d.libraryPath}` : d.libraryPath);
  if (!d.loaded) parts.push('not loaded yet: loads on the first GEMM, on an engine worker');
  else if (d.loadedOn !== undefined) {
    const masks = [...new Set(d.runtimeThreads.map((t) => t.cpus))];
    parts.push(`loaded on thread ${d.loadedOn.tid} (cpus ${d.loadedOn.cpus})${d.runtimeThreads.length > 0 ? `, its ${d.runtimeThreads.length} thread${d.runtimeThreads.length === 1 ? '' : 's'} on cpus ${masks.join(' / ')}` : ''}`);
  }
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

