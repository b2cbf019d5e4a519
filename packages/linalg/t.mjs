import { CpuBackend, Tensor } from '@tenferro/core';
import { linalg } from './dist/index.js';
const be = await CpuBackend.create({threads:1, providers:[]});
const la = linalg(be);
for (const dtype of ['c64','c128']) for (const n of [4, 8, 15, 16]) {
  const d = new (dtype==='c64'?Float32Array:Float64Array)(2*n*n).map(()=>Math.random()-0.5);
  const A = Tensor.from(d,[n,n],{dtype});
  for (let i=0;i<50;i++) await la.svd(A);
  const ts=[]; for (let r=0;r<7;r++){ const t0=performance.now(); for (let i=0;i<200;i++) await la.svd(A); ts.push((performance.now()-t0)/200*1000); }
  ts.sort((a,b)=>a-b); console.log(dtype, n, 'median µs', ts[3].toFixed(1));
}
await be.close();
