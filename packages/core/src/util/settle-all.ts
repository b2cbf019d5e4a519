/**
 * Wait for every promise (none is left running), then return the values or throw the first
 * rejection in input order. Fork-join needs this: a failed branch must not leave siblings
 * running past the join.
 */
export async function settleAll<T>(promises: Iterable<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/** Run every indexed job of a fork-join (`submit`) and join. */
export async function runIndexedJobs(jobs: { readonly length: number; run(index: number): Promise<void> }): Promise<void> {
  await settleAll(Array.from({ length: jobs.length }, (_, i) => jobs.run(i)));
}
