#!/usr/bin/env node
// `build:native`: the built-in linear-algebra kernels (native/, on Eigen 3.4's headers), through
// tenferro's one build driver (@tenferro/native-build: local Node headers only, status.json,
// TENFERRO_REQUIRE_NATIVE). No -march: binding.gyp compiles the kernels once per instruction set
// (baseline, AVX2+FMA, AVX-512 on x64) and native/src/dispatch.cc picks one at run time.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';

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
