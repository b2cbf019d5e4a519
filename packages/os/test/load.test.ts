import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOsFrom } from '../src/load.js';
import { DIST_INDEX, requireDist } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tenferro-os-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loading', () => {
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

  it('a missing addon is unavailable, with the load error and the recorded build failure', () => {
    const status = join(dir, 'status.json');
    writeFileSync(status, JSON.stringify({ ok: false, reason: 'g++: command not found' }));
    const result = loadOsFrom(join(dir, 'missing.node'), status);
    expect(result.available).toBe(false);
    if (result.available) return;
    expect(result.reason).toContain(join(dir, 'missing.node'));
    expect(result.reason).toMatch(/Cannot find module|ENOENT/);
    expect(result.reason).toContain('the native build failed: g++: command not found');
  });

  it('says so when no build was recorded', () => {
    const result = loadOsFrom(join(dir, 'missing.node'), join(dir, 'none.json'));
    expect(result.available).toBe(false);
    if (!result.available) expect(result.reason).toContain('no native build recorded');
  });

  it('rejects a file that is not the addon', () => {
    const bogus = join(dir, 'bogus.node');
    writeFileSync(bogus, 'not an ELF file');
    const result = loadOsFrom(bogus, join(dir, 'none.json'));
    expect(result.available).toBe(false);
  });
});
