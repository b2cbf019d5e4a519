// The prebuilt binary a native package's tarball carries, and the staged copy it is built from (#40).
//
//   stagePrebuild   copies what native/binding.gyp needs (lib/gyp-inputs.mjs: read from the gyp file,
//                   plus package.json's tenferro.nativeInputs) into a clean folder, by default
//                   native/build/prebuild/, so the development build in native/build/Release stays;
//                   paths the gyp file names outside native/ become absolute in the staged copy.
//   configureStaged `node-gyp configure` in a staged copy: seconds, and it runs every `<!(…)` command,
//                   so a missing input fails here as it would in the prebuild (CI runs it, #40).
//   prebuild        prebuildify --napi --strip --tag-libc in the staged copy, with the local Node
//                   headers (never downloaded), into native/prebuilds/<platform>-<arch>/; the binary
//                   must load. Skipped while a stamp over the inputs, the tools and Node matches.
//
// No -march: CFLAGS/CXXFLAGS/CPPFLAGS/LDFLAGS from the environment are dropped and
// TENFERRO_NATIVE_ISA is ignored (a prebuilt binary carries every instruction-set path and picks one
// at run time). node-gyp and prebuildify are the package's own (its dependencies or devDependencies).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesOf, gypInputs } from './gyp-inputs.mjs';

export { gypInputs } from './gyp-inputs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** @tenferro/native's shared C++ headers (the `includeDir` export). */
const includeDir = join(here, '..', 'include');
const nativeVersion = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')).version;

/** The folder holding include/node/node_api.h of the running Node (beside it, or Debian's /usr), or undefined. */
export function nodeHeadersDir(env = process.env) {
  return [env.npm_config_nodedir, resolve(dirname(process.execPath), '..'), '/usr'].find(
    (dir) => dir !== undefined && dir !== '' && existsSync(join(dir, 'include', 'node', 'node_api.h')),
  );
}

/** The bin of a tool the package depends on, resolved from the package. */
export function toolOf(packageDir, name, fallbackBin) {
  const require = createRequire(join(packageDir, 'package.json'));
  let pkgPath;
  try {
    pkgPath = require.resolve(`${name}/package.json`);
  } catch {
    throw new Error(`${name} is not installed for ${packageDir} (add it to the package's dependencies or devDependencies)`);
  }
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.[name] ?? fallbackBin);
  return { bin: join(dirname(pkgPath), bin), version: pkg.version };
}

/**
 * Copies what binding.gyp needs into `workDir` (emptied first). Throws when the package declares an
 * input, or a gyp command names a script, that does not exist.
 * @returns {{ workDir: string, inputs: ReturnType<typeof gypInputs> }}
 */
export function stagePrebuild({ packageDir, workDir = join(packageDir, 'native', 'build', 'prebuild') }) {
  const nativeDir = join(packageDir, 'native');
  const inputs = gypInputs(nativeDir);
  if (inputs.missing.length > 0) {
    throw new Error(`${join(nativeDir, 'binding.gyp')} needs ${inputs.missing.join(', ')}, which ${inputs.missing.length === 1 ? 'does' : 'do'} not exist`);
  }
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  for (const e of inputs.entries) cpSync(join(nativeDir, e), join(workDir, e), { recursive: true });
  if (inputs.external.length > 0) {
    const gypPath = join(workDir, 'binding.gyp');
    let gyp = readFileSync(gypPath, 'utf8');
    // Longest first, so that `../x/y` is not half-replaced by `../x`.
    for (const { written, abs } of [...inputs.external].sort((a, b) => b.written.length - a.written.length)) gyp = gyp.replaceAll(written, abs);
    writeFileSync(gypPath, gyp);
  }
  return { workDir, inputs };
}

/** node-gyp configure in a staged copy (the package's own node-gyp, the local Node headers). */
export function configureStaged({ packageDir, workDir, env = process.env }) {
  const nodedir = nodeHeadersDir(env);
  if (nodedir === undefined) return { ok: false, output: `no Node headers beside ${process.execPath} or in /usr/include/node (nothing is downloaded)` };
  const nodeGyp = toolOf(packageDir, 'node-gyp', 'bin/node-gyp.js');
  const r = spawnSync(process.execPath, [nodeGyp.bin, 'configure', `--nodedir=${nodedir}`], {
    cwd: workDir,
    env: { ...env, npm_config_nodedir: nodedir },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: r.status === 0 && existsSync(join(workDir, 'build', 'Makefile')), output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** The hash of what a prebuilt binary is made of: its inputs, the tools, Node and its headers. */
function stampOf(packageDir, inputs, tools, nodedir) {
  const nativeDir = join(packageDir, 'native');
  const hash = createHash('sha256');
  for (const f of filesOf(nativeDir, inputs.entries)) hash.update(f).update(readFileSync(join(nativeDir, f)));
  for (const { written, abs } of inputs.external) {
    const base = dirname(abs);
    for (const f of filesOf(base, [relative(base, abs)])) hash.update(written).update(f).update(readFileSync(join(base, f)));
  }
  for (const c of inputs.commands) hash.update(c);
  if (existsSync(includeDir)) for (const f of filesOf(includeDir, readdirSync(includeDir))) hash.update(f).update(readFileSync(join(includeDir, f)));
  hash.update(`@tenferro/native@${nativeVersion}`);
  for (const [name, version] of Object.entries(tools)) hash.update(`${name}@${version}`);
  hash.update(process.version).update(nodedir);
  return hash.digest('hex');
}

/**
 * Builds native/prebuilds/<platform>-<arch>/<@scope+name>.glibc.node (prebuildify's layout, which
 * node-gyp-build finds). Returns { skipped?, file?, seconds? }; throws with the build's last lines.
 */
export function prebuild({ packageDir, force = false, say = () => {} }) {
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const nativeDir = join(packageDir, 'native');
  const tuple = `${process.platform}-${process.arch}`;
  const outDir = join(nativeDir, 'prebuilds', tuple);
  // Outside native/build, which every `node-gyp rebuild` (a development build) wipes.
  const stampPath = join(packageDir, 'node_modules', '.cache', 'tenferro-prebuild.stamp');
  const nodedir = nodeHeadersDir();
  if (nodedir === undefined) throw new Error(`no Node headers beside ${process.execPath} or in /usr/include/node (nothing is downloaded)`);
  const nodeGyp = toolOf(packageDir, 'node-gyp', 'bin/node-gyp.js');
  const prebuildify = toolOf(packageDir, 'prebuildify', 'bin.js');
  const addonApi = toolOf(packageDir, 'node-addon-api', 'index.js');
  const inputs = gypInputs(nativeDir);
  const stamp = stampOf(packageDir, inputs, { 'node-gyp': nodeGyp.version, prebuildify: prebuildify.version, 'node-addon-api': addonApi.version }, nodedir);
  const binaries = () => (existsSync(outDir) ? readdirSync(outDir).filter((f) => f.endsWith('.node')) : []);
  const upToDate = () => existsSync(stampPath) && readFileSync(stampPath, 'utf8') === stamp && binaries().length > 0;
  if (!force && upToDate()) return { skipped: true, file: join(outDir, binaries()[0]) };
  // One prebuild of a package at a time (two packs at once share native/build/prebuild/): the second
  // waits for the first, and then finds the binary up to date.
  const unlock = lock(join(packageDir, 'node_modules', '.cache', 'tenferro-prebuild.lock'), say);
  try {
    if (!force && upToDate()) return { skipped: true, file: join(outDir, binaries()[0]) };
    return build({ packageDir, pkg, nativeDir, tuple, outDir, stampPath, stamp, nodedir, nodeGyp, prebuildify, binaries, say });
  } finally {
    unlock();
  }
}

/** Takes the lock folder `dir` (waiting while a live process holds it); returns the release. */
function lock(dir, say) {
  mkdirSync(dirname(dir), { recursive: true });
  const owner = join(dir, 'pid');
  let said = false;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(owner, String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if (error?.code !== 'EEXIST') throw error;
    }
    let pid = 0;
    try {
      pid = Number(readFileSync(owner, 'utf8'));
    } catch {
      // being created or removed right now
    }
    // A holder that died, or one that never wrote its pid (10 s after taking the lock).
    let age = 0;
    try {
      age = Date.now() - statSync(dir).mtimeMs;
    } catch {
      continue; // released just now
    }
    if ((pid > 0 && !alive(pid)) || (pid === 0 && age > 10_000)) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (!said) {
      say(`waiting for the prebuild of process ${pid || '?'} to finish`);
      said = true;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error?.code === 'EPERM';
  }
}

function build({ packageDir, pkg, nativeDir, tuple, outDir, stampPath, stamp, nodedir, nodeGyp, prebuildify, binaries, say }) {
  const { workDir } = stagePrebuild({ packageDir });
  // prebuildify writes into the staged copy; the binary then replaces native/prebuilds/<tuple>/'s by a
  // rename, so a pack reading the package meanwhile sees the old binary or the new one, never a part.
  const stagedOut = join(workDir, 'prebuilds-out');
  const env = { ...process.env, npm_config_nodedir: nodedir, PREBUILD_NODE_GYP: nodeGyp.bin };
  for (const flags of ['CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS']) delete env[flags];
  delete env.TENFERRO_NATIVE_ISA;
  say(`building ${tuple} in ${relative(packageDir, workDir)} (prebuildify --napi --strip --tag-libc)`);
  const t = Date.now();
  const r = spawnSync(process.execPath, [prebuildify.bin, '--napi', '--strip', '--tag-libc', `--name=${pkg.name}`, `--out=${stagedOut}`, workDir], {
    cwd: workDir,
    env,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter((l) => l.trim() && !l.startsWith('gyp info'));
    throw new Error(`prebuildify failed (exit ${r.status ?? r.signal}):\n${out.slice(-30).join('\n')}`);
  }
  const stagedDir = join(stagedOut, 'prebuilds', tuple);
  const made = existsSync(stagedDir) ? readdirSync(stagedDir).filter((f) => f.endsWith('.node')) : [];
  if (made.length !== 1) throw new Error(`expected one binary in ${stagedDir}, found ${made.join(', ') || 'none'}`);
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(stagedDir, made[0]))})`], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`${join(stagedDir, made[0])} does not load:\n${probe.stderr}`);
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, made[0]);
  renameSync(join(stagedDir, made[0]), file);
  for (const old of binaries()) if (old !== made[0]) rmSync(join(outDir, old), { force: true });
  mkdirSync(dirname(stampPath), { recursive: true });
  writeFileSync(stampPath, stamp);
  return { skipped: false, file, seconds: (Date.now() - t) / 1000, bytes: statSync(file).size };
}
