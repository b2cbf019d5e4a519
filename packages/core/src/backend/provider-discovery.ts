import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuProviderPackage } from './backend-options.js';
import type { CpuBackendKind } from './placement.js';

/** The provider package of each kind, and its factory. */
export const KIND_PACKAGES: Readonly<Record<CpuBackendKind, { readonly name: string; readonly factory: string }>> = Object.freeze({
  faer: Object.freeze({ name: '@tenferro/provider-faer', factory: 'createFaerProvider' }),
  blas: Object.freeze({ name: '@tenferro/provider-blas', factory: 'createBlasProvider' }),
});

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
  const { name, factory } = KIND_PACKAGES[kind];
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
