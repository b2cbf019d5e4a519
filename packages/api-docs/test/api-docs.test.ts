// The API reference builds from the TSDoc of every public entry point. A broken {@link} or a
// referenced-but-unexported type fails this test; so does an undocumented export unless it is in
// undocumented.txt — the list of exports still waiting for their TSDoc, which may only shrink
// (an entry that became documented must be removed from it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'tenferro-api-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('API reference (typedoc)', () => {
  it('builds for core, os and the providers: no broken link, no export undocumented but those listed', () => {
    const typedoc = join(here, 'node_modules', '.bin', 'typedoc');
    // Warnings are reported, not fatal, here: the test sorts them.
    const r = spawnSync(typedoc, ['--out', out, '--treatWarningsAsErrors', 'false'], { cwd: here, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).toBe(0);
    const lines = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => l.startsWith('[warning]') && !/^\[warning\] Found \d+ errors/.test(l));
    const undocumented = new Set<string>();
    const other: string[] = [];
    for (const line of lines) {
      const m = /^\[warning\] (\S+) \(\w+\), defined in (\S+?), does not have any documentation/.exec(line);
      if (m !== null) undocumented.add(`${m[2]} ${m[1]}`);
      else other.push(line);
    }
    expect(other).toEqual([]);
    const listed = new Set(readFileSync(join(here, 'undocumented.txt'), 'utf8').split('\n').filter(Boolean));
    expect([...undocumented].filter((u) => !listed.has(u)), 'exports without TSDoc (document them)').toEqual([]);
    expect([...listed].filter((u) => !undocumented.has(u)), 'documented now: remove from undocumented.txt').toEqual([]);
    expect(existsSync(join(out, 'index.html'))).toBe(true);
    const pages = readdirSync(join(out, 'classes')).join(' ');
    for (const name of ['CpuBackend', 'Tensor', 'TenferroError']) expect(pages).toContain(name);
  }, 180_000);
});
