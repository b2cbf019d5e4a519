// Intel MKL as the optional system BLAS (#42). Runs where MKL's single dynamic library is
// installed (scripts/test-mkl.sh installs it from Debian's non-free component and removes it
// again); elsewhere every case is skipped with that reason. Each case is a child process: the BLAS
// library, its threading layer and its interface layer are process-wide and chosen once.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CORE_DIST_INDEX, DIST_INDEX, runChild } from './helpers.js';

const LINALG_DIST_INDEX = fileURLToPath(new URL('../../linalg/dist/index.js', import.meta.url));
const ADDON = fileURLToPath(new URL('../native/build/Release/tenferro_blas.node', import.meta.url));

function ldconfig(): string {
  try {
    return execFileSync('ldconfig', ['-p'], { encoding: 'utf8' });
  } catch {
    return '';
  }
}
const libs = ldconfig();
const haveMkl = /\blibmkl_rt\.so(\.2)?\b/.test(libs);
const haveGomp = /\blibgomp\.so\.1\b/.test(libs);
const haveIomp = /\blib(iomp5|omp)\.so(\.5)?\b/.test(libs);
const haveTbb = /\blibtbb\.so(\.12|\.2)?\b/.test(libs);
/** MKL's TBB threading layer (Intel's oneMKL packages; Debian 12 has none). */
const haveTbbLayer = /\blibmkl_tbb_thread\.so\b/.test(libs);
/** The system's libblas.so.3 (Debian's update-alternatives choice). */
const systemBlas = (() => {
  try {
    return realpathSync('/usr/lib/x86_64-linux-gnu/libblas.so.3');
  } catch {
    return '';
  }
})();
const mklIsSystem = systemBlas.includes('mkl');

/** The environment of a child: MKL chosen or not, nothing inherited from an outer MKL run unless given. */
function env(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return { TENFERRO_BLAS_LIBRARY: undefined, MKL_THREADING_LAYER: undefined, MKL_INTERFACE_LAYER: undefined, MKL_NUM_THREADS: undefined, ...extra };
}

/**
 * One isolate's work: a blas backend of 2 threads, a 200×160·160×120 f64 GEMM against a JavaScript
 * oracle, a Cholesky and a solve through the LAPACK extension (checked: L·Lᵀ = A, A·x = b, and that
 * the extension ran), then what status() and the census say. Prints one JSON line (main) or posts it.
 */
const WORK = `
import { tracingChannel } from 'node:diagnostics_channel';
const { CpuBackend, Tensor, DIAGNOSTICS_CHANNELS } = await import(${JSON.stringify(CORE_DIST_INDEX)});
const { createBlasProvider, status } = await import(${JSON.stringify(DIST_INDEX)});
const { linalg } = await import(${JSON.stringify(LINALG_DIST_INDEX)});
async function work(library) {
  const kernels = [];
  const ch = tracingChannel(DIAGNOSTICS_CHANNELS.provider);
  const h = { start() {}, end() {}, asyncStart() {}, error() {}, asyncEnd(e) { if (String(e.slot).includes('linalg')) kernels.push(e.kernel); } };
  ch.subscribe(h);
  const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider(library === undefined ? {} : { library })] });
  try {
    const m = 200, k = 160, n = 120;
    const av = Array.from({ length: m * k }, (_, i) => ((i * 7) % 13) - 6), bv = Array.from({ length: k * n }, (_, i) => ((i * 5) % 11) - 5);
    const c = (await backend.matmul(Tensor.fromArray('f64', [m, k], av), Tensor.fromArray('f64', [k, n], bv))).toTypedArray();
    let gemmErr = 0;
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { let s = 0; for (let p = 0; p < k; p++) s += av[i + p * m] * bv[p + j * k]; gemmErr = Math.max(gemmErr, Math.abs(s - c[i + j * m])); }
    const q = 48, spd = new Float64Array(q * q);
    for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) spd[i + j * q] = i === j ? q + 1 : 1 / (1 + i + j);
    const la = linalg(backend);
    const L = (await la.cholesky(Tensor.from(spd, [q, q]))).toTypedArray();
    let cholErr = 0;
    for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) { let s = 0; for (let p = 0; p < q; p++) s += L[i + p * q] * L[j + p * q]; cholErr = Math.max(cholErr, Math.abs(s - spd[i + j * q])); }
    const rhs = Float64Array.from({ length: q }, (_, i) => i - 3);
    const x = (await la.solve(Tensor.from(spd, [q, q]), Tensor.from(rhs, [q, 1]))).toTypedArray();
    let solveErr = 0;
    for (let i = 0; i < q; i++) { let s = 0; for (let j = 0; j < q; j++) s += spd[i + j * q] * x[j]; solveErr = Math.max(solveErr, Math.abs(s - rhs[i])); }
    const s = status();
    const census = backend.census();
    const mklThreads = census.threads.filter((t) => t.owner.kind === 'provider' && /MKL/.test(t.owner.role));
    return {
      gemmErr, cholErr, solveErr, kernels,
      vendor: s.details?.vendor, layer: s.details?.threadingLayer, layerSource: s.details?.threadingLayerSource, threadsPerCall: s.details?.threadsPerCall,
      envThreads: s.details?.envThreads, library: s.details?.library, librarySource: s.details?.librarySource, skipped: s.details?.skippedLibraries,
      diagnostic: backend.executionInfo().providerDiagnostic,
      mklThreads: mklThreads.map((t) => t.owner.role), outside: census.outsideDomain,
      others: census.threads.filter((t) => t.owner.kind === 'other').length,
    };
  } finally {
    ch.unsubscribe(h);
    await backend.close();
  }
}
`;

/** main isolate and a worker_threads isolate, in the given order; one JSON line { main, worker }. */
function isolates(order: 'main-first' | 'worker-first', library: string | undefined): string {
  return `${WORK}
import { Worker } from 'node:worker_threads';
const library = ${JSON.stringify(library)};
const inWorker = () => new Promise((resolve, reject) => {
  const w = new Worker(${JSON.stringify(WORK)} + 'const { parentPort } = await import("node:worker_threads"); parentPort.postMessage(await work(' + JSON.stringify(library) + '));', { eval: true, type: 'module' });
  w.once('message', resolve); w.once('error', reject);
});
const out = {};
if (${JSON.stringify(order)} === 'worker-first') { out.worker = await inWorker(); out.main = await work(library); }
else { out.main = await work(library); out.worker = await inWorker(); }
console.log(JSON.stringify(out));
`;
}

interface Work {
  gemmErr: number;
  cholErr: number;
  solveErr: number;
  kernels: string[];
  vendor: string;
  layer: string;
  layerSource: string | null;
  threadsPerCall: string;
  envThreads: string | null;
  library: string;
  librarySource: string;
  skipped: string | null;
  diagnostic: string;
  mklThreads: string[];
  outside: number[];
  others: number;
}

const LAYERS: readonly { env: string; name: string; runtime: boolean; why: string }[] = [
  { env: 'SEQUENTIAL', name: 'sequential', runtime: true, why: '' },
  { env: 'GNU', name: 'gnu-openmp', runtime: haveGomp, why: 'needs libgomp1' },
  { env: 'INTEL', name: 'intel-openmp', runtime: haveIomp, why: "needs Intel's or LLVM's OpenMP runtime (libomp5-14)" },
];

describe.skipIf(!haveMkl)(`Intel MKL (#42)${haveMkl ? '' : ' (skipped: MKL is not installed — npm run test:mkl installs it)'}`, () => {
  it.skipIf(mklIsSystem)('installing MKL beside the system BLAS does not switch the provider to it; library: mkl does', () => {
    const probe = (library: string | undefined) => `
      const { CpuBackend, Tensor } = await import(${JSON.stringify(CORE_DIST_INDEX)});
      const { createBlasProvider, status } = await import(${JSON.stringify(DIST_INDEX)});
      const before = status();
      const backend = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider(${library === undefined ? '' : JSON.stringify({ library })})] });
      await backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
      const after = status();
      await backend.close();
      console.log(JSON.stringify({ before: before.details?.vendor, after: after.details?.vendor, loaded: after.details?.loaded, library: after.details?.library, source: after.details?.librarySource }));`;
    const system = runChild(probe(undefined), env({}));
    expect(system.status, system.stderr).toBe(0);
    expect(system.json).toMatchObject({ library: 'libblas.so.3', source: 'system', loaded: true });
    const s = system.json as { before: string; after: string };
    expect(s.before).not.toBe('mkl');
    expect(s.after).toBe(s.before);
    const asked = runChild(probe('mkl'), env({}));
    expect(asked.status, asked.stderr).toBe(0);
    expect(asked.json).toMatchObject({ before: s.before, after: 'mkl', source: 'option', loaded: true });
  });

  for (const layer of LAYERS) {
    it.skipIf(!layer.runtime)(`MKL_THREADING_LAYER=${layer.env}: GEMM and LAPACK are right in the main isolate and in a worker isolate (both orders), and the threads are told truly${layer.runtime ? '' : ` (skipped: ${layer.why})`}`, () => {
      for (const order of ['main-first', 'worker-first'] as const) {
        const r = runChild(isolates(order, 'mkl'), env({ MKL_THREADING_LAYER: layer.env, MKL_NUM_THREADS: layer.name === 'sequential' ? undefined : '3' }), 120_000);
        expect(r.signal, `${order}: ${r.stderr.slice(-2000)}`).toBeNull();
        expect(r.status, `${order}: ${r.stderr.slice(-2000)}`).toBe(0);
        const out = r.json as { main: Work; worker: Work };
        for (const [where, w] of Object.entries(out)) {
          const what = `${layer.env} ${order} ${where}`;
          expect(w.vendor, what).toBe('mkl');
          expect(w.layer, what).toBe(layer.name); // never 'unknown' in a worker isolate
          expect(w.layerSource, what).toBe('environment');
          expect(w.gemmErr, what).toBe(0);
          expect(w.cholErr, what).toBeLessThan(1e-9);
          expect(w.solveErr, what).toBeLessThan(1e-9);
          expect(w.kernels, what).toEqual(['extension', 'extension']); // MKL's LAPACK ran, not the built-in kernels
          expect(w.outside, what).toEqual([]);
          // 'mkl' tries libmkl_rt.so.2 (oneMKL) before Debian's libmkl_rt.so: not a library skipped for a reason.
          expect(w.skipped, what).toBeNull();
          if (layer.name === 'sequential') {
            expect(w.threadsPerCall, what).toMatch(/^1: a sequential runtime/);
            expect(w.diagnostic, what).toContain('1 thread per call whatever the thread budget');
            expect(w.mklThreads, what).toEqual([]);
          } else {
            expect(w.threadsPerCall, what).toContain("the backend's thread budget (MKL_Set_Num_Threads_Local");
            expect(w.envThreads, what).toBe('3');
            expect(w.threadsPerCall, what).toContain('MKL_NUM_THREADS=3 from the environment is overridden per call');
            expect(w.diagnostic, what).toContain('MKL_NUM_THREADS=3 overridden per call');
          }
        }
        // The OpenMP team the first 2-thread call started is named in the census of the isolate
        // that loaded MKL (the one that ran first).
        if (layer.name !== 'sequential') expect(out[order === 'main-first' ? 'main' : 'worker'].mklThreads.length, `${layer.env} ${order}`).toBeGreaterThanOrEqual(1);
      }
    });
  }

  it('thread counts are clamped: a GEMM descriptor and setThreads asking for 543,496 threads run on every layer', () => {
    const runs: [string, string, ReturnType<typeof runChild>][] = [];
    for (const layer of LAYERS.filter((l) => l.runtime)) {
      const r = runChild(
        `import { createRequire } from 'node:module';
         const b = createRequire(import.meta.url)(${JSON.stringify(ADDON)});
         const o = b.load({ candidates: ['libmkl_rt.so.2', 'libmkl_rt.so'] });
         const n = 256, d = new Float64Array(18); // large enough for MKL to start its team
         d.set([1, 111, 111, n, n, n, n, n, n, 0, 0, 0, 1, 0, 0, 0, 543496, 0]);
         const A = new Float64Array(n * n).fill(1), C = new Float64Array(n * n);
         const u = (x) => new Uint8Array(x.buffer);
         const st = b.gemm(d, u(A), u(A), u(C));
         console.log(JSON.stringify({ loaded: o.loaded, layer: b.info().mklLayer, status: st, c: C[0], set: b.setThreads(543496), max: b.info().maxThreads }));`,
        env({ MKL_THREADING_LAYER: layer.env }),
        60_000,
      );
      runs.push([layer.env, layer.name, r]);
    }
    // The threaded layers first: unclamped, they die starting 543,496 OpenMP threads (#42).
    for (const [env, name, r] of runs.reverse()) {
      expect(r.signal, `${env}: ${r.stderr}`).toBeNull();
      expect(r.json, `${env}: ${r.stderr.slice(-500)}`).toMatchObject({ loaded: true, layer: name, status: 0, c: 256, set: 0 });
    }
    for (const [, , r] of runs) expect((r.json as { max: number }).max).toBeLessThanOrEqual(4096);
  });

  it('ILP64 is refused with a typed error before anything runs; the system BLAS is named as the one that works', () => {
    const r = runChild(
      `const { createBlasProvider } = await import(${JSON.stringify(DIST_INDEX)});
       try { createBlasProvider({ library: 'mkl' }); console.log(JSON.stringify({ threw: false })); }
       catch (e) { console.log(JSON.stringify({ threw: true, code: e.code, refused: e.detail?.refused, library: e.detail?.library, solutions: e.detail?.possibleSolutions, reasons: e.detail?.reasons })); }`,
      env({ MKL_INTERFACE_LAYER: 'ILP64' }),
      60_000,
    );
    expect(r.status, r.stderr).toBe(0);
    const out = r.json as { threw: boolean; code: string; refused: string; library: string; solutions: string[]; reasons: string[] };
    expect(out).toMatchObject({ threw: true, code: 'ProviderUnavailable', refused: 'ILP64', library: 'mkl' });
    expect(out.reasons.join(' ')).toContain('ILP64');
    if (!mklIsSystem) expect(out.solutions.join(' ')).toMatch(/the system's BLAS loads: (OpenBLAS|the reference BLAS|BLIS)/);
  });

  it.skipIf(haveTbb && haveTbbLayer)(
    `a layer MKL cannot load (TBB) is refused with why — never MKL's exit — and names the library that works${haveTbb && haveTbbLayer ? ' (skipped: MKL\'s TBB layer and libtbb are installed)' : ''}`,
    () => {
      // Debian 12 ships no libmkl_tbb_thread.so: MKL itself answers that with "Intel MKL FATAL
      // ERROR" and exit(2) on its first call, so the addon must look before MKL does.
      const why = haveTbbLayer ? /MKL_THREADING_LAYER=TBB needs its runtime.*libtbb/ : /MKL_THREADING_LAYER=TBB needs MKL's libmkl_tbb_thread\.so.*GNU or SEQUENTIAL/;
      const r = runChild(
        `const { createBlasProvider } = await import(${JSON.stringify(DIST_INDEX)});
         try { createBlasProvider({ library: 'mkl' }); console.log(JSON.stringify({ threw: false })); }
         catch (e) { console.log(JSON.stringify({ threw: true, code: e.code, message: e.message })); }`,
        env({ MKL_THREADING_LAYER: 'TBB' }),
        60_000,
      );
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.json).toMatchObject({ threw: true, code: 'ProviderUnavailable' });
      expect((r.json as { message: string }).message).toMatch(why);
      // The addon itself, loaded in this process with no child probe in front: load() refuses and
      // the process lives on to say so.
      const direct = runChild(
        `import { createRequire } from 'node:module';
         const b = createRequire(import.meta.url)(${JSON.stringify(ADDON)});
         const o = b.load({ candidates: ['libmkl_rt.so'] });
         console.log(JSON.stringify({ loaded: o.loaded, errors: o.errors }));`,
        env({ MKL_THREADING_LAYER: 'TBB' }),
        60_000,
      );
      expect(direct.status, direct.stdout + direct.stderr).toBe(0);
      expect(direct.json).toMatchObject({ loaded: false });
      expect((direct.json as { errors: string[] }).errors.join(' ')).toMatch(why);
      const asked = runChild(
        `const { status } = await import(${JSON.stringify(DIST_INDEX)});
         console.log(JSON.stringify(status()));`,
        env({ TENFERRO_BLAS_LIBRARY: 'mkl', MKL_THREADING_LAYER: 'TBB' }),
        60_000,
      );
      expect(asked.status, asked.stderr).toBe(0);
      const a = asked.json as { available: boolean; reasons: string[]; possibleSolutions: string[] };
      expect(a.available).toBe(false);
      expect(a.reasons.join(' ')).toMatch(why);
      if (!mklIsSystem) expect(a.possibleSolutions.join(' ')).toMatch(/the system's BLAS loads/);
    },
  );
});
