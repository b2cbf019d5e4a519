// The compiler of each dtype's built-in kernels (native/cxx-select.cjs, named by binding.gyp's
// make_global_settings): clang++ compiles the f32 and complex units where it is installed — in
// about half of g++'s CPU time, with code as fast or faster — and g++ the f64 units, whose svd
// clang's Eigen GEMM kernel made 10–20 % slower (docs/performance.md). status().details.compilers
// reports what the build did; the build and this test run in the same environment (CXX, when set,
// overrides the choice: then only the report's shape is checked).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { status } from '../src/index.js';

const s = status();
const clangInstalled = spawnSync('clang++', ['--version'], { encoding: 'utf8' }).status === 0;
const chosen = process.env.CXX === undefined;

/** status().details.compilers as { dtype: compiler name }: 'f32 clang 14.0.6, f64 gcc 12.2.0' → { f32: 'clang', f64: 'gcc' }. */
function compilers(): Record<string, string> {
  const text = String((s.available && s.details?.compilers) || '');
  return Object.fromEntries(text.split(', ').map((entry) => entry.split(' ')).map(([dtype, name]) => [dtype!, name!]));
}

describe.skipIf(!s.available)('the compilers of the built-in kernels', () => {
  it('names a compiler for every dtype the build has', () => {
    const notBuilt = String((s.available && s.details?.dtypesNotBuilt) || '').split(',');
    const expected = ['f32', 'f64', 'c64', 'c128'].filter((d) => !notBuilt.includes(d));
    expect(Object.keys(compilers())).toEqual(expected);
    for (const name of Object.values(compilers())) expect(['gcc', 'clang']).toContain(name);
  });

  it.skipIf(!chosen)(`f64 by g++, f32 and complex by ${clangInstalled ? 'clang++ (installed here)' : 'g++ (clang++ is not installed here)'} (native/cxx-select.cjs)`, () => {
    const c = compilers();
    const expected = Object.fromEntries(Object.keys(c).map((dtype) => [dtype, dtype === 'f64' || !clangInstalled ? 'gcc' : 'clang']));
    expect(Object.keys(c).length).toBeGreaterThan(0);
    expect(c).toEqual(expected);
  });
});
