// src/index.ts
import { TenferroError, type CpuProviderPackage, type ProviderPackageStatus } from '@tenferro/core';
import { createGemmProvider } from './gemm-provider.js';
import { loadX, xAddon } from './native/load.js';
import { type XProviderOptions, validateXProviderOptions } from './options.js';

export type { XProviderOptions } from './options.js';

/** Whether the kernels can run here, and what they run on (loads the addon on this thread). */
export function status(): ProviderPackageStatus {
  // Unavailable: defineAddon's reasons and solutions (the advice above among them). Available: the
  // name and details you give, the file it loaded, and the ISA report when the addon has one.
  return xAddon.status(() => ({ name: 'x GEMM', details: { kernel: 'naive' } }));
}

/** The package for the `faer` kind: pass it in `CpuBackend.create({ providers: [createXProvider()] })`. */
export function createXProvider(options?: XProviderOptions): CpuProviderPackage {
  const op = 'createXProvider';
  const resolved = validateXProviderOptions(options, op);
  const addon = loadX();
  if (!addon.available) {
    throw new TenferroError('ProviderUnavailable', `the x kernels cannot load: ${addon.reason}`, {
      op,
      detail: { reasons: addon.reasons, possibleSolutions: addon.possibleSolutions },
    });
  }
  const gemm = createGemmProvider(resolved);
  return Object.freeze({ kind: 'faer', name: gemm.name, gemm });
}
