/**
 * Pairwise summation, streaming, in f64: consecutive blocks of {@link PAIRWISE_BLOCK} values are
 * summed left to right; block sums are combined like a binary counter (two partial sums covering
 * the same number of blocks are added, the earlier on the left); at the end the partial sums left
 * are added from the latest (smallest) to the earliest. For n values the rounding error is at most
 * about (B − 1 + ⌈log2⌈n/B⌉⌉ + 1)·u·Σ|x| (u the unit roundoff of f64), against (n − 1)·u·Σ|x| for a
 * running sum. Memory: O(log n).
 */
export const PAIRWISE_BLOCK = 16;

export class PairwiseSum {
  #block = 0;
  #inBlock = 0;
  /** Partial sums and how many blocks each covers (decreasing). */
  readonly #sums: number[] = [];
  readonly #sizes: number[] = [];

  add(x: number): void {
    this.#block += x;
    if (++this.#inBlock === PAIRWISE_BLOCK) this.#push();
  }

  #push(): void {
    let sum = this.#block;
    let size = 1;
    this.#block = 0;
    this.#inBlock = 0;
    while (this.#sizes.length > 0 && this.#sizes[this.#sizes.length - 1] === size) {
      sum = this.#sums.pop()! + sum;
      this.#sizes.pop();
      size *= 2;
    }
    this.#sums.push(sum);
    this.#sizes.push(size);
  }

  /** The sum of every value added (0 for none). */
  total(): number {
    let total = this.#inBlock > 0 ? this.#block : 0;
    let first = this.#inBlock === 0;
    for (let i = this.#sums.length - 1; i >= 0; i--) {
      total = first ? this.#sums[i]! : this.#sums[i]! + total;
      first = false;
    }
    return total;
  }
}

const lineSums = new Float64Array(64);
const lineSizes = new Float64Array(64);

/**
 * The {@link PairwiseSum} of the `n` values `S[base + i·stride]`, computed in one loop (the same
 * blocks, the same tree, the same result bit for bit) without a call per value.
 */
export function pairwiseLine(S: { readonly [i: number]: number }, base: number, n: number, stride: number): number {
  let depth = 0;
  let i = 0;
  let at = base;
  for (; i + PAIRWISE_BLOCK <= n; i += PAIRWISE_BLOCK) {
    let sum = 0;
    for (let k = 0; k < PAIRWISE_BLOCK; k++, at += stride) sum += S[at]!;
    let size = 1;
    while (depth > 0 && lineSizes[depth - 1] === size) {
      sum = lineSums[--depth]! + sum;
      size *= 2;
    }
    lineSums[depth] = sum;
    lineSizes[depth++] = size;
  }
  let total = 0;
  let first = i === n;
  if (!first) {
    for (; i < n; i++, at += stride) total += S[at]!;
  }
  for (let d = depth - 1; d >= 0; d--) {
    total = first ? lineSums[d]! : lineSums[d]! + total;
    first = false;
  }
  return total;
}
