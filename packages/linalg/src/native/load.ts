/**
 * Lazy loading of the built-in kernels' addon through core's `loadAddon`: nothing runs at import;
 * the first `loadLinalg()` of a realm (the main thread for `status()`, each engine worker on its
 * first task) loads it, and the outcome is cached.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AddonAvailable, type AddonUnavailable, loadAddon } from '@tenferro/core';
import { type LinalgBinding, W } from './binding.js';

export type LinalgLoadStatus = AddonAvailable<LinalgBinding> | (AddonUnavailable & { readonly reason: string });

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_LINALG_DISABLE';

let cached: LinalgLoadStatus | undefined;

export function loadLinalg(): LinalgLoadStatus {
  if (cached === undefined) {
    const load = loadAddon<LinalgBinding>({
      packageName: '@tenferro/linalg',
      addon: findAddon(),
      status: new URL('../../native/build/status.json', import.meta.url),
      exports: ['run', 'info'],
      disableEnv: DISABLE_ENV,
      platforms: ['linux-x64', 'linux-arm64'],
      check: (binding: LinalgBinding) =>
        binding.descHeader !== W.HEADER
          ? `the addon reads a ${String(binding.descHeader)}-word task header but this package writes ${W.HEADER}: the addon was built from another version of @tenferro/linalg`
          : undefined,
      advice: { possibleSolutions: ['apt-get install libeigen3-dev (Eigen 3.4 headers, needed to build from source), then npm rebuild @tenferro/linalg'] },
    });
    cached = load.available ? load : Object.freeze({ ...load, reason: load.reasons.join('; ') });
    if (load.available) {
      const info = load.binding.info();
      // Never silently slow: an addon built elsewhere without a path this CPU runs says so, once per realm.
      if (info.runsNotBuilt) {
        process.emitWarning(`tenferro linalg: ${slowerPathWarning(info.notBuilt)}`, {
          type: 'TenferroWarning',
          code: 'TENFERRO_ISA_PATH_NOT_BUILT',
        });
      }
    }
  }
  return cached;
}

function findAddon(): string {
  const dir = fileURLToPath(new URL('../../native/', import.meta.url));
  try {
    return (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path(dir);
  } catch {
    return join(dir, 'build', 'Release', 'tenferro_linalg.node');
  }
}

/** What a build without `notBuilt`, on a CPU that runs it, warns (once per realm, and in `status().warnings`). */
export function slowerPathWarning(notBuilt: string): string {
  return `the built-in kernels run a slower path than this CPU could: the addon was built without ${notBuilt} (TENFERRO_NATIVE_ISA=host on another machine, or a sanitizer build); rebuild it here (npm rebuild @tenferro/linalg)`;
}
