// src/native/load.ts — the addon, defined once: nothing loads at import, load() once per realm
import { defineAddon } from '@tenferro/core/kernel';
import { ABI, type XBinding } from './binding.js';

export const xAddon = defineAddon<XBinding>({
  packageName: 'tenferro-x-gemm',
  native: new URL('../../native/', import.meta.url), // the folder that holds binding.gyp
  file: 'tenferro_x.node',
  exports: ['gemm'],
  disableEnv: 'TENFERRO_X_DISABLE',
  platforms: ['linux'],
  abi: ABI, // the addon must export the same table's hash, else it is unavailable with a rebuild hint
  advice: { possibleSolutions: ["run without this package: core's reference kernels (or another provider) still work"] },
});

export const loadX = () => xAddon.load();
