import { readdirSync, readFileSync } from 'node:fs';

/** One thread of this process as the kernel reports it. */
export interface ProcessThread {
  /** Kernel thread id. */
  readonly tid: number;
  /** `/proc/self/task/<tid>/comm` (15 characters at most; Node 20 leaves most of its threads `node`). */
  readonly name: string;
  /** `Cpus_allowed_list` of `/proc/self/task/<tid>/status`; `undefined` when the thread exited while being read. */
  readonly cpus: string | undefined;
}

/**
 * Every thread of this process, in creation order (the order of `/proc/self/task`), with its
 * name and CPU mask read from procfs (no native binding needed). A thread that exits while it
 * is read keeps its tid with an empty name and no mask. `procRoot` is for tests.
 */
export function processThreads(procRoot = '/proc'): ProcessThread[] {
  const dir = `${procRoot}/self/task`;
  return readdirSync(dir).map((entry) => {
    const tid = Number(entry);
    return { tid, name: readOr(`${dir}/${entry}/comm`)?.trim() ?? '', cpus: cpusAllowed(readOr(`${dir}/${entry}/status`)) };
  });
}

/** `/proc/sys/kernel/pid_max`: thread ids wrap from it to 300 (Linux's largest default, 2^22, when unreadable). */
export function pidMax(procRoot = '/proc'): number {
  const value = Number(readOr(`${procRoot}/sys/kernel/pid_max`)?.trim());
  return Number.isSafeInteger(value) && value > 0 ? value : 4_194_304;
}

/** Just the thread ids (the cheapest census: one directory read). */
export function processThreadIds(procRoot = '/proc'): number[] {
  return readdirSync(`${procRoot}/self/task`).map(Number);
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function cpusAllowed(status: string | undefined): string | undefined {
  return status === undefined ? undefined : /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(status)?.[1];
}
