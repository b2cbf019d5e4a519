// Instruction-set dispatch of the built-in kernels (native/src/dispatch.cc): the addon carries the
// kernels compiled for the baseline and, on x64, for AVX2+FMA and AVX-512; it uses the best one the
// CPU supports (status().details.isa), and every one of them computes the same factorisations —
// each instruction set runs in its own child process (TENFERRO_LINALG_ISA lowers the choice), and
// the results are compared: residuals within n·ε bounds, identical pivots, and leading outputs
// equal to rounding.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { status } from '../src/index.js';

const child = fileURLToPath(new URL('./isa-child.mjs', import.meta.url));
const available = status().available;
/** What the build left out (`best` on an AVX2/AVX-512 CPU: the portable real kernels, #39). */
const initial = status();
const notBuilt = String((initial.available && initial.details?.isaNotBuilt) || '');

/** The instruction set the CPU supports best, as dispatch.cc decides it (x64; arm64 → generic). */
function expectedIsa(): string {
  if (process.arch !== 'x64') return 'generic';
  const flags = new Set((/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '').trim().split(/\s+/));
  const avx2 = flags.has('avx2') && flags.has('fma');
  if (avx2 && ['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'].every((f) => flags.has(f))) return 'avx512';
  return avx2 ? 'avx2' : 'generic';
}

interface Result {
  readonly lu: number;
  readonly luFactorHead: number[];
  readonly pivots: number[];
  readonly solve: number;
  readonly cholesky: number;
  readonly qr: number;
  readonly qrHead: number[];
  readonly eigh: number;
  readonly eigenvalues: number[];
  readonly svd: number;
  readonly singularValues: number[];
}

function runAt(isa: string | undefined): { isa: string; f64: Result; c128: Result } {
  const env = { ...process.env };
  delete env.TENFERRO_LINALG_ISA;
  if (isa !== undefined) env.TENFERRO_LINALG_ISA = isa;
  return JSON.parse(execFileSync(process.execPath, [child], { env, encoding: 'utf8' }).trim().split('\n').at(-1)!);
}

describe.skipIf(!available)('instruction-set dispatch', () => {
  it('uses the best instruction set the CPU supports', () => {
    const s = status();
    expect(s.available && s.details?.isa).toBe(expectedIsa());
    expect(s.available && s.name).toContain(expectedIsa());
  });

  it('every compiled instruction set computes the same factorisations (f64 and c128, n = 150)', () => {
    const best = expectedIsa();
    // A `best` build has no portable f32/f64 kernels to compare (c128 runs them on every path).
    const isas = ['generic', 'avx2', 'avx512']
      .slice(0, ['generic', 'avx2', 'avx512'].indexOf(best) + 1)
      .filter((isa) => !(isa === 'generic' && notBuilt.includes('generic f32/f64')));
    const runs = isas.map((isa) => runAt(isa === best ? undefined : isa));
    expect(runs.map((r) => r.isa)).toEqual(isas);
    const bound = 150 * 2.220446049250313e-16 * 10;
    for (const r of runs) {
      for (const key of ['f64', 'c128'] as const) {
        const x = r[key];
        for (const res of [x.lu, x.solve, x.cholesky, x.qr, x.eigh, x.svd]) expect(res).toBeLessThan(bound);
      }
    }
    const close = (a: number[], b: number[]) => a.forEach((v, i) => expect(Math.abs(v - b[i]!)).toBeLessThanOrEqual(1e-10 * Math.max(1, Math.abs(b[i]!))));
    for (const r of runs.slice(1)) {
      for (const key of ['f64', 'c128'] as const) {
        const x = r[key], g = runs[0]![key];
        expect(x.pivots).toEqual(g.pivots);
        close(x.luFactorHead, g.luFactorHead);
        close(x.qrHead, g.qrHead);
        close(x.eigenvalues, g.eigenvalues);
        close(x.singularValues, g.singularValues);
      }
    }
  });
});
