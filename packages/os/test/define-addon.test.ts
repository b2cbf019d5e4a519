// defineAddon (#40): one load per definition, the ABI-table check, the ISA report in status(), and
// options checked at the definition. The "addons" are small CommonJS files (loadAddon requires
// whatever file it is given), so each test controls exactly what the binding exports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type DefineAddonOptions, OsError, abiCodes, abiHash, defineAddon, loadOs } from '../src/index.js';
import { DIST_INDEX, requireDist } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tenferro-define-addon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

let files = 0;
/** A fake addon: a CommonJS file exporting `hello()`, `info()` returning `info`, and `abiHash` when given. */
function fakeAddon(info: unknown, hash?: string): string {
  const path = join(dir, `addon-${files++}.cjs`);
  writeFileSync(
    path,
    `let calls = 0;
     exports.hello = () => 'hi';
     exports.info = () => { calls++; return ${JSON.stringify(info)}; };
     exports.infoCalls = () => calls;
     ${hash === undefined ? '' : `exports.abiHash = ${JSON.stringify(hash)};`}`,
  );
  return path;
}

interface Fake {
  hello(): string;
  info(): Info | null;
  infoCalls(): number;
}
interface Info {
  isa: string;
  supported?: Record<string, boolean>;
  notBuilt: string[] | string;
  runsNotBuilt: boolean;
}

const TABLE = { descriptor: ['op', 'dtype', 'm'], status: ['Ok', 'Bad'] };

function define(path: string, extra: Partial<DefineAddonOptions<Fake, Info>> = {}) {
  return defineAddon<Fake, Info>({
    packageName: '@tenferro/example',
    native: dir,
    file: 'example.node',
    exports: ['hello', 'info'],
    disableEnv: 'TENFERRO_EXAMPLE_DISABLE',
    override: () => path,
    info: (b) => b.info(),
    ...extra,
  });
}

const FULL: Info = { isa: 'avx2', supported: { portable: true, avx2: true, avx512f: false }, notBuilt: [], runsNotBuilt: false };

describe('defineAddon', () => {
  it('loads once per definition: the same frozen outcome, info read once, nothing loaded before the first call', () => {
    const path = fakeAddon(FULL);
    const addon = define(path);
    const first = addon.load();
    expect(first.available).toBe(true);
    if (!first.available) return;
    expect(Object.isFrozen(first)).toBe(true);
    expect(first.path).toBe(path);
    expect(first.info).toEqual(FULL);
    expect(addon.load()).toBe(first);
    addon.status(() => ({ name: 'x' }));
    expect(first.binding.infoCalls()).toBe(1);
  });

  it('an addon whose abiHash is not the hash of the package table is unavailable, with a rebuild hint', () => {
    const matching = define(fakeAddon(FULL, abiHash(TABLE)), { abi: TABLE }).load();
    expect(matching.available).toBe(true);
    const stale = define(fakeAddon(FULL, abiHash({ ...TABLE, status: ['Ok'] })), { abi: TABLE }).load();
    expect(stale.available).toBe(false);
    if (stale.available) return;
    expect(stale.reasons).toEqual([
      `the addon was built from ABI table ${abiHash({ ...TABLE, status: ['Ok'] })} but this package's TypeScript uses ${abiHash(TABLE)}: the addon was built from another version of @tenferro/example`,
    ]);
    expect(stale.possibleSolutions[0]).toMatch(/^rebuild the addon, so that it matches this version of @tenferro\/example/);
    expect(stale.reason).toBe(stale.reasons.join('; '));
    const none = define(fakeAddon(FULL), { abi: TABLE }).load();
    expect(none.available ? [] : none.reasons).toEqual([expect.stringContaining('built from ABI table (none)')]);
  });

  it("the package's check runs after the ABI check; info null is unavailable (no ISA path this CPU runs)", () => {
    const checked = define(fakeAddon(FULL, abiHash(TABLE)), { abi: TABLE, check: () => 'the header differs' }).load();
    expect(checked.available ? [] : checked.reasons).toEqual(['the header differs']);
    const none = define(fakeAddon(null)).load();
    expect(none.available ? [] : none.reasons).toEqual(['the addon reports no ISA path this CPU can run']);
  });

  it('status(): the ISA report in front of the package details, and no warning for a full build', () => {
    const s = define(fakeAddon(FULL)).status(({ info }) => ({ name: `example (${info.isa})`, details: { tile: '8x4' }, warnings: ['own'] }));
    expect(s).toEqual({ available: true, name: 'example (avx2)', details: { isa: 'avx2', isaPaths: 'avx2, portable', tile: '8x4' }, warnings: ['own'], addonPath: expect.any(String) });
    expect(Object.keys(s.available ? s.details : {})).toEqual(['isa', 'isaPaths', 'tile']);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('a build that left out a path this CPU runs: isaNotBuilt, a warning in status(), and one process warning per definition', () => {
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const addon = define(fakeAddon({ isa: 'avx2', supported: { portable: true, avx2: true }, notBuilt: ['avx512f'], runsNotBuilt: true }), { label: 'example GEMM' });
    const s = addon.status(() => ({ name: 'example' }));
    addon.status(() => ({ name: 'example' }));
    expect(s.available && s.details.isaNotBuilt).toBe('avx512f');
    expect(s.available ? s.warnings : []).toEqual([expect.stringMatching(/^this CPU runs the avx512f path, which this build of the addon left out .*npm rebuild @tenferro\/example/)]);
    expect(emitted).toHaveBeenCalledTimes(1);
    expect(emitted.mock.calls[0]![0]).toMatch(/^example GEMM: this CPU runs the avx512f path/);
    expect(emitted.mock.calls[0]![1]).toEqual({ type: 'TenferroWarning', code: 'TENFERRO_ISA_PATH_NOT_BUILT' });
    // Left out but not runnable here (notBuilt reported, runsNotBuilt false): reported, not warned.
    const quiet = define(fakeAddon({ isa: 'avx2', notBuilt: 'avx512', runsNotBuilt: false })).status(() => ({ name: 'q' }));
    expect(quiet.available && quiet.details).toEqual({ isa: 'avx2', isaNotBuilt: 'avx512' });
    expect(quiet.available ? quiet.warnings : ['?']).toEqual([]);
    expect(emitted).toHaveBeenCalledTimes(1);
  });

  it("status() when unavailable: the loader's reasons, its solutions, then the package's extra ones", () => {
    vi.stubEnv('TENFERRO_EXAMPLE_DISABLE', '1');
    const addon = define(fakeAddon(FULL), { advice: { possibleSolutions: ['do without it'] } });
    expect(addon.status(() => ({ name: 'never' }), ['a fallback still runs'])).toEqual({
      available: false,
      reasons: ['disabled by TENFERRO_EXAMPLE_DISABLE=1'],
      possibleSolutions: ['unset TENFERRO_EXAMPLE_DISABLE', 'do without it', 'a fallback still runs'],
    });
  });

  it('finds the addon in native/ with node-gyp-build and reads its build record there (the os addon itself)', () => {
    const os = loadOs();
    expect(os.available).toBe(true);
    if (os.available) expect(os.path).toMatch(/native\/(build\/Release|prebuilds\/[^/]+)\/[^/]*\.node$/);
    const missing = define('', { override: undefined, native: join(dir, 'no-native'), file: 'none.node' }).load();
    expect(missing.available ? [] : missing.reasons).toEqual([
      expect.stringContaining(`cannot load the native addon ${join(dir, 'no-native', 'build', 'Release', 'none.node')}`),
      `no native build recorded (${join(dir, 'no-native', 'build', 'status.json')} is missing)`,
    ]);
  });

  it('rejects options it cannot use with InvalidArgument at the definition, loading nothing', () => {
    const path = fakeAddon(FULL);
    const bad: [Partial<DefineAddonOptions<Fake, Info>> & Record<string, unknown>, string][] = [
      [{ file: '../x.node' }, 'options.file'],
      [{ file: 'x.so' }, 'options.file'],
      [{ native: 'relative/native' }, 'options.native'],
      [{ abi: 'table' as unknown as object }, 'options.abi'],
      [{ info: 1 as unknown as () => null }, 'options.info'],
      [{ exports: 'hello' as unknown as [] }, 'options.exports'],
      [{ disableEnv: 'NOT-A-NAME' }, 'options.disableEnv'],
      [{ bogus: 1 }, 'options.bogus'],
    ];
    for (const [extra, param] of bad) {
      let error: unknown;
      try {
        define(path, extra);
      } catch (e) {
        error = e;
      }
      expect(OsError.is(error) && error.code === 'InvalidArgument' && (error.detail as { param: string }).param).toBe(param);
    }
  });
});

describe('NODE_DEBUG=tenferro', () => {
  it('logs what a definition loaded, or why not, once per realm', () => {
    requireDist();
    const script = `const os = await import(${JSON.stringify(DIST_INDEX)}); os.loadOs(); os.loadOs();
      os.defineAddon({ packageName: 'x', native: '/nonexistent', file: 'x.node', exports: [], disableEnv: 'X_OFF', label: 'demo' }).load();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_DEBUG: 'tenferro' }, timeout: 15_000 });
    const lines = r.stderr.split('\n').filter((l) => l.includes('tenferro: '));
    expect(lines.filter((l) => l.includes('tenferro: @tenferro/os: loaded ')).length).toBe(1);
    expect(lines.filter((l) => l.includes('tenferro: demo: unavailable: cannot load the native addon /nonexistent/build/Release/x.node')).length).toBe(1);
  });
});

describe('abiCodes', () => {
  it("numbers an enum's names in table order, frozen", () => {
    const codes = abiCodes(['Ok', 'Bad', 'Worse'] as const);
    expect(codes).toEqual({ Ok: 0, Bad: 1, Worse: 2 });
    expect(Object.isFrozen(codes)).toBe(true);
  });
});

describe('abiHash', () => {
  it('is 16 hex digits that ignore key order and change with any value', () => {
    expect(abiHash(TABLE)).toMatch(/^[0-9a-f]{16}$/);
    expect(abiHash({ status: ['Ok', 'Bad'], descriptor: ['op', 'dtype', 'm'] })).toBe(abiHash(TABLE));
    expect(abiHash({ ...TABLE, descriptor: ['op', 'm', 'dtype'] })).not.toBe(abiHash(TABLE));
    expect(abiHash({ a: { x: 1, y: 2 } })).toBe(abiHash({ a: { y: 2, x: 1 } }));
    expect(abiHash({ a: 1 })).not.toBe(abiHash({ a: '1' }));
  });
});
