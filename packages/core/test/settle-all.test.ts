// settleAll, the join of every fork-join in core (WorkerPool.map, an executor's submitted jobs):
// it settles only once every input has, with the values in input order or the first rejection in
// input order — whatever order the inputs settle in.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { settleAll } from '../src/util/settle-all.js';

/** Resolves after `turns` microtask hops. */
async function hops(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

describe('settleAll', () => {
  it('resolves with the values in input order, or rejects with the first rejection in input order, after every input settled', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ fails: fc.boolean(), after: fc.nat(20) }), { maxLength: 8 }), async (inputs) => {
        let settled = 0;
        const promises = inputs.map(async ({ fails, after }, i) => {
          await hops(after);
          settled++;
          if (fails) throw new Error(`input ${i}`);
          return i;
        });
        const outcome = await settleAll(promises).then(
          (values) => ({ values }),
          (error: unknown) => ({ error }),
        );
        expect(settled).toBe(inputs.length);
        const firstFailure = inputs.findIndex((x) => x.fails);
        if (firstFailure < 0) expect(outcome).toEqual({ values: inputs.map((_, i) => i) });
        else expect((outcome as { error: Error }).error.message).toBe(`input ${firstFailure}`);
      }),
    );
  });

  it('adopts thenables and plain values as Promise.allSettled does, and takes any iterable', async () => {
    const thenable = { then: (resolve: (v: number) => void) => resolve(7) } as unknown as Promise<number>;
    expect(await settleAll([thenable, Promise.resolve(8), 9 as unknown as Promise<number>])).toEqual([7, 8, 9]);
    expect(await settleAll(new Set([Promise.resolve(1), Promise.resolve(2)]))).toEqual([1, 2]);
    expect(await settleAll([])).toEqual([]);
  });
});
