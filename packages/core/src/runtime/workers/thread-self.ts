import { readFileSync, readlinkSync } from 'node:fs';

/** The kernel thread id of the calling thread, from `/proc/thread-self` (no native binding needed). */
export function threadSelfTid(): number | undefined {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** `Cpus_allowed_list` of a thread's status file (`/proc/thread-self/status` by default). */
export function statusCpusAllowed(path = '/proc/thread-self/status'): string | undefined {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(readFileSync(path, 'utf8'));
    return m?.[1];
  } catch {
    return undefined;
  }
}
