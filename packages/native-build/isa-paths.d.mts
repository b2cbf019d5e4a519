// Types of isa-paths.mjs, for the tests that import it (#39).
/** What a CPU runs (isaPaths' `cpu` argument, for tests). */
export interface IsaCpu {
  readonly avx2: boolean;
  readonly avx512: boolean;
}
/** What a mode builds: the optional paths, and whether the baseline copy of kernels that have a built vector copy is kept. */
export interface IsaPaths extends IsaCpu {
  readonly portable: boolean;
}
export declare const ISA_MODES: readonly string[];
export declare function hostHasAvx2(flags?: Set<string>): boolean;
export declare function hostHasAvx512(flags?: Set<string>): boolean;
export declare function isaPaths(mode?: string, cpu?: IsaCpu): IsaPaths;
export declare function buildIsaMode(env?: NodeJS.ProcessEnv): string;
export declare function setupIsaMode(env?: NodeJS.ProcessEnv, argv?: readonly string[]): string;
export declare function describeIsaPaths(mode?: string, cpu?: IsaCpu): string;
export declare function isaGypArgs(mode?: string, cpu?: IsaCpu): string[];
