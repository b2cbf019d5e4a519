import { TenferroError, describeValue } from '../errors/tenferro-error.js';

/** The largest CPU count (and one past the largest CPU id) tenferro accepts, as the Linux kernel does. */
export const MAX_CPUS = 1 << 20;

/**
 * Parse the Linux cpulist format (`0-3,8,10-15:2/4`) into sorted, unique ids.
 *
 * Accepts comma-separated ids, inclusive ranges `a-b`, the stride form `a-b:used/group`
 * (in each group of `group` CPUs starting at `a`, the first `used`), and whitespace around
 * components. Rejects an empty list, an empty component (`1,,2`, `1,`), a reversed range,
 * anything that is not a decimal number, and more than 2^20 CPUs.
 */
export function parseCpuList(text: string, op = 'CpuSet.parse'): number[] {
  if (typeof text !== 'string') {
    throw new TenferroError('InvalidCpuList', `expected a cpulist string for list but received ${describeValue(text)}`, { op });
  }
  const trimmed = text.trim();
  if (trimmed === '') {
    throw new TenferroError('EmptyCpuSet', 'expected a non-empty cpulist but received an empty list', { op, detail: { list: text } });
  }
  const ids: number[] = [];
  for (const raw of trimmed.split(',')) {
    const part = raw.trim();
    if (part === '') throw bad(op, text, 'an empty component');
    const m = /^(\d+)(?:\s*-\s*(\d+)(?:\s*:\s*(\d+)\s*\/\s*(\d+))?)?$/.exec(part);
    if (m === null) throw bad(op, text, `a malformed component ${JSON.stringify(part)}`);
    const first = toId(m[1]!, op, text);
    if (m[2] === undefined) {
      ids.push(first);
      continue;
    }
    const last = toId(m[2], op, text);
    if (last < first) throw bad(op, text, `a reversed range ${JSON.stringify(part)}`);
    const used = m[3] === undefined ? 1 : Number(m[3]);
    const group = m[4] === undefined ? 1 : Number(m[4]);
    if (used < 1 || group < 1 || used > group) throw bad(op, text, `an invalid stride ${JSON.stringify(part)}`);
    if (ids.length + (last - first + 1) > MAX_CPUS) throw tooMany(op, text);
    for (let start = first; start <= last; start += group) {
      for (let k = 0; k < used && start + k <= last; k++) ids.push(start + k);
    }
  }
  return sortUnique(ids);
}

/** Validate a list of CPU ids (integers in `[0, 2^20)`), returning them sorted and unique. */
export function normalizeCpuIds(ids: Iterable<number>, op = 'CpuSet.of'): number[] {
  if (ids === null || typeof ids !== 'object' || typeof (ids as Iterable<number>)[Symbol.iterator] !== 'function') {
    throw new TenferroError('InvalidCpuList', `expected an iterable of CPU ids for ids but received ${describeValue(ids)}`, { op });
  }
  const out: number[] = [];
  for (const id of ids) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= MAX_CPUS) {
      throw new TenferroError('InvalidCpuList', `expected CPU ids that are integers in [0, ${MAX_CPUS}) but received ${describeValue(id)}`, {
        op,
        detail: { id },
      });
    }
    out.push(id);
    if (out.length > MAX_CPUS * 4) throw tooMany(op, '<iterable>');
  }
  return sortUnique(out);
}

/** Format sorted unique ids in the canonical Linux cpulist form (`0-3,5,7-8`). */
export function formatCpuList(sorted: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    const start = sorted[i]!;
    let end = start;
    while (i + 1 < sorted.length && sorted[i + 1] === end + 1) end = sorted[++i]!;
    parts.push(start === end ? `${start}` : `${start}-${end}`);
    i++;
  }
  return parts.join(',');
}

function toId(digits: string, op: string, text: string): number {
  // Digits only (the regex guarantees it); reject ids beyond the cap before Number() loses precision.
  if (digits.length > 7 || Number(digits) >= MAX_CPUS) throw tooMany(op, text);
  return Number(digits);
}

function sortUnique(ids: number[]): number[] {
  ids.sort((a, b) => a - b);
  let w = 0;
  for (let r = 0; r < ids.length; r++) {
    if (r === 0 || ids[r] !== ids[w - 1]) ids[w++] = ids[r]!;
  }
  ids.length = w;
  return ids;
}

function bad(op: string, text: string, what: string): TenferroError {
  return new TenferroError('InvalidCpuList', `expected a Linux cpulist but received ${describeValue(text)}: ${what}`, {
    op,
    detail: { list: text },
  });
}

function tooMany(op: string, text: string): TenferroError {
  return new TenferroError('InvalidCpuList', `a cpulist may name at most ${MAX_CPUS} CPUs with ids below ${MAX_CPUS}; received ${describeValue(text)}`, {
    op,
    detail: { list: text },
  });
}
