/** What `native/binding.gyp` needs on disk (read from the gyp file and package.json's `tenferro.nativeInputs`). */
export interface GypInputs {
  /** Top-level entries of native/ to copy (`binding.gyp`, `src`, `include`, `eigen-include.cjs`, …). */
  readonly entries: readonly string[];
  /** Paths outside native/ that the gyp file names: as written and absolute. */
  readonly external: readonly { readonly written: string; readonly abs: string }[];
  /** The `<!(…)` commands, as written. */
  readonly commands: readonly string[];
  /** What package.json's `tenferro.nativeInputs` lists. */
  readonly declared: readonly string[];
  /** Declared inputs, or scripts a command runs, that do not exist. */
  readonly missing: readonly string[];
}

/** The inputs of `<nativeDir>/binding.gyp`. */
export declare function gypInputs(nativeDir: string, options?: { declared?: readonly string[] }): GypInputs;

/** The folder holding `include/node/node_api.h` of the running Node, or undefined (nothing is downloaded). */
export declare function nodeHeadersDir(env?: Record<string, string | undefined>): string | undefined;

/** Copies what binding.gyp needs into `workDir` (default `native/build/prebuild`), emptied first; throws on a missing input. */
export declare function stagePrebuild(options: { packageDir: string; workDir?: string }): { workDir: string; inputs: GypInputs };

/** `node-gyp configure` in a staged copy, with the package's own node-gyp and the local Node headers. */
export declare function configureStaged(options: { packageDir: string; workDir: string; env?: Record<string, string | undefined> }): { ok: boolean; output: string };

/** Builds `native/prebuilds/<platform>-<arch>/<@scope+name>.glibc.node` with prebuildify from a staged copy; throws on failure. */
export declare function prebuild(options: { packageDir: string; force?: boolean; say?: (line: string) => void }): {
  skipped: boolean;
  file: string;
  seconds?: number;
  bytes?: number;
};

/** The bin and version of a tool the package depends on (resolved from the package). */
export declare function toolOf(packageDir: string, name: string, fallbackBin: string): { bin: string; version: string };
