// The release path of a native package, end to end, on every `npm test` (#40): @tenferro/os packed by
// `pnpm pack` WITH its prebuilt binary (prepack = @tenferro/native's tenferro-prebuild, ~20–30 s on
// two CPUs when its sources changed), then installed from the tarballs (os and @tenferro/native, which
// its install step comes from) into an empty app with the build toolchain out of reach — no g++, cc,
// make or python3 on PATH — so only the prebuilt binary can make its status available.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { pnpm: string; path: string; nodedir?: string };
const work = mkdtempSync(join(tmpdir(), 'tenferro-os-prebuilt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const TUPLE = `${process.platform}-${process.arch}`;
/** npm's errors for a registry it cannot reach. */
const OFFLINE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|ENOTCACHED)\b[^\n]*/;

function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  // pnpm's bin shims (vitest's) set NODE_PATH to the workspace's package store: an app has none.
  delete env.NODE_PATH;
  for (const k of ['TENFERRO_SKIP_PREBUILD', 'TENFERRO_SKIP_NATIVE_INSTALL', 'TENFERRO_BUILD_FROM_SOURCE', 'npm_config_build_from_source', 'TENFERRO_OS_DISABLE']) delete env[k];
  return env;
}

describe('@tenferro/os packed with its prebuilt binary', () => {
  it('installs from the tarball with no build toolchain on PATH, and status() reports the prebuilt binary available', (context) => {
    if (process.platform !== 'linux') context.skip('prebuilt binaries are made on Linux only');
    const tgz = join(work, 'tgz');
    for (const p of ['native', 'os']) {
      const r = spawnSync(setup.pnpm, ['pack', '--pack-destination', tgz], { cwd: join(root, 'packages', p), env: cleanEnv({ PATH: setup.path }), encoding: 'utf8', maxBuffer: 64 << 20 });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    }
    const version = (p: string) => (JSON.parse(readFileSync(join(root, 'packages', p, 'package.json'), 'utf8')) as { version: string }).version;
    const tarballs = ['native', 'os'].map((p) => join(tgz, `tenferro-${p}-${version(p)}.tgz`));
    const osTgz = tarballs[1]!;
    const list = spawnSync('tar', ['-tzf', osTgz], { encoding: 'utf8' }).stdout.split('\n');
    expect(list.filter((f) => f.startsWith(`package/native/prebuilds/${TUPLE}/`) && f.endsWith('.node'))).toHaveLength(1);

    // A PATH with node and sh only: npm runs the install step through sh, and its bin through `env node`.
    const bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const hidden = cleanEnv({ PATH: bin });
    const probe = spawnSync('/bin/sh', ['-c', 'for t in g++ c++ gcc cc make python3 python; do command -v $t && exit 1; done; exit 0'], { env: hidden, encoding: 'utf8' });
    expect(probe.status, `reachable: ${probe.stdout}`).toBe(0);

    const npmCli = join(dirname(realpathSync(spawnSync('/bin/sh', ['-c', 'command -v npm'], { env: { PATH: setup.path }, encoding: 'utf8' }).stdout.trim())), 'npm-cli.js');
    expect(existsSync(npmCli), npmCli).toBe(true);
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'os-prebuilt-app', private: true, type: 'module' }));
    // node-gyp, node-gyp-build and node-addon-api (os's dependencies) come from the npm cache when it has them, else the registry.
    const install = spawnSync(process.execPath, [npmCli, 'install', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', '--foreground-scripts', ...tarballs], {
      cwd: app,
      env: hidden,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const out = `${install.stdout}${install.stderr}`;
    if (install.status !== 0 && OFFLINE.test(out)) context.skip(`offline: the npm registry is unreachable (${out.match(OFFLINE)![0]})`);
    expect(install.status, out).toBe(0);
    // The install step ran, from the @tenferro/native the app got from its tarball, and found the prebuilt binary.
    expect(out).toContain('@tenferro/os: native addon ready (prebuilt: native/prebuilds/');
    expect(existsSync(join(app, 'node_modules', '@tenferro', 'native', 'bin', 'tenferro-install-native.mjs'))).toBe(true);
    const status = JSON.parse(readFileSync(join(app, 'node_modules', '@tenferro', 'os', 'native', 'build', 'status.json'), 'utf8')) as { ok: boolean; source: string };
    expect(status).toMatchObject({ ok: true, source: 'prebuilt' });

    const check = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "import { loadOs } from '@tenferro/os'; const s = loadOs(); console.log(JSON.stringify({ available: s.available, path: s.path, reasons: s.reasons }));"],
      { cwd: app, env: hidden, encoding: 'utf8' },
    );
    expect(check.status, check.stderr).toBe(0);
    const os = JSON.parse(check.stdout) as { available: boolean; path?: string; reasons?: string[] };
    expect(os, check.stdout).toMatchObject({ available: true });
    expect(os.path).toContain(`/node_modules/@tenferro/os/native/prebuilds/${TUPLE}/`);
  }, 300_000);
});
