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

/**
 * Per-call µs of `fn` (sync or async) over `calls` timed calls, after at least `warm` calls and
 * 150 ms of them: `median` — the median call — and `mean` — the timed calls' total ÷ `calls`,
 * what a loop of them pays, collections and every slow call included. On a 2-vCPU microVM the two
 * differ by a third at n = 64 (#38 item 7, docs/performance.md "2026-12-07 (night)"): the median
 * says what the path costs, the mean what a program waits. The time matters on the VMs this runs
 * on: a thread that waits on the event loop (onnxruntime-node's `run`, a parked tenferro task) is
 * woken fast only once the guest's idle polling has adapted to short waits — after a few hundred
 * milliseconds of them.
 */
export async function perCallStats(fn, calls, warm = Math.min(200, calls)) {
  const until = performance.now() + 150;
  for (let i = 0; i < warm || performance.now() < until; i++) await fn();
  const t = new Float64Array(calls);
  let total = 0;
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    total += t[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  return { median: t.sort()[calls >> 1], mean: total / calls };
}

/** The median call of {@link perCallStats}. */
export async function perCallMedian(fn, calls, warm = Math.min(200, calls)) {
  return (await perCallStats(fn, calls, warm)).median;
}

export function fmt(x, digits = 2) {
  return x.toFixed(digits).padStart(9);
}
