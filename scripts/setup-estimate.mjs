// How long scripts/setup.mjs's first build takes, said before it starts (#39 item 5): the CPU time
// each native package's translation units took, measured on a 2-vCPU AMD EPYC (Zen 3, AVX2) with
// g++ 12 at commit 1aec0be (a wrapper timing every compiler call), divided by the
// CPUs the compilers share (turbo builds the packages side by side, make runs 2 jobs per package).
// A rough figure: a faster or slower CPU scales it.

/** The native packages, in the order they are reported. */
export const NATIVE_PACKAGES = ['os', 'provider-blas', 'provider-faer', 'provider-tprims', 'linalg'];

/** CPU seconds per package: `base` always, plus each optional instruction-set path it builds. */
// (linalg after b26b36b: ops_c64.cc no longer compiles the complex<double> SVD; AVX-512 figures are
// estimates — this machine has no AVX-512.)
const CPU_SECONDS = {
  os: { base: 6 },
  'provider-blas': { base: 8 },
  'provider-faer': { base: 26, avx2: 33, avx512: 35 },
  'provider-tprims': { base: 58, avx2: 52, avx512: 55 }, // at -O2 (c34f8cf): 110 CPU s for base + avx2, was 232
  linalg: { base: 360, avx2: 126, avx512: 140 },
};
/** The TypeScript builds (tsgo) and turbo's own start, in wall seconds. */
const TYPESCRIPT_SECONDS = 15;

/**
 * Seconds of wall time to build `packages` for `mode` ('all' | 'host' | 'best') on `cpuCount` CPUs.
 * `paths` ({ avx2, avx512 }) is what the mode builds here (isa-paths.mjs isaPaths).
 */
export function estimateBuildSeconds(packages, paths, cpuCount) {
  let cpu = 0;
  for (const p of packages) {
    const c = CPU_SECONDS[p];
    if (c === undefined) continue;
    cpu += c.base + (paths.avx2 ? (c.avx2 ?? 0) : 0) + (paths.avx512 ? (c.avx512 ?? 0) : 0);
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
