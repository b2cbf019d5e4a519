// Tiny timing helpers for benchmarks: medians over batches, never a single run.
export async function measure(op, { warmup = 2000, batches = 15, perBatch = 2000 } = {}) {
  for (let i = 0; i < warmup; i++) await op();
  const perOp = [];
  for (let b = 0; b < batches; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) await op();
    perOp.push(Number(process.hrtime.bigint() - t0) / perBatch / 1000);
  }
  perOp.sort((a, b) => a - b);
  return { medianMicros: perOp[perOp.length >> 1], minMicros: perOp[0], maxMicros: perOp[perOp.length - 1] };
}

export function fmt(x, digits = 2) {
  return x.toFixed(digits).padStart(9);
}
