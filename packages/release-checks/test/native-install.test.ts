// @tenferro/native's install bin, `tenferro-install-native` (#40): the one install step of every native
// package (it replaced six copies of scripts/install-native.mjs). Run as npm runs it — in the
// package folder — on a tiny C addon in a temporary folder outside the workspace, with the package's
// own node-gyp, node-gyp-build and node-addon-api linked in from this workspace (nothing downloaded).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages', 'native', 'bin', 'tenferro-install-native.mjs');
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { path: string; nodedir?: string };
const work = mkdtempSync(join(tmpdir(), 'tenferro-install-native-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const TUPLE = `${process.platform}-${process.arch}`;

interface Status {
  ok: boolean;
  source?: string;
  path?: string;
  reason?: string;
  possibleSolutions?: string[];
  at?: string;
}

/** A native package `fake-native` in `dir`: a C addon exporting `answer`, and the build tools it depends on. */
function fakePackage(dir: string, { tools = ['node-gyp', 'node-gyp-build', 'node-addon-api'] } = {}): string {
  mkdirSync(join(dir, 'native', 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fake-native', version: '1.0.0', scripts: { install: 'tenferro-install-native --platforms linux' } }));
  writeFileSync(join(dir, 'native', 'binding.gyp'), JSON.stringify({ targets: [{ target_name: 'fake_native', sources: ['src/addon.c'] }] }));
  writeFileSync(
    join(dir, 'native', 'src', 'addon.c'),
    `#include <node_api.h>
static napi_value Init(napi_env env, napi_value exports) {
  napi_value v;
  napi_create_int32(env, 42, &v);
  napi_set_named_property(env, exports, "answer", v);
  return exports;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
`,
  );
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const t of tools) symlinkSync(realpathSync(join(root, 'packages', 'os', 'node_modules', t)), join(dir, 'node_modules', t));
  return dir;
}

function install(dir: string, args: string[], env: Record<string, string> = {}): { status: number | null; out: string; record: Status | undefined } {
  const full: NodeJS.ProcessEnv = { ...process.env, PATH: setup.path, ...env };
  delete full.npm_config_build_from_source;
  delete full.TENFERRO_REQUIRE_NATIVE;
  delete full.TENFERRO_SKIP_NATIVE_INSTALL;
  // pnpm's bin shims (vitest's) set NODE_PATH to the workspace's package store: an app has none.
  delete full.NODE_PATH;
  Object.assign(full, env);
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, env: full, encoding: 'utf8', maxBuffer: 64 << 20 });
  const statusFile = join(dir, 'native', 'build', 'status.json');
  return { status: r.status, out: `${r.stdout}${r.stderr}`, record: existsSync(statusFile) ? (JSON.parse(readFileSync(statusFile, 'utf8')) as Status) : undefined };
}

describe('tenferro-install-native', () => {
  // The app folder layout npm makes: <app>/node_modules/<package>.
  const pkg = fakePackage(join(work, 'app', 'node_modules', 'fake-native'));

  it('on a platform outside --platforms: records why and exits 0 (TENFERRO_REQUIRE_NATIVE=1: exits 1)', () => {
    const r = install(pkg, ['--platforms', 'win32-x64']);
    expect(r.status, r.out).toBe(0);
    expect(r.record).toMatchObject({ ok: false, at: 'install' });
    expect(r.record?.reason).toBe(`platform ${TUPLE} is not supported: fake-native runs on win32-x64`);
    expect(install(pkg, ['--platforms', 'win32-x64'], { TENFERRO_REQUIRE_NATIVE: '1' }).status).toBe(1);
    rmSync(join(pkg, 'native', 'build'), { recursive: true, force: true });
  });

  it('TENFERRO_SKIP_NATIVE_INSTALL=1: does nothing', () => {
    const r = install(pkg, ['--platforms', 'win32-x64'], { TENFERRO_SKIP_NATIVE_INSTALL: '1' });
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('TENFERRO_SKIP_NATIVE_INSTALL=1');
    expect(r.record).toBeUndefined();
  });

  it('without a prebuilt binary: builds from source with the package’s own node-gyp, and the result loads', () => {
    const r = install(pkg, ['--platforms', 'linux']);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('building the native addon from source');
    expect(r.record, r.out).toMatchObject({ ok: true, source: 'built', path: join(pkg, 'native', 'build', 'Release', 'fake_native.node') });
    const loaded = spawnSync(process.execPath, ['-p', `require(${JSON.stringify(r.record!.path)}).answer`], { encoding: 'utf8' });
    expect(loaded.stdout.trim()).toBe('42');
  }, 120_000);

  it('a prebuilt binary that loads is used as it is (no build)', () => {
    mkdirSync(join(pkg, 'native', 'prebuilds', TUPLE), { recursive: true });
    copyFileSync(join(pkg, 'native', 'build', 'Release', 'fake_native.node'), join(pkg, 'native', 'prebuilds', TUPLE, 'fake-native.glibc.node'));
    rmSync(join(pkg, 'native', 'build'), { recursive: true, force: true });
    // No compiler: a build would fail, so `ok` can only come from the prebuilt binary.
    const r = install(pkg, ['--platforms', 'linux'], { CC: '/bin/false', CXX: '/bin/false', LINK: '/bin/false' });
    expect(r.status, r.out).toBe(0);
    expect(r.out).not.toContain('building the native addon from source');
    expect(r.record, r.out).toMatchObject({ ok: true, source: 'prebuilt', path: join(pkg, 'native', 'prebuilds', TUPLE, 'fake-native.glibc.node') });
  });

  it('a prebuilt binary that does not load: says so and builds from source instead', () => {
    writeFileSync(join(pkg, 'native', 'prebuilds', TUPLE, 'fake-native.glibc.node'), 'not an ELF file');
    const r = install(pkg, ['--platforms', 'linux']);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/fake-native\.glibc\.node does not load: .*; building from source instead/);
    expect(r.record, r.out).toMatchObject({ ok: true, source: 'built' });
  }, 120_000);

  it('npm i --build-from-source ignores a prebuilt binary that loads', () => {
    copyFileSync(join(pkg, 'native', 'build', 'Release', 'fake_native.node'), join(pkg, 'native', 'prebuilds', TUPLE, 'fake-native.glibc.node'));
    const r = install(pkg, ['--platforms', 'linux'], { npm_config_build_from_source: 'true' });
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('building the native addon from source');
    expect(r.record, r.out).toMatchObject({ ok: true, source: 'built' });
    rmSync(join(pkg, 'native', 'prebuilds'), { recursive: true, force: true });
  }, 120_000);

  it('a build that fails: the install still succeeds, the cause and the fix are recorded (TENFERRO_REQUIRE_NATIVE=1: exit 1)', () => {
    rmSync(join(pkg, 'native', 'build'), { recursive: true, force: true });
    const broken = { CC: '/bin/false', CXX: '/bin/false', LINK: '/bin/false' };
    const r = install(pkg, ['--platforms', 'linux'], broken);
    expect(r.status, r.out).toBe(0);
    expect(r.record?.ok, r.out).toBe(false);
    expect(r.record?.reason).toMatch(/^the build from source failed: /);
    expect(r.record?.possibleSolutions?.[0]).toMatch(/apt-get install -y python3 make g\+\+.*npm rebuild fake-native --foreground-scripts/);
    expect(r.out).toContain('installed anyway');
    expect(install(pkg, ['--platforms', 'linux'], { ...broken, TENFERRO_REQUIRE_NATIVE: '1' }).status).toBe(1);
  }, 120_000);

  it('without node-gyp among the package’s dependencies: records that it cannot build, with the fix', () => {
    const bare = fakePackage(join(work, 'app', 'node_modules', 'bare-native'), { tools: ['node-gyp-build'] });
    const r = install(bare, ['--platforms', 'linux']);
    expect(r.status, r.out).toBe(0);
    expect(r.record?.ok, r.out).toBe(false);
    expect(r.record?.reason).toMatch(/^cannot build from source: .*node-gyp/);
    expect(r.record?.possibleSolutions).toEqual(['reinstall fake-native with its dependencies (node-gyp, node-addon-api): npm i fake-native']);
  });

  it('in a pnpm workspace checkout: does nothing for the workspace’s packages, acts for any other folder', () => {
    const ws = join(work, 'workspace');
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'pnpm-workspace.yaml'), "packages:\n  - 'pkgs/*'\n# a comment\nallowBuilds:\n  esbuild: true\n");
    const member = fakePackage(join(ws, 'pkgs', 'member'), { tools: [] });
    const r = install(member, ['--platforms', 'win32-x64']);
    expect(r.status, r.out).toBe(0);
    expect(r.record).toBeUndefined();
    const other = fakePackage(join(ws, 'examples', 'other'), { tools: [] });
    expect(install(other, ['--platforms', 'win32-x64']).record?.reason).toMatch(/is not supported/);
  });
});
