// docs/bundling.md: an application bundled with esbuild, @tenferro/* kept external, still runs
// (its workers and addons load from node_modules) and prints what the unbundled one prints.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { examplesOf } from './doc-examples.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// A temporary folder outside the repository (#39), its node_modules linked to this package's so
// that @tenferro/* resolve as in an application.
const scratch = mkdtempSync(join(tmpdir(), 'tenferro-bundle-'));
symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(scratch, 'node_modules'), 'dir');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('bundling (docs/bundling.md)', () => {
  it('the README quick start bundled by esbuild with @tenferro/* external runs and prints the same', async () => {
    const quickStart = examplesOf('README.md', readFileSync(join(root, 'README.md'), 'utf8')).find((e) => e.output !== undefined)!;
    mkdirSync(scratch, { recursive: true });
    // A small app of its own besides tenferro, so that the bundle has something to bundle.
    writeFileSync(join(scratch, 'greeting.mjs'), "export const greeting = 'bundled';\n");
    writeFileSync(join(scratch, 'app.mjs'), `import { greeting } from './greeting.mjs';\n${quickStart.code}\nconsole.log(greeting);\n`);
    await build({
      entryPoints: [join(scratch, 'app.mjs')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['@tenferro/*'],
      outfile: join(scratch, 'dist', 'app.mjs'),
      logLevel: 'silent',
    });
    const r = spawnSync(process.execPath, [join(scratch, 'dist', 'app.mjs')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${quickStart.output}bundled\n`);
  }, 120_000);
});
