// The worker side: runs in tenferro's pinned engine workers, never on the main thread. It gets
// the packed words and buffers from src/gemm-provider.js and computes rows [m0, m1) of every
// batch: out = alpha · lhs · rhs + beta · out (beta = 0: out is written without being read).
// Strides and offsets are in elements and were validated by tenferro (every index is inside its
// buffer), so this loop needs no bounds checks of its own — a native kernel would check again.

const views = new WeakMap();

function lanes(buffer, f64) {
  let cached = views.get(buffer);
  if (cached === undefined) views.set(buffer, (cached = {}));
  const key = f64 ? 'f64' : 'f32';
  cached[key] ??= f64 ? new Float64Array(buffer, 0, buffer.byteLength >>> 3) : new Float32Array(buffer, 0, buffer.byteLength >>> 2);
  return cached[key];
}

export function exampleGemm({ words: w, buffers }) {
  const f64 = w[0] === 0;
  const [m0, m1, k, n] = [w[4], w[5], w[3], w[2]];
  const [alpha, beta] = [w[6], w[7]];
  const [offA, rsA, csA, offB, rsB, csB, offC, rsC, csC] = [w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15], w[16]];
  const rank = w[17];
  const extents = Array.from(w.subarray(18, 18 + rank));
  const bs = (o) => Array.from(w.subarray(18 + rank * (1 + o), 18 + rank * (2 + o)));
  const [bsA, bsB, bsC] = [bs(0), bs(1), bs(2)];
  const A = lanes(buffers[0], f64);
  const B = lanes(buffers[1], f64);
  const C = lanes(buffers[2], f64);
  const batches = extents.reduce((a, b) => a * b, 1);
  for (let l = 0; l < batches; l++) {
    // Batch offsets, last axis fastest.
    let [a0, b0, c0] = [offA, offB, offC];
    for (let t = rank - 1, rest = l; t >= 0; t--) {
      const i = rest % extents[t];
      rest = Math.floor(rest / extents[t]);
      a0 += i * bsA[t];
      b0 += i * bsB[t];
      c0 += i * bsC[t];
    }
    for (let j = 0; j < n; j++) {
      for (let i = m0; i < m1; i++) {
        let acc = 0;
        for (let p = 0; p < k; p++) acc += A[a0 + i * rsA + p * csA] * B[b0 + p * rsB + j * csB];
        const at = c0 + i * rsC + j * csC;
        C[at] = beta === 0 ? alpha * acc : alpha * acc + beta * C[at];
      }
    }
  }
}
