// Child of reference-blas.test.ts: runs with TENFERRO_BLAS_LIBRARY set to a BLAS without LAPACK
// (Debian's reference libblas.so.3: ?trsm_ but no ?potrf_, ?getrf_, ...). Prints one JSON line:
// the call records and provider-blas's LAPACK call counts.
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider } from '@tenferro/provider-blas';
import { linalg, linalgKernelsKey } from '../dist/index.js';

const b = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
try {
  const la = linalg(b);
  const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]);
  const l = await la.cholesky(a);
  const x = await la.solveTriangular(l, Tensor.fromArray('f64', [2, 1], [2, 1]), { upper: false });
  const q = await la.qr(Tensor.fromArray('c64', [2, 2], [1, 0, 2, 0, 3, 0, 4, 1]));
  const ext = b.providerBundle().extension(linalgKernelsKey());
  console.log(JSON.stringify({ records: la.takeCallRecords(), counts: ext.callCounts(), l: l.toArray(), x: x.toArray(), r: q.r.shape }));
} finally {
  await b.close();
}
