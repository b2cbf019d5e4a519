/**
 * The reference element-wise unary kernel: `out[i] = op(src[i])` over any strided views. Floats
 * compute in f64 and are rounded once when stored; integers wrap (`neg` and `abs` of INT_MIN give
 * INT_MIN); `real`, `imag` and `conj` of a real dtype are the value, 0 and the value; `scale`
 * multiplies by `alpha` (a complex multiplication for complex dtypes, a wrapping one for
 * integers); `cast` follows `cast-semantics.ts`.
 */
import type { DType, Scalar } from '../../tensor/dtype.js';
import type { CpuUnaryRequest, UnaryOp } from '../tensor-primitives.js';
import { floatToI32, floatToI64, i64ToF32, i64ToI32 } from './cast-semantics.js';
import { cabs, ccos, cexp, clog, cmul, csin, csqrt, ctanh } from './complex-math.js';
import { bigintLanes, familyOf, laneStrides, numberLanes } from './lanes.js';
import { runs3 } from './strided-walk.js';

/** `runs3` over two operands (src, out). */
function runs2(shape: readonly number[], sBase: number, sStrides: readonly number[], oBase: number, oStrides: readonly number[], run: (s: number, o: number, n: number, ss: number, so: number) => void): void {
  runs3(shape, sBase, sStrides, 0, shape.map(() => 0), oBase, oStrides, (s, _b, o, n, ss, _sb, so) => run(s, o, n, ss, so));
}

const re = (s: Scalar | undefined): number => (s === undefined ? 1 : typeof s === 'number' ? s : s[0]);
const im = (s: Scalar | undefined): number => (s === undefined || typeof s === 'number' ? 0 : s[1]);

function realFn(op: UnaryOp, alpha: number): (x: number) => number {
  switch (op) {
    case 'neg':
      return (x) => -x;
    case 'abs':
      return Math.abs;
    case 'exp':
      return Math.exp;
    case 'log':
      return Math.log;
    case 'sqrt':
      return Math.sqrt;
    case 'sin':
      return Math.sin;
    case 'cos':
      return Math.cos;
    case 'tanh':
      return Math.tanh;
    case 'imag':
      return () => 0;
    case 'scale':
      return (x) => alpha * x;
    default:
      return (x) => x; // conj, real
  }
}

export function referenceUnary(req: CpuUnaryRequest): void {
  if (req.op === 'cast') return cast(req);
  const { op, src, out } = req;
  const family = familyOf(src.dtype);
  const ss = laneStrides(src.dtype, src.strides);
  const os = laneStrides(out.dtype, out.strides);
  if (family === 'i64') {
    const S = bigintLanes(src.buffer);
    const O = bigintLanes(out.buffer);
    const alpha = BigInt(re(req.alpha));
    const f: (x: bigint) => bigint =
      op === 'neg' ? (x) => -x : op === 'abs' ? (x) => (x < 0n ? -x : x) : op === 'imag' ? () => 0n : op === 'scale' ? (x) => alpha * x : (x) => x;
    runs2(src.shape, src.offset, ss, out.offset, os, (s, o, n, ss, so) => {
      for (let i = 0; i < n; i++, s += ss, o += so) O[o] = f(S[s]!);
    });
    return;
  }
  const S = numberLanes(src.dtype, src.buffer);
  const O = numberLanes(out.dtype, out.buffer);
  if (family !== 'complex') {
    const f = family === 'i32' && op === 'scale' ? (x: number) => Math.imul(re(req.alpha), x) : realFn(op, re(req.alpha));
    runs2(src.shape, src.offset, ss, out.offset, os, (s, o, n, ss, so) => {
      for (let i = 0; i < n; i++, s += ss, o += so) O[o] = f(S[s]!);
    });
    return;
  }
  const pair = new Float64Array(2);
  const ar = re(req.alpha);
  const ai = im(req.alpha);
  const toReal = op === 'abs' || op === 'real' || op === 'imag';
  const f = complexFn(op, pair, ar, ai);
  runs2(src.shape, src.offset * 2, ss, out.offset * (toReal ? 1 : 2), os, (s, o, n, ss, so) => {
    for (let i = 0; i < n; i++, s += ss, o += so) {
      const v = f(S[s]!, S[s + 1]!);
      if (toReal) {
        O[o] = v;
      } else {
        O[o] = pair[0]!;
        O[o + 1] = pair[1]!;
      }
    }
  });
}

function complexFn(op: UnaryOp, pair: Float64Array, ar: number, ai: number): (x: number, y: number) => number {
  const set = (a: number, b: number) => ((pair[0] = a), (pair[1] = b), 0);
  switch (op) {
    case 'neg':
      return (x, y) => set(-x, -y);
    case 'abs':
      return cabs;
    case 'real':
      return (x) => x;
    case 'imag':
      return (_x, y) => y;
    case 'conj':
      return (x, y) => set(x, -y);
    case 'exp':
      return (x, y) => (cexp(x, y, pair), 0);
    case 'log':
      return (x, y) => (clog(x, y, pair), 0);
    case 'sqrt':
      return (x, y) => (csqrt(x, y, pair), 0);
    case 'sin':
      return (x, y) => (csin(x, y, pair), 0);
    case 'cos':
      return (x, y) => (ccos(x, y, pair), 0);
    case 'tanh':
      return (x, y) => (ctanh(x, y, pair), 0);
    case 'scale':
      return (x, y) => (cmul(ar, ai, x, y, pair), 0);
    default:
      throw new Error(`${op} is not a complex unary operation`);
  }
}

/** `cast`: read each element as a number, bigint or pair and convert it to `out.dtype` (`cast-semantics.ts`). */
function cast(req: CpuUnaryRequest): void {
  const { src, out } = req;
  const from = familyOf(src.dtype);
  const to = out.dtype;
  const ss = laneStrides(src.dtype, src.strides);
  const os = laneStrides(out.dtype, out.strides);
  const sOff = src.offset * (from === 'complex' ? 2 : 1);
  const oc = to === 'c64' || to === 'c128' ? 2 : 1;
  const oOff = out.offset * oc;
  if (from === 'i64') {
    const S = bigintLanes(src.buffer);
    if (to === 'i64') {
      const O = bigintLanes(out.buffer);
      runs2(src.shape, sOff, ss, oOff, os, (s, o, n, ss, so) => {
      for (let i = 0; i < n; i++, s += ss, o += so) O[o] = S[s]!;
    });
      return;
    }
    const O = numberLanes(to, out.buffer);
    const f = bigToNumber(to);
    runs2(src.shape, sOff, ss, oOff, os, (s, o, n, ss, so) => {
      for (let i = 0; i < n; i++, s += ss, o += so) {
        O[o] = f(S[s]!);
        if (oc === 2) O[o + 1] = 0;
      }
    });
    return;
  }
  const S = numberLanes(src.dtype, src.buffer);
  const bool = from === 'bool';
  if (to === 'i64') {
    const O = bigintLanes(out.buffer);
    runs2(src.shape, sOff, ss, oOff, os, (s, o, n, ss, so) => {
      for (let i = 0; i < n; i++, s += ss, o += so) O[o] = bool ? (S[s] === 0 ? 0n : 1n) : floatToI64(S[s]!);
    });
    return;
  }
  const O = numberLanes(to, out.buffer);
  const f = numberTo(to);
  const complex = from === 'complex';
  runs2(src.shape, sOff, ss, oOff, os, (s, o, n, ss, so) => {
    for (let i = 0; i < n; i++, s += ss, o += so) {
      const x = bool ? (S[s] === 0 ? 0 : 1) : S[s]!;
      const y = complex ? S[s + 1]! : 0;
      if (to === 'bool') {
        O[o] = x !== 0 || y !== 0 ? 1 : 0;
      } else if (oc === 2) {
        O[o] = x;
        O[o + 1] = y;
      } else {
        O[o] = f(x);
      }
    }
  });
}

function bigToNumber(to: DType): (x: bigint) => number {
  switch (to) {
    case 'f32':
    case 'c64':
      return i64ToF32;
    case 'i32':
      return i64ToI32;
    case 'bool':
      return (x) => (x === 0n ? 0 : 1);
    default:
      return Number;
  }
}

function numberTo(to: DType): (x: number) => number {
  return to === 'i32' ? floatToI32 : (x) => x;
}
