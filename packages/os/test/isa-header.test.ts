// @tenferro/native's tenferro/isa.h (#40), which every addon picks its ISA path with: compiled here
// into a small program (g++, as the addons are) with each build configuration, and run with each
// override value. The expectations are computed from what this CPU runs (the program reports it),
// so the test holds on any x86-64 or arm64 machine.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const include = join(import.meta.dirname, '../../native/include');
const dir = mkdtempSync(join(tmpdir(), 'tenferro-isa-h-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DRIVER = `
#include <cstdio>
#include "tenferro/isa.h"
using namespace tenferro::isa;
int main() {
  const char* const names[kCount] = {"portable", "avx2", "avx512"};
  char nb[64];
  std::printf("{\\"runs\\":[%d,%d,%d],\\"built\\":[%d,%d,%d],\\"supported\\":[%d,%d,%d],\\"pick\\":%d,\\"notBuilt\\":\\"%s\\",\\"runsNotBuilt\\":%d}\\n",
    runs_here(kPortable), runs_here(kAvx2), runs_here(kAvx512), built(kPortable), built(kAvx2), built(kAvx512),
    supported(kPortable), supported(kAvx2), supported(kAvx512), static_cast<int>(pick("DEMO_ISA")), not_built(names, nb, sizeof nb), any_runs_not_built());
}`;

interface Report {
  runs: number[];
  built: number[];
  supported: number[];
  pick: number;
  notBuilt: string;
  runsNotBuilt: number;
}

const BUILDS = {
  full: [],
  noAvx512: ['-DTENFERRO_NO_AVX512'],
  noAvx2: ['-DTENFERRO_NO_AVX2'],
  baseline: ['-DTENFERRO_NO_AVX2', '-DTENFERRO_NO_AVX512'],
  // The same on a CPU that runs every path (the header's compile-time test seam), whatever this one runs.
  avx512Full: ['-DTENFERRO_ISA_TEST_CPU=2'],
  avx512NoAvx2: ['-DTENFERRO_ISA_TEST_CPU=2', '-DTENFERRO_NO_AVX2'],
  avx512NoAvx512: ['-DTENFERRO_ISA_TEST_CPU=2', '-DTENFERRO_NO_AVX512'],
  avx2CpuNoAvx2: ['-DTENFERRO_ISA_TEST_CPU=1', '-DTENFERRO_NO_AVX2'],
} as const;
type Build = keyof typeof BUILDS;
const binaries = {} as Record<Build, string>;
const x86 = process.arch === 'x64';

beforeAll(() => {
  writeFileSync(join(dir, 'driver.cc'), DRIVER);
  for (const [build, defines] of Object.entries(BUILDS) as [Build, readonly string[]][]) {
    binaries[build] = join(dir, build);
    execFileSync('g++', ['-std=c++17', '-O1', '-Wall', '-Wextra', '-Werror', ...defines, `-I${include}`, join(dir, 'driver.cc'), '-o', binaries[build]]);
  }
});

function run(build: Build, override?: string): Report {
  const env = { ...process.env };
  delete env.DEMO_ISA;
  if (override !== undefined) env.DEMO_ISA = override;
  const r = spawnSync(binaries[build], { encoding: 'utf8', env });
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Report;
}

describe('tenferro/isa.h', () => {
  it('a full build picks the best path this CPU runs and reports nothing left out', () => {
    const r = run('full');
    expect(r.built).toEqual([1, 1, 1]);
    expect(r.supported).toEqual(r.runs);
    expect(r.pick).toBe(r.runs.lastIndexOf(1));
    expect(r.notBuilt).toBe('');
    expect(r.runsNotBuilt).toBe(0);
  });

  it('the override lowers the path, never raises it; an unknown value changes nothing', () => {
    const best = run('full').pick;
    for (const [value, want] of [['portable', 0], ['scalar', 0], ['generic', 0], ['avx2', 1], ['avx512', 2], ['avx512f', 2], ['bogus', best], ['', best]] as const) {
      expect(run('full', value).pick, `DEMO_ISA=${value}`).toBe(Math.min(want, best));
    }
  });

  it('a build without AVX-512 says so; it warns (runsNotBuilt) only on a CPU that runs AVX-512', () => {
    const r = run('noAvx512');
    expect(r.built).toEqual([1, 1, 0]);
    expect(r.supported[2]).toBe(0);
    expect(r.pick).toBe(r.runs[1] === 1 ? 1 : 0);
    expect(r.notBuilt).toBe(x86 ? 'avx512' : '');
    expect(r.runsNotBuilt).toBe(r.runs[2]);
  });

  it('a build without AVX2 lowers an avx2 override to portable, and warns only when no faster built path runs (#39)', () => {
    const r = run('noAvx2');
    expect(r.built).toEqual([1, 0, 1]);
    expect(r.notBuilt).toBe(x86 ? 'avx2' : '');
    // AVX2 left out on an AVX-512 CPU runs the faster AVX-512 path: nothing to warn about.
    expect(r.runsNotBuilt).toBe(r.runs[1] === 1 && r.runs[2] === 0 ? 1 : 0);
    expect(run('noAvx2', 'avx2').pick).toBe(0);
  });

  it('on an AVX-512 CPU: the override lowers to each path, a left-out AVX2 falls to portable and warns nothing (#39), a left-out AVX-512 warns', () => {
    expect([undefined, 'avx2', 'portable', 'avx512'].map((v) => run('avx512Full', v).pick)).toEqual([2, 1, 0, 2]);
    const noAvx2 = run('avx512NoAvx2');
    expect([noAvx2.pick, run('avx512NoAvx2', 'avx2').pick, noAvx2.runsNotBuilt]).toEqual([2, 0, 0]);
    const noAvx512 = run('avx512NoAvx512');
    expect([noAvx512.pick, run('avx512NoAvx512', 'avx512').pick, noAvx512.runsNotBuilt]).toEqual([1, 1, 1]);
    // An AVX2 CPU with AVX2 left out runs portable, and could run faster: warned.
    const r = run('avx2CpuNoAvx2');
    expect([r.pick, r.runsNotBuilt]).toEqual([0, 1]);
  });

  it('a baseline build (a sanitizer build) runs portable and lists both vector paths', () => {
    const r = run('baseline');
    expect(r.pick).toBe(0);
    expect(r.notBuilt).toBe(x86 ? 'avx2, avx512' : '');
    expect(r.runsNotBuilt).toBe(r.runs[1]);
  });
});
