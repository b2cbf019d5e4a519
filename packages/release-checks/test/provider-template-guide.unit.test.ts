// examples/provider-template is the provider docs/contracts/provider-author-guide.md builds, file for
// file (#40): every block of the guide that names a file outside its linear-algebra section is the
// template's file of that path, byte for byte, and the template holds no other source. The
// generated ABI files the template commits are those of its table. (provider-template.test.ts, in
// the release tier, builds and ships the template from packed tarballs;
// provider-author-guide.docs.test.ts builds the guide's blocks.)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { abiFiles } from '../../native/abi/generate.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const template = join(root, 'examples', 'provider-template');
const guide = readFileSync(join(root, 'docs', 'contracts', 'provider-author-guide.md'), 'utf8');

/** The guide's file blocks of the GEMM provider: its linear-algebra extension is not the template's. */
const LINALG_SECTION = new Set(['src/linalg-kernels.ts', 'src/kernels/cholesky.ts', 'test/linalg.test.ts']);
/** Template files that are not guide blocks: what `npm run abi` generates, and the folder's own. */
const NOT_IN_GUIDE = new Set(['README.md', '.gitignore', 'native/src/abi.generated.h', 'native/src/abi.d.mts']);
/** What a build or an install leaves in a working copy. */
const BUILD_OUTPUT = /^(node_modules|dist|native\/build|native\/prebuilds)(\/|$)|\.tgz$/;

function guideFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of guide.matchAll(/^```[a-z]+ file=(\S+)\n([\s\S]*?)^```$/gm)) if (!LINALG_SECTION.has(m[1]!)) files.set(m[1]!, m[2]!);
  return files;
}

function templateFiles(dir = template): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    const rel = relative(template, path);
    if (BUILD_OUTPUT.test(rel)) return [];
    return e.isDirectory() ? templateFiles(path) : [rel];
  });
}

describe('examples/provider-template and the provider author guide', () => {
  it("the template's files are the guide's blocks, byte for byte, and nothing else", () => {
    const blocks = guideFiles();
    expect(blocks.size).toBeGreaterThanOrEqual(12);
    const files = templateFiles().filter((f) => !NOT_IN_GUIDE.has(f));
    expect(files.sort()).toEqual([...blocks.keys()].sort());
    for (const [path, text] of blocks) expect(readFileSync(join(template, path), 'utf8'), `${path}: the template's file differs from the guide's block`).toBe(text);
    for (const f of NOT_IN_GUIDE) expect(templateFiles(), `${f} is in the template`).toContain(f);
  });

  it('the committed abi.generated.h and abi.d.mts are those of native/src/abi.mjs (npm run abi -- --check)', async () => {
    const generated = await abiFiles(join(template, 'native', 'src', 'abi.mjs'));
    expect(generated.map((f) => relative(template, f.path)).sort()).toEqual(['native/src/abi.d.mts', 'native/src/abi.generated.h']);
    for (const f of generated) expect(readFileSync(f.path, 'utf8'), `${relative(template, f.path)} is stale: run npm run abi in the template`).toBe(f.text);
  });

  it('the README names what the template is: its package, its factory, the tarball line', () => {
    const readme = readFileSync(join(template, 'README.md'), 'utf8');
    const manifest = JSON.parse(readFileSync(join(template, 'package.json'), 'utf8')) as { name: string; peerDependencies: Record<string, string> };
    expect(readme.startsWith(`# ${manifest.name}\n`)).toBe(true);
    expect(readme).toContain(`from '${manifest.name}'`);
    expect(readme).toContain('providers: [createXProvider()]');
    expect(readFileSync(join(template, 'src', 'index.ts'), 'utf8')).toContain('export function createXProvider(');
    expect(readme.split('\n')).toContain('npm install --no-save ./tarballs/tenferro-core-*.tgz ./tarballs/tenferro-os-*.tgz ./tarballs/tenferro-native-*.tgz');
    expect(manifest.peerDependencies['@tenferro/core']).toBe('>=0.1.0 <1.0.0');
  });
});
