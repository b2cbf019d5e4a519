// examples/provider-template, built and checked the way a third party would: the packed core (and
// its os binding, and os's install-time toolkit @tenferro/native) installed from tarballs into a copy of the template, with vitest from the npm
// registry, then the template's own conformance test through @tenferro/core/testing.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { pnpm: string; path: string; nodedir?: string };
const work = mkdtempSync(join(tmpdir(), 'tenferro-template-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string): { status: number | null; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: setup.path, NO_COLOR: '1' };
  if (setup.nodedir) env.npm_config_nodedir = setup.nodedir;
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** npm's errors for a registry it cannot reach. */
const OFFLINE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|ENOTCACHED)\b[^\n]*/;

describe('examples/provider-template', () => {
  it('passes the conformance kit against the packed @tenferro/core, installed from tarballs', (context) => {
    const tgz = join(work, 'tgz');
    for (const p of ['core', 'os', 'native']) {
      const r = run(setup.pnpm, ['pack', '--pack-destination', tgz], join(root, 'packages', p));
      expect(r.status, r.out).toBe(0);
    }
    const app = join(work, 'app');
    cpSync(join(root, 'examples', 'provider-template'), app, { recursive: true, filter: (src) => !src.includes('node_modules') });
    expect(readdirSync(tgz).sort()).toEqual([expect.stringMatching(/^tenferro-core-.*\.tgz$/), expect.stringMatching(/^tenferro-native-.*\.tgz$/), expect.stringMatching(/^tenferro-os-.*\.tgz$/)]);
    // The README's line, its ./tarballs/ pointing at ours; vitest comes from the npm cache when it
    // is there, else from the registry: offline without it, say so and skip.
    const readme = readFileSync(join(app, 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npm install --no-save '));
    expect(line, 'the README gives the tarball install line').toBeDefined();
    expect(line).toMatch(/tenferro-core-.*tenferro-os-.*tenferro-native-/);
    const manifest = readFileSync(join(app, 'package.json'), 'utf8');
    const install = run('sh', ['-c', `${line!.replaceAll('./tarballs/', `${tgz}/`)} --no-audit --no-fund --no-package-lock --prefer-offline`], app);
    if (install.status !== 0 && OFFLINE.test(install.out)) {
      context.skip(`offline: the npm registry is unreachable and vitest is not in the npm cache (${install.out.match(OFFLINE)![0]})`);
    }
    expect(install.status, install.out).toBe(0);
    // package.json as it was: the bounded peer range, no file: path written anywhere.
    expect(readFileSync(join(app, 'package.json'), 'utf8')).toBe(manifest);
    expect((JSON.parse(manifest) as { peerDependencies: Record<string, string> }).peerDependencies['@tenferro/core']).toBe('>=0.1.0 <1.0.0');
    for (const p of ['core', 'os', 'native']) expect(existsSync(join(app, 'node_modules', '@tenferro', p, 'package.json')), `@tenferro/${p} installed`).toBe(true);
    const test = run('npx', ['vitest', 'run'], app);
    expect(test.status, test.out).toBe(0);
    // Every kit case runs for the template's provider, the summed-axes one included (#39): none skipped.
    expect(test.out).toMatch(/Tests\s+10 passed \(10\)/);
    // What the README says: providers: [...] replaces the GEMM slot only, and how the provider shows up.
    const slots = `import { CpuBackend } from '@tenferro/core';
import { createExampleProvider } from './src/index.js';
const backend = await CpuBackend.create({ kind: 'faer', providers: [createExampleProvider()] });
const b = backend.providerBundle();
console.log(JSON.stringify({ diagnostic: backend.executionInfo().providerDiagnostic, gemm: b.gemm.name, layout: b.layoutTransform.name, primitives: b.tensorPrimitives.name }));
await backend.close();
`;
    writeFileSync(join(app, 'slots.mjs'), slots);
    const shown = run(process.execPath, ['slots.mjs'], app);
    expect(shown.status, shown.out).toBe(0);
    const seen = JSON.parse(shown.out.trim().split('\n').pop()!) as Record<string, string>;
    expect(seen.diagnostic).toMatch(/^tenferro-provider-example \(/);
    expect(seen.gemm).toBe('example JavaScript GEMM');
    expect(seen.layout).toMatch(/^reference layout transform/);
    expect(seen.primitives).toMatch(/^reference tensor primitives/);
  }, 300_000);
});
