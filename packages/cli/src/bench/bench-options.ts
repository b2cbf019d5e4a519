import { InvalidArgumentError } from 'commander';

/** Largest n accepted by `--sizes` (a 16384² f64 operand is 2 GiB). */
export const MAX_BENCH_SIZE = 16384;

/** `--sizes 64,256,1024`: distinct positive integers, kept in the order given. A usage error otherwise. */
export function parseSizes(value: string): number[] {
  const parts = value.split(',').map((s) => s.trim());
  const sizes: number[] = [];
  for (const p of parts) {
    const n = /^\d+$/.test(p) ? Number(p) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_BENCH_SIZE) {
      throw new InvalidArgumentError(`expected a comma-separated list of sizes in [1, ${MAX_BENCH_SIZE}], got ${JSON.stringify(value)}`);
    }
    if (!sizes.includes(n)) sizes.push(n);
  }
  return sizes;
}

/** `--threads 2`: an integer in [1, 4096]. A usage error otherwise. */
export function parseThreads(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 4096) throw new InvalidArgumentError(`expected an integer thread count in [1, 4096], got ${JSON.stringify(value)}`);
  return n;
}
