/**
 * Lazy loading of the native addon, through core's `loadAddon`. Nothing here runs at import time:
 * the addon is loaded on the first `loadTprims()` call (per JavaScript realm: the main thread and
 * each engine worker load it once) and the outcome is cached.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AddonAvailable, type AddonUnavailable, loadAddon } from '@tenferro/core';
import { DESC, MAX_RANK, type NativeInfo, type TprimsBinding } from './binding.js';

/** The loader's result, plus the default ISA path's info; `reason` is `reasons` joined with `'; '`. */
export type TprimsLoadStatus =
  | (AddonAvailable<TprimsBinding> & { readonly info: NativeInfo })
  | (AddonUnavailable & { readonly reason: string });

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_TPRIMS_DISABLE';

let cached: TprimsLoadStatus | undefined;

/** Load the addon once and cache the outcome; never throws. */
export function loadTprims(): TprimsLoadStatus {
  if (cached === undefined) {
    const load = loadAddon<TprimsBinding>({
      packageName: '@tenferro/provider-tprims',
      addon: findAddon(),
      status: new URL('../../native/build/status.json', import.meta.url),
      exports: ['run', 'supports', 'info'],
      disableEnv: DISABLE_ENV,
      platforms: ['linux-x64', 'linux-arm64'],
      check: checkBinding,
      advice: {
        possibleSolutions: ["do without it: core then runs its reference tensor primitives and layout transform (TypeScript, sequential, slower)"],
      },
    });
    cached = load.available
      ? Object.freeze({ ...load, info: load.binding.info()! })
      : Object.freeze({ ...load, reason: load.reasons.join('; ') });
  }
  return cached;
}

/** The addon must read the task descriptor this package writes, and have an ISA path this CPU runs. */
function checkBinding(binding: TprimsBinding): string | undefined {
  if (binding.descHeader !== DESC.HEADER) {
    return `the addon's task descriptor header has ${String(binding.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: the addon was built from another version of @tenferro/provider-tprims`;
  }
  if (binding.maxRank !== MAX_RANK) return `the addon takes ${String(binding.maxRank)} axes but this package's TypeScript expects ${MAX_RANK}: the addon was built from another version of @tenferro/provider-tprims`;
  if (binding.info() === null) return 'the addon reports no ISA path this CPU can run';
  return undefined;
}

/**
 * The addon file, as node-gyp-build finds it in native/ (relative to this file, in src/native/ or
 * dist/native/): a local build in native/build/Release, else the prebuilt binary for this platform
 * in native/prebuilds/<platform>-<arch>/; the build path when there is neither (the loader then
 * explains why from the build record).
 */
function findAddon(): string {
  const dir = fileURLToPath(new URL('../../native/', import.meta.url));
  try {
    return (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path(dir);
  } catch {
    return join(dir, 'build', 'Release', 'tenferro_tprims.node');
  }
}
