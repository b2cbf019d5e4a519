#!/usr/bin/env node
// `build:native`: the built-in linear-algebra kernels (native/, on Eigen 3.4's headers), through
// tenferro's one build driver (@tenferro/native-build: local Node headers only, status.json,
// TENFERRO_REQUIRE_NATIVE). No -march: binding.gyp compiles the kernels once per instruction set
// (baseline, AVX2+FMA, AVX-512 on x64) and native/src/dispatch.cc picks one at run time.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';
import { generateAbi } from '@tenferro/native/abi';

// The addon's ABI header and the TypeScript's declaration, from the one table (native/src/abi.mjs, #40):
// regenerated before every build; both are committed and packed (a build from the tarball needs neither).
for (const file of await generateAbi(resolve(dirname(fileURLToPath(import.meta.url)), '../native/src/abi.mjs'))) console.log(`build:native: regenerated ${file}`);

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name: '@tenferro/linalg',
  addon: 'tenferro_linalg.node',
  unsupported: () =>
    process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')
      ? undefined
      : `platform ${process.platform}/${process.arch} is not supported: the linalg kernels are built for Linux x64 and arm64`,
  verify: (binding) => {
    if (typeof binding.run !== 'function') throw new Error('the addon does not export run()');
  },
});
