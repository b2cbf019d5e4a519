import type { CpuBackendKind } from '@tenferro/core';

/**
 * The packages `tenferro info` (and `census`, `bench`) look for: the provider package of each
 * backend kind, the packages of kind `'any'` that fill slots of both kinds' bundles, and the
 * operation families. The CLI's own list (#35: core names no package downstream of it; what core
 * itself discovers at `CpuBackend.create` is data in its `package.json`).
 */
export const KNOWN_PACKAGES: readonly KnownPackage[] = Object.freeze([
  Object.freeze({ name: '@tenferro/provider-faer', kind: 'faer', factory: 'createFaerProvider' }),
  Object.freeze({ name: '@tenferro/provider-blas', kind: 'blas', factory: 'createBlasProvider' }),
  Object.freeze({ name: '@tenferro/provider-tprims', kind: 'any', factory: 'createTprimsProvider' }),
  Object.freeze({ name: '@tenferro/linalg', kind: undefined, factory: undefined }),
] as const);

/** A package the CLI knows and looks for. */
export interface KnownPackage {
  /** The npm package name. */
  readonly name: string;
  /** The kind whose provider package this is, if any; `'any'`: it fills slots of both kinds' bundles. */
  readonly kind: CpuBackendKind | 'any' | undefined;
  /** The factory that returns its `CpuProviderPackage`, if it is a provider package. */
  readonly factory: string | undefined;
}
