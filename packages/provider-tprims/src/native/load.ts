/** The native addon through `defineAddon` (#40): nothing loads at import; `loadTprims()` loads it once per realm. */
import { defineAddon } from '@tenferro/core/kernel';
import { ABI, DESC, type NativeInfo, type TprimsBinding } from './binding.js';

/** `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_TPRIMS_DISABLE';

export const tprimsAddon = defineAddon<TprimsBinding, NativeInfo>({
  packageName: '@tenferro/provider-tprims',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_tprims.node',
  exports: ['run', 'supports', 'info'],
  disableEnv: DISABLE_ENV,
  abi: ABI, // covers the descriptor's fields and MaxRank too
  platforms: ['linux-x64', 'linux-arm64'],
  check: (b) =>
    b.descHeader === DESC.HEADER
      ? undefined
      : `the addon's task descriptor header has ${String(b.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: the addon was built from another version of @tenferro/provider-tprims`,
  info: (b) => b.info(),
  label: 'tenferro tprims',
  advice: { possibleSolutions: ['do without it: core then runs its reference tensor primitives and layout transform (TypeScript, sequential, slower)'] },
});

/** Load the addon once per realm and cache the outcome; never throws. */
export const loadTprims = tprimsAddon.load;
