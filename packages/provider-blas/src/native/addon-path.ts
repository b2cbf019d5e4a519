/** Where the addon is: `TENFERRO_BLAS_ADDON` (another build, e.g. a sanitizer build), else this package's build. No imports of core: the identification child (src/probe-child.ts) uses it too. */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Path of another build of the addon; inherited by engine workers and the identification child. */
export const ADDON_ENV = 'TENFERRO_BLAS_ADDON';

export function addonOverride(): string | undefined {
  const other = process.env[ADDON_ENV] || undefined;
  return other === undefined ? undefined : resolve(other);
}

/** The addon file: the override, else the package's prebuilt binary or its own build (node-gyp-build's lookup), relative to src/native/ or dist/native/. */
export function addonPath(): string {
  const other = addonOverride();
  if (other !== undefined) return other;
  const dir = fileURLToPath(new URL('../../native/', import.meta.url));
  try {
    return (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path(dir);
  } catch {
    return join(dir, 'build', 'Release', 'tenferro_blas.node');
  }
}
