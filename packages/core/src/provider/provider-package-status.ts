/**
 * What a provider package's `status()` reports — one shape for every package, so tools (`tenferro
 * info`) list them without knowing each. Calling it may load the package's native addon on the
 * calling thread; importing the package never does.
 */
export type ProviderPackageStatus = ProviderPackageAvailable | ProviderPackageUnavailable;

/** A provider package that can run here: what it runs, facts about it, and warnings with their fixes. */
export interface ProviderPackageAvailable {
  readonly available: true;
  /** The package's diagnostic name for what it runs (e.g. `tenferro faer GEMM (avx512f)`). */
  readonly name: string;
  /** Facts for people and tools, in display order (ISA path, library, version, threading …). */
  readonly details: Readonly<Record<string, string | number | boolean | null>>;
  /** Things that work but not as well as they could, each with its fix. */
  readonly warnings: readonly string[];
  /** The native addon that was loaded, when the package has one. */
  readonly addonPath?: string;
}

/** Why the package cannot run here, and what would fix it (sharp's shape). */
export interface ProviderPackageUnavailable {
  readonly available: false;
  readonly reasons: readonly string[];
  readonly possibleSolutions: readonly string[];
}
