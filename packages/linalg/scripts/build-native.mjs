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

// TENFERRO_LINALG_DTYPES=f64 (scripts/setup.mjs under `npm run demo` only, #39: the demo runs f64
// solves, and the other dtypes' Eigen units are most of a first set-up's time): the f64 kernels
// only (binding.gyp's tenferro_linalg_f64_only=1, as the sanitizer build): f32, c64 and c128 jobs are
// refused with BadDtype (info().dtypesNotBuilt), and status.json records `dtypes: "f64"`, which
// makes the next `node scripts/setup.mjs` / `npm test` build every dtype. Unset or `all`: every
// dtype. (turbo does not pass this variable to its tasks: turbo's builds, and its cache, are full.)
const dtypes = process.env.TENFERRO_LINALG_DTYPES ?? 'all';

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name: '@tenferro/linalg',
  addon: 'tenferro_linalg.node',
  unsupported: () =>
    process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')
      ? undefined
      : `platform ${process.platform}/${process.arch} is not supported: the linalg kernels are built for Linux x64 and arm64`,
  prepare: () =>
    dtypes === 'all'
      ? {}
      : dtypes === 'f64'
        ? { status: { dtypes: 'f64' } }
        : { reason: `TENFERRO_LINALG_DTYPES=${dtypes}: expected 'f64' (the f64 kernels only) or 'all'` },
  gypArgs: dtypes === 'f64' ? ['-Dtenferro_linalg_f64_only=1'] : [],
  verify: (binding) => {
    if (typeof binding.run !== 'function') throw new Error('the addon does not export run()');
    if (dtypes === 'f64' && !String(binding.info().dtypesNotBuilt ?? '').includes('c128')) throw new Error('TENFERRO_LINALG_DTYPES=f64, but the addon does not report the dtypes it left out');
  },
});
