#!/usr/bin/env node
// `build:native`: the CBLAS addon (native/) against the system BLAS that scripts/detect-blas.mjs
// finds, through tenferro's one build driver (@tenferro/native-build: local Node headers only,
// status.json, TENFERRO_REQUIRE_NATIVE — which here also fails when no BLAS is found).
// No BLAS: status.json records { ok: false, reason, blasFound: false, reasons, possibleSolutions }
// and blasProviderStatus() reports them.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tenferro/native-build';
import { generateAbi } from '@tenferro/native/abi';
import { detectBlas } from './detect-blas.mjs';

const name = '@tenferro/provider-blas';
// The addon's ABI header and the TypeScript's declaration, from the one table (native/src/abi.mjs, #40):
// regenerated before every build; both are committed and packed (a build from the tarball needs neither).
for (const file of await generateAbi(resolve(dirname(fileURLToPath(import.meta.url)), '../native/src/abi.mjs'))) console.log(`build:native: regenerated ${file}`);

buildAddon({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  name,
  addon: 'tenferro_blas.node',
  unsupported: () => (process.platform === 'linux' ? undefined : `platform ${process.platform} is not supported: the BLAS provider is built and tested on Linux only`),
  prepare: () => {
    const d = detectBlas();
    if (!d.found) {
      return {
        reason: `no system CBLAS found:\n  ${d.reasons.join('\n  ')}\npossible solutions:\n  ${d.possibleSolutions.join('\n  ')}`,
        status: { blasFound: false, reasons: d.reasons, possibleSolutions: d.possibleSolutions },
      };
    }
    console.log(`${name}: BLAS from ${d.source} (${d.headerPath}; ${d.libs.join(' ')})`);
    return { status: { blasFound: true, source: d.source, header: d.headerPath, libs: d.libs } };
  },
  verify: (binding) => {
    if (typeof binding.gemm !== 'function' || typeof binding.info !== 'function') throw new Error('the addon does not export gemm() and info()');
    return { runtimeAtBuild: binding.info().vendor };
  },
});
