// examples/provider-template — a NATIVE provider (#40 item 5) — built, checked and shipped the way a
// third party would, in a temporary folder outside the workspace:
//  1. core, os and native packed by `pnpm pack`; the template copied into an empty folder;
//  2. its third-party tools (node-gyp, node-addon-api, node-gyp-build, prebuildify, typescript,
//     vitest, @types/node) linked in from the workspace's package store, then the README's tarball
//     line run with `--offline` — npm installs the three tarballs beside them and downloads nothing;
//  3. `npm run abi -- --check` (the committed header is the table's), the README's build line
//     (`npm run abi && npm run build:native && npm test`: the addon built with @tenferro/native's
//     headers, then tsc and the template's own conformance kit under vitest);
//  4. `npm pack` (prepack: tsc + tenferro-prebuild) — the tarball carries the prebuilt binary;
//  5. an empty application installs the four tarballs (the store's node-gyp, node-addon-api and
//     node-gyp-build linked as before) with no compiler, make or python on PATH, so only the
//     prebuilt binary can load, and runs GEMMs through `CpuBackend.create({ providers:
//     [createXProvider()] })` — checked against the README's claims (the GEMM slot only, where the
//     provider shows up).
// The test logs how long each step took.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { pnpm: string; path: string; nodedir?: string };
const work = mkdtempSync(join(tmpdir(), 'tenferro-template-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const TUPLE = `${process.platform}-${process.arch}`;

interface Manifest {
  name: string;
  peerDependencies: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function env(path: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, PATH: path, NO_COLOR: '1', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  if (setup.nodedir) e.npm_config_nodedir = setup.nodedir;
  // pnpm's bin shims (vitest's) set NODE_PATH to the workspace's package store: a third party has none.
  delete e.NODE_PATH;
  for (const k of ['VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID', 'TENFERRO_TIER', 'TENFERRO_SKIP_PREBUILD', 'TENFERRO_SKIP_NATIVE_INSTALL', 'TENFERRO_BUILD_FROM_SOURCE', 'npm_config_build_from_source', 'TENFERRO_X_DISABLE']) delete e[k];
  return e;
}

function sh(command: string, cwd: string, path = setup.path): { status: number | null; out: string } {
  const r = spawnSync('/bin/sh', ['-c', command], { cwd, env: env(path), encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A third-party package as the workspace's package store holds it (the folder pnpm linked for one of our packages). */
function fromStore(name: string): string {
  for (const pkg of ['os', 'native', 'release-checks']) {
    const dir = join(root, 'packages', pkg, 'node_modules', name);
    if (existsSync(join(dir, 'package.json'))) return realpathSync(dir);
  }
  throw new Error(`${name} is not in the workspace's package store`);
}

/** Links `names` from the store into `app/node_modules`, where an earlier `npm install` would have put them. */
function linkFromStore(app: string, names: readonly string[]): void {
  for (const name of names) {
    mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
    symlinkSync(fromStore(name), join(app, 'node_modules', name), 'dir');
  }
}

describe('examples/provider-template (a native provider)', () => {
  it('builds from packed tarballs outside the workspace, passes its own kit, packs a prebuilt binary, and runs GEMMs in an application that passes it', (context) => {
    if (process.platform !== 'linux') context.skip('tenferro runs native code on Linux only');
    const times: [string, number][] = [];
    let last = performance.now();
    const lap = (step: string) => {
      const now = performance.now();
      times.push([step, now - last]);
      last = now;
    };

    // 1. The tarballs a third party installs, and the template in an empty folder.
    const tgz = join(work, 'tgz');
    for (const p of ['core', 'os', 'native']) {
      const r = sh(`${JSON.stringify(setup.pnpm)} pack --pack-destination ${JSON.stringify(tgz)}`, join(root, 'packages', p));
      expect(r.status, r.out).toBe(0);
    }
    expect(readdirSync(tgz).sort()).toEqual([expect.stringMatching(/^tenferro-core-.*\.tgz$/), expect.stringMatching(/^tenferro-native-.*\.tgz$/), expect.stringMatching(/^tenferro-os-.*\.tgz$/)]);
    const dev = join(work, 'tenferro-x-gemm');
    const skip = /\/(node_modules|dist|build|prebuilds)(\/|$)|\.tgz$/;
    cpSync(join(root, 'examples', 'provider-template'), dev, { recursive: true, filter: (src) => !skip.test(src.slice(root.length)) });
    const manifestText = readFileSync(join(dev, 'package.json'), 'utf8');
    const manifest = JSON.parse(manifestText) as Manifest;
    // Only published tenferro packages: core (peer, and dev for the tests), native; os comes with core.
    const tenferro = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies }).filter((n) => n.startsWith('@tenferro/'));
    expect(tenferro.sort()).toEqual(['@tenferro/core', '@tenferro/native']);
    expect(manifest.peerDependencies['@tenferro/core']).toBe('>=0.1.0 <1.0.0');
    lap('pack core, os, native');

    // 2. The README's line, its ./tarballs/ pointing at ours, offline: the third-party tools are the store's.
    const thirdParty = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((n) => !n.startsWith('@tenferro/'));
    expect(thirdParty).toEqual(expect.arrayContaining(['node-gyp', 'node-addon-api', 'node-gyp-build', 'vitest']));
    linkFromStore(dev, thirdParty);
    const readme = readFileSync(join(dev, 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npm install --no-save '));
    expect(line, 'the README gives the tarball install line').toBeDefined();
    expect(line).toMatch(/tenferro-core-.*tenferro-os-.*tenferro-native-/);
    const install = sh(`${line!.replaceAll('./tarballs/', `${tgz}/`)} --offline --no-package-lock --foreground-scripts`, dev);
    expect(install.status, install.out).toBe(0);
    // package.json as it was: the bounded peer range, no file: path written anywhere.
    expect(readFileSync(join(dev, 'package.json'), 'utf8')).toBe(manifestText);
    for (const p of ['core', 'os', 'native']) expect(existsSync(join(dev, 'node_modules', '@tenferro', p, 'package.json')), `@tenferro/${p} installed`).toBe(true);
    // Every range of the template is met by what is installed (npm ls exits 1 on an invalid or missing one).
    const ls = sh('npm ls --depth=0 --offline', dev);
    expect(ls.status, ls.out).toBe(0);
    lap('npm install (offline)');

    // 3. The ABI header is the table's; the README's build line: the addon, tsc and the kit.
    const abi = sh('npm run abi -- --check', dev);
    expect(abi.status, abi.out).toBe(0);
    // The same script through a symlinked @tenferro/native (pnpm's node_modules layout): it still
    // writes the generated files (it once compared process.argv[1] with its real path, and did nothing).
    const scratch = join(work, 'abi-through-a-link');
    mkdirSync(join(scratch, 'node_modules', '@tenferro'), { recursive: true });
    symlinkSync(join(dev, 'node_modules', '@tenferro', 'native'), join(scratch, 'node_modules', '@tenferro', 'native'), 'dir');
    cpSync(join(dev, 'native', 'src', 'abi.mjs'), join(scratch, 'abi.mjs'));
    const linked = sh('node node_modules/@tenferro/native/abi/generate.mjs abi.mjs', scratch);
    expect(linked.status, linked.out).toBe(0);
    expect(readFileSync(join(scratch, 'abi.generated.h'), 'utf8')).toBe(readFileSync(join(dev, 'native', 'src', 'abi.generated.h'), 'utf8'));
    // The README's build line, after its tarball line (and wherever else it gives it): this one, run in two halves to time them.
    const lines = readme.split('\n');
    expect(lines[lines.indexOf(line!) + 1]).toBe('npm run abi && npm run build:native && npm test');
    for (const l of lines.filter((x) => x.startsWith('npm run abi && '))) expect(l.replace(/\s+#.*$/, '')).toBe('npm run abi && npm run build:native && npm test');
    const built = sh('npm run abi && npm run build:native', dev);
    expect(built.status, built.out).toBe(0);
    expect(existsSync(join(dev, 'native', 'build', 'Release', 'tenferro_x.node'))).toBe(true);
    lap('npm run build:native');
    const test = sh('npm test', dev);
    expect(test.status, test.out).toBe(0);
    // Every kit case runs for the template's provider, the summed-axes one included (#39): none skipped.
    expect(test.out).toMatch(/Tests\s+10 passed \(10\)/);
    lap('npm test (tsc + the kit)');

    // 4. prepack builds the prebuilt binary into the tarball.
    const packed = sh('npm pack', dev);
    expect(packed.status, packed.out).toBe(0);
    const tarball = join(dev, `${manifest.name}-0.1.0.tgz`);
    const listed = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.split('\n');
    expect(listed).toEqual(expect.arrayContaining([`package/native/prebuilds/${TUPLE}/${manifest.name}.glibc.node`, 'package/native/src/abi.generated.h', 'package/native/binding.gyp', 'package/dist/index.js']));
    expect(listed.filter((f) => f.includes('/native/build/'))).toEqual([]);
    lap('npm pack (tenferro-prebuild)');

    // 5. An empty application: node and sh on PATH, nothing to compile with.
    const bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const probe = sh('for t in g++ c++ gcc cc make python3 python; do command -v $t && exit 1; done; exit 0', work, bin);
    expect(probe.status, `reachable: ${probe.out}`).toBe(0);
    const npmCli = join(dirname(realpathSync(sh('command -v npm', work).out.trim())), 'npm-cli.js');
    expect(existsSync(npmCli), npmCli).toBe(true);
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'x-gemm-app', private: true, type: 'module' }));
    linkFromStore(app, Object.keys(manifest.dependencies).filter((n) => !n.startsWith('@tenferro/')));
    const tarballs = [...readdirSync(tgz).map((f) => join(tgz, f)), tarball];
    const appInstall = sh(`node ${JSON.stringify(npmCli)} install --offline --no-package-lock --foreground-scripts ${tarballs.map((t) => JSON.stringify(t)).join(' ')}`, app, bin);
    expect(appInstall.status, appInstall.out).toBe(0);
    expect(appInstall.out).toContain(`${manifest.name}: native addon ready (prebuilt: native/prebuilds/${TUPLE}/`);
    const record = JSON.parse(readFileSync(join(app, 'node_modules', manifest.name, 'native', 'build', 'status.json'), 'utf8')) as { ok: boolean; source: string };
    expect(record).toMatchObject({ ok: true, source: 'prebuilt' });
    lap('install into an empty app (no toolchain)');

    const script = `import { subscribe } from 'node:diagnostics_channel';
import { CpuBackend, Tensor } from '@tenferro/core';
import { createXProvider, status } from '${manifest.name}';
const calls = [];
subscribe('tracing:tenferro:provider:asyncEnd', (e) => calls.push({ slot: e.slot, provider: e.provider, outcome: e.outcome }));
const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createXProvider()] });
const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
const small = (await backend.matmul(a, a)).toArray();
// Large enough to fan out over the pool (m·n·k above parallelMinWork), f32, exact in integers.
const [m, k, n] = [48, 64, 40];
const l = Array.from({ length: m * k }, (_, i) => (i % 7) - 3);
const r = Array.from({ length: k * n }, (_, i) => (i % 5) - 2);
const big = Array.from((await backend.matmul(Tensor.fromArray('f32', [m, k], l), Tensor.fromArray('f32', [k, n], r))).toArray());
let wrong = 0;
for (let j = 0; j < n; j++) for (let i = 0; i < m; i++) {
  let s = 0;
  for (let p = 0; p < k; p++) s += l[i + p * m] * r[p + j * k];
  if (big[i + j * m] !== s) wrong++;
}
const b = backend.providerBundle();
console.log(JSON.stringify({ status: status(), small, wrong, calls, diagnostic: backend.executionInfo().providerDiagnostic, gemm: b.gemm.name, layout: b.layoutTransform.name, primitives: b.tensorPrimitives.name }));
await backend.close();
`;
    writeFileSync(join(app, 'gemm.mjs'), script);
    const ran = sh('node gemm.mjs', app, bin);
    expect(ran.status, ran.out).toBe(0);
    const seen = JSON.parse(ran.out.trim().split('\n').pop()!) as {
      status: { available: boolean; name: string; addonPath?: string };
      small: number[];
      wrong: number;
      calls: { slot: string; provider: string; outcome: string }[];
      diagnostic: string;
      gemm: string;
      layout: string;
      primitives: string;
    };
    expect(seen.status, ran.out).toMatchObject({ available: true, name: 'x GEMM' });
    expect(seen.status.addonPath).toMatch(new RegExp(`/node_modules/${manifest.name}/native/prebuilds/${TUPLE}/${manifest.name}\\.glibc\\.node$`));
    expect(seen.small).toEqual([7, 10, 15, 22]);
    expect(seen.wrong).toBe(0);
    // Both GEMMs ran on the template's kernel, none declined.
    expect(seen.calls.filter((c) => c.slot === 'gemm')).toEqual([
      { slot: 'gemm', provider: 'x GEMM', outcome: 'executed' },
      { slot: 'gemm', provider: 'x GEMM', outcome: 'executed' },
    ]);
    // What the README says: providers: [...] replaces the GEMM slot only, and how the provider shows up.
    expect(seen.diagnostic).toBe('x GEMM (tenferro-managed pinned workers)');
    expect(readme).toContain(`providerDiagnostic);      // ${seen.diagnostic}`);
    expect(seen.gemm).toBe('x GEMM');
    expect(seen.layout).toMatch(/^reference layout transform/);
    expect(seen.primitives).toMatch(/^reference tensor primitives/);
    expect(readme).toContain(`// ${seen.primitives}`);
    lap('GEMMs through providers: [createXProvider()]');

    const total = times.reduce((s, [, ms]) => s + ms, 0);
    const report = `provider template, outside the workspace: ${(total / 1000).toFixed(1)} s — ${times.map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)} s`).join(', ')}`;
    console.log(report);
    context.annotate(report);
  }, 600_000);
});
