#!/usr/bin/env node
// `node node_modules/@tenferro/native-build/prebuild.mjs` (each native package's `build:prebuilds`, and its `prepack`): the prebuilt
// binary that the package's tarball carries, in prebuildify's layout, which node-gyp-build finds:
//
//   native/prebuilds/linux-x64/@tenferro+<name>.napi.glibc.node
//
// Built by prebuildify (N-API, so one binary serves every Node >= 20; stripped) from a clean copy of
// native/ in native/build/prebuild/, so the development build in native/build/Release is left alone.
// No -march: CFLAGS/CXXFLAGS/LDFLAGS from the environment are dropped, and the binding.gyp files
// carry no -march (a test checks); ISA-specific code is chosen at run time (provider-faer's
// dispatch). Built on Debian 12, the binary needs glibc >= 2.36 (docs/contributing/native-package.md).
//
// Skipped when the sources, node-gyp and Node are those of the last prebuild (a stamp in
// node_modules/.cache/tenferro-prebuild.stamp). Nothing is downloaded: the Node headers are the local ones.
//   node node_modules/@tenferro/native-build/prebuild.mjs [--force]      (run in the package directory)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const packageDir = process.cwd();
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const nativeDir = join(packageDir, 'native');
const workDir = join(nativeDir, 'build', 'prebuild');
// Outside native/build, which every `node-gyp rebuild` (build:native) wipes.
const stampPath = join(packageDir, 'node_modules', '.cache', 'tenferro-prebuild.stamp');
const tuple = `${process.platform}-${process.arch}`;
const outDir = join(nativeDir, 'prebuilds', tuple);
const say = (line) => console.log(`${pkg.name}: prebuild: ${line}`);

if (process.env.TENFERRO_SKIP_PREBUILD === '1') {
  say('skipped (TENFERRO_SKIP_PREBUILD=1)');
  process.exit(0);
}
if (process.platform !== 'linux') {
  say(`no prebuilt binary for ${tuple}: prebuilds are made on Linux (glibc) only`);
  process.exit(0);
}

const require = createRequire(join(packageDir, 'package.json'));
const resolveBin = (name, bin) => join(dirname(require.resolve(`${name}/package.json`)), bin);
const nodeGyp = resolveBin('node-gyp', 'bin/node-gyp.js');
const prebuildify = resolveBin('prebuildify', 'bin.js');
const nodedir = [process.env.npm_config_nodedir, resolve(dirname(process.execPath), '..'), '/usr'].find(
  (dir) => dir && existsSync(join(dir, 'include', 'node', 'node_api.h')),
);
if (nodedir === undefined) {
  console.error(`${pkg.name}: prebuild: no Node headers beside ${process.execPath} or in /usr/include/node (nothing is downloaded)`);
  process.exit(1);
}

// What the binary is made of: the copied sources, the toolchain versions, Node's headers.
const COPY = ['binding.gyp', 'src', 'include'].filter((e) => existsSync(join(nativeDir, e)));
const hash = createHash('sha256');
const walk = (p) => {
  if (statSync(p).isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e));
  else hash.update(relative(nativeDir, p)).update(readFileSync(p));
};
for (const e of COPY) walk(join(nativeDir, e));
for (const dep of ['node-gyp', 'node-addon-api', 'prebuildify']) hash.update(`${dep}@${JSON.parse(readFileSync(require.resolve(`${dep}/package.json`), 'utf8')).version}`);
hash.update(process.version).update(nodedir);
const stamp = hash.digest('hex');
const binaries = () => (existsSync(outDir) ? readdirSync(outDir).filter((f) => f.endsWith('.node')) : []);
if (!process.argv.includes('--force') && existsSync(stampPath) && readFileSync(stampPath, 'utf8') === stamp && binaries().length > 0) {
  say(`up to date (${relative(packageDir, join(outDir, binaries()[0]))})`);
  process.exit(0);
}

rmSync(workDir, { recursive: true, force: true });
rmSync(outDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
for (const e of COPY) cpSync(join(nativeDir, e), join(workDir, e), { recursive: true });
// binding.gyp names helper scripts relative to native/ (provider-blas: ../scripts/...).
const gypPath = join(workDir, 'binding.gyp');
writeFileSync(gypPath, readFileSync(gypPath, 'utf8').replaceAll('../scripts/', `${join(packageDir, 'scripts')}/`));

const env = { ...process.env, npm_config_nodedir: nodedir, PREBUILD_NODE_GYP: nodeGyp };
for (const flags of ['CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS']) delete env[flags];
// Every instruction-set path, whatever the build machine runs (isa-paths.mjs).
delete env.TENFERRO_NATIVE_ISA;
say(`building ${tuple} (prebuildify --napi --strip --tag-libc; about half a minute)`);
const t = Date.now();
const r = spawnSync(process.execPath, [prebuildify, '--napi', '--strip', '--tag-libc', `--name=${pkg.name}`, `--out=${nativeDir}`, workDir], {
  cwd: workDir,
  env,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
if (r.status !== 0) {
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter((l) => l.trim() && !l.startsWith('gyp info'));
  console.error(`${pkg.name}: prebuild failed (exit ${r.status ?? r.signal}):\n${out.slice(-30).join('\n')}`);
  process.exit(1);
}
const made = binaries();
if (made.length !== 1) {
  console.error(`${pkg.name}: prebuild: expected one binary in ${outDir}, found ${made.join(', ') || 'none'}`);
  process.exit(1);
}
// It must load with this Node.
const file = join(outDir, made[0]);
const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(file)})`], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.error(`${pkg.name}: prebuild: ${file} does not load:\n${probe.stderr}`);
  process.exit(1);
}
mkdirSync(dirname(stampPath), { recursive: true });
writeFileSync(stampPath, stamp);
say(`${relative(packageDir, file)} (${(statSync(file).size / 1024).toFixed(0)} KiB, ${((Date.now() - t) / 1000).toFixed(1)} s)`);
