/**
 * A running total of bytes on a per-call path, kept as a double from the start (a `Float64Array`
 * cell). A plain number field or variable starts as a small integer; V8's optimised code adds to
 * it in 32-bit arithmetic and deoptimises when the total passes 2^31 — and when a field's value
 * passes 2^30 the owning object's field representation changes, which deoptimises every function
 * optimised for that object. A loop of 64×64 f64 products passes 2^31 bytes of outputs after 65,000
 * calls (1.4 s): a buffer pool's byte count of outputs given away cost 11 deoptimisations and 21
 * recompilations there, the calls of that window 19.4 µs each against 12.7 (docs/performance.md,
 * "2026-12-07 (night)"). Ground layer: imports nothing.
 */
export class RunningTotal {
  readonly #cell = new Float64Array(1);

  get value(): number {
    return this.#cell[0]!;
  }

  add(bytes: number): void {
    this.#cell[0] = this.#cell[0]! + bytes;
  }

  reset(): void {
    this.#cell[0] = 0;
  }
}
