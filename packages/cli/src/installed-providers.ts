import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CpuBackendKind, ProviderPackageStatus } from '@tenferro/core';
import { KNOWN_PACKAGES } from './known-packages.js';

/** A known provider package that resolves from the CLI or the current directory. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  /** Its `package.json`. */
  readonly path: string;
  /** The backend kind whose provider it is (`'any'`: slots of both kinds' bundles), or `null`. */
  readonly kind: CpuBackendKind | 'any' | null;
}

interface Found extends InstalledPackage {
  /** Its entry module, as the requirer that found it resolves it. */
  readonly entry: string | undefined;
}

function find(cwd: string): Found[] {
  const requirers = [createRequire(import.meta.url), createRequire(join(cwd, 'noop.js'))];
  const found: Found[] = [];
  for (const known of KNOWN_PACKAGES) {
    for (const req of requirers) {
      let path: string;
      try {
        path = req.resolve(`${known.name}/package.json`);
      } catch {
        continue; // not resolvable from here
      }
      let entry: string | undefined;
      try {
        entry = req.resolve(known.name);
      } catch {
        entry = undefined;
      }
      const pkg = req(path) as { version?: string };
      found.push({ name: known.name, version: String(pkg.version ?? 'unknown'), path, kind: known.kind ?? null, entry });
      break;
    }
  }
  return found;
}

/**
 * Which of the packages the CLI knows by name (`KNOWN_PACKAGES`) resolve from this CLI or
 * from the current directory (an application's own dependencies). Nothing is imported: only
 * `package.json` files are read.
 */
export function findInstalledProviders(cwd = process.cwd()): InstalledPackage[] {
  return find(cwd).map(({ name, version, path, kind }) => ({ name, version, path, kind }));
}

/** An installed package, imported, with what its `status()` says. */
export interface LoadedPackage extends InstalledPackage {
  /** Its `status()`, or `null` when the installed version exports none. */
  readonly status: ProviderPackageStatus | null;
  /** Its exports, when it could be imported. */
  readonly module: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Import each installed known package and call its `status()` (which may load its native addon
 * on this thread). A package that cannot be imported, or whose `status()` throws, is reported
 * unavailable with the error.
 */
export async function loadInstalledProviders(cwd = process.cwd()): Promise<LoadedPackage[]> {
  const loaded: LoadedPackage[] = [];
  for (const { entry, ...p } of find(cwd)) {
    let module: Record<string, unknown> | undefined;
    let status: ProviderPackageStatus | null;
    try {
      if (entry === undefined) throw new Error('it has no entry point this CLI can import');
      module = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
      status = typeof module.status === 'function' ? ((module.status as () => ProviderPackageStatus)() ?? null) : null;
    } catch (error) {
      const what = module === undefined ? 'cannot be imported' : 'status() failed';
      status = {
        available: false,
        reasons: [`${p.name} ${what}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`],
        possibleSolutions: [`reinstall ${p.name}`],
      };
    }
    loaded.push({ ...p, status, module });
  }
  return loaded;
}
