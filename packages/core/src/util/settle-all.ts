/**
 * Wait for every promise (none is left running), then resolve with the values or reject with the
 * first rejection in input order. Fork-join needs this: a failed branch must not leave siblings
 * running past the join. One promise for the join and one reaction per input — a fan-out's join
 * runs once per operation, and every promise costs a trip through Node's async hooks.
 */
export function settleAll<T>(promises: Iterable<Promise<T>>): Promise<T[]> {
  const list = Array.isArray(promises) ? (promises as readonly Promise<T>[]) : [...promises];
  const n = list.length;
  const values = new Array<T>(n);
  if (n === 0) return Promise.resolve(values);
  return new Promise<T[]>((resolve, reject) => {
    let left = n;
    /** The index of the first rejected input so far (n: none). */
    let failedAt = n;
    let failure: unknown;
    const settled = () => {
      if (--left > 0) return;
      if (failedAt < n) reject(failure);
      else resolve(values);
    };
    for (let i = 0; i < n; i++) {
      // A native promise is itself here (no promise more); a thenable or a value is adopted.
      Promise.resolve(list[i]!).then(
        (value) => {
          values[i] = value;
          settled();
        },
        (error: unknown) => {
          if (i < failedAt) {
            failedAt = i;
            failure = error;
          }
          settled();
        },
      );
    }
  });
}

/** Run every indexed job of a fork-join (`submit`) and join. */
export async function runIndexedJobs(jobs: { readonly length: number; run(index: number): Promise<void> }): Promise<void> {
  await settleAll(Array.from({ length: jobs.length }, (_, i) => jobs.run(i)));
}
