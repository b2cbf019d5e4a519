import { CpuBackend, Tensor } from '@tenferro/core';
import { linalg, status } from '/work/main/packages/linalg/dist/index.js';
const be = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [] });
const la = linalg(be);
console.log(status().details?.isa, process.env.TENFERRO_LINALG_ISA ?? '');
for (const n of (process.env.NS ?? '64,256,512').split(',').map(Number)) {
  const d = new Float64Array(n * n).map((_, i) => Math.sin(i * 0.37) + (i % (n + 1) === 0 ? 2 : 0));
  const a = Tensor.from(d, [n, n]);
  const spd = await be.matmul(a, a, { transposeB: true }).catch(() => null);
  for (const [name, fn] of [['svd', () => la.svd(a)], ['eig', () => la.eig(a)], ['eigh', () => la.eigh(spd ?? a)], ['lu', () => la.luFactor(a)], ['qr', () => la.qr(a)]]) {
    const reps = n <= 64 ? 50 : n <= 256 ? 10 : 6;
    let best = Infinity;
    for (let r = 0; r < reps + 1; r++) { const t = performance.now(); const o = await fn(); best = Math.min(best, performance.now() - t); }
    console.log(n, name, best.toFixed(2), 'ms');
  }
}
await be.close();
