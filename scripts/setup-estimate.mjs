// How long scripts/setup.mjs's first build takes, said before it starts (#39 item 5): the CPU time
// each native package's translation units took, measured on a 2-vCPU AMD EPYC (Zen 3, AVX2) with
// g++ 12 at commit 1aec0be (a wrapper timing every compiler call), divided by the
// CPUs the compilers share (turbo builds the packages side by side, make runs 2 jobs per package).
// A rough figure: a faster or slower CPU scales it.

/** The native packages, in the order they are reported. */
export const NATIVE_PACKAGES = ['os', 'provider-blas', 'provider-faer', 'provider-tprims', 'linalg'];

/**
 * CPU seconds per package: `base` always, plus each optional instruction-set path it builds, plus
 * `portable` — the baseline copy of kernels that also have a vector copy — unless the mode leaves it
 * out (isa-paths.mjs `portable: false`: `best` on a CPU with AVX2 or AVX-512). linalg's `f64`: the
 * same for its f64-only build (TENFERRO_LINALG_DTYPES=f64, set-up under `npm run demo`).
 */
// (linalg measured per translation unit with a timing g++ wrapper in a 2-job host build at 6e93520,
// 424 CPU s in all, #39: base = the baseline complex units — ops_c128.cc 75, ops_c128_wide.cc 43
// (c128's complex<long double> SVD retry, split out of ops_c128.cc, which took 135–146 alone),
// ops_c64.cc 75 — and addon/shapes/dispatch 3; portable = baseline ops_f64.cc 44 + ops_f32.cc 51;
// avx2 = ops_f64.cc 62 + ops_f32.cc 70; f64 only: the avx2 ops_f64.cc and the addon took 51 CPU s
// alone. AVX-512 figures are estimates — this machine has no AVX-512. Since then (2-vCPU Xeon,
// AVX-512, the same wrapper): ops_c128_wide.cc's retry instantiates JacobiSVD alone, 53 → 9 CPU s;
// the AVX-512 units leave svd and eig to the AVX2 ones where both are built (binding.gyp), 114 →
// 35 CPU s for f32 + f64 — `avx512BesideAvx2`.)
// linalg since 2026-12-08 (its native/cxx-select.cjs: clang++ compiles the f32 and complex units when
// it is installed, g++ the f64 ones; a timing wrapper, host build on a 2-vCPU AMD EPYC Zen 5, 272
// CPU s in all): base = ops_c128.cc 32, ops_c128_wide.cc 7, ops_c64.cc 38, addon/shapes/dispatch 3;
// portable = ops_f64.cc 46 (g++) + ops_f32.cc 27; avx2 = 59 + 29; AVX-512 beside AVX2 18 + 12
// (alone: an estimate scaled from g++'s). `LINALG_GXX`: every unit on g++ (no clang++ installed).
const LINALG_GXX = { base: 163, portable: 95, avx2: 132, avx512: 140, avx512BesideAvx2: 35 };
const CPU_SECONDS = {
  os: { base: 6 },
  'provider-blas': { base: 8 },
  'provider-faer': { base: 17, avx2: 22, avx512: 27 }, // with -fno-unswitch-loops (2026-12-08, Zen 5): 66 CPU s, was 117
  'provider-tprims': { base: 58, avx2: 52, avx512: 55 }, // at -O2 (c34f8cf): 110 CPU s for base + avx2, was 232
  linalg: { base: 80, portable: 73, avx2: 88, avx512: 95, avx512BesideAvx2: 30, f64: { base: 3, portable: 44, avx2: 48, avx512: 55, avx512BesideAvx2: 17 } },
};
/** The TypeScript builds (tsgo) and turbo's own start, in wall seconds. */
const TYPESCRIPT_SECONDS = 15;

/**
 * Seconds of wall time to build `packages` for `mode` ('all' | 'host' | 'best') on `cpuCount` CPUs.
 * `paths` ({ avx2, avx512, portable }) is what the mode builds here (isa-paths.mjs isaPaths).
 * `options.linalgDtypes` 'f64': linalg's f64 kernels only (set-up under `npm run demo`);
 * `options.linalgPaths`: the paths linalg is built for, when not `paths` (set-up builds it in `best`).
 * `options.clang` false: no clang++ here, g++ compiles every linalg unit (native/cxx-select.cjs).
 */
export function estimateBuildSeconds(packages, paths, cpuCount, options = {}) {
  let cpu = 0;
  for (const p of packages) {
    let c = CPU_SECONDS[p];
    if (c === undefined) continue;
    const q = p === 'linalg' ? (options.linalgPaths ?? paths) : paths;
    if (p === 'linalg' && options.linalgDtypes === 'f64') c = c.f64;
    else if (p === 'linalg' && options.clang === false) c = LINALG_GXX;
    const avx512 = q.avx2 ? (c.avx512BesideAvx2 ?? c.avx512) : c.avx512;
    cpu += c.base + (q.portable === false ? 0 : (c.portable ?? 0)) + (q.avx2 ? (c.avx2 ?? 0) : 0) + (q.avx512 ? (avx512 ?? 0) : 0);
  }
  // make runs 2 jobs per package and five packages build at once: at most 10 compilers in parallel.
  return cpu / Math.max(1, Math.min(cpuCount, 10)) + TYPESCRIPT_SECONDS;
}

/** 75 → '1 min 15 s'; 42 → '42 s'. */
export function formatSeconds(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
}
