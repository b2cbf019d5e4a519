/**
 * Odometer walks over strided views for the reference tensor primitives: every multi-index of a
 * shape, with the element offsets of up to three operands kept incrementally (no recursion, no
 * allocation proportional to the data). The first axis varies fastest (column-major order).
 */

/** Call `body(a, b, c)` once per multi-index of `shape` with each operand's element offset `base + Σ index[t]·strides[t]`; nothing for a zero-size shape. */
export function walk3(
  shape: readonly number[],
  aBase: number,
  aStrides: readonly number[],
  bBase: number,
  bStrides: readonly number[],
  cBase: number,
  cStrides: readonly number[],
  body: (a: number, b: number, c: number) => void,
): void {
  const rank = shape.length;
  for (let t = 0; t < rank; t++) if (shape[t] === 0) return;
  const idx = new Array<number>(rank).fill(0);
  let a = aBase;
  let b = bBase;
  let c = cBase;
  for (;;) {
    body(a, b, c);
    let t = 0;
    for (; t < rank; t++) {
      const extent = shape[t]!;
      if (idx[t]! + 1 < extent) {
        idx[t]!++;
        a += aStrides[t]!;
        b += bStrides[t]!;
        c += cStrides[t]!;
        break;
      }
      idx[t] = 0;
      a -= aStrides[t]! * (extent - 1);
      b -= bStrides[t]! * (extent - 1);
      c -= cStrides[t]! * (extent - 1);
    }
    if (t === rank) return;
  }
}

/** Two operands: {@link walk3} without the third. */
export function walk2(shape: readonly number[], aBase: number, aStrides: readonly number[], bBase: number, bStrides: readonly number[], body: (a: number, b: number) => void): void {
  walk3(shape, aBase, aStrides, bBase, bStrides, 0, ZEROS(shape.length), (a, b) => body(a, b));
}

/** One operand: every element offset of a view, first axis fastest; `body` returns `false` to stop early. */
export function walk1(shape: readonly number[], base: number, strides: readonly number[], body: (a: number) => boolean | void): void {
  const rank = shape.length;
  for (let t = 0; t < rank; t++) if (shape[t] === 0) return;
  const idx = new Array<number>(rank).fill(0);
  let a = base;
  for (;;) {
    if (body(a) === false) return;
    let t = 0;
    for (; t < rank; t++) {
      const extent = shape[t]!;
      if (idx[t]! + 1 < extent) {
        idx[t]!++;
        a += strides[t]!;
        break;
      }
      idx[t] = 0;
      a -= strides[t]! * (extent - 1);
    }
    if (t === rank) return;
  }
}

function ZEROS(n: number): number[] {
  return new Array<number>(n).fill(0);
}

/**
 * Element-wise walks in runs: `run(a, b, c, count, sa, sb, sc)` once per line along the axis of
 * smallest output stride (the order of elements is free for element-wise work, since the output
 * never overlaps itself), so inner loops are plain `for` loops over strided lines.
 */
export function runs3(
  shape: readonly number[],
  aBase: number,
  aStrides: readonly number[],
  bBase: number,
  bStrides: readonly number[],
  cBase: number,
  cStrides: readonly number[],
  run: (a: number, b: number, c: number, count: number, sa: number, sb: number, sc: number) => void,
): void {
  const rank = shape.length;
  for (let t = 0; t < rank; t++) if (shape[t] === 0) return;
  if (rank === 0) {
    run(aBase, bBase, cBase, 1, 0, 0, 0);
    return;
  }
  let line = 0;
  for (let t = 1; t < rank; t++) if (shape[line] === 1 || (shape[t]! > 1 && cStrides[t]! < cStrides[line]!)) line = t;
  const outer = shape.map((e, t) => (t === line ? 1 : e));
  const count = shape[line]!;
  const sa = aStrides[line]!;
  const sb = bStrides[line]!;
  const sc = cStrides[line]!;
  walk3(outer, aBase, aStrides, bBase, bStrides, cBase, cStrides, (a, b, c) => run(a, b, c, count, sa, sb, sc));
}
