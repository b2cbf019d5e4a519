/**
 * Validated wrappers around the native addon. Every argument is checked here, before any
 * system call; the addon trusts what it is given.
 */
import { constants } from 'node:os';
import type { OsBinding, RawAffinity } from './binding.js';
import { loadOs } from './load.js';
import { OsError, describeValue } from './os-error.js';

/** CPU ids must be below this: masks cover at most 2^20 CPUs. */
export const MAX_CPUS = 2 ** 20;

function binding(op: string): OsBinding {
  const status = loadOs();
  if (!status.available) {
    throw new OsError('AffinityUnavailable', op, `thread affinity is unavailable: ${status.reason}. Possible solutions: ${status.possibleSolutions.join('; ')}`, {
      detail: { reason: status.reason, reasons: [...status.reasons], possibleSolutions: [...status.possibleSolutions] },
    });
  }
  return status.binding;
}

function errnoName(errno: number): string | undefined {
  for (const [name, value] of Object.entries(constants.errno)) if (value === errno) return name;
  return undefined;
}

function syscallFailed(op: string, syscall: string, errno: number): OsError {
  const name = errnoName(errno);
  return new OsError('AffinitySyscallFailed', op, `${syscall} failed with errno ${errno}${name ? ` (${name})` : ''}`, {
    detail: { errno, syscall, ...(name ? { errnoName: name } : {}) },
  });
}

function affinity(op: string, syscall: string, raw: RawAffinity): number[] {
  if (raw.errno !== 0) throw syscallFailed(op, syscall, raw.errno);
  return raw.cpus;
}

/**
 * `sched_yield()` for the calling thread: spin-waits call it so that threads sharing a CPU hand over quickly.
 *
 * @example
 * ```ts
 * import { yieldThread } from '@tenferro/os';
 *
 * let spins = 0;
 * while (spins++ < 3) yieldThread(); // a spin-wait that hands the CPU over on each turn
 * console.log(spins); // prints: 4
 * ```
 */
export function yieldThread(): void {
  binding('yieldThread').yieldThread();
}

/**
 * The CPU the calling thread runs on right now (`sched_getcpu()`, read without a system call), or
 * -1 when it cannot be told (no OS binding, or a binary built before this function existed). A
 * spin-wait uses it to yield only when the thread it waits for shares its CPU.
 *
 * @example
 * ```ts
 * import { currentCpu, getThreadAffinity } from '@tenferro/os';
 *
 * const cpu = currentCpu();
 * console.log(cpu === -1 || getThreadAffinity().includes(cpu)); // prints: true
 * ```
 */
export function currentCpu(): number {
  const os = loadOs();
  return os.available && os.binding.currentCpu !== undefined ? os.binding.currentCpu() : -1;
}

/**
 * The calling thread's kernel thread id (`gettid()`); equals `process.pid` on the main thread.
 *
 * @example
 * ```ts
 * import { gettid } from '@tenferro/os';
 *
 * console.log(gettid() === process.pid); // prints: true
 * ```
 */
export function gettid(): number {
  return binding('gettid').gettid();
}

/**
 * The calling thread's CPU affinity mask, as sorted CPU ids (`sched_getaffinity(0)`).
 *
 * @example
 * ```ts
 * import { getProcessAffinity, getThreadAffinity } from '@tenferro/os';
 *
 * const mine = getThreadAffinity();
 * console.log(mine.every((cpu) => getProcessAffinity().includes(cpu))); // prints: true
 * console.log(mine); // e.g. [ 0, 1, 2, 3 ]
 * ```
 */
export function getThreadAffinity(): number[] {
  const op = 'getThreadAffinity';
  return affinity(op, 'sched_getaffinity', binding(op).getThreadAffinity());
}

/**
 * The process affinity mask, as sorted CPU ids: `sched_getaffinity(getpid())` (the thread-group
 * leader's mask) recorded once per process, when the addon first loaded. Narrowing the main
 * thread (or any thread) afterwards does not shrink it; it is the set `setThreadAffinity` never
 * leaves.
 *
 * @example
 * ```ts
 * import { getProcessAffinity } from '@tenferro/os';
 *
 * const cpus = getProcessAffinity();
 * console.log(cpus.length > 0 && cpus.every((cpu, i) => i === 0 || cpus[i - 1]! < cpu)); // prints: true
 * console.log(cpus); // e.g. [ 0, 1, 2, 3 ]
 * ```
 */
export function getProcessAffinity(): number[] {
  const op = 'getProcessAffinity';
  return affinity(op, 'sched_getaffinity', binding(op).getProcessAffinity());
}

/**
 * Check a CPU id list and return its ids sorted and deduplicated; throws `InvalidCpuList`
 * (not an array, or an id that is not a non-negative integer below 2^20) or `EmptyCpuSet`.
 *
 * @example
 * ```ts
 * import { OsError, validateCpuList } from '@tenferro/os';
 *
 * console.log(validateCpuList('pin', 'cpus', [3, 1, 3, 0])); // prints: [ 0, 1, 3 ]
 * try {
 *   validateCpuList('pin', 'cpus', []);
 * } catch (e) {
 *   console.log(OsError.is(e, 'EmptyCpuSet')); // prints: true
 * }
 * ```
 */
export function validateCpuList(op: string, param: string, cpus: unknown): number[] {
  const expected = `a non-empty list of CPU ids for ${param}`;
  if (!Array.isArray(cpus)) {
    throw new OsError('InvalidCpuList', op, `expected ${expected} but received ${describeValue(cpus)}`, {
      detail: { param },
    });
  }
  if (cpus.length === 0) {
    throw new OsError('EmptyCpuSet', op, `expected ${expected} but received ${describeValue(cpus)}`, {
      detail: { param },
    });
  }
  const ids = new Set<number>();
  // An index loop, so holes in a sparse array are seen (as undefined).
  for (let index = 0; index < cpus.length; index++) {
    const cpu: unknown = cpus[index];
    if (typeof cpu !== 'number' || !Number.isInteger(cpu) || cpu < 0 || cpu >= MAX_CPUS) {
      throw new OsError(
        'InvalidCpuList',
        op,
        `expected ${param}[${index}] to be an integer CPU id in [0, ${MAX_CPUS}) but received ${describeValue(cpu)}`,
        { detail: { param, index } },
      );
    }
    ids.add(cpu === 0 ? 0 : cpu); // -0 -> 0
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Pin the calling thread (only it: other threads, including the main thread, keep their
 * masks) to `cpus`. Duplicates are ignored. Every CPU must be in the process mask
 * (`getProcessAffinity()`, recorded when the addon loaded): affinity is never widened. The
 * binding checks this again itself, so the raw binding cannot widen either.
 *
 * Throws `InvalidCpuList`, `EmptyCpuSet`, `CpuOutsideAllowedSet` (before any change),
 * `AffinitySyscallFailed` (with `detail.errno`) or `AffinityUnavailable`.
 *
 * @example
 * ```ts
 * import { getProcessAffinity, getThreadAffinity, setThreadAffinity } from '@tenferro/os';
 *
 * const allowed = getProcessAffinity();
 * setThreadAffinity([allowed[0]!]); // this thread only; the others keep their masks
 * console.log(getThreadAffinity().length); // prints: 1
 * setThreadAffinity(allowed); // back to the whole process mask (never wider)
 * console.log(getThreadAffinity().length === allowed.length); // prints: true
 * ```
 */
export function setThreadAffinity(cpus: readonly number[]): void {
  const op = 'setThreadAffinity';
  const ids = validateCpuList(op, 'cpus', cpus);
  const native = binding(op);
  const allowed = affinity(op, 'sched_getaffinity', native.getProcessAffinity());
  const allowedSet = new Set(allowed);
  for (const cpu of ids) {
    if (!allowedSet.has(cpu)) {
      throw new OsError(
        'CpuOutsideAllowedSet',
        op,
        `CPU ${cpu} is outside the process affinity set [${allowed.join(',')}]; tenferro never widens affinity`,
        { detail: { cpu, allowed: [...allowed] } },
      );
    }
  }
  const errno = native.setThreadAffinity(ids);
  if (errno === native.outsideAllowedSet) {
    // The binding refused on its own (it checks the same recorded mask): never a widening.
    const cpu = ids.find((id) => !allowedSet.has(id)) ?? ids[0]!;
    throw new OsError('CpuOutsideAllowedSet', op, `CPU ${cpu} is outside the process affinity set [${allowed.join(',')}]; tenferro never widens affinity`, {
      detail: { cpu, allowed: [...allowed] },
    });
  }
  if (errno !== 0) throw syscallFailed(op, 'sched_setaffinity', errno);
}
