import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import type { ProviderPackageStatus } from '../provider/provider-package-status.js';
import type { CpuBackendKind } from '../contract/backend-kind.js';

/**
 * The packages tenferro knows by name: the provider package of each kind (found by
 * `CpuBackend.create` when installed), and the others that tools such as `tenferro info` list.
 * Each exports `status()` ({@link ProviderPackageStatus}) and, if it is a kind's provider, its
 * `factory`.
 */
export const KNOWN_PROVIDER_PACKAGES: readonly KnownProviderPackage[] = Object.freeze([
  Object.freeze({ name: '@tenferro/provider-faer', kind: 'faer', factory: 'createFaerProvider' }),
  Object.freeze({ name: '@tenferro/provider-blas', kind: 'blas', factory: 'createBlasProvider' }),
  Object.freeze({ name: '@tenferro/provider-tprims', kind: undefined, factory: undefined }),
  Object.freeze({ name: '@tenferro/linalg', kind: undefined, factory: undefined }),
] as const);

export interface KnownProviderPackage {
  readonly name: string;
  /** The kind whose provider package this is, if any. */
  readonly kind: CpuBackendKind | undefined;
  /** The factory that returns its {@link CpuProviderPackage}. */
  readonly factory: string | undefined;
}

function kindPackage(kind: CpuBackendKind): { readonly name: string; readonly factory: string } {
  const p = KNOWN_PROVIDER_PACKAGES.find((k) => k.kind === kind)!;
  return { name: p.name, factory: p.factory! };
}

export interface Discovery {
  readonly package: CpuProviderPackage | undefined;
  /** Why nothing was used, for diagnostics. */
  readonly note: string | undefined;
}

/**
 * When `CpuBackend.create` is given no `providers`, the kind's provider package is used if the
 * application has it installed — resolved from core's own location, then from the current
 * directory — by calling its factory. Nothing registers itself at import: this is the only
 * place a provider is picked up, at backend creation. A faer package whose native kernels
 * cannot load leaves core's reference kernels in place (and says why); a blas package that cannot
 * load is an error, since the kind has no fallback. `TENFERRO_DISCOVER_PROVIDERS=0` turns it off.
 */
export async function discoverProvider(kind: CpuBackendKind, op: string): Promise<Discovery> {
  const { name, factory } = kindPackage(kind);
  if (process.env.TENFERRO_DISCOVER_PROVIDERS === '0') return { package: undefined, note: `provider discovery is off (TENFERRO_DISCOVER_PROVIDERS=0)` };
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    let resolved: string;
    try {
      resolved = createRequire(base).resolve(name);
    } catch {
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    } catch (e) {
      if (kind === 'faer') return { package: undefined, note: `${name} is installed but could not be loaded (${e instanceof Error ? e.message : String(e)})` };
      throw new TenferroError('BackendKindUnavailable', `${name} is installed but could not be loaded`, { op, cause: e, detail: { kind, package: name } });
    }
    const create = mod[factory];
    if (typeof create !== 'function') return { package: undefined, note: `${name} has no ${factory}()` };
    try {
      return { package: (create as () => CpuProviderPackage)(), note: undefined };
    } catch (e) {
      if (!TenferroError.is(e, 'ProviderUnavailable')) throw e;
      if (kind === 'faer') return { package: undefined, note: `${name} is installed but unavailable: ${e.message}` };
      throw new TenferroError('BackendKindUnavailable', `${name} is installed but cannot run here: ${e.message}`, { op, cause: e, detail: { kind, package: name } });
    }
  }
  return { package: undefined, note: `${name} is not installed` };
}
