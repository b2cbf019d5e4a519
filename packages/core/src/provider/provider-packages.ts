import { createRequire } from 'node:module';
import type { CpuBackendKind } from '../contract/backend-kind.js';

/**
 * A provider package core looks for by name: `CpuBackend.create` without `providers` uses the
 * kind's package (and every package of kind `'any'`) when the application has it installed.
 */
export interface DiscoverableProviderPackage {
  /** The npm package name. */
  readonly name: string;
  /** The kind whose provider package it is; `'any'`: it fills slots of both kinds' bundles. */
  readonly kind: CpuBackendKind | 'any';
  /** The factory it exports that returns its `CpuProviderPackage`. */
  readonly factory: string;
}

let known: readonly DiscoverableProviderPackage[] | undefined;

/**
 * The provider packages core discovers, as data — core's `package.json` field
 * `"tenferro": { "providerPackages": [{ name, kind, factory }] }` — so that no core source names a
 * package downstream of it (#35). Read on first use (never at import), then kept.
 */
export function discoverableProviderPackages(): readonly DiscoverableProviderPackage[] {
  if (known !== undefined) return known;
  const manifest = createRequire(import.meta.url)('../../package.json') as { tenferro?: { providerPackages?: unknown } };
  const list = manifest.tenferro?.providerPackages;
  if (!Array.isArray(list)) throw new TypeError('@tenferro/core: package.json has no tenferro.providerPackages list');
  known = Object.freeze(
    list.map((p: Record<string, unknown>) => {
      if (typeof p.name !== 'string' || typeof p.factory !== 'string' || (p.kind !== 'faer' && p.kind !== 'blas' && p.kind !== 'any')) {
        throw new TypeError(`@tenferro/core: package.json tenferro.providerPackages has a malformed entry ${JSON.stringify(p)}`);
      }
      return Object.freeze({ name: p.name, kind: p.kind, factory: p.factory });
    }),
  );
  return known;
}

/** The provider package of `kind` (`'faer'`, `'blas'`, or the first of kind `'any'`). */
export function providerPackageOf(kind: CpuBackendKind | 'any'): DiscoverableProviderPackage {
  const p = discoverableProviderPackages().find((k) => k.kind === kind);
  if (p === undefined) throw new TypeError(`@tenferro/core: package.json tenferro.providerPackages names no package of kind ${kind}`);
  return p;
}
