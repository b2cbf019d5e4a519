// The published type declarations compile in an application's strict TypeScript (#39): an app
// folder outside the repository with every @tenferro package and @types/node, `strict`, the
// `nodenext` module system and no `lib` beyond the target's (no `esnext.disposable`: the packages'
// `Symbol.dispose`/`asyncDispose` members must come from @types/node, as an application gets them).
// Compiled with TypeScript 6 (`tsc -b` of the repository is TypeScript 7, which has no `tsc` API
// the test could call in-process, machine.md); TypeScript 6 no longer includes every @types package
// by default, so the app names `node` in `types`, as its own tsconfig would.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packages = join(fileURLToPath(new URL('../..', import.meta.url)));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const typesNode = dirname(createRequire(join(packages, 'core', 'package.json')).resolve('@types/node/package.json'));

const entryPoints = [
  '@tenferro/core',
  '@tenferro/core/testing',
  '@tenferro/core/kernel',
  '@tenferro/os',
  '@tenferro/provider-faer',
  '@tenferro/provider-blas',
  '@tenferro/provider-tprims',
  '@tenferro/linalg',
  '@tenferro/linalg/contract',
  '@tenferro/linalg/testing',
];

describe('the published .d.ts in a strict application (#39)', () => {
  const app = mkdtempSync(join(tmpdir(), 'tenferro-dts-'));
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('compile with strict, nodenext and @types/node, without esnext.disposable', { timeout: 60_000 }, () => {
    mkdirSync(join(app, 'node_modules', '@tenferro'), { recursive: true });
    mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
    for (const p of ['core', 'os', 'provider-faer', 'provider-blas', 'provider-tprims', 'linalg']) symlinkSync(join(packages, p), join(app, 'node_modules', '@tenferro', p), 'dir');
    symlinkSync(typesNode, join(app, 'node_modules', '@types', 'node'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', types: ['node'], noEmit: true }, files: ['app.ts'] }),
    );
    const imports = entryPoints.map((e, i) => `import * as m${i} from '${e}';`).join('\n');
    writeFileSync(
      join(app, 'app.ts'),
      `${imports}
import { CpuBackend, Tensor } from '@tenferro/core';
const backend = await CpuBackend.create();
const t: Tensor<'f64'> = Tensor.zeros('f64', [2, 2]);
const c = await backend.matmul(t, t);
c[Symbol.dispose]();
await backend[Symbol.asyncDispose]();
console.log(${entryPoints.map((_, i) => `m${i}`).join(', ')});
`,
    );
    const r = spawnSync(process.execPath, [tsc, '-p', app], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
