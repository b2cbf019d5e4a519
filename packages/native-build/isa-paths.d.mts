// Types of isa-paths.mjs, for the tests that import it (#39).
export interface IsaPaths {
  readonly avx2: boolean;
  readonly avx512: boolean;
}
export declare const ISA_MODES: readonly string[];
export declare function hostHasAvx2(flags?: Set<string>): boolean;
export declare function hostHasAvx512(flags?: Set<string>): boolean;
export declare function isaPaths(mode?: string, cpu?: IsaPaths): IsaPaths;
export declare function buildIsaMode(env?: NodeJS.ProcessEnv): string;
export declare function setupIsaMode(env?: NodeJS.ProcessEnv, argv?: readonly string[]): string;
export declare function describeIsaPaths(mode?: string, cpu?: IsaPaths): string;
export declare function isaGypArgs(mode?: string, cpu?: IsaPaths): string[];
