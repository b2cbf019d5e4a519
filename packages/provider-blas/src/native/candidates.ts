/**
 * Which BLAS libraries `binding.load()` tries, in order (the addon dlopen()s them at run time, so
 * one build serves OpenBLAS, MKL, BLIS and the reference BLAS):
 *   1. `TENFERRO_BLAS_LIBRARY` (a soname or a path; `:`-separated for several) — when set, only those;
 *   2. MKL's single dynamic library (`libmkl_rt.so.2`, `libmkl_rt.so`), as the build-time detection
 *      preferred it;
 *   3. `libblas.so.3`: on Debian/Ubuntu the update-alternatives choice (OpenBLAS, BLIS or the
 *      reference BLAS, each with CBLAS inside), which also follows `LD_LIBRARY_PATH`;
 *   4. OpenBLAS and BLIS by name, then a separate reference CBLAS (`libcblas.so.3`, other distributions).
 */

/** A soname or path (or several, `:`-separated) to load instead of the search below. */
export const LIBRARY_ENV = 'TENFERRO_BLAS_LIBRARY';

export const DEFAULT_CANDIDATES: readonly string[] = Object.freeze([
  'libmkl_rt.so.2',
  'libmkl_rt.so',
  'libblas.so.3',
  'libopenblas.so.0',
  'libopenblas.so',
  'libblis.so.4',
  'libblis.so',
  'libcblas.so.3',
  'libblas.so',
]);

/** The candidates for this environment. */
export function blasCandidates(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const explicit = (env[LIBRARY_ENV] ?? '')
    .split(':')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return explicit.length > 0 ? Object.freeze(explicit) : DEFAULT_CANDIDATES;
}
