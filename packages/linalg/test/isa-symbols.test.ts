// The per-instruction-set kernel objects share no inline function with each other or with the
// baseline objects (binding.gyp, native/src/ops.h): the linker keeps one copy of a function defined
// in several objects, so a shared one compiled for AVX-512 could run on a CPU without it. Weak
// symbols (`nm`: W, V, u) of every object of a source build are compared; skipped where no objects
// are present (a prebuilt binary) or `nm` is missing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const objDir = fileURLToPath(new URL('../native/build/Release/obj.target/', import.meta.url));
const hasNm = spawnSync('nm', ['--version']).status === 0;
const targets = existsSync(objDir) ? readdirSync(objDir).filter((d) => d.startsWith('tenferro_linalg')) : [];

function weakSymbols(target: string): Set<string> {
  const dir = join(objDir, target, 'src');
  const out = new Set<string>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.o'))) {
    const r = spawnSync('nm', ['--defined-only', join(dir, f)], { encoding: 'utf8' });
    for (const line of r.stdout.split('\n')) {
      const [, kind, name] = line.trim().split(/\s+/);
      if (name !== undefined && /^[WVu]$/.test(kind ?? '')) out.add(name);
    }
  }
  return out;
}

// The per-ISA objects of this build: both, or only the AVX2 ones after TENFERRO_NATIVE_ISA=host on a CPU without AVX-512.
const perIsa = ['tenferro_linalg_avx2', 'tenferro_linalg_avx512'].filter((t) => targets.includes(t));

describe.skipIf(!hasNm || perIsa.length === 0)('instruction-set objects', () => {
  it(`share no weak (inline) symbol with the baseline objects or with each other (${perIsa.join(', ')})`, () => {
    const baseline = new Set([...weakSymbols('tenferro_linalg_generic'), ...weakSymbols('tenferro_linalg')]);
    const shared = (a: Set<string>, b: Set<string>) => [...a].filter((s) => b.has(s));
    const objects = perIsa.map((t) => [t, weakSymbols(t)] as const);
    for (const [target, symbols] of objects) {
      // Eigen's templates are there, under their own namespace (the AVX-512 objects hold ~90 where the
      // AVX2 ones are built too: svd and eig run on those, binding.gyp).
      expect(symbols.size, target).toBeGreaterThan(50);
      expect(shared(symbols, baseline), target).toEqual([]);
    }
    if (objects.length === 2) expect(shared(objects[0]![1], objects[1]![1])).toEqual([]);
  });
});
