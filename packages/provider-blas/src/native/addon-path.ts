/** Where the addon is: `TENFERRO_BLAS_ADDON` (another build, e.g. a sanitizer build), else this package's build. No imports of core: the identification child (src/probe-child.ts) uses it too. */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Path of another build of the addon; inherited by engine workers and the identification child. */
export const ADDON_ENV = 'TENFERRO_BLAS_ADDON';

export function addonOverride(): string | undefined {
  const other = process.env[ADDON_ENV] || undefined;
  return other === undefined ? undefined : resolve(other);
}

/** The addon file: relative to this file, in src/native/ or dist/native/. */
export function addonPath(): string {
  return addonOverride() ?? fileURLToPath(new URL('../../native/build/Release/tenferro_blas.node', import.meta.url));
}
