#!/usr/bin/env node
// `tenferro-install-native`: the `install` step of a native package (#40; @tenferro/native's bin, so
// no package carries a copy). npm and pnpm run it in the package folder, which it reads (package.json,
// native/). It imports nothing but Node's built-ins and the package's own dependencies (node-gyp-build,
// node-gyp, node-addon-api), so it works in any app that installs the package's tarball, and it never
// downloads anything itself:
//
//   1. a binary that loads already — a prebuilt one shipped in native/prebuilds/<platform>-<arch>/
//      (prebuildify's layout, found by node-gyp-build) or an earlier build in native/build/Release —
//      is used as it is;
//   2. otherwise the addon is built from source with the node-gyp of the package's own
//      dependencies, against the Node headers beside the running node (or /usr/include/node);
//   3. when neither works the install still succeeds: the reason is recorded in
//      native/build/status.json, and the package's status() reports it at load time.
//
// Usage (package.json): "install": "tenferro-install-native --platforms linux"
//   --platforms a,b     where the addon can work (`linux`, `linux-x64`); elsewhere nothing is tried
// In a workspace checkout (the package folder is one of a pnpm workspace's packages, not under
// node_modules) it does nothing: the workspace builds its addons itself (tenferro: scripts/setup.mjs).
// Environment:
//   npm_config_build_from_source=true (npm i --build-from-source), TENFERRO_BUILD_FROM_SOURCE=1
//                       ignore prebuilt binaries and build
//   TENFERRO_REQUIRE_NATIVE=1   exit 1 instead of 0 when there is no working addon
//   TENFERRO_SKIP_NATIVE_INSTALL=1   do nothing (the addon is then reported missing at load time)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';

const packageDir = process.cwd();
const nativeDir = join(packageDir, 'native');
const statusPath = join(nativeDir, 'build', 'status.json');
const require = createRequire(join(packageDir, 'package.json'));
const name = (() => {
  try {
    return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).name;
  } catch {
    return packageDir;
  }
})();
const argv = process.argv.slice(2);
const option = (key) => {
  const i = argv.indexOf(`--${key}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const platforms = (option('platforms') ?? '').split(',').filter(Boolean);
const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
const fromSource = process.env.npm_config_build_from_source === 'true' || process.env.TENFERRO_BUILD_FROM_SOURCE === '1';
const say = (line) => console.log(`${name}: ${line}`);

function writeStatus(status) {
  mkdirSync(dirname(statusPath), { recursive: true });
  const record = { ...status, node: process.version, abi: process.versions.modules, napi: process.versions.napi, at: 'install' };
  writeFileSync(statusPath, `${JSON.stringify(record, null, 2)}\n`);
}

function finish(status) {
  writeStatus(status);
  if (status.ok) {
    say(`native addon ready (${status.source}: ${status.path.slice(packageDir.length + 1)})`);
    process.exit(0);
  }
  console.warn(`${name}: no native addon — ${status.reason.split('\n')[0]}`);
  for (const fix of status.possibleSolutions ?? []) console.warn(`${name}:   possible solution: ${fix}`);
  console.warn(`${name}: installed anyway; the package reports this at load time (its status()).`);
  process.exit(requireNative ? 1 : 0);
}

/** Loads `file` in this process: the addon is only good if it loads with this Node. */
function loads(file) {
  try {
    const binding = require(file);
    return typeof binding === 'object' && binding !== null ? undefined : 'it exports nothing';
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).split('\n')[0];
  }
}

// --- 0. when there is nothing to do ------------------------------------------------------------
if (!existsSync(join(packageDir, 'package.json'))) {
  console.error(`tenferro-install-native: run it as a package's install script, in the package folder (no package.json in ${packageDir})`);
  process.exit(2);
}
if (inWorkspace(packageDir)) {
  // A workspace checkout builds its addons itself (tenferro: scripts/setup.mjs, turbo `build:native`).
  process.exit(0);
}
if (process.env.TENFERRO_SKIP_NATIVE_INSTALL === '1') {
  say('TENFERRO_SKIP_NATIVE_INSTALL=1: native addon not installed');
  process.exit(0);
}
const here = `${process.platform}-${process.arch}`;
if (platforms.length > 0 && !platforms.some((p) => p === process.platform || p === here)) {
  finish({ ok: false, reason: `platform ${here} is not supported: ${name} runs on ${platforms.join(', ')}`, possibleSolutions: [] });
}

// --- 1. a binary that is already there (prebuilt, or built before) ------------------------------
let prebuiltProblem;
if (!fromSource) {
  let found;
  try {
    found = require('node-gyp-build').path(nativeDir);
  } catch (error) {
    prebuiltProblem = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  }
  if (found !== undefined) {
    const problem = loads(found);
    if (problem === undefined) {
      finish({ ok: true, source: found.includes(`${sep}prebuilds${sep}`) ? 'prebuilt' : 'built', path: found });
    }
    prebuiltProblem = `${found} does not load: ${problem}`;
    say(`${prebuiltProblem}; building from source instead`);
  }
}

// --- 2. a build from source with the package's own node-gyp ------------------------------------
const TOOLCHAIN = 'install python3, make and g++ (Debian/Ubuntu, as root: apt-get install -y python3 make g++)';
const rebuild = `npm rebuild ${name} --foreground-scripts`;
let nodeGyp;
try {
  const gypPkgPath = require.resolve('node-gyp/package.json');
  const gypPkg = JSON.parse(readFileSync(gypPkgPath, 'utf8'));
  nodeGyp = join(dirname(gypPkgPath), typeof gypPkg.bin === 'string' ? gypPkg.bin : (gypPkg.bin?.['node-gyp'] ?? 'bin/node-gyp.js'));
  require.resolve('node-addon-api');
} catch (error) {
  finish({
    ok: false,
    reason: `cannot build from source: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`,
    possibleSolutions: [`reinstall ${name} with its dependencies (node-gyp, node-addon-api): npm i ${name}`],
  });
}
const args = [nodeGyp, 'rebuild', `--jobs=${Math.max(1, Math.min(4, availableParallelism()))}`];
// The headers of the running node: beside it (official tarballs, nvm, fnm, volta) or Debian's
// /usr/include/node. Without them node-gyp fetches the headers for this version itself.
const nodedir = [process.env.npm_config_nodedir, resolve(dirname(process.execPath), '..'), '/usr'].find(
  (dir) => dir !== undefined && dir !== '' && existsSync(join(dir, 'include', 'node', 'node_api.h')),
);
if (nodedir !== undefined) args.push(`--nodedir=${nodedir}`);

say(`building the native addon from source${prebuiltProblem ? ` (${prebuiltProblem})` : ''} — about half a minute`);
const env = { ...process.env, npm_config_build_from_source: 'true' };
if (nodedir !== undefined) env.npm_config_nodedir = nodedir;
const child = spawn(process.execPath, args, { cwd: nativeDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
child.stdout.on('data', (chunk) => (output += chunk));
child.stderr.on('data', (chunk) => (output += chunk));
const started = Date.now();
const ticker = setInterval(() => say(`still building (${Math.round((Date.now() - started) / 1000)} s)`), 15000);
child.on('error', (error) => {
  clearInterval(ticker);
  finish({ ok: false, reason: `node-gyp could not run: ${error.message}`, possibleSolutions: [`${TOOLCHAIN}, then ${rebuild}`] });
});
child.on('close', (code, signal) => {
  clearInterval(ticker);
  const tail = output
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('gyp info'))
    .slice(-20)
    .join('\n');
  if (code !== 0) {
    const lines = output.split('\n').map((line) => line.trim());
    const cause =
      lines.find((line) => /gyp ERR! find Python|gyp ERR! stack Error: Could not find any Python/.test(line)) ??
      lines.find((line) => /: (not found|No such file or directory)$|command not found/.test(line)) ??
      lines.find((line) => /\berror:|fatal error/.test(line)) ??
      lines.find((line) => /^make: \*\*\*.*Error \d+$/.test(line)) ??
      lines.find((line) => line.startsWith('gyp ERR! stack Error')) ??
      `node-gyp rebuild exited with ${code ?? signal}`;
    finish({
      ok: false,
      reason: `the build from source failed: ${cause}${prebuiltProblem ? ` (and no prebuilt binary: ${prebuiltProblem})` : ''}\n${tail}`,
      possibleSolutions: [`${TOOLCHAIN}, then ${rebuild}`],
    });
  }
  let built;
  try {
    built = require('node-gyp-build').path(nativeDir);
  } catch {
    finish({ ok: false, reason: `node-gyp succeeded but left no .node file in ${join(nativeDir, 'build', 'Release')}`, possibleSolutions: [rebuild] });
  }
  const problem = loads(built);
  if (problem !== undefined) finish({ ok: false, reason: `built ${built} but it does not load: ${problem}`, possibleSolutions: [rebuild] });
  finish({ ok: true, source: 'built', path: built });
});

/**
 * Whether `dir` is a package of a pnpm workspace checkout: not under node_modules, and matched by
 * a `packages:` pattern (`dir/*` or an exact path) of the nearest pnpm-workspace.yaml above it.
 */
function inWorkspace(dir) {
  if (dir.split(sep).includes('node_modules')) return false;
  for (let root = dirname(dir); root !== dirname(root); root = dirname(root)) {
    const yaml = join(root, 'pnpm-workspace.yaml');
    if (!existsSync(yaml)) continue;
    const rel = relative(root, dir).split(sep).join('/');
    const patterns = [];
    let inPackages = false;
    for (const line of readFileSync(yaml, 'utf8').split('\n')) {
      if (/^\S/.test(line)) inPackages = /^packages\s*:/.test(line);
      else if (inPackages) {
        const m = /^\s+-\s*['"]?([^'"#\s]+)['"]?/.exec(line);
        if (m !== null) patterns.push(m[1]);
      }
    }
    return patterns.some((p) => (p.endsWith('/*') ? dirname(rel) === p.slice(0, -2) : p.endsWith('/**') ? rel.startsWith(`${p.slice(0, -3)}/`) : rel === p));
  }
  return false;
}
