// Every test file of the repository lands in exactly one tier (#39; scripts/test-tiers.mjs,
// docs/contributing/testing.md): a new file falls in its package's default tier unless its name or
// directory says otherwise, every file the lists name exists, and no unit file starts a child
// process (the unit tier is the one that must stay fast and self-contained).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIER, filesInTier, LISTED, testFiles, TIERS, tierOf } from '../../../scripts/test-tiers.mjs';

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
const packages = readdirSync(packagesDir).filter((p) => {
  const file = join(packagesDir, p, 'package.json');
  return existsSync(file) && typeof (JSON.parse(readFileSync(file, 'utf8')) as { scripts?: { test?: unknown } }).scripts?.test === 'string';
});
const VITEST_TIERS = TIERS.filter((t) => t !== 'sanitizer');

describe('test tiers (scripts/test-tiers.mjs)', () => {
  it('every package with tests has a default tier, and every file is in exactly one vitest tier', () => {
    expect(packages.length).toBeGreaterThan(5);
    for (const p of packages) {
      expect(VITEST_TIERS, `DEFAULT_TIER of ${p}`).toContain(DEFAULT_TIER[p]);
      const all = testFiles(join(packagesDir, p));
      const byTier = VITEST_TIERS.flatMap((t) => filesInTier(p, join(packagesDir, p), t));
      expect([...byTier].sort(), `${p}: the tiers partition its test files`).toEqual(all);
      for (const f of all) expect(VITEST_TIERS, `${p}/${f}`).toContain(tierOf(p, f));
    }
  });

  it('every file the lists place exists (a renamed or deleted file must leave the list)', () => {
    const missing = Object.entries(LISTED).flatMap(([p, files]) => Object.keys(files).filter((f) => !existsSync(join(packagesDir, p, f))).map((f) => `${p}/${f}`));
    expect(missing).toEqual([]);
  });

  it('a new file lands by name or directory: *.serial.test.ts, test/stress/…, else the package default', () => {
    expect(tierOf('core', 'test/new-thing.serial.test.ts')).toBe('serial');
    expect(tierOf('core', 'test/serial/census.test.ts')).toBe('serial');
    expect(tierOf('core', 'test/stress/soak.test.ts')).toBe('stress');
    expect(tierOf('provider-faer', 'test/x.unit.test.ts')).toBe('unit');
    expect(tierOf('core', 'test/reliability/new.test.ts')).toBe('unit');
    expect(tierOf('provider-faer', 'test/new.test.ts')).toBe('native');
    expect(() => tierOf('no-such-package', 'test/a.test.ts')).toThrow(/no default tier/);
  });

  it('no unit file starts a child process', () => {
    const offenders: string[] = [];
    for (const p of packages) {
      for (const f of filesInTier(p, join(packagesDir, p), 'unit')) {
        const text = readFileSync(join(packagesDir, p, f), 'utf8');
        if (/from\s+['"](node:)?child_process['"]|import\(\s*['"](node:)?child_process|from\s+['"]\.\/spawn-cli/.test(text)) offenders.push(`${p}/${f}`);
      }
    }
    expect(offenders, 'unit files that start a child process (name them *.native.test.ts or *.serial.test.ts)').toEqual([]);
  });
});
