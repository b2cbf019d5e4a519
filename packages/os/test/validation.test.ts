import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_CPUS,
  OS_ERROR_CODES,
  OsError,
  type OsErrorCode,
  getProcessAffinity,
  getThreadAffinity,
  gettid,
  loadOs,
  osErrorKind,
  setThreadAffinity,
} from '../src/index.js';
import type { OsBinding } from '../src/index.js';
import { cpusAllowedList } from './helpers.js';

function binding(): OsBinding {
  const status = loadOs();
  if (!status.available) throw new Error(status.reason);
  return status.binding;
}

function caught(fn: () => unknown): OsError {
  try {
    fn();
  } catch (error) {
    expect(OsError.is(error)).toBe(true);
    return error as OsError;
  }
  throw new Error('expected an OsError, but nothing was thrown');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('OsError', () => {
  it('lists exactly the six codes, with their kinds', () => {
    expect([...OS_ERROR_CODES].sort()).toEqual(
      ['AffinitySyscallFailed', 'AffinityUnavailable', 'CpuOutsideAllowedSet', 'EmptyCpuSet', 'InvalidArgument', 'InvalidCpuList'].sort(),
    );
    expect(Object.isFrozen(OS_ERROR_CODES)).toBe(true);
    const kinds = Object.fromEntries(OS_ERROR_CODES.map((code) => [code, osErrorKind(code)]));
    expect(kinds).toEqual({
      InvalidCpuList: 'Validation',
      EmptyCpuSet: 'Validation',
      CpuOutsideAllowedSet: 'Validation',
      AffinitySyscallFailed: 'BackendFailure',
      AffinityUnavailable: 'Unsupported',
      InvalidArgument: 'Validation',
    });
  });

  it('has the tenferro brand, op, frozen detail and `<op>: <text>` message', () => {
    const detail = { cpu: 5 };
    const error = new OsError('CpuOutsideAllowedSet', 'setThreadAffinity', 'CPU 5 is outside', { detail, cause: 'x' });
    expect(error).toBeInstanceOf(Error);
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for('tenferro.error')]).toBe(true);
    expect(error.name).toBe('OsError');
    expect(error.message).toBe('setThreadAffinity: CPU 5 is outside');
    expect(error.kind).toBe('Validation');
    expect(error.op).toBe('setThreadAffinity');
    expect(error.detail).toEqual({ cpu: 5 });
    expect(Object.isFrozen(error.detail)).toBe(true);
    expect(Object.isFrozen(detail)).toBe(false);
    expect(error.cause).toBe('x');
    expect(OsError.is(error, 'CpuOutsideAllowedSet')).toBe(true);
    expect(OsError.is(error, 'EmptyCpuSet')).toBe(false);
    expect(OsError.is(new Error('x'))).toBe(false);
    expect(OsError.is({ [Symbol.for('tenferro.error')]: true, code: 'Nope' })).toBe(false);
  });
});

describe('setThreadAffinity validates before any system call', () => {
  const bad: [string, unknown, OsErrorCode][] = [
    ['undefined', undefined, 'InvalidCpuList'],
    ['null', null, 'InvalidCpuList'],
    ['a number', 0, 'InvalidCpuList'],
    ['a string', '0-1', 'InvalidCpuList'],
    ['an array-like', { length: 1, 0: 0 }, 'InvalidCpuList'],
    ['a Set', new Set([0]), 'InvalidCpuList'],
    ['an empty list', [], 'EmptyCpuSet'],
    ['a negative id', [0, -1], 'InvalidCpuList'],
    ['a non-integer id', [0.5], 'InvalidCpuList'],
    ['NaN', [Number.NaN], 'InvalidCpuList'],
    ['Infinity', [Number.POSITIVE_INFINITY], 'InvalidCpuList'],
    ['a string id', ['0'], 'InvalidCpuList'],
    ['a bigint id', [0n], 'InvalidCpuList'],
    ['a null id', [null], 'InvalidCpuList'],
    ['a boxed number', [new Number(0)], 'InvalidCpuList'],
    ['a hole', [, 0], 'InvalidCpuList'], // eslint-disable-line no-sparse-arrays
    ['id 2^20', [MAX_CPUS], 'InvalidCpuList'],
    ['an id above 2^20', [2 ** 20 + 5], 'InvalidCpuList'],
    ['an id above 2^32', [2 ** 40], 'InvalidCpuList'],
  ];

  it.each(bad)('rejects %s', (_name, input, code) => {
    const before = cpusAllowedList(gettid());
    const set = vi.spyOn(binding(), 'setThreadAffinity');
    const getProcess = vi.spyOn(binding(), 'getProcessAffinity');
    const error = caught(() => setThreadAffinity(input as number[]));
    expect(error.code).toBe(code);
    expect(error.kind).toBe('Validation');
    expect(error.op).toBe('setThreadAffinity');
    expect(error.message.startsWith('setThreadAffinity: ')).toBe(true);
    expect(Object.isFrozen(error.detail)).toBe(true);
    expect(set).not.toHaveBeenCalled();
    expect(getProcess).not.toHaveBeenCalled();
    expect(cpusAllowedList(gettid())).toBe(before);
  });

  it('names the parameter and the received value', () => {
    expect(caught(() => setThreadAffinity([])).message).toBe(
      'setThreadAffinity: expected a non-empty list of CPU ids for cpus but received [] (array)',
    );
    const error = caught(() => setThreadAffinity([0, -1]));
    expect(error.message).toBe(
      `setThreadAffinity: expected cpus[1] to be an integer CPU id in [0, ${MAX_CPUS}) but received -1 (number)`,
    );
    expect(error.detail).toEqual({ param: 'cpus', index: 1 });
  });

  it('rejects a CPU outside the process mask (max allowed + 1) without changing the mask', () => {
    const allowed = getProcessAffinity();
    const outside = Math.max(...allowed) + 1;
    const before = cpusAllowedList(gettid());
    const set = vi.spyOn(binding(), 'setThreadAffinity');
    const error = caught(() => setThreadAffinity([allowed[0]!, outside]));
    expect(error.code).toBe('CpuOutsideAllowedSet');
    expect(error.kind).toBe('Validation');
    expect(error.detail).toEqual({ cpu: outside, allowed });
    expect(Object.isFrozen(error.detail.allowed)).toBe(true);
    expect(set).not.toHaveBeenCalled();
    expect(cpusAllowedList(gettid())).toBe(before);
    expect(getThreadAffinity()).toEqual(allowed);
  });
});

describe('failed system calls', () => {
  it('a failing sched_setaffinity gives AffinitySyscallFailed with errno', () => {
    const cpus = getProcessAffinity();
    vi.spyOn(binding(), 'setThreadAffinity').mockReturnValue(22);
    const error = caught(() => setThreadAffinity(cpus));
    expect(error.code).toBe('AffinitySyscallFailed');
    expect(error.kind).toBe('BackendFailure');
    expect(error.detail).toEqual({ errno: 22, errnoName: 'EINVAL', syscall: 'sched_setaffinity' });
    expect(error.message).toBe('setThreadAffinity: sched_setaffinity failed with errno 22 (EINVAL)');
  });

  it('a failing sched_getaffinity gives AffinitySyscallFailed with errno', () => {
    vi.spyOn(binding(), 'getThreadAffinity').mockReturnValue({ errno: 1, cpus: [] });
    vi.spyOn(binding(), 'getProcessAffinity').mockReturnValue({ errno: 3, cpus: [] });
    const thread = caught(() => getThreadAffinity());
    expect([thread.code, thread.op, thread.detail.errno]).toEqual(['AffinitySyscallFailed', 'getThreadAffinity', 1]);
    const proc = caught(() => getProcessAffinity());
    expect([proc.code, proc.op, proc.detail.errno]).toEqual(['AffinitySyscallFailed', 'getProcessAffinity', 3]);
    const set = caught(() => setThreadAffinity([0]));
    expect([set.code, set.op, set.detail.syscall]).toEqual(['AffinitySyscallFailed', 'setThreadAffinity', 'sched_getaffinity']);
  });

  it('the raw binding reports a bad mask as EINVAL instead of throwing', () => {
    expect(binding().setThreadAffinity([MAX_CPUS])).toBe(22);
    expect(binding().setThreadAffinity([])).toBe(22);
    expect(binding().setThreadAffinity(['x' as unknown as number])).toBe(22);
  });
});
