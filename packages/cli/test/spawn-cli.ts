import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const bin = join(import.meta.dirname, '../dist/bin.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run the built `tenferro` bin with `args`, extra environment, optionally in another directory. */
export function tenferro(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string): CliRun {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, ...(cwd === undefined ? {} : { cwd }) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Escape sequences (colour) in a string. */
export const hasAnsi = (s: string): boolean => s.includes('\u001b[');
