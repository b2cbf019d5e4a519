/** The native addon through `defineAddon` (#40): nothing loads at import; `loadFaer()` loads it once per realm. */
import { type DefinedAddonLoad, defineAddon } from '@tenferro/core';
import { ABI, DESC, type FaerBinding, type NativeInfo } from './binding.js';

/** The loader's result, plus the default ISA path's info; `reason` is `reasons` joined with `'; '`. */
export type FaerLoadStatus = DefinedAddonLoad<FaerBinding, NativeInfo>;

/** Setting this environment variable to `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_FAER_DISABLE';

export const faerAddon = defineAddon<FaerBinding, NativeInfo>({
  packageName: '@tenferro/provider-faer',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_faer.node',
  exports: ['gemm', 'info', 'fmaPeak'],
  disableEnv: DISABLE_ENV,
  abi: ABI,
  platforms: ['linux-x64', 'linux-arm64'],
  // The ABI hash covers the descriptor (and an addon old enough to ignore summed axes has none).
  check: (b) =>
    b.descHeader === DESC.HEADER
      ? undefined
      : `the addon's GEMM descriptor header has ${String(b.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: the addon was built from another version of @tenferro/provider-faer`,
  info: (b) => b.info(),
  label: 'tenferro faer GEMM',
  advice: { possibleSolutions: ["do without it: CpuBackend.create({ kind: 'faer' }) then runs core's reference kernels (TypeScript, slower)"] },
});

/** Load the addon once and cache the outcome; never throws. */
export const loadFaer = (): FaerLoadStatus => faerAddon.load();
