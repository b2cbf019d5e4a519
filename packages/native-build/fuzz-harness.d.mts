// Types of fuzz-harness.mjs for the TypeScript tests that spawn fuzz children.
export interface FuzzSummary {
  readonly name: string;
  readonly seed: number;
  readonly count: number;
  readonly ms: number;
  readonly statuses: Record<string, number>;
}
export interface FuzzRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly error: Error | undefined;
  readonly summary: FuzzSummary;
  readonly stderr: string;
  readonly lastCase: string;
  readonly ms: number;
}
export function spawnFuzz(options: {
  script: string;
  args?: readonly string[];
  seed: number;
  count: number;
  trace: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  nodeArgs?: readonly string[];
  wrapper?: readonly string[];
}): FuzzRun;
export function rng(seed: number): { next(): number; int(lo: number, hi: number): number; pick<T>(list: readonly T[]): T; chance(p: number): boolean };
export function caseRng(seed: number, index: number): ReturnType<typeof rng>;
export const NASTY: readonly number[];
export function spawnTerminationProbe(options: {
  addon: string;
  fn: string;
  args?: readonly unknown[];
  rounds?: number;
  env?: Record<string, string>;
  timeoutMs?: number;
}): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };
