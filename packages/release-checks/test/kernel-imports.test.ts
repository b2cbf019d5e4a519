// What an engine worker imports: its entry, then on a lane's first task each kernel module it runs
// (through a KernelRef) with the native binding that module loads. That import is part of the first
// call's latency and is paid by every lane of every engine, so kernel modules import core's worker
// side, `@tenferro/core/kernel` (a few small modules), never `@tenferro/core` (over a hundred):
// docs/contracts/provider-author-guide.md, "On the workers". The static import graph of each built
// module is read with esbuild's metafile (what a bundle of it would hold: every static and literal
// dynamic import, resolved as Node resolves them); type-only imports are gone from the built files.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const packages = fileURLToPath(new URL('../../', import.meta.url));
const coreDist = realpathSync(join(packages, 'core', 'dist'));

/** Every built kernel module of the workspace: `dist/kernels/*.js` of each package. */
function kernelModules(): string[] {
  const found: string[] = [];
  for (const p of readdirSync(packages)) {
    const dir = join(packages, p, 'dist', 'kernels');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith('.js')) found.push(join(dir, f));
  }
  return found.sort();
}

/** The absolute paths of the modules `entry` loads, itself included. */
async function importGraph(entry: string): Promise<string[]> {
  const r = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', logLevel: 'silent', absWorkingDir: packages });
  return Object.keys(r.metafile.inputs).map((i) => realpathSync(resolve(packages, i)));
}

describe('what engine workers import (kernel modules and the worker entry)', () => {
  const kernels = kernelModules();
  const entries = [join(coreDist, 'runtime', 'workers', 'worker-entry.js'), ...kernels];

  it('finds the kernel modules of every provider and extension package', () => {
    const names = kernels.map((k) => k.slice(packages.length));
    for (const known of ['provider-faer/dist/kernels/gemm.js', 'provider-blas/dist/kernels/gemm.js', 'provider-blas/dist/kernels/lapack.js', 'provider-tprims/dist/kernels/tprims.js', 'linalg/dist/kernels/linalg.js', 'ext-example/dist/kernels/scale-rows.js']) {
      expect(names).toContain(known);
    }
  });

  it.each(entries.map((e) => [e.slice(packages.length), e]))('%s: never core\'s index, a few of its modules at most', async (_name, entry) => {
    const graph = await importGraph(entry);
    const core = graph.filter((f) => f.startsWith(coreDist)).map((f) => f.slice(coreDist.length + 1));
    expect(core).not.toContain('index.js');
    expect(core.length, core.join('\n')).toBeLessThanOrEqual(8);
    expect(graph.length, graph.join('\n')).toBeLessThanOrEqual(30);
  });
});
