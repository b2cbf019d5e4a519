/**
 * The reference reduction kernel. For each output element (the kept axes), the reduced elements
 * are visited in column-major order of the reduced axes (the first reduced axis fastest) — the
 * order that defines argmax/argmin's index (the flat index within the reduced axes) and the
 * pairwise summation tree. Semantics:
 * - sum, mean, norm of floats: pairwise summation in f64 (`pairwise-sum.ts`), rounded once when
 *   stored; mean = sum / count (NaN over zero elements); norm = sqrt(Σ|x|²), rescaled by the largest
 *   |part| when the plain sum of squares overflows;
 * - sum and prod of integers wrap; prod of floats is a running product in f64;
 * - max, min: NaN propagates, −0 < +0 (IEEE 754-2019 maximum/minimum); of bool: or / and;
 * - argmax, argmin: the first NaN, else the first extreme value (compared with > / <, so −0 and
 *   +0 tie and the earlier wins); written as i64.
 */
import type { CpuReduceRequest } from '../tensor-primitives.js';
import { cmul } from './complex-math.js';
import { bigintLanes, familyOf, laneStrides, numberLanes } from './lanes.js';
import { PairwiseSum, pairwiseLine } from './pairwise-sum.js';
import { walk1, walk2 } from './strided-walk.js';

export function referenceReduce(req: CpuReduceRequest): void {
  const { op, src, out, axes } = req;
  const family = familyOf(src.dtype);
  const ss = laneStrides(src.dtype, src.strides);
  const os = laneStrides(out.dtype, out.strides);
  const sc = family === 'complex' ? 2 : 1;
  const oc = out.dtype === 'c64' || out.dtype === 'c128' ? 2 : 1;
  const reduced = new Set(axes);
  // Outer walk: src's shape with the reduced axes at extent 1 (= out's shape); inner: the reduced axes.
  const outerShape = src.shape.map((e, t) => (reduced.has(t) ? 1 : e));
  const innerShape = axes.map((a) => src.shape[a]!);
  const innerStrides = axes.map((a) => ss[a]!);
  const count = innerShape.reduce((n, e) => n * e, 1);
  const each = (base: number, visit: (s: number) => boolean | void) => walk1(innerShape, base, innerStrides, visit);

  if (op === 'argmax' || op === 'argmin') {
    const O = bigintLanes(out.buffer);
    const better = op === 'argmax' ? (x: number | bigint, y: number | bigint) => x > y : (x: number | bigint, y: number | bigint) => x < y;
    const S = family === 'i64' ? bigintLanes(src.buffer) : numberLanes(src.dtype, src.buffer);
    const bool = family === 'bool';
    walk2(outerShape, src.offset, ss, out.offset, os, (base, o) => {
      let best: number | bigint = 0;
      let at = -1;
      let i = 0;
      each(base, (s) => {
        let x = S[s]!;
        if (bool) x = x === 0 ? 0 : 1;
        if (typeof x === 'number' && Number.isNaN(x)) {
          at = i;
          return false;
        }
        if (at < 0 || better(x, best)) {
          best = x;
          at = i;
        }
        i++;
        return true;
      });
      O[o] = BigInt(Math.max(at, 0));
    });
    return;
  }

  if (family === 'i64') {
    const S = bigintLanes(src.buffer);
    const O = bigintLanes(out.buffer);
    walk2(outerShape, src.offset, ss, out.offset, os, (base, o) => {
      let acc: bigint | undefined;
      each(base, (s) => {
        const x = S[s]!;
        if (acc === undefined) acc = op === 'sum' ? x : op === 'prod' ? x : x;
        else if (op === 'sum') acc = BigInt.asIntN(64, acc + x);
        else if (op === 'prod') acc = BigInt.asIntN(64, acc * x);
        else if (op === 'max') acc = x > acc ? x : acc;
        else acc = x < acc ? x : acc;
      });
      O[o] = acc ?? (op === 'prod' ? 1n : 0n);
    });
    return;
  }

  const S = numberLanes(src.dtype, src.buffer);
  const O = numberLanes(out.dtype, out.buffer);
  if (family === 'complex') {
    const pair = new Float64Array(2);
    walk2(outerShape, src.offset * 2, ss, out.offset * oc, os, (base, o) => {
      if (op === 'prod') {
        let pr = 1;
        let pi = 0;
        each(base, (s) => {
          cmul(pr, pi, S[s]!, S[s + 1]!, pair);
          pr = pair[0]!;
          pi = pair[1]!;
        });
        O[o] = pr;
        O[o + 1] = pi;
        return;
      }
      if (op === 'norm') {
        O[o] = norm(each, base, (s) => [S[s]!, S[s + 1]!]);
        return;
      }
      const r = new PairwiseSum();
      const i = new PairwiseSum();
      each(base, (s) => {
        r.add(S[s]!);
        i.add(S[s + 1]!);
      });
      const scale = op === 'mean' ? count : 1;
      O[o] = r.total() / scale;
      O[o + 1] = i.total() / scale;
    });
    return;
  }

  const int32 = family === 'i32';
  const bool = family === 'bool';
  walk2(outerShape, src.offset, ss, out.offset, os, (base, o) => {
    switch (op) {
      case 'sum':
      case 'mean': {
        if (int32) {
          let acc = 0;
          each(base, (s) => void (acc = (acc + S[s]!) | 0));
          O[o] = acc;
          return;
        }
        let total: number;
        if (innerShape.length === 1) {
          total = pairwiseLine(S, base, innerShape[0]!, innerStrides[0]!);
        } else {
          const p = new PairwiseSum();
          each(base, (s) => p.add(S[s]!));
          total = p.total();
        }
        O[o] = op === 'mean' ? total / count : total;
        return;
      }
      case 'prod': {
        let acc = 1;
        each(base, (s) => void (acc = int32 ? Math.imul(acc, S[s]!) : acc * S[s]!));
        O[o] = acc;
        return;
      }
      case 'norm':
        O[o] = norm(each, base, (s) => [S[s]!]);
        return;
      default: {
        const f = op === 'max' ? Math.max : Math.min;
        let acc: number | undefined;
        each(base, (s) => {
          const x = bool ? (S[s] === 0 ? 0 : 1) : S[s]!;
          acc = acc === undefined ? x : f(acc, x);
        });
        O[o] = acc ?? 0;
      }
    }
  });
}

/** sqrt(Σ|x|²) by pairwise summation; when the squares overflow (and no part is infinite or NaN), again with every part divided by the largest |part|. */
function norm(each: (base: number, visit: (s: number) => void) => void, base: number, parts: (s: number) => number[]): number {
  const p = new PairwiseSum();
  let largest = 0;
  each(base, (s) => {
    for (const x of parts(s)) {
      p.add(x * x);
      const a = Math.abs(x);
      if (a > largest || Number.isNaN(a)) largest = Number.isNaN(largest) ? largest : a;
    }
  });
  const plain = p.total();
  if (Number.isFinite(plain) || !Number.isFinite(largest) || largest === 0) return Math.sqrt(plain);
  const q = new PairwiseSum();
  each(base, (s) => {
    for (const x of parts(s)) q.add((x / largest) * (x / largest));
  });
  return largest * Math.sqrt(q.total());
}
