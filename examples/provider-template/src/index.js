// tenferro-provider-example: a provider package in its smallest complete form. Importing it does
// nothing; an application passes the factory's result to CpuBackend.create:
//
//   import { CpuBackend } from '@tenferro/core';
//   import { createExampleProvider } from 'tenferro-provider-example';
//   const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createExampleProvider()] });
import { createGemmProvider } from './gemm-provider.js';

/**
 * The package for the `faer` kind: its GEMM slot (the layout slot stays core's).
 * @returns {import('@tenferro/core').CpuProviderPackage}
 */
export function createExampleProvider() {
  return Object.freeze({ kind: 'faer', name: 'tenferro-provider-example', gemm: createGemmProvider() });
}
