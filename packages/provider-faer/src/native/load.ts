/**
 * Lazy loading of the native addon, through core's `loadAddon`. Nothing here runs at import time:
 * the addon is loaded on the first `loadFaer()` call (per JavaScript realm: the main thread and
 * each engine worker load it once) and the outcome is cached.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AddonAvailable, type AddonUnavailable, loadAddon } from '@tenferro/core';
import { DESC, type FaerBinding, type NativeInfo } from './binding.js';

/** The loader's result, plus the default ISA path's info; `reason` is `reasons` joined with `'; '`. */
export type FaerLoadStatus =
  | (AddonAvailable<FaerBinding> & { readonly info: NativeInfo })
  | (AddonUnavailable & { readonly reason: string });

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_FAER_DISABLE';

let cached: FaerLoadStatus | undefined;

/** Load the addon once and cache the outcome; never throws. */
export function loadFaer(): FaerLoadStatus {
  if (cached === undefined) {
    const load = loadAddon<FaerBinding>({
      packageName: '@tenferro/provider-faer',
      addon: findAddon(),
      status: new URL('../../native/build/status.json', import.meta.url),
      exports: ['gemm', 'info', 'fmaPeak'],
      disableEnv: DISABLE_ENV,
      platforms: ['linux-x64', 'linux-arm64'],
      check: checkBinding,
      advice: {
        possibleSolutions: ["do without it: CpuBackend.create({ kind: 'faer' }) then runs core's reference kernels (TypeScript, slower)"],
      },
    });
    cached = load.available
      ? Object.freeze({ ...load, info: load.binding.info()! })
      : Object.freeze({ ...load, reason: load.reasons.join('; ') });
  }
  return cached;
}

/** The addon must read the task descriptor this package writes, and have an ISA path this CPU runs. */
function checkBinding(binding: FaerBinding): string | undefined {
  if (binding.descHeader !== DESC.HEADER) {
    return `the addon's GEMM descriptor header has ${String(binding.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: the addon was built from another version of @tenferro/provider-faer`;
  }
  if (binding.descSummed !== true) {
    return "the addon does not read the summed axes this package's TypeScript writes into a GEMM descriptor: it was built from an older version of @tenferro/provider-faer";
  }
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
    return join(dir, 'build', 'Release', 'tenferro_faer.node');
  }
}
