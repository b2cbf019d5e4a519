import { performance } from 'node:perf_hooks';

/** How long one case is warmed up and timed; the default bench stays well under 30 s. */
export interface TimingBudget {
  readonly warmupMs: number;
  readonly measureMs: number;
  readonly minReps: number;
  readonly maxReps: number;
}

export const DEFAULT_BUDGET: TimingBudget = Object.freeze({ warmupMs: 250, measureMs: 300, minReps: 3, maxReps: 500 });

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

/**
 * Warm `call` up, then time single calls until the budget is spent (at least `minReps`, at most
 * `maxReps`). Returns each call's seconds.
 */
export async function timeCalls(call: () => Promise<unknown>, budget: TimingBudget = DEFAULT_BUDGET): Promise<number[]> {
  const warmEnd = performance.now() + budget.warmupMs;
  do await call();
  while (performance.now() < warmEnd);
  const seconds: number[] = [];
  const end = performance.now() + budget.measureMs;
  while (seconds.length < budget.minReps || (seconds.length < budget.maxReps && performance.now() < end)) {
    const t0 = performance.now();
    await call();
    seconds.push((performance.now() - t0) / 1e3);
  }
  return seconds;
}

/** Deterministic operand values in [-2, 2) (a linear congruential sequence): no two runs differ in data. */
export function operandValues(count: number, seed: number): Float64Array {
  const data = new Float64Array(count);
  let x = seed >>> 0;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    data[i] = ((x >>> 8) % 16) / 4 - 2;
  }
  return data;
}
