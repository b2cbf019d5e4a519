// `tenferro --help`, `--version` and usage errors answer without loading tenferro: a command's
// module (and @tenferro/core, its providers and their addons) is imported when the command runs.
// Every module the process resolves is recorded by a module.register() resolve hook.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bin } from './spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tenferro-cli-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'hooks.mjs'),
  "import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const r = await next(specifier, context);\n  appendFileSync(process.env.RESOLVED_LOG, `${r.url}\\n`);\n  return r;\n}\n",
);
writeFileSync(join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");

/** The module URLs a `tenferro <args>` process resolved, and its exit code. */
function resolvedBy(args: readonly string[], name: string): { code: number | null; urls: string[] } {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, bin, ...args], { encoding: 'utf8', env: { ...process.env, RESOLVED_LOG: log } });
  return { code: r.status, urls: readFileSync(log, 'utf8').split('\n').filter((u) => u !== '') };
}

const tenferroPackage = /\/(core|os|provider-[a-z]+|linalg)\/dist\//;

describe('tenferro answers help, version and usage errors without loading tenferro', () => {
  it.each([
    ['--version', 0],
    ['--help', 0],
    ['bogus', 2],
  ] as const)('tenferro %s: exit %d, no @tenferro package resolved', (arg, code) => {
    const r = resolvedBy([arg], arg.replace(/\W/g, ''));
    expect(r.code).toBe(code);
    expect(r.urls.some((u) => u.endsWith('/cli/dist/program.js'))).toBe(true);
    expect(r.urls.filter((u) => tenferroPackage.test(u))).toEqual([]);
  });

  it('tenferro info --json does load @tenferro/core (the hook sees it)', () => {
    const r = resolvedBy(['info', '--json'], 'info');
    expect(r.code).toBe(0);
    expect(r.urls.some((u) => /\/core\/dist\/index\.js$/.test(u))).toBe(true);
  });
});
