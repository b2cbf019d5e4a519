// Isolating benchmark contenders from each other's garbage without measuring cold code.
//
// A loop that drops its outputs leaves garbage that would otherwise be collected while the next
// contender runs, so benches collect before each contender. They must not use a forced full
// collection (`gc()` with no argument): that one is memory-reducing, and it throws away V8's
// optimised code of the whole call path, Node's own async_hooks included (`--trace-deopt`: ~38
// functions deoptimised, reason "weak objects"). Re-optimising takes ~2,500 calls: the per-call
// time of a 64×64 `dotGeneralInto` went from ~40 µs to ~110 µs after it and took that long to come
// back, so every contender was measured cold. A user's loop never sees this: the major collections
// that allocation triggers deoptimised nothing (0 functions over 3 mark-compacts, same loop).

/**
 * A young-generation collection (what a loop's short-lived outputs are), then two event-loop turns
 * for the finalization callbacks it scheduled. Needs `--expose-gc`.
 */
export async function collectGarbage() {
  globalThis.gc({ type: 'minor' });
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}
