import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The provider and extension packages tenferro knows by name. */
export const KNOWN_PROVIDER_PACKAGES = [
  '@tenferro/provider-blas',
  '@tenferro/provider-faer',
  '@tenferro/provider-tprims',
  '@tenferro/linalg',
] as const;

export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  readonly path: string;
}

/**
 * Which known provider packages resolve from this CLI or from the current directory (an
 * application's own dependencies). Nothing is imported: only `package.json` files are read.
 */
export function findInstalledProviders(cwd = process.cwd()): InstalledPackage[] {
  const requirers = [createRequire(import.meta.url), createRequire(join(cwd, 'noop.js'))];
  const found: InstalledPackage[] = [];
  for (const name of KNOWN_PROVIDER_PACKAGES) {
    for (const req of requirers) {
      try {
        const path = req.resolve(`${name}/package.json`);
        const pkg = req(path) as { version?: string };
        found.push({ name, version: String(pkg.version ?? 'unknown'), path });
        break;
      } catch {
        // not resolvable from here
      }
    }
  }
  return found;
}
