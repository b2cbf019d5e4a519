import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberKeyCache, numberKey, pushNumbers, sameKey } from '../src/util/number-key.js';

const keyOf = (...lists: number[][]) => {
  const numbers: number[] = [];
  for (const l of lists) pushNumbers(numbers, l);
  return numberKey(numbers);
};

describe('number keys', () => {
  it('are equal exactly when their number lists are (length-prefixed lists never run together)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 0, max: 2 ** 53 - 1 }), { maxLength: 4 }), { maxLength: 4 }), fc.array(fc.array(fc.nat(), { maxLength: 4 }), { maxLength: 4 }), (a, b) => {
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(sameKey(keyOf(...a), keyOf(...b))).toBe(same);
      }),
    );
    expect(sameKey(keyOf([1, 2], [3]), keyOf([1], [2, 3]))).toBe(false);
  });

  it('a cache evicts the least recently used entry, never answers for another key, and clears when shrunk', () => {
    const cache = new NumberKeyCache<string>(2);
    const [a, b, c] = [keyOf([1]), keyOf([2]), keyOf([3])];
    cache.set(a, 'a');
    cache.set(b, 'b');
    expect(cache.get(a)).toBe('a'); // a is now the most recent
    cache.set(c, 'c'); // evicts b
    expect([cache.get(a), cache.get(b), cache.get(c)]).toEqual(['a', undefined, 'c']);
    // A colliding hash with other numbers is a miss.
    expect(cache.get({ hash: a.hash, numbers: [99] })).toBeUndefined();
    cache.setCapacity(1);
    expect(cache.size).toBe(0);
    cache.setCapacity(0);
    cache.set(a, 'a');
    expect(cache.get(a)).toBeUndefined();
  });
});
