#!/usr/bin/env node
// `build:native`: the affinity addon (native/src/affinity.cc, registered in addon.cc), through
// tenferro's one build driver (@tenferro/native-build: local Node headers only, status.json,
// TENFERRO_REQUIRE_NATIVE).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name: '@tenferro/os',
  addon: 'tenferro_os.node',
  unsupported: () => (process.platform === 'linux' ? undefined : `platform ${process.platform} is not supported: the affinity binding is Linux-only`),
  verify: (binding) => {
    if (typeof binding.gettid !== 'function') throw new Error('the addon does not export gettid()');
  },
});
