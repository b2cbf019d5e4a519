#!/usr/bin/env node
// Reproduces the SIGSEGV fixed by core's engine workers' 64 MiB thread stacks (ENGINE_WORKER_STACK_MB
// in packages/core/src/runtime/workers/engine-worker.ts): backends of 1 and 2 threads made and closed in turn, each running LU, Cholesky, QR and SVD
// of 1024×1024 f64 (SkylakeX kernels) and batches of 8×8 solves. Before the fix, OpenBLAS 0.3.21's
// dgetrf_parallel (~540 KB of stack per recursion level) overflowed the engine worker's ~4 MB stack
// in the second round's first 2-thread luFactor — every run here (5 of 5; gdb: 8 frames of
// dgetrf_parallel, the fault 0x118 bytes past the stack). After: 0 of 5. Margin-sensitive (the
// same sequence as a vitest child did not crash before the fix), hence a script, not a test.
//   node bench/repro-getrf-stack.mjs [rounds=6]   → "iteration k ok" per round, exit 0
process.env.OPENBLAS_CORETYPE='SkylakeX';
const { CpuBackend, Tensor } = await import('@tenferro/core');
const { createBlasProvider } = await import('@tenferro/provider-blas');
const { linalg } = await import('../dist/index.js');
const n = 1024, d = new Float64Array(n * n);
for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d[i + j * n] = (i === j ? n : 0) + 1 / (1 + Math.abs(i - j));
const A = Tensor.from(d, [n, n]);
const m = 8, count = 10000, data = new Float64Array(m * m * count);
for (let b = 0; b < count; b++) for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) data[b * m * m + i + j * m] = (i === j ? 9 : 0) + Math.sin(b + i * 3 + j);
const SA = Tensor.from(data, [m, m, count]), SB = Tensor.from(new Float64Array(m * count).fill(1), [m, 1, count]);
const dispose = (o) => { for (const x of Object.values(o ?? {})) x?.dispose?.(); o?.dispose?.(); };
for (let it = 0; it < Number(process.argv[2] ?? 6); it++) {
  for (const threads of [1, 2]) {
    console.log('start threads', threads);
    const builtin = await CpuBackend.create({ threads, providers: [] });
    const blas = await CpuBackend.create({ kind: 'blas', threads, providers: [createBlasProvider()] });
    const la = linalg(blas), lf = linalg(builtin);
    for (const op of ['luFactor', 'cholesky', 'qr', 'svd']) { console.log(' ', op); dispose(await la[op](A)); dispose(await la[op](A)); }
    dispose(await lf.luFactor(A));
    for (let k = 0; k < 5; k++) { dispose(await la.solve(SA, SB)); dispose(await lf.solve(SA, SB)); }
    await builtin.close(); await blas.close();
  }
  console.log('iteration', it, 'ok');
}
