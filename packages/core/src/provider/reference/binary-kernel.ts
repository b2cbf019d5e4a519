/**
 * The reference element-wise binary kernel: `out[i] = op(lhs[i], rhs[i])` over any strided views
 * (stride-0 broadcast inputs, offsets, overlapping inputs). Floats compute in f64 and are rounded
 * once when stored (exact rounding for add, sub, mul, div of f32); integers wrap
 * (`integer-semantics.ts`); bool values are 0/1 (any non-zero byte reads as 1): `maximum` is or,
 * `minimum` is and. maximum/minimum of floats are IEEE 754-2019's (NaN propagates, −0 < +0).
 * Comparisons are false when either side is NaN (`eq` of complex compares both parts).
 */
import type { BinaryOp, CpuBinaryRequest } from '../tensor-primitives.js';
import { cdiv, cmul, cpow } from './complex-math.js';
import { powReal } from './float-semantics.js';
import { divI32, divI64 } from './integer-semantics.js';
import { bigintLanes, familyOf, laneStrides, numberLanes } from './lanes.js';
import { runs3 } from './strided-walk.js';

type NumberFn = (x: number, y: number) => number;
type BigFn = (x: bigint, y: bigint) => bigint | number;

const COMPARE: Record<'eq' | 'lt' | 'le' | 'gt' | 'ge', (x: number | bigint, y: number | bigint) => boolean> = {
  eq: (x, y) => x === y,
  lt: (x, y) => x < y,
  le: (x, y) => x <= y,
  gt: (x, y) => x > y,
  ge: (x, y) => x >= y,
};

function realFn(op: BinaryOp): NumberFn {
  switch (op) {
    case 'add':
      return (x, y) => x + y;
    case 'sub':
      return (x, y) => x - y;
    case 'mul':
      return (x, y) => x * y;
    case 'div':
      return (x, y) => x / y;
    case 'maximum':
      return Math.max;
    case 'minimum':
      return Math.min;
    case 'pow':
      return powReal;
    default: {
      const cmp = COMPARE[op];
      return (x, y) => (cmp(x, y) ? 1 : 0);
    }
  }
}

function i32Fn(op: BinaryOp): NumberFn {
  if (op === 'mul') return Math.imul;
  if (op === 'div') return divI32;
  return realFn(op); // add/sub are exact in f64 and wrap when stored; max, min, comparisons are exact.
}

function boolFn(op: BinaryOp): NumberFn {
  const f = realFn(op);
  return (x, y) => f(x === 0 ? 0 : 1, y === 0 ? 0 : 1);
}

function i64Fn(op: BinaryOp): BigFn {
  switch (op) {
    case 'add':
      return (x, y) => x + y;
    case 'sub':
      return (x, y) => x - y;
    case 'mul':
      return (x, y) => x * y;
    case 'div':
      return divI64;
    case 'maximum':
      return (x, y) => (x > y ? x : y);
    case 'minimum':
      return (x, y) => (x < y ? x : y);
    case 'pow':
      throw new Error('pow of i64 is not defined');
    default: {
      const cmp = COMPARE[op];
      return (x, y) => (cmp(x, y) ? 1 : 0);
    }
  }
}

type Line = (L: Lanes, R: Lanes, O: Lanes, a: number, b: number, o: number, n: number, sa: number, sb: number, so: number) => void;
interface Lanes {
  [i: number]: number;
}

/** Monomorphic lines for the common float operations (no call per element). */
const REAL_LINES: Partial<Record<BinaryOp, Line>> = {
  add: (L, R, O, a, b, o, n, sa, sb, so) => {
    for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = L[a]! + R[b]!;
  },
  sub: (L, R, O, a, b, o, n, sa, sb, so) => {
    for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = L[a]! - R[b]!;
  },
  mul: (L, R, O, a, b, o, n, sa, sb, so) => {
    for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = L[a]! * R[b]!;
  },
  div: (L, R, O, a, b, o, n, sa, sb, so) => {
    for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = L[a]! / R[b]!;
  },
};

export function referenceBinary(req: CpuBinaryRequest): void {
  const { op, lhs, rhs, out } = req;
  const family = familyOf(lhs.dtype);
  const ls = laneStrides(lhs.dtype, lhs.strides);
  const rs = laneStrides(rhs.dtype, rhs.strides);
  const os = laneStrides(out.dtype, out.strides);
  const c = family === 'complex' ? 2 : 1;
  const oc = out.dtype === 'c64' || out.dtype === 'c128' ? 2 : 1;
  const shape = out.shape;
  if (family === 'i64') {
    const L = bigintLanes(lhs.buffer);
    const R = bigintLanes(rhs.buffer);
    const f = i64Fn(op);
    if (out.dtype === 'bool') {
      const O = numberLanes('bool', out.buffer);
      runs3(shape, lhs.offset, ls, rhs.offset, rs, out.offset, os, (a, b, o, n, sa, sb, so) => {
        for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = f(L[a]!, R[b]!) as number;
      });
    } else {
      const O = bigintLanes(out.buffer);
      runs3(shape, lhs.offset, ls, rhs.offset, rs, out.offset, os, (a, b, o, n, sa, sb, so) => {
        for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = f(L[a]!, R[b]!) as bigint;
      });
    }
    return;
  }
  const L = numberLanes(lhs.dtype, lhs.buffer);
  const R = numberLanes(rhs.dtype, rhs.buffer);
  const O = numberLanes(out.dtype, out.buffer);
  if (family !== 'complex') {
    const f = family === 'i32' ? i32Fn(op) : family === 'bool' ? boolFn(op) : realFn(op);
    const fast = family === 'real' ? REAL_LINES[op] : undefined;
    runs3(shape, lhs.offset, ls, rhs.offset, rs, out.offset, os, (a, b, o, n, sa, sb, so) => {
      if (fast !== undefined) fast(L, R, O, a, b, o, n, sa, sb, so);
      else for (let i = 0; i < n; i++, a += sa, b += sb, o += so) O[o] = f(L[a]!, R[b]!);
    });
    return;
  }
  const pair = new Float64Array(2);
  const fn = complexFn(op, pair);
  runs3(shape, lhs.offset * c, ls, rhs.offset * c, rs, out.offset * oc, os, (a, b, o, n, sa, sb, so) => {
    for (let i = 0; i < n; i++, a += sa, b += sb, o += so) {
      const v = fn(L[a]!, L[a + 1]!, R[b]!, R[b + 1]!);
      if (oc === 1) {
        O[o] = v;
      } else {
        O[o] = pair[0]!;
        O[o + 1] = pair[1]!;
      }
    }
  });
}

/** A complex operation writing `pair` (or returning the bool of a comparison). */
function complexFn(op: BinaryOp, pair: Float64Array): (ar: number, ai: number, br: number, bi: number) => number {
  switch (op) {
    case 'add':
      return (ar, ai, br, bi) => ((pair[0] = ar + br), (pair[1] = ai + bi), 0);
    case 'sub':
      return (ar, ai, br, bi) => ((pair[0] = ar - br), (pair[1] = ai - bi), 0);
    case 'mul':
      return (ar, ai, br, bi) => (cmul(ar, ai, br, bi, pair), 0);
    case 'div':
      return (ar, ai, br, bi) => (cdiv(ar, ai, br, bi, pair), 0);
    case 'pow':
      return (ar, ai, br, bi) => (cpow(ar, ai, br, bi, pair), 0);
    case 'eq':
      return (ar, ai, br, bi) => (ar === br && ai === bi ? 1 : 0);
    default:
      throw new Error(`${op} of complex values is not defined`);
  }
}
