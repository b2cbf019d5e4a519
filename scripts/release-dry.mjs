#!/usr/bin/env node
// `npm run release:dry`: what a release would publish, installed the way a user installs it.
//
//   1. packs every published package with `pnpm pack` (workspace: ranges become real ones; the
//      native packages' prepack makes their linux-x64 prebuilt binary with prebuildify),
//   2. checks each tarball: no tests, no declaration maps, every source map carries sourcesContent,
//      a LICENSE, no workspace: range left, the native packages' prebuilt binary and install step
//      (@tenferro/native's tenferro-install-native, which the app gets from its tarball),
//   3. in a fresh temporary app folder: `npm i <the tarballs>` (dependencies from the npm registry),
//      `npx tenferro info`, and a quick start (a small matmul on the faer provider), asserting that
//      the os binding is available and faer runs natively.
//
//   node scripts/release-dry.mjs [--keep] [--out DIR] [--scenario prebuilt|source|no-compiler|all]
//     prebuilt     (default) the tarballs as packed: the prebuilt binaries load
//     source       npm_config_build_from_source=true: every addon is built at install, from the tarball
//     no-compiler  from source with no working compiler: the install succeeds, and the packages say
//                  why they have no addon (status()), and the backend falls back to the reference kernels
// Exit 0 when every check passed. The app folders are removed unless --keep.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const keep = argv.includes('--keep');
const scenarioArg = opt('scenario', 'prebuilt');
const scenarios = scenarioArg === 'all' ? ['prebuilt', 'source', 'no-compiler'] : [scenarioArg];
for (const s of scenarios) {
  if (!['prebuilt', 'source', 'no-compiler'].includes(s)) {
    console.error(`release:dry: unknown --scenario ${s} (prebuilt, source, no-compiler or all)`);
    process.exit(2);
  }
}
const work = opt('out', undefined) ?? mkdtempSync(join(tmpdir(), 'tenferro-release-dry-'));
mkdirSync(work, { recursive: true });
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8'));
const started = Date.now();
const results = [];
const say = (line) => console.log(`release:dry: ${line}`);

function check(label, ok, detail = '') {
  results.push({ label, ok });
  console.log(`release:dry: ${ok ? 'ok  ' : 'FAIL'} ${label}${detail ? ` — ${detail}` : ''}`);
  return ok;
}

function run(cmd, args, { cwd = root, env = {}, show = true } = {}) {
  const r = spawnSync(cmd, args, { cwd, env: { ...process.env, PATH: setup.path, ...env }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if ((show || r.status !== 0) && out.trim() !== '') process.stdout.write(`${out.trimEnd().replace(/^/gm, '  │ ')}\n`);
  return { ok: r.status === 0, out, stdout: r.stdout ?? '' };
}

// --- 1. pack ---------------------------------------------------------------------------------------
const packagesDir = join(root, 'packages');
const published = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .map((d) => ({ dir: d, pkg: JSON.parse(readFileSync(join(packagesDir, d, 'package.json'), 'utf8')) }))
  .filter((p) => p.pkg.private !== true);
const tarballs = join(work, 'tarballs');
rmSync(tarballs, { recursive: true, force: true });
mkdirSync(tarballs, { recursive: true });
say(`packing ${published.map((p) => p.pkg.name).join(', ')} into ${tarballs}`);
for (const p of published) {
  const r = run(setup.pnpm, ['pack', '--pack-destination', tarballs], { cwd: join(packagesDir, p.dir), show: false });
  const prebuild = r.out.split('\n').find((l) => l.includes('prebuild:'));
  check(`pnpm pack ${p.pkg.name}`, r.ok, prebuild?.replace(/^.*prebuild: /, 'prebuild: '));
  if (!r.ok) finish();
}

// --- 2. the tarballs' contents ------------------------------------------------------------------------
const tgzs = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'));
for (const p of published) {
  const file = `${p.pkg.name.replace('@', '').replace('/', '-')}-${p.pkg.version}.tgz`;
  const tgz = join(tarballs, file);
  if (!check(`${file} exists`, existsSync(tgz))) continue;
  const list = spawnSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  const manifest = JSON.parse(spawnSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }).stdout);
  const tests = list.filter((f) => /(^|\/)(test|tests|__tests__|fuzz)\/|\.test\.[cm]?[jt]s$|\.sh$|run-tests/.test(f));
  check(`${p.pkg.name}: no tests or test scripts in the tarball`, tests.length === 0, tests.slice(0, 5).join(', '));
  const dtsMaps = list.filter((f) => f.endsWith('.d.ts.map'));
  check(`${p.pkg.name}: no declaration maps (their sources are not shipped)`, dtsMaps.length === 0, dtsMaps.slice(0, 3).join(', '));
  const maps = list.filter((f) => f.endsWith('.js.map'));
  const bare = maps.filter((m) => {
    const map = JSON.parse(spawnSync('tar', ['-xzOf', tgz, `package/${m}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout);
    return !Array.isArray(map.sourcesContent) || map.sourcesContent.length !== map.sources.length || map.sourcesContent.some((s) => typeof s !== 'string');
  });
  check(`${p.pkg.name}: ${maps.length} source maps, all with sourcesContent`, bare.length === 0, bare.slice(0, 3).join(', '));
  check(`${p.pkg.name}: LICENSE, license ${manifest.license}, repository`, list.includes('LICENSE') && typeof manifest.license === 'string' && manifest.repository?.url !== undefined);
  const ranges = JSON.stringify([manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies]);
  check(`${p.pkg.name}: no workspace: range left`, !ranges.includes('workspace:'));
  if (existsSync(join(packagesDir, p.dir, 'native', 'binding.gyp'))) {
    const prebuilt = list.filter((f) => /^native\/prebuilds\/linux-x64\/.+\.node$/.test(f));
    check(`${p.pkg.name}: carries a linux-x64 prebuilt binary`, prebuilt.length === 1, prebuilt.join(', '));
    check(
      `${p.pkg.name}: install step (@tenferro/native's tenferro-install-native) and its own build tools`,
      manifest.scripts?.install?.startsWith('tenferro-install-native ') &&
        ['@tenferro/native', 'node-gyp', 'node-gyp-build', 'node-addon-api'].every((d) => manifest.dependencies?.[d] !== undefined),
    );
  }
}

// --- 3. install into a fresh app, per scenario -----------------------------------------------------------
const QUICKSTART = `// the quick start: a small matmul on the faer provider
import { CpuBackend, Tensor } from '@tenferro/core';
import { loadOs } from '@tenferro/os';
import { faerProviderStatus } from '@tenferro/provider-faer';

const backend = await CpuBackend.create({ kind: 'faer', threads: 2 });
try {
  const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
  const c = await backend.matmul(a, a.transpose());
  const os = loadOs();
  const faer = faerProviderStatus();
  console.log(JSON.stringify({
    c: c.toArray({ order: 'row' }),
    workers: backend.executionInfo().workers,
    provider: backend.executionInfo().providerDiagnostic,
    os: os.available ? { available: true, path: os.path } : { available: false, reasons: os.reasons },
    faer: faer.available ? { available: true, isa: faer.isa, path: faer.path } : { available: false, reasons: faer.reasons, possibleSolutions: faer.possibleSolutions },
  }, null, 2));
} finally {
  await backend.close();
}
`;

for (const scenario of scenarios) {
  const app = join(work, `app-${scenario}`);
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: `release-dry-${scenario}`, private: true, type: 'module' }, null, 2)}\n`);
  writeFileSync(join(app, 'quickstart.mjs'), QUICKSTART);
  const env = { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  let from = tarballs;
  if (scenario === 'source') env.npm_config_build_from_source = 'true';
  if (scenario === 'no-compiler') {
    // Tarballs without their prebuilt binaries (as on a platform that has none), and a compiler that fails.
    from = join(work, 'tarballs-without-prebuilds');
    rmSync(from, { recursive: true, force: true });
    mkdirSync(from, { recursive: true });
    for (const f of tgzs) {
      const x = join(from, f.replace(/\.tgz$/, ''));
      mkdirSync(x);
      spawnSync('tar', ['-xzf', join(tarballs, f), '-C', x]);
      rmSync(join(x, 'package', 'native', 'prebuilds'), { recursive: true, force: true });
      spawnSync('tar', ['-czf', join(from, f), '-C', x, 'package']);
      rmSync(x, { recursive: true, force: true });
    }
    Object.assign(env, { CC: '/bin/false', CXX: '/bin/false', LINK: '/bin/false' });
  }
  say(`[${scenario}] npm i ${tgzs.map((t) => `./${t}`).join(' ')} (in ${app}${scenario === 'prebuilt' ? '' : scenario === 'source' ? ', npm_config_build_from_source=true' : ', no prebuilt binaries, CC=CXX=/bin/false'})`);
  const t = Date.now();
  const install = run('npm', ['install', '--foreground-scripts', '--no-package-lock', ...tgzs.map((f) => join(from, f))], { cwd: app, env });
  if (!check(`[${scenario}] npm i of the tarballs succeeds (${((Date.now() - t) / 1000).toFixed(0)} s)`, install.ok)) continue;
  const statuses = ['os', 'provider-faer', 'provider-blas'].map((d) => {
    const f = join(app, 'node_modules', '@tenferro', d, 'native', 'build', 'status.json');
    return { d, status: existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined };
  });
  for (const { d, status } of statuses) {
    if (scenario === 'no-compiler') check(`[${scenario}] @tenferro/${d}: install recorded why there is no addon`, status?.ok === false && typeof status.reason === 'string', status?.reason?.split('\n')[0]);
    else check(`[${scenario}] @tenferro/${d}: addon ${scenario === 'prebuilt' ? 'prebuilt' : 'built'} at install`, status?.ok === true && status.source === (scenario === 'prebuilt' ? 'prebuilt' : 'built'), status?.path ?? status?.reason?.split('\n')[0]);
  }
  const info = run('npx', ['--no-install', 'tenferro', 'info'], { cwd: app });
  check(`[${scenario}] npx tenferro info`, info.ok);
  // @tenferro/native is install- and build-time only: never listed as a provider (#40).
  check(`[${scenario}] tenferro info does not list @tenferro/native`, info.ok && !info.out.includes('@tenferro/native'));
  const qs = run(process.execPath, ['quickstart.mjs'], { cwd: app });
  let out;
  try {
    out = JSON.parse(qs.stdout);
  } catch {
    out = undefined;
  }
  if (!check(`[${scenario}] the quick start runs`, qs.ok && out !== undefined)) continue;
  check(`[${scenario}] the quick start's matmul is [[14, 32], [32, 77]]`, JSON.stringify(out.c) === '[14,32,32,77]', JSON.stringify(out.c));
  if (scenario === 'no-compiler') {
    check(`[${scenario}] os binding unavailable, with a reason`, out.os.available === false && out.os.reasons.length > 0, out.os.reasons?.[0]);
    check(`[${scenario}] faer unavailable, with a reason and a fix`, out.faer.available === false && out.faer.possibleSolutions.length > 0, `${out.faer.reasons?.join('; ')} — fix: ${out.faer.possibleSolutions?.[0]}`);
    check(`[${scenario}] the backend says it runs the reference kernels`, /^reference/.test(out.provider), out.provider);
  } else {
    check(`[${scenario}] the os binding is available`, out.os.available === true, out.os.path ?? out.os.reasons?.join('; '));
    check(`[${scenario}] faer is native`, out.faer.available === true && !/^reference/.test(out.provider), `${out.faer.isa ?? out.faer.reasons?.join('; ')}; ${out.provider}`);
    const want = scenario === 'prebuilt' ? '/native/prebuilds/linux-x64/' : '/native/build/Release/';
    check(`[${scenario}] the addons loaded are the ${scenario === 'prebuilt' ? 'prebuilt' : 'built'} ones`, out.os.path?.includes(want) && out.faer.path?.includes(want), out.faer.path);
  }
  if (!keep) rmSync(app, { recursive: true, force: true });
}
finish();

function finish() {
  const failed = results.filter((r) => !r.ok);
  say(`${results.length - failed.length} checks passed, ${failed.length} failed in ${((Date.now() - started) / 1000).toFixed(0)} s${keep ? ` (kept ${work})` : ''}`);
  for (const f of failed) say(`  FAIL ${f.label}`);
  if (!keep && opt('out', undefined) === undefined) rmSync(work, { recursive: true, force: true });
  process.exit(failed.length > 0 ? 1 : 0);
}
