// @tenferro/native's `tenferro-prebuild` end to end on a tiny C addon in a temporary folder (#40):
// the binary in prebuildify's layout from the staged copy (an input binding.gyp's `<!(…)` command runs
// included), the stamp that skips an unchanged prebuild, a changed source that rebuilds, and one
// prebuild of a package at a time (a second one waits for the lock's holder, a dead holder's lock is taken over).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages', 'native', 'bin', 'tenferro-prebuild.mjs');
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { path: string };
const work = mkdtempSync(join(tmpdir(), 'tenferro-prebuild-'));
const TUPLE = `${process.platform}-${process.arch}`;
const env: NodeJS.ProcessEnv = { ...process.env, PATH: setup.path };
// pnpm's bin shims (vitest's) set NODE_PATH to the workspace's package store; a package has none.
delete env.NODE_PATH;
delete env.TENFERRO_SKIP_PREBUILD;
const holders: { kill: () => void }[] = [];
afterAll(() => {
  for (const h of holders) h.kill();
  rmSync(work, { recursive: true, force: true });
});

const pkg = join(work, 'fake-native');
mkdirSync(join(pkg, 'native', 'src'), { recursive: true });
mkdirSync(join(pkg, 'native', 'tools'), { recursive: true });
writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'fake-native', version: '1.0.0' }));
// A define printed by a script that only the gyp command names: staged, or the configure fails.
writeFileSync(join(pkg, 'native', 'tools', 'answer.cjs'), "process.stdout.write('ANSWER=42');\n");
writeFileSync(
  join(pkg, 'native', 'binding.gyp'),
  JSON.stringify({ targets: [{ target_name: 'fake_native', sources: ['src/addon.c'], defines: ['<!(node tools/answer.cjs)'] }] }),
);
const source = (extra: string) => `#include <node_api.h>
static napi_value Init(napi_env env, napi_value exports) {
  napi_value v;
  napi_create_int32(env, ANSWER${extra}, &v);
  napi_set_named_property(env, exports, "answer", v);
  return exports;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
`;
writeFileSync(join(pkg, 'native', 'src', 'addon.c'), source(''));
mkdirSync(join(pkg, 'node_modules'));
for (const t of ['node-gyp', 'node-addon-api', 'prebuildify']) symlinkSync(realpathSync(join(root, 'packages', 'os', 'node_modules', t)), join(pkg, 'node_modules', t));
const prebuilt = join(pkg, 'native', 'prebuilds', TUPLE, 'fake-native.glibc.node');
const lockDir = join(pkg, 'node_modules', '.cache', 'tenferro-prebuild.lock');

function prebuild(args: string[] = []): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: pkg, env, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 90_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
const answer = () => spawnSync(process.execPath, ['-p', `require(${JSON.stringify(prebuilt)}).answer`], { encoding: 'utf8' }).stdout.trim();

describe('tenferro-prebuild', () => {
  it('builds the prebuilt binary from the staged copy; it loads', () => {
    const r = prebuild();
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/fake-native: prebuild: native\/prebuilds\/linux-x64\/fake-native\.glibc\.node \(\d+ KiB/);
    expect(readdirSync(join(pkg, 'native', 'prebuilds', TUPLE))).toEqual(['fake-native.glibc.node']);
    expect(answer()).toBe('42');
  }, 120_000);

  it('is skipped while nothing changed; a changed source (or --force) builds again', () => {
    expect(prebuild().out).toContain('up to date');
    writeFileSync(join(pkg, 'native', 'src', 'addon.c'), source(' + 1'));
    const r = prebuild();
    expect(r.out).not.toContain('up to date');
    expect(answer()).toBe('43');
    expect(prebuild(['--force']).out).toContain('building linux-x64');
  }, 120_000);

  it('a second prebuild waits while a live process holds the lock, then builds', async () => {
    writeFileSync(join(pkg, 'native', 'src', 'addon.c'), source(' + 2'));
    // The holder: a live process whose pid is in the lock, until we end it.
    const holder = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] });
    holders.push({ kill: () => holder.kill() });
    mkdirSync(lockDir, { recursive: true });
    writeFileSync(join(lockDir, 'pid'), String(holder.pid));
    const second = spawn(process.execPath, [bin], { cwd: pkg, env });
    let out = '';
    const waiting = new Promise<void>((resolve) => {
      second.stdout.on('data', (d: Buffer) => {
        out += d;
        if (out.includes(`waiting for the prebuild of process ${holder.pid}`)) resolve();
      });
    });
    second.stderr.on('data', (d: Buffer) => (out += d));
    const done = new Promise<number | null>((resolve) => second.on('close', resolve));
    await Promise.race([
      waiting,
      done.then(() => {
        throw new Error(`the second prebuild finished without waiting for the lock:\n${out}`);
      }),
    ]);
    expect(answer()).toBe('43'); // nothing built while it waits
    rmSync(lockDir, { recursive: true, force: true });
    holder.kill();
    expect(await done, out).toBe(0);
    expect(answer()).toBe('44');
    expect(existsSync(lockDir)).toBe(false);
  }, 120_000);

  it('a lock left by a process that died is taken over', () => {
    writeFileSync(join(pkg, 'native', 'src', 'addon.c'), source(' + 3'));
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    mkdirSync(lockDir, { recursive: true });
    writeFileSync(join(lockDir, 'pid'), dead.stdout.trim());
    const r = prebuild();
    expect(r.status, r.out).toBe(0);
    expect(r.out).not.toContain('waiting');
    expect(answer()).toBe('45');
  }, 120_000);

  it('--configure fails, naming the script, when an input a gyp command runs is missing', () => {
    rmSync(join(pkg, 'native', 'tools', 'answer.cjs'));
    const r = prebuild(['--configure']);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/binding\.gyp needs tools\/answer\.cjs, which does not exist/);
  });
});
