import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The compiled entry point, which worker and child-process tests load (they cannot load .ts). */
export const DIST_INDEX = fileURLToPath(new URL('../dist/index.js', import.meta.url));

export function requireDist(): void {
  if (!existsSync(DIST_INDEX)) {
    throw new Error(`${DIST_INDEX} is missing: run \`pnpm run build\` in packages/os before the tests`);
  }
}

/** Expand a Linux cpulist ("0-3,8,10-11") into sorted ids. */
export function parseCpuList(text: string): number[] {
  const ids: number[] = [];
  for (const part of text.trim().split(',')) {
    if (part === '') continue;
    const [lo, hi] = part.split('-').map(Number) as [number, number | undefined];
    for (let cpu = lo; cpu <= (hi ?? lo); cpu++) ids.push(cpu);
  }
  return ids;
}

/** The `Cpus_allowed_list` of one thread of this process, as written by the kernel. */
export function cpusAllowedList(tid: number): string {
  const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
  const match = /^Cpus_allowed_list:\t(.*)$/m.exec(status);
  if (!match) throw new Error(`no Cpus_allowed_list in /proc/self/task/${tid}/status`);
  return match[1]!;
}
