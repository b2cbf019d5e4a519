/**
 * Lazy loading of the affinity addon through {@link loadAddon}. Nothing here runs at import time:
 * the addon is loaded on the first `loadOs()` call (per JavaScript realm: the main thread and
 * each worker load it once) and the outcome is cached.
 */
import { ABI, type OsBinding } from './binding.js';
import { type DefinedAddonLoad, defineAddon } from './define-addon.js';

/**
 * The outcome of loading the addon. When unavailable, `reason` is `reasons` joined with `'; '`
 * (kept for callers written before `reasons` and `possibleSolutions`).
 */
export type OsStatus = DefinedAddonLoad<OsBinding, undefined>;

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_OS_DISABLE';

const addon = defineAddon<OsBinding>({
  packageName: '@tenferro/os',
  // native/ relative to this file, in src/ or dist/: native/build/Release, else a prebuilt binary
  // in native/prebuilds/<platform>-<arch>/ (node-gyp-build's lookup).
  native: new URL('../native/', import.meta.url),
  file: 'tenferro_os.node',
  exports: ['gettid', 'yieldThread', 'getThreadAffinity', 'getProcessAffinity', 'setThreadAffinity', 'typedArrayRange', 'adjustExternalMemory',
    'arbiterInfo', 'arbiterOpen', 'arbiterAcquire', 'arbiterRelease', 'arbiterCancel', 'arbiterTakeGrants', 'arbiterRef', 'arbiterStats', 'arbiterReserveOwners'],
  disableEnv: DISABLE_ENV,
  abi: ABI,
  platforms: ['linux'],
});

/**
 * Load the addon once and cache the outcome; never throws.
 *
 * @example
 * ```ts
 * import { loadOs } from '@tenferro/os';
 *
 * const os = loadOs();
 * if (os.available) console.log(os.binding.gettid() === process.pid); // prints: true
 * else console.log(os.reason, os.possibleSolutions);
 * console.log(loadOs() === os); // prints: true
 * ```
 */
export function loadOs(): OsStatus {
  return addon.load();
}
