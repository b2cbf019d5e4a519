// The examples in README.md and docs/ are run, so that they cannot rot: every ```js run block is
// written to a module in a temporary folder whose node_modules is this package's (so that it
// imports the workspace packages as an application would) and run with node; an ```output block
// right after it must equal its output.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { examplesOf } from './doc-examples.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// A temporary folder outside the repository (#39), its node_modules linked to this package's so
// that @tenferro/* resolve as in an application.
const scratch = mkdtempSync(join(tmpdir(), 'tenferro-doc-examples-'));
symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(scratch, 'node_modules'), 'dir');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'api' ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
const examples = files.flatMap((f) => examplesOf(relative(root, f), readFileSync(f, 'utf8')));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('documentation examples', () => {
  it('finds the README quick start', () => {
    expect(examples.some((e) => e.file === 'README.md' && e.output !== undefined)).toBe(true);
  });

  it.each(examples.map((e) => [`${e.file}:${e.line}`, e] as const))('%s runs as written', (_name, e) => {
    mkdirSync(scratch, { recursive: true });
    const path = join(scratch, `${e.file.replace(/[^a-z0-9]+/gi, '-')}-${e.line}.mjs`);
    writeFileSync(path, e.code);
    const r = spawnSync(process.execPath, [path], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    if (e.output !== undefined) expect(r.stdout).toBe(e.output);
  });
});
