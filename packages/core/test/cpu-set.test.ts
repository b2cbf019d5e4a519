import fc from 'fast-check';
import { expectThrows } from './helpers.js';
import { describe, expect, it } from 'vitest';
import { CpuSet, MAX_CPUS } from '../src/index.js';

const idsArb = fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 60 });
const setArb = idsArb.map((ids) => CpuSet.of(ids));
const naive = (ids: Iterable<number>) => new Set(ids);


describe('CpuSet.parse', () => {
  it.each([
    ['0', [0]],
    ['0-3', [0, 1, 2, 3]],
    [' 0 - 2 , 5 ,7-8 ', [0, 1, 2, 5, 7, 8]],
    ['3,1,2,1', [1, 2, 3]],
    ['0-15:2/4', [0, 1, 4, 5, 8, 9, 12, 13]],
    ['0-6:1/3', [0, 3, 6]],
    ['2-9:3/4', [2, 3, 4, 6, 7, 8]],
    ['4-4', [4]],
    ['0-7:4/4', [0, 1, 2, 3, 4, 5, 6, 7]],
    ['0-2\n', [0, 1, 2]],
  ])('parses %j', (text, ids) => {
    expect(CpuSet.parse(text).toArray()).toEqual(ids);
  });

  it.each(['1,,2', '1,', ',1', '3-1', 'a', '1-', '-1', '1.5', '0x2', '1-3:0/4', '1-3:5/4', '1-3:1/0', '1 2'])(
    'rejects %j with InvalidCpuList',
    (text) => {
      expectThrows(() => CpuSet.parse(text), 'InvalidCpuList');
    },
  );

  it('rejects an empty list with EmptyCpuSet', () => {
    expectThrows(() => CpuSet.parse(''), 'EmptyCpuSet');
    expectThrows(() => CpuSet.parse('  \n'), 'EmptyCpuSet');
  });

  it('rejects more than 2^20 CPUs without materialising them', () => {
    expectThrows(() => CpuSet.parse(`0-${MAX_CPUS}`), 'InvalidCpuList');
    expectThrows(() => CpuSet.parse(`${MAX_CPUS}`), 'InvalidCpuList');
    expectThrows(() => CpuSet.parse('99999999999999999999'), 'InvalidCpuList');
    expect(CpuSet.parse(`0-${MAX_CPUS - 1}`).size).toBe(MAX_CPUS);
  });
});

describe('CpuSet.of', () => {
  it('sorts and de-duplicates', () => {
    expect(CpuSet.of([5, 1, 5, 3]).toArray()).toEqual([1, 3, 5]);
  });
  it('rejects empty, negative, fractional, non-number ids', () => {
    expectThrows(() => CpuSet.of([]), 'EmptyCpuSet');
    expectThrows(() => CpuSet.of([-1]), 'InvalidCpuList');
    expectThrows(() => CpuSet.of([1.5]), 'InvalidCpuList');
    expectThrows(() => CpuSet.of(['1' as unknown as number]), 'InvalidCpuList');
    expectThrows(() => CpuSet.of([Number.NaN]), 'InvalidCpuList');
    expectThrows(() => CpuSet.of(7 as unknown as number[]), 'InvalidCpuList');
  });
  it('is immutable', () => {
    const ids = [1, 2];
    const s = CpuSet.of(ids);
    ids.push(3);
    s.toArray().push(9);
    expect(s.toArray()).toEqual([1, 2]);
  });
});

describe('CpuSet algebra (properties)', () => {
  it('parse ∘ toString is the identity and toString is canonical', () => {
    fc.assert(
      fc.property(setArb, (s) => {
        const back = CpuSet.parse(s.toString());
        expect(back.equals(s)).toBe(true);
        expect(back.toString()).toBe(s.toString());
        expect(CpuSet.parse(s.toString().split(',').reverse().join(',')).equals(s)).toBe(true);
      }),
    );
  });

  it('stride lists expand like the kernel does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 }), (a, len, used, group) => {
        fc.pre(used <= group);
        const b = a + len;
        const expected: number[] = [];
        for (let x = a; x <= b; x++) if ((x - a) % group < used) expected.push(x);
        expect(CpuSet.parse(`${a}-${b}:${used}/${group}`).toArray()).toEqual(expected);
      }),
    );
  });

  it('matches a naive set model', () => {
    fc.assert(
      fc.property(setArb, setArb, (a, b) => {
        const A = naive(a);
        const B = naive(b);
        const inter = [...A].filter((x) => B.has(x)).sort((x, y) => x - y);
        const uni = [...new Set([...A, ...B])].sort((x, y) => x - y);
        const diff = [...A].filter((x) => !B.has(x)).sort((x, y) => x - y);
        expect(a.overlaps(b)).toBe(inter.length > 0);
        expect(a.intersect(b)?.toArray()).toEqual(inter.length ? inter : undefined);
        expect(a.union(b).toArray()).toEqual(uni);
        expect(a.difference(b)?.toArray()).toEqual(diff.length ? diff : undefined);
        expect(a.isSubsetOf(b)).toBe(diff.length === 0);
        expect(a.equals(b)).toBe(diff.length === 0 && A.size === B.size);
        for (let x = 0; x <= 301; x++) expect(a.has(x)).toBe(A.has(x));
      }),
    );
  });

  it('laws: commutativity, absorption, overlap symmetry', () => {
    fc.assert(
      fc.property(setArb, setArb, setArb, (a, b, c) => {
        expect(a.union(b).equals(b.union(a))).toBe(true);
        expect(a.overlaps(b)).toBe(b.overlaps(a));
        expect(a.union(b).union(c).equals(a.union(b.union(c)))).toBe(true);
        expect(a.intersect(a.union(b))?.equals(a)).toBe(true);
        expect(a.isSubsetOf(a.union(b))).toBe(true);
        const d = a.difference(b);
        if (d) expect(d.overlaps(b)).toBe(false);
        expect(a.size).toBe(a.toArray().length);
        expect(a.first).toBe(Math.min(...a));
        expect(a.last).toBe(Math.max(...a));
      }),
    );
  });
});
