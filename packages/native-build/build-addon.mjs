// The build driver every native tenferro package runs as `build:native`: node-gyp rebuild in
// <package>/native, the outcome recorded in native/build/status.json (which the package's loader
// reads to explain a missing addon).
//
// Nothing is downloaded: node-gyp is pointed at the local Node headers (--nodedir: beside the
// running node — official tarballs, nvm, fnm, volta — else /usr, where Debian's nodejs puts
// include/node) unless npm_config_nodedir is set (scripts/setup.mjs sets it to what it found).
// (pnpm does not pass npm's `nodedir` setting to scripts, so we pass it ourselves.)
// node-gyp's output is kept: one line on success, its last meaningful lines (no `gyp info`) on failure.
//
// A failed or skipped build writes { ok: false, reason } and exits 0, so installs on machines
// without a C++ toolchain still work (the package then says why it is unavailable). With
// TENFERRO_REQUIRE_NATIVE=1 (CI) it exits 1 instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isaGypArgs } from './isa-paths.mjs';

/**
 * @param {object} o
 * @param {string} o.packageDir  the package root (holds package.json and native/)
 * @param {string} o.name        the package name, for messages
 * @param {string} o.addon       the addon file name under native/build/Release
 * @param {() => string | undefined} [o.unsupported]  why this platform cannot build it, if it cannot
 * @param {() => { reason?: string, status?: object }} [o.prepare]  checks before the build (e.g. a
 *   system library): a `reason` fails the build; `status` fields are recorded either way
 * @param {(binding: any) => object | void} o.verify  throws unless the loaded addon is right;
 *   returns extra status fields
 * @param {string[]} [o.gypArgs]  gyp variables after the instruction-set ones (e.g. linalg's
 *   -Dtenferro_linalg_f64_only=1 for `npm run demo`'s set-up, #39)
 */
export function buildAddon(o) {
  const nativeDir = join(o.packageDir, 'native');
  const buildDir = join(nativeDir, 'build');
  const statusPath = join(buildDir, 'status.json');
  const addonPath = join(buildDir, 'Release', o.addon);
  const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
  const require = createRequire(join(o.packageDir, 'package.json'));
  let recorded = {};

  const writeStatus = (status) => {
    mkdirSync(buildDir, { recursive: true });
    writeFileSync(statusPath, `${JSON.stringify({ ...status, node: process.version, abi: process.versions.modules, ...recorded }, null, 2)}\n`);
  };
  const fail = (reason) => {
    rmSync(addonPath, { force: true });
    writeStatus({ ok: false, reason });
    const how = requireNative ? 'failing because TENFERRO_REQUIRE_NATIVE=1' : 'continuing without it';
    console.error(`${o.name}: native addon not built (${how}):\n${reason}`);
    process.exit(requireNative ? 1 : 0);
  };

  // A stale status from an earlier run must not survive this one.
  rmSync(statusPath, { force: true });
  const unsupported = o.unsupported?.();
  if (unsupported !== undefined) fail(unsupported);
  const prepared = o.prepare?.() ?? {};
  recorded = { ...prepared.status };
  if (prepared.reason !== undefined) fail(prepared.reason);

  // --- the build tools --------------------------------------------------------------------------
  const missing = [];
  let nodeGypBin;
  try {
    const pkgPath = require.resolve('node-gyp/package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['node-gyp'];
    nodeGypBin = join(dirname(pkgPath), bin ?? 'bin/node-gyp.js');
  } catch {
    missing.push(`node-gyp (devDependency of ${o.name}; run pnpm install)`);
  }
  try {
    require.resolve('node-addon-api');
  } catch {
    missing.push(`node-addon-api (devDependency of ${o.name}; run pnpm install)`);
  }
  if (missing.length > 0) fail(`cannot build: missing ${missing.join(' and ')}`);

  // --- the Node headers (never downloaded) ---------------------------------------------------------
  const args = [nodeGypBin, 'rebuild'];
  if (process.env.npm_config_nodedir) {
    // node-gyp reads npm_config_nodedir from the environment itself.
    const dir = process.env.npm_config_nodedir;
    if (!existsSync(join(dir, 'include', 'node', 'node_api.h'))) {
      fail(`npm_config_nodedir=${dir} has no include/node/node_api.h; install the Node headers and retry`);
    }
  } else {
    const candidates = [resolve(dirname(process.execPath), '..'), '/usr'];
    const nodedir = candidates.find((dir) => existsSync(join(dir, 'include', 'node', 'node_api.h')));
    if (nodedir === undefined) {
      fail(`Node headers not found in ${candidates.map((d) => join(d, 'include/node')).join(' or ')}; set npm_config_nodedir to a directory holding include/node (nothing is downloaded)`);
    }
    args.push(`--nodedir=${nodedir}`);
  }
  args.push(`--jobs=${Math.max(1, Math.min(4, availableParallelism()))}`);
  // Which instruction-set paths to compile (isa-paths.mjs; TENFERRO_NATIVE_ISA).
  let isaArgs;
  try {
    isaArgs = isaGypArgs();
  } catch (error) {
    fail(error.message);
  }
  args.push('--', ...isaArgs, ...(o.gypArgs ?? []));

  const started = Date.now();
  const result = spawnSync(process.execPath, args, {
    cwd: nativeDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_build_from_source: 'true' },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.error) fail(`node-gyp could not run: ${result.error.message}`);
  if (result.status !== 0) fail(`node-gyp rebuild failed: ${cause(output) ?? `exit ${result.status ?? result.signal}`}\n${lastLines(output)}`);
  if (!existsSync(addonPath)) fail(`node-gyp succeeded but ${addonPath} is missing:\n${lastLines(output)}`);

  // The build is only good if the addon loads in this Node.
  let extra;
  try {
    extra = o.verify(require(addonPath)) ?? {};
  } catch (error) {
    fail(`built ${addonPath} but it does not load: ${error instanceof Error ? error.message : String(error)}`);
  }
  // `seconds` and `isa`: scripts/setup.mjs reports them (per-package build times, #39).
  writeStatus({ ok: true, seconds: Math.round((Date.now() - started) / 100) / 10, isa: process.env.TENFERRO_NATIVE_ISA ?? 'all', ...extra });
  const warnings = output.split('\n').filter((line) => /warning:/.test(line)).length;
  console.log(`${o.name}: built ${addonPath} (node-gyp ${args.slice(1).join(' ')}${warnings > 0 ? `; ${warnings} compiler warnings` : ''})`);
}

/** The last lines of node-gyp's output that say something (its `gyp info` chatter is dropped). */
function lastLines(text, count = 25) {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('gyp info'));
  return lines.slice(-count).join('\n');
}

/** The line of node-gyp's output that says why it failed, when one does. */
function cause(text) {
  const lines = text.split('\n').map((line) => line.trim());
  return (
    lines.find((line) => /gyp ERR! find Python|Could not find any Python/.test(line)) ??
    lines.find((line) => /: (not found|No such file or directory)$|command not found/.test(line)) ??
    lines.find((line) => /\berror:|fatal error/.test(line)) ??
    lines.find((line) => /^make: \*\*\*.*Error \d+$/.test(line)) ??
    lines.find((line) => line.startsWith('gyp ERR! stack Error'))
  );
}
