// A fork() while a threaded OpenBLAS call runs on an engine worker — what child_process.spawn,
// exec and execSync do on the main thread — must not hang that call. OpenBLAS's own fork handler
// stops its thread pool, and a call waiting for those threads spun forever (every run of this
// test hung before native/src/fork_guard.cc). Runs in a child process, killed after a minute.
import { describe, expect, it } from 'vitest';
import { CORE_DIST_INDEX, DIST_INDEX, runChild } from './helpers.js';

const CHILD = `
import { spawnSync } from 'node:child_process';
const { CpuBackend, Tensor } = await import(${JSON.stringify(CORE_DIST_INDEX)});
const { createBlasProvider } = await import(${JSON.stringify(DIST_INDEX)});
const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
const n = 768;
const a = Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => ((i * 7) % 13) - 6));
const expected = (await backend.matmul(a, a)).toTypedArray();
let rounds = 0;
let same = true;
for (; rounds < 20; rounds++) {
  const running = backend.matmul(a, a); // posted to the worker now
  for (let k = 0; k < 2; k++) spawnSync('true'); // forks while the GEMM runs
  const got = (await running).toTypedArray();
  same &&= got.every((x, i) => x === expected[i]);
}
await backend.close();
console.log(JSON.stringify({ rounds, same }));
`;

describe('fork during a BLAS call', () => {
  it('child_process.spawnSync while a 2-thread GEMM runs: every call completes with the same result', () => {
    const r = runChild(CHILD, {}, 60_000);
    expect({ status: r.status, signal: r.signal, stderr: r.stderr.includes('Error') ? r.stderr : '' }).toEqual({ status: 0, signal: null, stderr: '' });
    expect(r.json).toEqual({ rounds: 20, same: true });
  }, 90_000);
});
