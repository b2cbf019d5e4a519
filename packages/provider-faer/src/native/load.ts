/** The native addon through `defineAddon` (#40): nothing loads at import; `loadFaer()` loads it once per realm. */
import { defineAddon } from '@tenferro/core/kernel';
import { ABI, DESC, type FaerBinding, type NativeInfo } from './binding.js';

/** `1` makes the addon unavailable (to test fallbacks). */
export const DISABLE_ENV = 'TENFERRO_FAER_DISABLE';
export const faerAddon = defineAddon<FaerBinding, NativeInfo>({
  packageName: '@tenferro/provider-faer',
  native: new URL('../../native/', import.meta.url),
  file: 'tenferro_faer.node',
  exports: ['gemm', 'info', 'fmaPeak'],
  disableEnv: DISABLE_ENV,
  abi: ABI,
  platforms: ['linux-x64', 'linux-arm64'],
  check: (b) =>
    b.descHeader === DESC.HEADER
      ? undefined
      : `the addon's GEMM descriptor header has ${String(b.descHeader)} entries but this package's TypeScript writes ${DESC.HEADER}: the addon was built from another version of @tenferro/provider-faer`,
  info: (b) => b.info(),
  label: 'tenferro faer GEMM',
  advice: { possibleSolutions: ["do without it: CpuBackend.create({ kind: 'faer' }) then runs core's reference kernels (TypeScript, slower)"] },
});

/** Load the addon once per realm and cache the outcome; never throws. */
export const loadFaer = faerAddon.load;
