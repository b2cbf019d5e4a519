#!/usr/bin/env node
// `build:native`: the GEMM kernels (native/), through tenferro's one build driver
// (@tenferro/native-build: local Node headers only, status.json, TENFERRO_REQUIRE_NATIVE).
// The kernels are compiled without -march: each ISA path (AVX-512F, AVX2+FMA, portable) is its
// own translation unit with a `#pragma GCC target`, and the path is chosen at run time.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';
import { generateAbi } from '@tenferro/native/abi';

// The addon's ABI header and the TypeScript's declaration, from the one table (native/src/abi.mjs, #40):
// regenerated before every build; both are committed and packed (a build from the tarball needs neither).
for (const file of await generateAbi(resolve(dirname(fileURLToPath(import.meta.url)), '../native/src/abi.mjs'))) console.log(`build:native: regenerated ${file}`);

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name: '@tenferro/provider-faer',
  addon: 'tenferro_faer.node',
  unsupported: () =>
    process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')
      ? undefined
      : `platform ${process.platform}/${process.arch} is not supported: the GEMM kernels are built for Linux x64 (arm64 uses the portable path)`,
  verify: (binding) => {
    if (typeof binding.gemm !== 'function') throw new Error('the addon does not export gemm()');
  },
});
