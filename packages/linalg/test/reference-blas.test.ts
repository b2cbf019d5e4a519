// Declines are counted and fall back: with a BLAS runtime that has no LAPACK (Debian's reference
// libblas.so.3, loaded through TENFERRO_BLAS_LIBRARY in a child process), provider-blas declines
// cholesky and qr before writing (the built-in kernels run, each record names the missing routine)
// and still runs solveTriangular through the runtime's ?trsm_.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { status as blasStatus } from '@tenferro/provider-blas';

const reference = '/usr/lib/x86_64-linux-gnu/blas/libblas.so.3';
const child = fileURLToPath(new URL('./reference-blas-child.mjs', import.meta.url));

describe.skipIf(!blasStatus().available || !existsSync(reference))('a BLAS runtime without LAPACK', () => {
  it('declines what it lacks before writing (counted), runs what it has (?trsm_)', () => {
    const out = execFileSync(process.execPath, [child], { env: { ...process.env, TENFERRO_BLAS_LIBRARY: reference }, encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(r.records).toEqual([
      { op: 'cholesky', kernel: 'builtin', declined: expect.stringContaining('dpotrf_') },
      { op: 'solveTriangular', kernel: 'extension' },
      { op: 'qr', kernel: 'builtin', declined: expect.stringContaining('cgeqrf_') },
    ]);
    expect(r.counts).toEqual({ executed: { solveTriangular: 1 }, declined: { cholesky: 1, qr: 1 } });
    expect(r.l[0]).toBe(2);
    expect(r.x[0]).toBe(1);
    expect(r.r).toEqual([2, 2]);
  });
});
