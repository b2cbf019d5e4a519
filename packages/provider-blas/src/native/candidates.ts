/**
 * Which BLAS libraries `binding.load()` tries, in order (the addon dlopen()s them at run time, so
 * one build serves OpenBLAS, MKL, BLIS and the reference BLAS). The choice, first that applies:
 *   1. `createBlasProvider({ library })` — `'mkl'`, `'openblas'`, or a soname or path;
 *   2. `TENFERRO_BLAS_LIBRARY` — the same words, `:`-separated for several;
 *   3. the system's choice: `libblas.so.3` (on Debian/Ubuntu the update-alternatives choice:
 *      OpenBLAS, BLIS, the reference BLAS or MKL, each with CBLAS inside, which also follows
 *      `LD_LIBRARY_PATH`), then OpenBLAS and BLIS by name, then a separate reference CBLAS.
 * MKL is never among the system candidates by name: installing it beside OpenBLAS does not switch
 * the provider to it (#42). It is used when the system selects it as `libblas.so.3`
 * (`update-alternatives --set libblas.so.3-x86_64-linux-gnu …/libmkl_rt.so`) or when asked for.
 */

/** A library choice (`'mkl'`, `'openblas'`, or a soname or path; several `:`-separated) to load instead of the system's. */
export const LIBRARY_ENV = 'TENFERRO_BLAS_LIBRARY';

export const DEFAULT_CANDIDATES: readonly string[] = Object.freeze(['libblas.so.3', 'libopenblas.so.0', 'libopenblas.so', 'libblis.so.4', 'libblis.so', 'libcblas.so.3', 'libblas.so']);

/** The names a library choice may use instead of sonames. */
export const LIBRARY_ALIASES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  // MKL's single dynamic library: .so.2 from oneMKL 2021 on, .so in 2020 (Debian bookworm's 2020.4).
  mkl: Object.freeze(['libmkl_rt.so.2', 'libmkl_rt.so']),
  openblas: Object.freeze(['libopenblas.so.0', 'libopenblas.so']),
});

/** Where the candidates came from. */
export type LibrarySource = 'option' | 'environment' | 'system';

/** The libraries to try and why. `key` names the choice (equal keys: the same choice). */
export interface LibraryChoice {
  readonly candidates: readonly string[];
  readonly source: LibrarySource;
  /** What was asked (`'mkl'`, a soname …; `:`-joined), `undefined` for the system's choice. */
  readonly requested: string | undefined;
  readonly key: string;
}

function expand(words: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of words) for (const c of LIBRARY_ALIASES[w.toLowerCase()] ?? [w]) if (!out.includes(c)) out.push(c);
  return out;
}

/** The candidates for `library` (an option, already validated), else the environment's, else the system's. */
export function libraryChoice(library: string | undefined, env: NodeJS.ProcessEnv = process.env): LibraryChoice {
  if (library !== undefined) {
    const candidates = Object.freeze(expand([library]));
    return Object.freeze({ candidates, source: 'option', requested: library, key: candidates.join(':') });
  }
  const words = (env[LIBRARY_ENV] ?? '')
    .split(':')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (words.length > 0) {
    const candidates = Object.freeze(expand(words));
    return Object.freeze({ candidates, source: 'environment', requested: words.join(':'), key: candidates.join(':') });
  }
  return Object.freeze({ candidates: DEFAULT_CANDIDATES, source: 'system', requested: undefined, key: DEFAULT_CANDIDATES.join(':') });
}

/** The candidates for this environment (`TENFERRO_BLAS_LIBRARY`, else the system's). */
export function blasCandidates(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  return libraryChoice(undefined, env).candidates;
}
