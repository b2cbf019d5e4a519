// The part of every package's vitest config that is the same everywhere (#39):
//  - the shared setup file (scripts/vitest-setup.mjs: no test without an assertion, an unhandled
//    rejection fails the test it happened in);
//  - with TENFERRO_TIER=<tier> (set by scripts/test-all.mjs), only the package's files of that tier
//    (scripts/test-tiers.mjs), and no error when the package has none.
// Usage in packages/<pkg>/vitest.config.ts:
//   export default defineConfig({ test: tenferroTest(import.meta.url, { name: '@tenferro/x', testTimeout: 60_000 }) });
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesInTier, TIERS } from './test-tiers.mjs';

const setupFile = join(dirname(fileURLToPath(import.meta.url)), 'vitest-setup.mjs');

export function tenferroTest(configUrl, test = {}) {
  const pkgDir = dirname(fileURLToPath(configUrl));
  const tier = process.env.TENFERRO_TIER;
  const out = { include: ['test/**/*.test.ts'], ...test, setupFiles: [setupFile, ...(test.setupFiles ?? [])] };
  if (tier !== undefined && tier !== '') {
    if (!TIERS.includes(tier)) throw new Error(`TENFERRO_TIER=${tier}: not one of ${TIERS.join(', ')}`);
    out.include = filesInTier(basename(pkgDir), pkgDir, tier);
    out.passWithNoTests = true;
  }
  return out;
}
