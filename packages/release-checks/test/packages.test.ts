// What tenferro publishes, checked on the packed tarballs (pnpm pack, so workspace: ranges are
// rewritten as they will be on the registry): publint --strict, attw (ESM-only profile: the
// packages are ESM), the metadata every package carries, the native packages' install step
// (@tenferro/native's `tenferro-install-native`, #40) and that their tarballs carry every input their
// binding.gyp needs for a source build.
// The full install from the tarballs into an app is `npm run release:dry` (docs/contributing/native-package.md).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findInstalledProviders, KNOWN_PACKAGES } from '@tenferro/cli';
import { gypInputs } from '@tenferro/native/prebuild';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const packagesDir = join(root, 'packages');
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { pnpm: string; path: string };

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const all = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8')) as Manifest }));
const published = all.filter((p) => p.pkg.private !== true);
const native = published.filter((p) => existsSync(join(packagesDir, p.dir, 'native', 'binding.gyp')));

describe('package metadata', () => {
  it('publishes core, os, the three providers, linalg, the CLI and the native toolkit', () => {
    expect(published.map((p) => p.pkg.name).sort()).toEqual([
      '@tenferro/cli',
      '@tenferro/core',
      '@tenferro/linalg',
      '@tenferro/native',
      '@tenferro/os',
      '@tenferro/provider-blas',
      '@tenferro/provider-faer',
      '@tenferro/provider-tprims',
    ]);
  });

  it.each(published.map((p) => [p.pkg.name, p] as const))('%s: license (with its LICENSE file), repository, files without tests', (_, p) => {
    expect(p.pkg.license).toBe('MIT');
    expect(readFileSync(join(packagesDir, p.dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    expect(p.pkg.repository).toMatchObject({ type: 'git', directory: `packages/${p.dir}` });
    expect(p.pkg.files).toBeDefined();
    for (const f of p.pkg.files ?? []) expect(f).not.toMatch(/(^|\/)(test|tests|bench|fuzz)(\/|$)|\.sh$|run-tests/);
  });
});

describe('native packages', () => {
  const installBin = readFileSync(join(packagesDir, 'native', 'bin', 'tenferro-install-native.mjs'), 'utf8');
  const toolkit = all.find((p) => p.dir === 'native')!.pkg as Manifest & { bin?: Record<string, string> };

  it('are os, faer, blas, tprims and linalg', () => {
    expect(native.map((p) => p.dir).sort()).toEqual(['linalg', 'os', 'provider-blas', 'provider-faer', 'provider-tprims']);
  });

  it.each(native.map((p) => [p.pkg.name, p] as const))('%s: install step = @tenferro/native’s tenferro-install-native, prepack = tenferro-prebuild, with its own build tools', (_, p) => {
    expect(p.pkg.scripts?.install).toMatch(/^tenferro-install-native --platforms \S+$/);
    expect(p.pkg.scripts?.prepack).toBe('tenferro-prebuild');
    expect(p.pkg.dependencies?.['@tenferro/native']).toBe('workspace:^');
    for (const dep of ['node-gyp-build', 'node-gyp', 'node-addon-api']) expect(p.pkg.dependencies?.[dep], dep).toBeDefined();
    expect(p.pkg.devDependencies?.prebuildify).toBeDefined();
    expect(p.pkg.files).toEqual(expect.arrayContaining(['native/binding.gyp', 'native/src', 'native/prebuilds']));
    // No copy of the install step in any package (#40): the one bin is @tenferro/native's.
    expect(existsSync(join(packagesDir, p.dir, 'scripts', 'install-native.mjs'))).toBe(false);
  });

  it('@tenferro/native has the two bins, and nothing of ours imports it at run time', () => {
    expect(toolkit.bin).toEqual({ 'tenferro-install-native': './bin/tenferro-install-native.mjs', 'tenferro-prebuild': './bin/tenferro-prebuild.mjs' });
    for (const p of all) {
      const src = join(packagesDir, p.dir, 'src');
      if (!existsSync(src)) continue;
      const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
      for (const f of walk(src).filter((f) => /\.[cm]?[jt]s$/.test(f))) expect(readFileSync(f, 'utf8'), f).not.toMatch(/from ['"]@tenferro\/native['"/]|import\(['"]@tenferro\/native/);
    }
  });

  it('tenferro info does not list @tenferro/native: it is no provider, though it resolves beside one', () => {
    expect(KNOWN_PACKAGES.map((k) => k.name)).not.toContain('@tenferro/native');
    const core = all.find((p) => p.dir === 'core')!.pkg as Manifest & { tenferro?: { providerPackages?: { name: string }[] } };
    expect(core.tenferro?.providerPackages?.map((p) => p.name)).not.toContain('@tenferro/native');
    // From os's folder @tenferro/native resolves (its dependency); the CLI still does not report it.
    expect(existsSync(join(packagesDir, 'os', 'node_modules', '@tenferro', 'native', 'package.json'))).toBe(true);
    expect(findInstalledProviders(join(packagesDir, 'os')).map((p) => p.name)).not.toContain('@tenferro/native');
  });

  it('the install step imports only Node built-ins and the package’s own dependencies', () => {
    const imports = [...installBin.matchAll(/(?:from\s+|require\()['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(5);
    const own = new Set(['node-gyp-build', 'node-gyp/package.json', 'node-addon-api']);
    expect(imports.filter((i) => !i!.startsWith('node:') && !own.has(i!))).toEqual([]);
    expect(installBin).not.toContain("'@tenferro/");
  });

  it.each(native.map((p) => [p.pkg.name, p] as const))('%s: binding.gyp has no -march (prebuilt binaries dispatch on the ISA at run time)', (_, p) => {
    const gyp = readFileSync(join(packagesDir, p.dir, 'native', 'binding.gyp'), 'utf8');
    expect(gyp).not.toMatch(/-march|-mtune=native/);
    // Instruction-set flags only on per-ISA targets (named …_avx2 / …_avx512) whose code the addon
    // chooses at run time; the defaults and every other target are built for any CPU.
    const [defaults, ...targets] = gyp.split(/"target_name"\s*:\s*/);
    expect(defaults).not.toMatch(/-mavx|-mfma/);
    for (const target of targets) {
      const name = /^"([^"]+)"/.exec(target)?.[1] ?? '';
      if (/-mavx|-mfma/.test(target)) expect(name).toMatch(/_(avx2|avx512)$/);
    }
  });
});

describe('packed tarballs', () => {
  let out: string;
  const tarball = new Map<string, string>();

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'tenferro-pack-'));
    for (const p of published) {
      // No prebuilt binary here (TENFERRO_SKIP_PREBUILD): npm run release:dry packs with them.
      const r = spawnSync(setup.pnpm, ['pack', '--pack-destination', out], {
        cwd: join(packagesDir, p.dir),
        encoding: 'utf8',
        env: { ...process.env, PATH: setup.path, TENFERRO_SKIP_PREBUILD: '1' },
      });
      if (r.status !== 0) throw new Error(`pnpm pack ${p.pkg.name} failed:\n${r.stdout}${r.stderr}`);
      tarball.set(p.pkg.name, join(out, `${p.pkg.name.replace('@', '').replace('/', '-')}-${p.pkg.version}.tgz`));
    }
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(published.map((p) => [p.pkg.name] as const))('%s: publint --strict reports nothing', async (name) => {
    const file = readFileSync(tarball.get(name)!);
    const tgz = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer;
    const { messages } = await publint({ pack: { tarball: tgz }, strict: true, level: 'suggestion' });
    expect(messages.map((m) => `${m.type} ${m.code} ${m.path.join('.')}`)).toEqual([]);
  });

  it.each(published.map((p) => [p.pkg.name] as const))('%s: attw (esm-only profile) finds no problem', (name) => {
    const attw = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'attw');
    const r = spawnSync(attw, [tarball.get(name)!, '--profile', 'esm-only', '--format', 'ascii', '--no-color', '--no-emoji'], { encoding: 'utf8' });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it.each(native.map((p) => [p.pkg.name, p] as const))('%s: the tarball carries every input binding.gyp needs (a source build from it works)', (name, p) => {
    const list = new Set(spawnSync('tar', ['-tzf', tarball.get(name)!], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean));
    const inputs = gypInputs(join(packagesDir, p.dir, 'native'));
    expect(inputs.missing).toEqual([]);
    for (const e of inputs.entries) expect([...list].some((f) => f === `package/native/${e}` || f.startsWith(`package/native/${e}/`)), `native/${e}`).toBe(true);
    for (const { abs } of inputs.external) expect(list.has(`package/${abs.slice(join(packagesDir, p.dir).length + 1)}`), abs).toBe(true);
  });

  it('@tenferro/native: the bins, their library and the index modules are packed', () => {
    const list = spawnSync('tar', ['-tzf', tarball.get('@tenferro/native')!], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const f of ['bin/tenferro-install-native.mjs', 'bin/tenferro-prebuild.mjs', 'lib/prebuild.mjs', 'lib/gyp-inputs.mjs', 'index.mjs', 'index.cjs', 'LICENSE']) expect(list, f).toContain(`package/${f}`);
  });

  it.each(published.map((p) => [p.pkg.name] as const))('%s: no workspace: range, no tests, no declaration maps, source maps with sourcesContent', (name) => {
    const tgz = tarball.get(name)!;
    const list = spawnSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    const manifest = spawnSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }).stdout;
    expect(manifest).not.toContain('workspace:');
    // No tests, fuzzers or the package's own bench scripts (a `bench` module of the code, as the CLI's, is fine).
    expect(list.filter((f) => /^package\/(test|fuzz|bench)\/|\/(test|fuzz)\/|\.test\.|\.sh$/.test(f))).toEqual([]);
    expect(list.filter((f) => f.endsWith('.d.ts.map'))).toEqual([]);
    const maps = list.filter((f) => f.endsWith('.js.map'));
    for (const m of maps.slice(0, 20)) {
      const map = JSON.parse(spawnSync('tar', ['-xzOf', tgz, m], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout) as { sources: string[]; sourcesContent?: string[] };
      expect(map.sourcesContent?.length, m).toBe(map.sources.length);
    }
  });
});
