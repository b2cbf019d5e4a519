// What @tenferro/native's prebuild stages (#40): the inputs read from a binding.gyp — sources and
// include dirs, `<(module_root_dir)/…` paths, the scripts `<!(…)` commands run (linalg's
// `<!(node eigen-include.cjs)`, which the old prebuild left out), paths outside native/ — plus
// package.json's tenferro.nativeInputs. On files in a temporary folder; no child process.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gypInputs, stagePrebuild } from '@tenferro/native/prebuild';
import { afterAll, describe, expect, it } from 'vitest';

const work = mkdtempSync(join(tmpdir(), 'tenferro-gyp-inputs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pkg(name: string, files: Record<string, string>, manifest: object = {}): string {
  const dir = join(work, name);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
  return dir;
}

const GYP = `{
  # a comment naming 'not-there.cjs' and "src/never.cc" is not an input
  'variables': { 'isas%': '<!(node -p "process.env.X || \\'all\\'")' },
  "includes": ["common.gypi"],
  "targets": [{
    "target_name": "addon",
    "sources": ["src/a.cc", 'src/sub/b.cc',],
    "include_dirs": ["<!(node -p \\"require('node-addon-api').include_dir\\")", "include", "<!(node tools/find-lib.cjs --quiet)", "../vendor/inc"],
    "conditions": [["OS=='linux'", { "sources": ["src/linux.cc"] }]],
    "ldflags": ["-Wl,--version-script=<(module_root_dir)/maps/exports.map"],
    "cflags": ["-O2", "-DNAME=addon"],
  }],
}
`;

describe('gypInputs', () => {
  const dir = pkg(
    'full',
    {
      'native/binding.gyp': GYP,
      'native/common.gypi': '{}',
      'native/src/a.cc': '',
      'native/src/sub/b.cc': '',
      'native/src/linux.cc': '',
      'native/include/h.h': '',
      'native/tools/find-lib.cjs': '',
      'native/maps/exports.map': '',
      'native/extra/data.txt': '',
      'native/build/Release/old.node': '',
      'vendor/inc/v.h': '',
    },
    { tenferro: { nativeInputs: ['extra/data.txt'] } },
  );

  it('reads every input the gyp file names, the declared ones, and nothing it does not name', () => {
    const inputs = gypInputs(join(dir, 'native'));
    expect(inputs.entries).toEqual(['binding.gyp', 'common.gypi', 'extra', 'include', 'maps', 'src', 'tools']);
    expect(inputs.external).toEqual([{ written: '../vendor/inc', abs: join(dir, 'vendor', 'inc') }]);
    expect(inputs.commands).toEqual([`node -p "process.env.X || 'all'"`, `node -p "require('node-addon-api').include_dir"`, 'node tools/find-lib.cjs --quiet']);
    expect(inputs.declared).toEqual(['extra/data.txt']);
    expect(inputs.missing).toEqual([]);
  });

  it('stages them (outputs left out), with paths outside native/ made absolute in the staged binding.gyp', () => {
    const workDir = join(dir, 'native', 'build', 'prebuild');
    stagePrebuild({ packageDir: dir });
    for (const f of ['binding.gyp', 'common.gypi', 'src/sub/b.cc', 'include/h.h', 'tools/find-lib.cjs', 'maps/exports.map', 'extra/data.txt']) {
      expect(() => readFileSync(join(workDir, f)), f).not.toThrow();
    }
    expect(() => readFileSync(join(workDir, 'build', 'Release', 'old.node'))).toThrow();
    const staged = readFileSync(join(workDir, 'binding.gyp'), 'utf8');
    expect(staged).toContain(`"${join(dir, 'vendor', 'inc')}"`);
    expect(staged).not.toContain('"../vendor/inc"');
  });

  it('a script a command runs, or a declared input, that does not exist: named, and staging throws', () => {
    const broken = pkg('broken', { 'native/binding.gyp': `{"targets":[{"target_name":"x","sources":["src/a.cc"],"include_dirs":["<!(node gone.cjs)"]}]}`, 'native/src/a.cc': '' }, { tenferro: { nativeInputs: ['also-gone.txt'] } });
    expect(gypInputs(join(broken, 'native')).missing).toEqual(['gone.cjs', 'also-gone.txt']);
    expect(() => stagePrebuild({ packageDir: broken })).toThrow(/binding\.gyp needs gone\.cjs, also-gone\.txt, which do not exist/);
  });

  it('linalg: eigen-include.cjs, which its binding.gyp runs, and cxx-select.cjs, its compiler, are inputs (#40)', () => {
    const linalg = join(dirname(new URL(import.meta.url).pathname), '..', '..', 'linalg', 'native');
    expect(gypInputs(linalg).entries).toContain('eigen-include.cjs');
    expect(gypInputs(linalg).entries).toContain('cxx-select.cjs');
  });
});
