/**
 * A rejection with what `fail` throws for `e` — `fail` gives back what the failed operation held
 * (a fresh output's storage) and rethrows — for a synchronous failure of a function that settles
 * through `fail` otherwise.
 */
export function rejectedThrough<T>(fail: (e: unknown) => never, e: unknown): Promise<T> {
  try {
    fail(e);
  } catch (thrown) {
    return Promise.reject(thrown);
  }
  return Promise.reject(e);
}
