// Child of reference-blas.test.ts: runs with TENFERRO_BLAS_LIBRARY set to a BLAS without LAPACK
// (Debian's reference libblas.so.3: ?trsm_ but no ?potrf_, ?getrf_, ...). Prints one JSON line:
// the kernel calls (from tenferro:provider) and provider-blas's LAPACK call counts.
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider } from '@tenferro/provider-blas';
import { linalg, linalgKernelsKey } from '../dist/index.js';
import { recordLinalgKernels } from '../dist/testing/index.js';

const b = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
try {
  const la = linalg(b);
  const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]);
  // Which kernel ran each call: tenferro:provider (#35).
  const { value: [l, x, q], calls } = await recordLinalgKernels(async () => {
    const l = await la.cholesky(a);
    const x = await la.solveTriangular(l, Tensor.fromArray('f64', [2, 1], [2, 1]), { upper: false });
    const q = await la.qr(Tensor.fromArray('c64', [2, 2], [1, 0, 2, 0, 3, 0, 4, 1]));
    return [l, x, q];
  });
  const ext = b.providerBundle().extension(linalgKernelsKey());
  console.log(JSON.stringify({ records: calls, counts: ext.callCounts(), l: l.toArray(), x: x.toArray(), r: q.r.shape }));
} finally {
  await b.close();
}
