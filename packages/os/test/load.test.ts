import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type AddonLoad, type LoadAddonOptions, type OsBinding, OsError, loadAddon, loadOs } from '../src/index.js';
import { DIST_INDEX, requireDist } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tenferro-os-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

/** The real affinity addon, which the other test files show loads. */
function realAddon(): string {
  const status = loadOs();
  if (!status.available) throw new Error(status.reason);
  return status.path;
}

function statusFile(name: string, record: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof record === 'string' ? record : JSON.stringify(record));
  return path;
}

const base = { packageName: '@tenferro/example', exports: [], disableEnv: 'TENFERRO_EXAMPLE_DISABLE' } as const;

function unavailable(load: AddonLoad<unknown>): { reasons: readonly string[]; possibleSolutions: readonly string[] } {
  if (load.available) throw new Error(`expected an unavailable addon, loaded ${load.path}`);
  return load;
}

function caught(fn: () => unknown): OsError {
  try {
    fn();
  } catch (error) {
    if (OsError.is(error)) return error;
    throw error;
  }
  throw new Error('expected an OsError, but nothing was thrown');
}

describe('loadOs', () => {
  it('importing the package does not load the addon; the first call does', () => {
    requireDist();
    // A fresh process, so nothing else has mapped the addon: /proc/self/maps shows every loaded .node file.
    const script = `
      import { readFileSync } from 'node:fs';
      const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes('tenferro_os.node');
      const os = await import(${JSON.stringify(pathToFileURL(DIST_INDEX).href)});
      const afterImport = mapped();
      const status = os.loadOs();
      console.log(JSON.stringify({ afterImport, afterLoad: mapped(), available: status.available, path: status.path }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
    const result = JSON.parse(out) as { afterImport: boolean; afterLoad: boolean; available: boolean; path: string };
    expect(result.afterImport).toBe(false);
    expect(result.afterLoad).toBe(true);
    expect(result.available).toBe(true);
    expect(result.path).toMatch(/native\/build\/Release\/tenferro_os\.node$/);
  });
});

describe('loadAddon', () => {
  it('loads an addon that has its exports and passes the check: frozen, with the binding and its path', () => {
    const path = realAddon();
    const check = vi.fn((b: OsBinding) => (b.maxCpus === 2 ** 20 ? undefined : 'wrong mask size'));
    const advice = vi.fn(() => ({ possibleSolutions: ['never shown'] }));
    const load = loadAddon<OsBinding>({ ...base, addon: pathToFileURL(path), exports: ['gettid', 'setThreadAffinity'], check, advice, platforms: ['linux'] });
    expect(load.available).toBe(true);
    if (!load.available) return;
    expect(Object.isFrozen(load)).toBe(true);
    expect(load.path).toBe(path);
    expect(load.binding.gettid()).toBe(process.pid);
    expect(check).toHaveBeenCalledWith(load.binding);
    expect(advice).not.toHaveBeenCalled();
  });

  it('a missing file: the load error, what the failed build recorded, and how to build it', () => {
    const status = statusFile('failed.json', { ok: false, reason: 'node-gyp rebuild exited with 1:\ng++: command not found' });
    const load = unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status }));
    expect(load.reasons[0]).toContain(`cannot load the native addon ${join(dir, 'missing.node')}`);
    expect(load.reasons[0]).toMatch(/Cannot find module|ENOENT/);
    expect(load.reasons).toContain('the native build failed: node-gyp rebuild exited with 1');
    expect(load.possibleSolutions.join('\n')).toContain('install python3, make and g++');
    expect(Object.isFrozen(load)).toBe(true);
    expect(Object.isFrozen(load.reasons)).toBe(true);
    expect(Object.isFrozen(load.possibleSolutions)).toBe(true);
  });

  it('says so when no build was recorded, or the record is not JSON', () => {
    expect(unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status: join(dir, 'none.json') })).reasons).toContain(
      `no native build recorded (${join(dir, 'none.json')} is missing)`,
    );
    const garbled = statusFile('garbled.json', '{ not json');
    expect(unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status: garbled })).reasons).toContain(`${garbled} is not a valid build record`);
  });

  it('a build for another Node ABI is named as such', () => {
    const status = statusFile('other-abi.json', { ok: true, node: 'v18.0.0', abi: '108' });
    const load = unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status }));
    expect(load.reasons).toContain(`the addon was built for Node.js v18.0.0 (ABI 108), but this is Node.js ${process.version} (ABI ${process.versions.modules})`);
    expect(load.possibleSolutions[0]).toMatch(/^rebuild the addon with this Node\.js: /);
  });

  it('a successful build whose addon is gone says that', () => {
    const status = statusFile('ok.json', { ok: true, node: process.version, abi: process.versions.modules });
    const load = unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status }));
    expect(load.reasons[1]).toMatch(/^the last native build succeeded/);
  });

  it('a build that recorded its own reasons and solutions (a missing system library) passes them on', () => {
    const status = statusFile('no-lib.json', { ok: false, reason: 'no system CBLAS found:\n  pkg-config: no blas', reasons: ['pkg-config: no blas'], possibleSolutions: ['install OpenBLAS'] });
    const load = unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), status, buildCommand: 'make addon' }));
    expect(load.reasons.slice(1)).toEqual(['the native build failed: no system CBLAS found', 'pkg-config: no blas']);
    expect(load.possibleSolutions).toEqual(['install OpenBLAS', 'make addon']);
  });

  it('tells how to build from the package beside the addon: its install step, else its build:native script', () => {
    const pkgDir = (name: string, scripts: Record<string, string>) => {
      const root = join(dir, name);
      mkdirSync(join(root, 'native', 'build', 'Release'), { recursive: true });
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: `@example/${name}`, scripts }));
      return join(root, 'native', 'build', 'Release', 'x.node');
    };
    const solutions = (addon: string, packageName: string) => unavailable(loadAddon({ ...base, packageName, addon })).possibleSolutions.join('\n');
    expect(solutions(pkgDir('with-install', { install: 'node build.mjs' }), '@example/with-install')).toContain('npm rebuild @example/with-install');
    const plain = pkgDir('plain', { 'build:native': 'node build.mjs' });
    expect(solutions(plain, '@example/plain')).toContain(`build the addon in ${join(dir, 'plain')}: npm run build:native`);
    expect(solutions(plain, '@example/another-name')).toContain('reinstall @example/another-name');
  });

  it('a file that is not an addon is unavailable, naming the file', () => {
    const bogus = join(dir, 'bogus.node');
    writeFileSync(bogus, 'not an ELF file');
    expect(unavailable(loadAddon({ ...base, addon: bogus })).reasons[0]).toContain(bogus);
  });

  it('names every missing export', () => {
    const load = unavailable(loadAddon<Record<string, unknown>>({ ...base, addon: realAddon(), exports: ['gettid', 'nope', 'maxCpus'] }));
    expect(load.reasons).toEqual([`${realAddon()} does not export nope(), maxCpus()`]);
    expect(load.possibleSolutions[0]).toMatch(/^rebuild the addon, so that it matches this version of @tenferro\/example: /);
  });

  it('a failed check makes it unavailable with the check\'s reason; a throwing check too', () => {
    expect(unavailable(loadAddon({ ...base, addon: realAddon(), check: () => 'descriptor header 27 != 28' })).reasons).toEqual(['descriptor header 27 != 28']);
    const thrown = unavailable(
      loadAddon({
        ...base,
        addon: realAddon(),
        check: () => {
          throw new Error('boom\nmore');
        },
      }),
    );
    expect(thrown.reasons).toEqual(['checking the addon failed: boom']);
  });

  it('the disable switch: unavailable without loading, and how to turn it off', () => {
    vi.stubEnv('TENFERRO_EXAMPLE_DISABLE', '1');
    const load = unavailable(loadAddon({ ...base, addon: realAddon() }));
    expect(load).toEqual({ available: false, reasons: ['disabled by TENFERRO_EXAMPLE_DISABLE=1'], possibleSolutions: ['unset TENFERRO_EXAMPLE_DISABLE'] });
    vi.stubEnv('TENFERRO_EXAMPLE_DISABLE', '0');
    expect(loadAddon({ ...base, addon: realAddon() }).available).toBe(true);
  });

  it('the platform: names this one and the supported ones; platform-arch entries match too', () => {
    const load = unavailable(loadAddon({ ...base, addon: realAddon(), platforms: ['win32', 'darwin-arm64'] }));
    expect(load.reasons).toEqual([`platform ${process.platform}-${process.arch} is not supported: @tenferro/example runs on win32, darwin-arm64`]);
    expect(loadAddon({ ...base, addon: realAddon(), platforms: [`${process.platform}-${process.arch}`] }).available).toBe(true);
  });

  it('appends the package\'s advice, told which step failed, without repeating a line', () => {
    const seen: string[] = [];
    const advice: LoadAddonOptions<Record<string, unknown>>['advice'] = (failure) => {
      seen.push(failure);
      return { reasons: ['no BLAS here'], possibleSolutions: ['install OpenBLAS', 'unset TENFERRO_EXAMPLE_DISABLE'] };
    };
    vi.stubEnv('TENFERRO_EXAMPLE_DISABLE', '1');
    expect(unavailable(loadAddon({ ...base, addon: realAddon(), advice }))).toEqual({
      available: false,
      reasons: ['disabled by TENFERRO_EXAMPLE_DISABLE=1', 'no BLAS here'],
      possibleSolutions: ['unset TENFERRO_EXAMPLE_DISABLE', 'install OpenBLAS'],
    });
    vi.unstubAllEnvs();
    unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), advice }));
    unavailable(loadAddon<Record<string, unknown>>({ ...base, addon: realAddon(), exports: ['nope'], advice }));
    expect(seen).toEqual(['disabled', 'load', 'exports']);
    expect(unavailable(loadAddon({ ...base, addon: join(dir, 'missing.node'), advice: { possibleSolutions: ['static fix'] } })).possibleSolutions).toContain('static fix');
  });

  it('rejects options it cannot use with InvalidArgument, before loading anything', () => {
    const bad: [string, unknown][] = [
      ['options', null],
      ['options.addon', { ...base, addon: 'relative/x.node' }],
      ['options.addon', { ...base, addon: new URL('https://example.com/x.node') }],
      ['options.status', { ...base, addon: realAddon(), status: 'status.json' }],
      ['options.exports', { ...base, addon: realAddon(), exports: 'gettid' }],
      ['options.exports[1]', { ...base, addon: realAddon(), exports: ['gettid', 3] }],
      ['options.disableEnv', { ...base, addon: realAddon(), disableEnv: 'NOT AN ENV' }],
      ['options.packageName', { ...base, addon: realAddon(), packageName: '' }],
      ['options.check', { ...base, addon: realAddon(), check: 'yes' }],
      ['options.platforms', { ...base, addon: realAddon(), platforms: 'linux' }],
      ['options.advice', { ...base, addon: realAddon(), advice: 'reinstall' }],
      ['options.exprots', { ...base, addon: realAddon(), exprots: [] }],
    ];
    for (const [param, options] of bad) {
      const error = caught(() => loadAddon(options as LoadAddonOptions<unknown>));
      expect([error.code, error.kind, error.op, error.detail.param], param).toEqual(['InvalidArgument', 'Validation', 'loadAddon', param]);
      expect(error.message).toMatch(/^loadAddon: expected .* but received /);
    }
  });
});
