/** The built-in kernels' addon through `defineAddon` (#40): nothing loads at import; `loadLinalg()` loads it once per realm. */
import { defineAddon } from '@tenferro/core/kernel';
import { ABI, type LinalgBinding, W } from './binding.js';

/** `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_LINALG_DISABLE';
export const linalgAddon = defineAddon<LinalgBinding, ReturnType<LinalgBinding['info']>>({
  packageName: '@tenferro/linalg',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_linalg.node',
  exports: ['run', 'info'],
  disableEnv: DISABLE_ENV,
  abi: ABI,
  platforms: ['linux-x64', 'linux-arm64'],
  check: (b) =>
    b.descHeader !== W.HEADER
      ? `the addon reads a ${String(b.descHeader)}-word task header but this package writes ${W.HEADER}: the addon was built from another version of @tenferro/linalg`
      : undefined,
  info: (b) => b.info(),
  label: 'tenferro linalg',
  advice: { possibleSolutions: ['apt-get install libeigen3-dev (Eigen 3.4 headers, needed to build from source), then npm rebuild @tenferro/linalg'] },
});

/** Load the addon once per realm and cache the outcome; never throws. */
export const loadLinalg = linalgAddon.load;
