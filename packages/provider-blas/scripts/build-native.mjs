#!/usr/bin/env node
// Builds native/build/Release/tenferro_blas.node with node-gyp against the system CBLAS found by
// scripts/detect-blas.mjs, and records the outcome in native/build/status.json, which the
// loader (src/native/load.ts) reads to explain a missing addon.
//
// Nothing is downloaded: node-gyp is pointed at the local Node headers (--nodedir, default
// /usr, where Debian's nodejs puts include/node) unless npm_config_nodedir is already set.
//
// No BLAS found, or a failed build: status.json gets { ok: false, reason, detection } and the
// script exits 0, so the package still installs (blasProviderStatus() then reports why and how
// to fix it). With TENFERRO_REQUIRE_NATIVE=1 (CI) it exits 1 instead — also when no BLAS is found.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectBlas } from './detect-blas.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(packageDir, 'native');
const buildDir = join(nativeDir, 'build');
const statusPath = join(buildDir, 'status.json');
const addonPath = join(buildDir, 'Release', 'tenferro_blas.node');
const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
const require = createRequire(join(packageDir, 'package.json'));
const NAME = '@tenferro/provider-blas';

function writeStatus(status) {
  mkdirSync(buildDir, { recursive: true });
  writeFileSync(statusPath, `${JSON.stringify(status, null, 2)}\n`);
}

function fail(reason, extra = {}) {
  writeStatus({ ok: false, reason, node: process.version, abi: process.versions.modules, ...extra });
  const how = requireNative ? 'failing because TENFERRO_REQUIRE_NATIVE=1' : 'continuing without it';
  console.error(`${NAME}: native addon not built (${how}):\n${reason}`);
  process.exit(requireNative ? 1 : 0);
}

function lastLines(text, count = 25) {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('gyp info'));
  return lines.slice(-count).join('\n');
}

// A stale status (or addon) from an earlier run must not survive this one.
rmSync(statusPath, { force: true });

if (process.platform !== 'linux') fail(`platform ${process.platform} is not supported: the BLAS provider is built and tested on Linux only`);

// --- the BLAS -----------------------------------------------------------------------------------
const detection = detectBlas();
if (!detection.found) {
  rmSync(addonPath, { force: true });
  fail(`no system CBLAS found:\n  ${detection.reasons.join('\n  ')}\npossible solutions:\n  ${detection.possibleSolutions.join('\n  ')}`, {
    blasFound: false,
    reasons: detection.reasons,
    possibleSolutions: detection.possibleSolutions,
  });
}
console.log(`${NAME}: BLAS from ${detection.source} (${detection.headerPath}; ${detection.libs.join(' ')})`);

// --- the build tools ----------------------------------------------------------------------------
const missing = [];
let nodeGypBin;
try {
  const pkgPath = require.resolve('node-gyp/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['node-gyp'];
  nodeGypBin = join(dirname(pkgPath), bin ?? 'bin/node-gyp.js');
} catch {
  missing.push(`node-gyp (devDependency of ${NAME}; run pnpm install)`);
}
try {
  require.resolve('node-addon-api');
} catch {
  missing.push(`node-addon-api (devDependency of ${NAME}; run pnpm install)`);
}
if (missing.length > 0) fail(`cannot build: missing ${missing.join(' and ')}`, { blasFound: true });

// --- the Node headers (never downloaded) --------------------------------------------------------
const args = [nodeGypBin, 'rebuild'];
if (process.env.npm_config_nodedir) {
  const dir = process.env.npm_config_nodedir;
  if (!existsSync(join(dir, 'include', 'node', 'node_api.h'))) {
    fail(`npm_config_nodedir=${dir} has no include/node/node_api.h; install the Node headers and retry`, { blasFound: true });
  }
} else {
  const candidates = ['/usr', resolve(dirname(process.execPath), '..')];
  const nodedir = candidates.find((dir) => existsSync(join(dir, 'include', 'node', 'node_api.h')));
  if (nodedir === undefined) {
    fail(`Node headers not found in ${candidates.map((d) => join(d, 'include/node')).join(' or ')}; set npm_config_nodedir (nothing is downloaded)`, { blasFound: true });
  }
  args.push(`--nodedir=${nodedir}`);
}
args.push(`--jobs=${Math.max(1, Math.min(4, availableParallelism()))}`);

console.log(`${NAME}: node-gyp ${args.slice(1).join(' ')} (in native/)`);
const result = spawnSync(process.execPath, args, {
  cwd: nativeDir,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
  env: { ...process.env, npm_config_build_from_source: 'true' },
});
const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
process.stdout.write(result.stdout ?? '');
process.stderr.write(result.stderr ?? '');

if (result.error) fail(`node-gyp could not run: ${result.error.message}`, { blasFound: true });
if (result.status !== 0) fail(`node-gyp rebuild exited with ${result.status ?? result.signal}:\n${lastLines(output)}`, { blasFound: true });
if (!existsSync(addonPath)) fail(`node-gyp succeeded but ${addonPath} is missing:\n${lastLines(output)}`, { blasFound: true });

// The build is only good if the addon loads in this Node and finds its BLAS.
let vendor;
try {
  const binding = require(addonPath);
  if (typeof binding.gemm !== 'function' || typeof binding.info !== 'function') throw new Error('the addon does not export gemm() and info()');
  vendor = binding.info().vendor;
} catch (error) {
  fail(`built ${addonPath} but it does not load: ${error instanceof Error ? error.message : String(error)}`, { blasFound: true });
}

writeStatus({
  ok: true,
  node: process.version,
  abi: process.versions.modules,
  blasFound: true,
  source: detection.source,
  header: detection.headerPath,
  libs: detection.libs,
  runtimeAtBuild: vendor,
});
console.log(`${NAME}: built ${addonPath} (${detection.source}; runtime at build time: ${vendor})`);
