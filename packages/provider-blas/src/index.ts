// @tenferro/provider-blas — the system CBLAS as tenferro's 'blas' kind.
// Importing this module loads nothing. createBlasProvider(), status() and blasProviderStatus()
// load the addon (which links no BLAS) and identify the runtime in a short-lived child process;
// the BLAS runtime itself is dlopen()ed in this process on the first GEMM, inside its admission,
// on a pinned engine worker (src/kernels/gemm.ts blasLoad), after the OpenBLAS core-type
// decision (src/coretype.ts) has been put into the process environment.
import { type CpuExecutionContext, type CpuProviderExecutionCapabilities, type CpuProviderPackage, type DeclaredSupport, type ProviderPackageStatus, TenferroError, defineKernel } from '@tenferro/core';
import { type CoretypePlan, decideCoretype } from './coretype.js';
import { cpuIsa, isaOfOpenblasCore, isaRank } from './cpu-isa.js';
import { type BlasSession, createGemmProvider } from './gemm-provider.js';
import { createLapackKernels, linalgKey } from './lapack-kernels.js';
import { type Identification, identifyInChild } from './identify.js';
import type { BlasBinding, RawLoadRequest } from './native/binding.js';
import { DEFAULT_CANDIDATES, LIBRARY_ALIASES, LIBRARY_ENV, type LibraryChoice, libraryChoice } from './native/candidates.js';
import { loadBlas } from './native/load.js';
import type { LoadReport } from './native/probe.js';
import { type BlasProviderOptions, validateBlasProviderOptions } from './options.js';
import { SPLIT_MIN_WORK } from './gemm-split.js';
import { type BlasRuntime, describeRuntime } from './runtime.js';

export type { CoretypeAction, CoretypePlan } from './coretype.js';
export type { ThreadMask } from './native/probe.js';

export type { BlasProviderOptions } from './options.js';
export type { BlasRuntimeDiagnostics, BlasThreadingLayer, BlasVendor } from './runtime.js';
export type { IsaLevel } from './cpu-isa.js';

/** `blasProviderStatus()` when a BLAS runtime can be used (`runtime.loaded`: whether it is loaded in this process yet). */
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

/** What `blasProviderStatus()` reports: the loaded BLAS runtime, or why none can be used. */
export type BlasProviderStatus = BlasProviderAvailable | BlasProviderUnavailable;

const loadKernel = defineKernel<RawLoadRequest, LoadReport>(new URL('./kernels/gemm.js', import.meta.url), 'blasLoad');

/** Per realm: what the child found, the core-type plan, and the runtime once loaded here. */
interface State {
  readonly binding: BlasBinding;
  readonly addonPath: string;
  declared: BlasRuntime;
  plan: CoretypePlan;
  /** The explicit option the plan was made for (a later, different one is refused). */
  option: string | undefined;
  /** The identification the plan was made from. */
  readonly report: LoadReport;
  readonly envValue: string | undefined;
  /** The library choice the identification was made for (fixed once a package exists or the runtime loads). */
  readonly library: LibraryChoice;
  loaded: BlasRuntime | undefined;
  loading: Promise<BlasRuntime> | undefined;
  /** Whether createBlasProvider() has returned a package of this state (the library is then fixed). */
  handedOut: boolean;
}

let state: State | undefined;
/** What the identification child found, per library choice (`LibraryChoice.key`). */
const identifications = new Map<string, Identification>();

function identify(candidates: readonly string[]): Identification {
  const key = candidates.join(':');
  let found = identifications.get(key);
  if (found === undefined) identifications.set(key, (found = identifyInChild(candidates)));
  return found;
}
/** One package per `splitMinWork` asked for (`undefined`: the default; the runtime, its session and its state are shared). */
const packages = new Map<number | undefined, CpuProviderPackage>();

type Prepared =
  | { readonly ok: true; readonly state: State }
  | { readonly ok: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[]; readonly refused?: string; readonly library?: string };

/**
 * This package's status in the shape every tenferro provider package reports (what `tenferro
 * info` lists): the runtime's identity, threading, core type and the core-type decision, the
 * library, where it was loaded and the masks its threads got, and the thread control tenferro
 * relies on in `details`; the OpenBLAS core-type trap in `warnings`; or why no BLAS can be used
 * and what would fix it. Never loads BLAS on the calling thread (see {@link blasProviderStatus}).
 *
 * @example
 * ```ts
 * import { status } from '@tenferro/provider-blas';
 *
 * const s = status();
 * console.log(s.available ? s.name : s.possibleSolutions.join('\n')); // e.g. OpenBLAS 0.3.21 (pthreads)
 * ```
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
      coretypeDecision: r.coretypeDecision ?? null,
      cpuIsa: r.cpuIsa ?? null,
      library: r.library,
      librarySource: r.librarySource,
      libraryPath: r.libraryRealPath,
      skippedLibraries: r.skipped.length > 0 ? r.skipped.join(' | ') : null,
      threadingLayerSource: r.threadingLayerSource ?? null,
      openmpRuntime: r.openmpRuntime ?? null,
      threadsPerCall: r.threadsPerCall,
      envThreads: r.envThreads ?? null,
      runtimePath: r.runtimePath ?? null,
      config: r.config ?? null,
      loaded: r.loaded,
      loadedOnThread: r.loadedOn === undefined ? null : `${r.loadedOn.tid} (cpus ${r.loadedOn.cpus})`,
      runtimeThreadCpus: r.loaded ? [...new Set(r.runtimeThreads.map((t) => t.cpus))].join(' / ') || 'none started' : null,
      threadControl: s.capabilities.threadCount,
      placementControl: s.capabilities.placement,
      conjNoTrans: s.declaredSupport.conjugation,
    }),
    warnings: s.warnings,
    addonPath: s.addonPath,
  });
}

/**
 * The BLAS runtime of this process: once a GEMM has loaded it (on an engine worker), what was
 * loaded, where, and the masks its threads got; before that, what the identification child
 * process found and the core-type decision that will be applied. Never loads BLAS on the calling
 * thread.
 *
 * @example
 * ```ts
 * import { blasProviderStatus } from '@tenferro/provider-blas';
 *
 * const s = blasProviderStatus();
 * console.log(s.available ? s.runtime.vendor : s.reasons); // e.g. openblas
 * ```
 */
export function blasProviderStatus(): BlasProviderStatus {
  const p = prepare(undefined, 'blasProviderStatus', undefined);
  if (!p.ok) return Object.freeze({ available: false, reasons: p.reasons, possibleSolutions: p.possibleSolutions });
  const st = p.state;
  const r = current(st);
  const gemm = packageFor(st, SPLIT_MIN_WORK).gemm!;
  return Object.freeze({
    available: true,
    name: r.label,
    runtime: Object.freeze({ ...r.diagnostics, threads: liveThreads(st, r) }),
    capabilities: st.declared.capabilities,
    declaredSupport: gemm.declaredSupport!(),
    warnings: r.diagnostics.warnings,
    addonPath: st.addonPath,
  });
}

/**
 * The provider package of the `'blas'` kind: pass it to
 * `CpuBackend.create({ kind: 'blas', providers: [createBlasProvider()] })`.
 * Identifies the system BLAS (in a child process: nothing is loaded on the calling thread) and
 * decides the OpenBLAS core type; the runtime is loaded on the first GEMM, on a pinned engine
 * worker. Errors: `InvalidArgument` (bad options, checked before anything is loaded, or an
 * `openblasCoretype` that cannot take effect), `ProviderUnavailable` (no usable BLAS; the message
 * and `detail: { reasons, possibleSolutions }` say why and what to do, as `status()` does).
 *
 * @example
 * ```ts
 * import { CpuBackend } from '@tenferro/core';
 * import { createBlasProvider, status } from '@tenferro/provider-blas';
 *
 * if (status().available) {
 *   const backend = await CpuBackend.create({ kind: 'blas', providers: [createBlasProvider()] });
 *   console.log(backend.kind()); // prints: blas
 *   await backend.close();
 * }
 * ```
 */
export function createBlasProvider(options?: BlasProviderOptions): CpuProviderPackage {
  const op = 'createBlasProvider';
  const o = validateBlasProviderOptions(options, op);
  if (o.openblasCoretype !== undefined && o.openblasCoretype !== 'keep') checkCoreFitsCpu(o.openblasCoretype, op);
  const p = prepare(o.openblasCoretype, op, o.library);
  if (!p.ok) {
    const what = p.library !== undefined ? `the BLAS library ${JSON.stringify(p.library)} cannot be used` : 'no usable system BLAS';
    throw new TenferroError('ProviderUnavailable', `${what}: ${p.reasons.join('; ')}. Possible solutions: ${p.possibleSolutions.join('; ')}`, {
      op,
      detail: { reasons: p.reasons, possibleSolutions: p.possibleSolutions, ...(p.library !== undefined ? { library: p.library } : {}), ...(p.refused ? { refused: p.refused } : {}) },
    });
  }
  if (o.openblasCoretype !== undefined) checkSameOption(p.state, o.openblasCoretype, op);
  p.state.handedOut = true;
  return packageFor(p.state, o.splitMinWork);
}

/**
 * Load the addon, identify the runtime of `library` (the option; else `TENFERRO_BLAS_LIBRARY`,
 * else the system's: child process, once per realm and choice) and plan the core type. A library
 * asked for after another was fixed (a package exists or the runtime is loaded) is `InvalidArgument`.
 */
function prepare(option: string | undefined, op: string, library: string | undefined): Prepared {
  const choice = libraryChoice(library);
  if (state !== undefined) {
    if (library === undefined || state.library.key === choice.key) return { ok: true, state };
    const fixed = state.handedOut || state.loaded !== undefined || state.loading !== undefined || state.binding.info().loaded;
    if (fixed) {
      const current = state.loaded?.diagnostics.library ?? state.library.requested ?? 'the system BLAS (libblas.so.3)';
      throw new TenferroError(
        'InvalidArgument',
        `the BLAS library is already chosen for this process (${current}): library ${JSON.stringify(library)} only takes effect in the first createBlasProvider() call, before the first GEMM (the library is process-wide)`,
        { op, detail: { param: 'options.library', requested: library, current } },
      );
    }
    // Only status() looked so far: identify the library asked for instead (status()'s package is never handed out).
    state = undefined;
    packages.clear();
  }
  const load = loadBlas();
  if (!load.available) return { ok: false, reasons: load.reasons, possibleSolutions: load.possibleSolutions };
  const binding = load.binding;
  const info = binding.info();
  let report: LoadReport;
  if (info.loaded && choice.source !== 'system' && !choice.candidates.includes(info.load.library)) {
    throw new TenferroError(
      'InvalidArgument',
      `the BLAS library ${info.load.library} is already loaded in this process (by another isolate's provider): ${choice.source === 'option' ? `library ${JSON.stringify(library)}` : `${LIBRARY_ENV}=${choice.requested}`} cannot take effect any more`,
      { op, detail: { param: choice.source === 'option' ? 'options.library' : LIBRARY_ENV, requested: choice.requested, current: info.load.library } },
    );
  }
  if (info.loaded) {
    // Another realm of this process loaded it already (e.g. another provider instance's worker).
    report = { outcome: info.load, info, conjNoTrans: info.vendor === 'openblas', mklLayer: undefined, runtimeThreads: [] };
  } else {
    const identification = identify(choice.candidates);
    if (!identification.ok) return { ok: false, reasons: identification.reasons, possibleSolutions: identification.possibleSolutions };
    report = identification.report;
    if (!report.outcome.loaded) return unavailable(choice, report);
  }
  const envValue = info.loaded ? (info.load.coretypeBefore ?? undefined) : process.env.OPENBLAS_CORETYPE;
  const plan = planFor(report, option, envValue);
  if (info.loaded && option !== undefined && option !== 'keep') {
    const running = info.coreName;
    if (info.vendor === 'openblas' && running.toLowerCase() !== option.toLowerCase()) {
      throw new TenferroError(
        'InvalidArgument',
        `OpenBLAS is already loaded in this process with core ${running}; OPENBLAS_CORETYPE=${option} only takes effect before the library is first loaded. Pass openblasCoretype to the first createBlasProvider() call, or start the process with OPENBLAS_CORETYPE=${option}`,
        { op, detail: { param: 'options.openblasCoretype', requested: option, running } },
      );
    }
  }
  const declared = describeRuntime(report, plan, info.loaded, choice.source);
  state = { binding, addonPath: load.path, declared, plan, option, report, envValue, library: choice, loaded: info.loaded ? declared : undefined, loading: undefined, handedOut: false };
  return { ok: true, state };
}

/**
 * Why `choice` cannot be loaded, and which other library would work (#42): for a library asked
 * for, whether the system's loads; for the system's, whether MKL does.
 */
function unavailable(choice: LibraryChoice, report: LoadReport): Prepared {
  const reasons = [choice.source === 'system' ? 'no BLAS library with CBLAS could be loaded' : `the BLAS library ${choice.requested} (${choice.source === 'option' ? 'the library option' : LIBRARY_ENV}) could not be loaded`, ...report.outcome.errors];
  const solutions: string[] = [];
  const other = choice.source === 'system' ? LIBRARY_ALIASES.mkl! : DEFAULT_CANDIDATES;
  const alt = identify(other);
  if (alt.ok && alt.report.outcome.loaded) {
    const i = alt.report.info;
    const name = `${i.vendor === 'mkl' ? 'Intel MKL' : i.vendor === 'openblas' ? 'OpenBLAS' : i.vendor === 'blis' ? 'BLIS' : 'the reference BLAS'} (${alt.report.outcome.library})`;
    solutions.push(
      choice.source === 'system'
        ? `${name} is installed and loads: createBlasProvider({ library: 'mkl' }) or ${LIBRARY_ENV}=mkl`
        : `the system's BLAS loads: ${name}; leave the library option and ${LIBRARY_ENV} unset to use it`,
    );
  }
  if (report.outcome.refused === 'ILP64') solutions.push('unset MKL_INTERFACE_LAYER (or set it to LP64): tenferro calls BLAS with 32-bit integers');
  if (choice.source === 'system') solutions.push('install OpenBLAS (Debian/Ubuntu, as root): apt-get install -y libopenblas-dev');
  solutions.push(`or point ${LIBRARY_ENV} (or the library option) at a CBLAS library: 'mkl', 'openblas', a soname or a path such as /opt/blis/lib/libblis.so`);
  return { ok: false, reasons, possibleSolutions: solutions, refused: report.outcome.refused || undefined, library: choice.requested };
}

function planFor(report: LoadReport, option: string | undefined, envValue: string | undefined): CoretypePlan {
  return decideCoretype({ option, envValue, vendor: report.info.vendor, predicted: report.info.coreName !== '' ? report.info.coreName : undefined, cpu: cpuIsa() });
}

function current(st: State): BlasRuntime {
  if (st.loaded === undefined && st.binding.info().loaded) {
    // Loaded by another realm's worker: describe what is there now.
    const info = st.binding.info();
    st.loaded = describeRuntime({ outcome: info.load, info, conjNoTrans: st.declared.conjNoTrans, mklLayer: undefined, runtimeThreads: [] }, st.plan, true, st.library.source);
  }
  return st.loaded ?? st.declared;
}

function ensureLoaded(st: State, ctx: CpuExecutionContext): Promise<BlasRuntime> {
  if (st.loaded !== undefined) return Promise.resolve(st.loaded);
  st.loading ??= ctx
    .run(loadKernel, { candidates: [...st.library.candidates], coretype: st.plan.value, coretypeOverwrite: st.plan.overwrite, threads: ctx.threadBudget })
    .then(
      (report) => {
        if (!report.outcome.loaded) {
          throw new TenferroError('ProviderUnavailable', `the BLAS runtime could not be loaded on the engine worker: ${report.outcome.errors.join('; ')}`, {
            op: 'gemm',
            detail: { reasons: report.outcome.errors, possibleSolutions: ['apt-get install -y libopenblas-dev', 'or set TENFERRO_BLAS_LIBRARY to a CBLAS library'] },
          });
        }
        st.loaded = describeRuntime(report, st.plan, true, st.library.source);
        return st.loaded;
      },
      (error: unknown) => {
        st.loading = undefined;
        throw error;
      },
    );
  return st.loading;
}

function packageFor(st: State, splitMinWork: number | undefined): CpuProviderPackage {
  const known = packages.get(splitMinWork);
  if (known !== undefined) return known;
  const declared = st.declared; // fixed for the package's life: capabilities are sampled into bundles
  const session: BlasSession = { declared, current: () => current(st), ensureLoaded: (ctx) => ensureLoaded(st, ctx), loaded: () => st.loaded };
  const gemm = createGemmProvider(session, splitMinWork);
  const lapack = createLapackKernels(session, st.binding);
  const pkg: CpuProviderPackage = Object.freeze({
    kind: 'blas' as const,
    get name() {
      return `@tenferro/provider-blas: ${current(st).label}`;
    },
    gemm,
    // The threads the runtime started when it was loaded (OpenBLAS's pool) and during calls (MKL's
    // OpenMP teams, one per calling worker under GNU OpenMP: found natively, #42), for the census.
    threads: () => {
      const d = current(st).diagnostics;
      const role = `${d.name} ${d.threadingLayer} thread`;
      const tids = new Set(d.runtimeThreads.map((t) => t.tid));
      if (d.loaded && typeof st.binding.callThreads === 'function') for (const tid of st.binding.callThreads()) tids.add(tid);
      return [...tids].map((tid) => Object.freeze({ tid, role }));
    },
    // @tenferro/linalg's CpuLinalgKernels, under its key found by name (nothing imported from linalg).
    extensions: Object.freeze([Object.freeze([linalgKey(), lapack] as const)]),
  });
  packages.set(splitMinWork, pkg);
  return pkg;
}

function liveThreads(st: State, r: BlasRuntime): number {
  if (!r.diagnostics.loaded) return r.diagnostics.threads;
  const t = st.binding.getThreads();
  return t > 0 ? t : r.diagnostics.threads;
}

/** An explicit core the CPU cannot run is refused before anything is decided. */
function checkCoreFitsCpu(core: string, op: string): void {
  const cpu = cpuIsa();
  const need = isaOfOpenblasCore(core);
  if (cpu !== undefined && need !== undefined && isaRank(need) > isaRank(cpu.level)) {
    throw new TenferroError(
      'InvalidArgument',
      `openblasCoretype ${JSON.stringify(core)} needs ${need.toUpperCase()}, which this CPU (${cpu.level.toUpperCase()}) lacks: OpenBLAS would stop with an illegal instruction`,
      { op, detail: { param: 'options.openblasCoretype', core, cpuIsa: cpu.level } },
    );
  }
}

/**
 * The first explicit `openblasCoretype` decides (until the runtime is loaded, on the first GEMM);
 * a later call asking for another core, or any once the runtime is loaded, is refused.
 */
function checkSameOption(st: State, option: string, op: string): void {
  const same = st.option !== undefined && st.option.toLowerCase() === option.toLowerCase();
  if (same) return;
  if (st.option === undefined && st.loaded === undefined && st.loading === undefined) {
    st.option = option;
    st.plan = planFor(st.report, option, st.envValue);
    st.declared = describeRuntime(st.report, st.plan, false, st.library.source);
    return;
  }
  const planned = st.plan.value ?? st.declared.diagnostics.coreType ?? 'its own choice';
  {
    throw new TenferroError(
      'InvalidArgument',
      `the OpenBLAS core type is already decided for this process (${planned}${st.loaded !== undefined ? ', already loaded' : ''}): openblasCoretype ${JSON.stringify(option)} only takes effect in the first createBlasProvider() call, before the library is first loaded`,
      { op, detail: { param: 'options.openblasCoretype', requested: option, planned } },
    );
  }
}
