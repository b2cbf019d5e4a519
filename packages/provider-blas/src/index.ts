// @tenferro/provider-blas — the system CBLAS as tenferro's 'blas' kind.
// Importing this module loads nothing: the addon and the BLAS library are loaded when
// createBlasProvider(), status() or blasProviderStatus() is first called.
import { isMainThread } from 'node:worker_threads';
import { type CpuProviderExecutionCapabilities, type CpuProviderPackage, type DeclaredSupport, type ProviderPackageStatus, TenferroError } from '@tenferro/core';
import { cpuIsa, isaOfOpenblasCore, isaRank } from './cpu-isa.js';
import { createGemmProvider } from './gemm-provider.js';
import { addonLoadedHere, blasLibraryMapped, loadBlas } from './native/load.js';
import { type BlasProviderOptions, validateBlasProviderOptions } from './options.js';
import { type BlasRuntime, describeRuntime } from './runtime.js';

export type { BlasProviderOptions } from './options.js';
export type { BlasRuntimeDiagnostics, BlasThreadingLayer, BlasVendor } from './runtime.js';
export type { IsaLevel } from './cpu-isa.js';

/** `blasProviderStatus()` when the BLAS runtime is loaded. */
export interface BlasProviderAvailable {
  readonly available: true;
  /** The provider's diagnostic name (also `executionInfo().providerDiagnostic`). */
  readonly name: string;
  readonly runtime: import('./runtime.js').BlasRuntimeDiagnostics;
  /** What the GEMM provider declares (sampled into bundles). */
  readonly capabilities: CpuProviderExecutionCapabilities;
  readonly declaredSupport: DeclaredSupport;
  /** Same as `runtime.warnings` (e.g. the OpenBLAS core-type trap, with its fix). */
  readonly warnings: readonly string[];
  readonly addonPath: string;
}

/** `blasProviderStatus()` when no BLAS can be used: why, and what to do (the `apt-get install` line among them). */
export interface BlasProviderUnavailable {
  readonly available: false;
  readonly reasons: readonly string[];
  readonly possibleSolutions: readonly string[];
}

export type BlasProviderStatus = BlasProviderAvailable | BlasProviderUnavailable;

let runtime: BlasRuntime | undefined;
let pkg: CpuProviderPackage | undefined;

/**
 * This package's status in the shape every tenferro provider package reports (what `tenferro
 * info` lists): the runtime's identity, threading, core type, library and the thread control
 * tenferro relies on in `details`, the OpenBLAS core-type trap in `warnings`; or why no BLAS can
 * be used and what would fix it. Loads the BLAS like {@link blasProviderStatus}, which gives the
 * same as typed objects.
 */
export function status(): ProviderPackageStatus {
  const s = blasProviderStatus();
  if (!s.available) return s;
  const r = s.runtime;
  return Object.freeze({
    available: true,
    name: s.name,
    details: Object.freeze({
      runtime: r.name,
      version: r.version,
      vendor: r.vendor,
      threadingLayer: r.threadingLayer,
      threads: r.threads,
      coreType: r.coreType ?? null,
      cpuIsa: r.cpuIsa ?? null,
      libraryPath: r.libraryRealPath,
      runtimePath: r.runtimePath ?? null,
      config: r.config ?? null,
      threadControl: s.capabilities.threadCount,
      placementControl: s.capabilities.placement,
      conjNoTrans: s.declaredSupport.conjugation,
    }),
    warnings: s.warnings,
    addonPath: s.addonPath,
  });
}

/**
 * The BLAS runtime of this process, loading it on first use. Loading fixes OpenBLAS's core type
 * (from `OPENBLAS_CORETYPE` as the environment says then) for the life of the process.
 */
export function blasProviderStatus(): BlasProviderStatus {
  const load = loadBlas();
  if (!load.available) return Object.freeze({ available: false, reasons: load.reasons, possibleSolutions: load.possibleSolutions });
  const r = currentRuntime(load.binding);
  const gemm = packageFor(r).gemm!;
  return Object.freeze({
    available: true,
    name: r.label,
    runtime: Object.freeze({ ...r.diagnostics, threads: liveThreads(load.binding, r) }),
    capabilities: r.capabilities,
    declaredSupport: gemm.declaredSupport!(),
    warnings: r.diagnostics.warnings,
    addonPath: load.path,
  });
}

/**
 * The provider package of the `'blas'` kind: pass it to
 * `CpuBackend.create({ kind: 'blas', providers: [createBlasProvider()] })`.
 * Loads the addon and the system BLAS on the calling (main) thread, which decides the declared
 * capabilities. Errors: `InvalidArgument` (bad options, checked before anything is loaded, or an
 * `openblasCoretype` that cannot take effect), `ProviderUnavailable` (no usable BLAS; the message
 * and `detail: { reasons, possibleSolutions }` say why and what to do, as `status()` does).
 */
export function createBlasProvider(options?: BlasProviderOptions): CpuProviderPackage {
  const op = 'createBlasProvider';
  const o = validateBlasProviderOptions(options, op);
  const wasLoaded = o.openblasCoretype !== undefined && (addonLoadedHere() || blasLibraryMapped().openblas);
  if (o.openblasCoretype !== undefined) prepareCoretype(o.openblasCoretype, wasLoaded, op);
  const load = loadBlas();
  if (!load.available) {
    throw new TenferroError(
      'ProviderUnavailable',
      `no usable system BLAS: ${load.reasons.join('; ')}. Possible solutions: ${load.possibleSolutions.join('; ')}`,
      { op, detail: { reasons: load.reasons, possibleSolutions: load.possibleSolutions } },
    );
  }
  const r = currentRuntime(load.binding);
  if (o.openblasCoretype !== undefined) checkCoretype(r, o.openblasCoretype, wasLoaded, op);
  return packageFor(r);
}

function currentRuntime(binding: Parameters<typeof describeRuntime>[0]): BlasRuntime {
  runtime ??= describeRuntime(binding);
  return runtime;
}

function packageFor(r: BlasRuntime): CpuProviderPackage {
  pkg ??= Object.freeze({ kind: 'blas' as const, name: `@tenferro/provider-blas: ${r.label}`, gemm: createGemmProvider(r) });
  return pkg;
}

function liveThreads(binding: { getThreads(): number }, r: BlasRuntime): number {
  const t = binding.getThreads();
  return t > 0 ? t : r.diagnostics.threads;
}

/** Put OPENBLAS_CORETYPE into the real C environment before the library loads (main thread only). */
function prepareCoretype(core: string, loaded: boolean, op: string): void {
  const cpu = cpuIsa();
  const need = isaOfOpenblasCore(core);
  if (cpu !== undefined && need !== undefined && isaRank(need) > isaRank(cpu.level)) {
    throw new TenferroError(
      'InvalidArgument',
      `openblasCoretype ${JSON.stringify(core)} needs ${need.toUpperCase()}, which this CPU (${cpu.level.toUpperCase()}) lacks: OpenBLAS would stop with an illegal instruction`,
      { op, detail: { param: 'options.openblasCoretype', core, cpuIsa: cpu.level } },
    );
  }
  if (loaded) return; // checked against the running core after loading
  if (!isMainThread) {
    throw new TenferroError(
      'InvalidArgument',
      'openblasCoretype can only be applied on the main thread (a worker\'s process.env is not the process environment): call createBlasProvider() on the main thread first, or set OPENBLAS_CORETYPE in the environment',
      { op, detail: { param: 'options.openblasCoretype', core } },
    );
  }
  process.env.OPENBLAS_CORETYPE = core;
}

function checkCoretype(r: BlasRuntime, core: string, wasLoaded: boolean, op: string): void {
  const running = r.diagnostics.coreType;
  if (r.diagnostics.vendor !== 'openblas' || running === undefined) return; // not OpenBLAS: the option does not apply
  if (running.toLowerCase() === core.toLowerCase()) return;
  const message = wasLoaded
    ? `OpenBLAS is already loaded in this process with core ${running}; OPENBLAS_CORETYPE=${core} only takes effect before the library is first loaded. Pass openblasCoretype to the first createBlasProvider() call (before status() or blasProviderStatus()), or start the process with OPENBLAS_CORETYPE=${core}`
    : `OpenBLAS did not accept OPENBLAS_CORETYPE=${core} (it chose ${running}); use a core name of this OpenBLAS build (openblas_get_config: ${r.diagnostics.config ?? 'unknown'})`;
  throw new TenferroError('InvalidArgument', message, { op, detail: { param: 'options.openblasCoretype', requested: core, running } });
}
