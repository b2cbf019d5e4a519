#!/usr/bin/env node
// Builds native/build/Release/tenferro_faer.node (the GEMM kernels) with node-gyp and records the outcome in
// native/build/status.json, which the loader (src/load.ts) reads to explain a missing addon.
//
// Nothing is downloaded: node-gyp is pointed at the local Node headers (--nodedir, default
// /usr, where Debian's nodejs puts include/node) unless npm_config_nodedir is already set.
// (pnpm does not pass npm's `nodedir` setting to scripts, so we pass it ourselves.)
//
// A failed or skipped build writes { ok: false, reason } and exits 0, so installs and builds
// on machines without a C++ toolchain still work (faerProviderStatus() then reports the addon
// unavailable and createFaerProvider() declines with runtimeUnavailable). With
// TENFERRO_REQUIRE_NATIVE=1 (CI) it exits 1 instead.
//
// The kernels are compiled without -march: each ISA path (AVX-512F, AVX2+FMA, portable) is its
// own translation unit with a `#pragma GCC target`, and the path is chosen at run time.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(packageDir, 'native');
const buildDir = join(nativeDir, 'build');
const statusPath = join(buildDir, 'status.json');
const addonPath = join(buildDir, 'Release', 'tenferro_faer.node');
const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
const require = createRequire(join(packageDir, 'package.json'));

function writeStatus(status) {
  mkdirSync(buildDir, { recursive: true });
  writeFileSync(statusPath, `${JSON.stringify(status, null, 2)}\n`);
}

function fail(reason) {
  writeStatus({ ok: false, reason, node: process.version, abi: process.versions.modules });
  const how = requireNative ? 'failing because TENFERRO_REQUIRE_NATIVE=1' : 'continuing without it';
  console.error(`@tenferro/provider-faer: native addon not built (${how}):\n${reason}`);
  process.exit(requireNative ? 1 : 0);
}

/** The last lines of node-gyp's output that say something (its `gyp info` chatter is dropped). */
function lastLines(text, count = 25) {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('gyp info'));
  return lines.slice(-count).join('\n');
}

// A stale status from an earlier run must not survive this one.
rmSync(statusPath, { force: true });

if (process.platform !== 'linux' || (process.arch !== 'x64' && process.arch !== 'arm64')) {
  fail(`platform ${process.platform}/${process.arch} is not supported: the GEMM kernels are built for Linux x64 (arm64 uses the portable path)`);
}

// --- the build tools --------------------------------------------------------------------------
const missing = [];
let nodeGypBin;
try {
  const pkgPath = require.resolve('node-gyp/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['node-gyp'];
  nodeGypBin = join(dirname(pkgPath), bin ?? 'bin/node-gyp.js');
} catch {
  missing.push('node-gyp (devDependency of @tenferro/provider-faer; run pnpm install)');
}
try {
  require.resolve('node-addon-api');
} catch {
  missing.push('node-addon-api (devDependency of @tenferro/provider-faer; run pnpm install)');
}
if (missing.length > 0) fail(`cannot build: missing ${missing.join(' and ')}`);

// --- the Node headers (never downloaded) -------------------------------------------------------
const args = [nodeGypBin, 'rebuild'];
if (process.env.npm_config_nodedir) {
  // node-gyp reads npm_config_nodedir from the environment itself.
  const dir = process.env.npm_config_nodedir;
  if (!existsSync(join(dir, 'include', 'node', 'node_api.h'))) {
    fail(`npm_config_nodedir=${dir} has no include/node/node_api.h; install the Node headers (Debian: libnode-dev / nodejs) and retry`);
  }
} else {
  const candidates = ['/usr', resolve(dirname(process.execPath), '..')];
  const nodedir = candidates.find((dir) => existsSync(join(dir, 'include', 'node', 'node_api.h')));
  if (nodedir === undefined) {
    fail(`Node headers not found in ${candidates.map((d) => join(d, 'include/node')).join(' or ')}; set npm_config_nodedir to a directory holding include/node (nothing is downloaded)`);
  }
  args.push(`--nodedir=${nodedir}`);
}
args.push(`--jobs=${Math.max(1, Math.min(4, (await import('node:os')).availableParallelism()))}`);

console.log(`@tenferro/provider-faer: node-gyp ${args.slice(1).join(' ')} (in native/)`);
const result = spawnSync(process.execPath, args, {
  cwd: nativeDir,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
  env: { ...process.env, npm_config_build_from_source: 'true' },
});
const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
process.stdout.write(result.stdout ?? '');
process.stderr.write(result.stderr ?? '');

if (result.error) fail(`node-gyp could not run: ${result.error.message}`);
if (result.status !== 0) {
  fail(`node-gyp rebuild exited with ${result.status ?? result.signal}:\n${lastLines(output)}`);
}
if (!existsSync(addonPath)) fail(`node-gyp succeeded but ${addonPath} is missing:\n${lastLines(output)}`);

// The build is only good if the addon loads in this Node.
try {
  const binding = require(addonPath);
  if (typeof binding.gemm !== 'function') throw new Error('the addon does not export gemm()');
} catch (error) {
  fail(`built ${addonPath} but it does not load: ${error instanceof Error ? error.message : String(error)}`);
}

writeStatus({ ok: true, node: process.version, abi: process.versions.modules });
console.log(`@tenferro/provider-faer: built ${addonPath}`);
