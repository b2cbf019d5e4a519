#!/usr/bin/env node
// `build:native`: the affinity addon (native/src/affinity.cc, registered in addon.cc), through
// tenferro's one build driver (@tenferro/native-build: local Node headers only, status.json,
// TENFERRO_REQUIRE_NATIVE).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';
import { generateAbi } from '@tenferro/native/abi';

// The addon's ABI header and the TypeScript's declaration, from the one table (native/src/abi.mjs, #40):
// regenerated before every build; both are committed and packed (a build from the tarball needs neither).
for (const file of await generateAbi(resolve(dirname(fileURLToPath(import.meta.url)), '../native/src/abi.mjs'))) console.log(`build:native: regenerated ${file}`);

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name: '@tenferro/os',
  addon: 'tenferro_os.node',
  unsupported: () => (process.platform === 'linux' ? undefined : `platform ${process.platform} is not supported: the affinity binding is Linux-only`),
  verify: (binding) => {
    if (typeof binding.gettid !== 'function') throw new Error('the addon does not export gettid()');
  },
});
