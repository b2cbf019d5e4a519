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
export function describeRuntime(report: LoadReport, coretype: CoretypePlan | undefined, inProcess: boolean): BlasRuntime {
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
      layer = (report.mklLayer ?? 'unknown') as BlasThreadingLayer;
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
  const diagnostics = diagnose(report, layer, coretype, inProcess);
  return Object.freeze({ diagnostics, capabilities, conjNoTrans, setsThreads, label: labelOf(diagnostics) });
}

function diagnose(report: LoadReport, layer: BlasThreadingLayer, coretype: CoretypePlan | undefined, inProcess: boolean): BlasRuntimeDiagnostics {
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
  });
}

function labelOf(d: BlasRuntimeDiagnostics): string {
  const parts: string[] = [d.threadingLayer];
  if (d.coreType !== undefined) parts.push(`core ${d.coreType}${d.coretype?.action === 'set' ? ` (set by tenferro; OpenBLAS alone picks ${d.coretype.predicted})` : ''}`);
  parts.push(`${d.threads} thread${d.threads === 1 ? '' : 's'}`);
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

