/** The native addon through `defineAddon` (#40): nothing loads at import; `loadTprims()` loads it once per realm. */
import { type DefinedAddonLoad, defineAddon } from '@tenferro/core';
import { ABI, DESC, MAX_RANK, type NativeInfo, type TprimsBinding } from './binding.js';

/** The loader's result, plus the default ISA path's info; `reason` is `reasons` joined with `'; '`. */
export type TprimsLoadStatus = DefinedAddonLoad<TprimsBinding, NativeInfo>;

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_TPRIMS_DISABLE';

const other = 'the addon was built from another version of @tenferro/provider-tprims';
export const tprimsAddon = defineAddon<TprimsBinding, NativeInfo>({
  packageName: '@tenferro/provider-tprims',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_tprims.node',
  exports: ['run', 'supports', 'info'],
  disableEnv: DISABLE_ENV,
  abi: ABI,
  platforms: ['linux-x64', 'linux-arm64'],
  check: (b) =>
    b.descHeader !== DESC.HEADER
      ? `the addon's task descriptor header has ${String(b.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: ${other}`
      : b.maxRank !== MAX_RANK
        ? `the addon takes ${String(b.maxRank)} axes but this package's TypeScript expects ${MAX_RANK}: ${other}`
        : undefined,
  info: (b) => b.info(),
  label: 'tenferro tprims',
  advice: { possibleSolutions: ['do without it: core then runs its reference tensor primitives and layout transform (TypeScript, sequential, slower)'] },
});

/** Load the addon once and cache the outcome; never throws. */
export const loadTprims = (): TprimsLoadStatus => tprimsAddon.load();
