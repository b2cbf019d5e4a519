import { types } from 'node:util';
/**
 * Layout metadata checks (R102, layout part): the one place where shape, strides, offset and
 * storage of a tensor view are validated. Strides and offsets are in elements (a complex element
 * is one element); negative strides are not supported.
 */
import { describeValue, invalidArgument, TenferroError } from '../errors/tenferro-error.js';
import { DTYPE_INFO, type DType, isDType } from './dtype.js';

/** The fields `validateLayout` reads; a `TensorDescriptor` is one. */
export interface LayoutLike {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly buffer: SharedArrayBuffer;
}

export type DenseOrder = 'col' | 'row';

const MAX = Number.MAX_SAFE_INTEGER;

export function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * A real `SharedArrayBuffer` (of any realm): Node's brand check of the internal slot — neither
 * `Symbol.toStringTag` nor `Object.create(SharedArrayBuffer.prototype)` can forge it, as they can
 * `instanceof` and `Object.prototype.toString`.
 */
export function isSharedArrayBuffer(value: unknown): value is SharedArrayBuffer {
  return types.isSharedArrayBuffer(value);
}

/** Throws unless `dtype` is a known dtype: `UnsupportedDType` for an unknown name, `InvalidArgument` for a non-string. */
export function checkDType(dtype: unknown, op: string, param: string): asserts dtype is DType {
  if (isDType(dtype)) return;
  if (typeof dtype === 'string') {
    throw new TenferroError('UnsupportedDType', `expected one of f32, f64, c64, c128, i32, i64, bool for ${param} but received ${describeValue(dtype)}`, {
      op,
      detail: { param, dtype },
    });
  }
  throw invalidArgument(op, param, 'a dtype name', dtype);
}

/** Throws `InvalidArgument` unless `shape` is an array of non-negative safe integers. */
export function checkShape(shape: unknown, op: string, param: string): asserts shape is readonly number[] {
  if (!Array.isArray(shape)) throw invalidArgument(op, param, 'an array of non-negative integers', shape);
  for (let i = 0; i < shape.length; i++) {
    if (!isNonNegativeSafeInteger(shape[i])) throw invalidArgument(op, `${param}[${i}]`, 'a non-negative safe integer', shape[i]);
  }
}

/** The number of elements of `shape`, checked: a product above 2^53-1 throws `IntegerOverflow`. */
export function elementCount(shape: readonly number[], op: string): number {
  if (shape.includes(0)) return 0;
  let count = 1;
  for (const extent of shape) {
    count *= extent;
    if (count > MAX) {
      throw new TenferroError('IntegerOverflow', `expected an element count of at most 2^53-1 for shape but received ${describeValue([...shape])}`, {
        op,
        detail: { shape: [...shape] },
      });
    }
  }
  return count;
}

/**
 * Dense strides of `shape` in column-major (`col`, first axis fastest) or row-major (`row`) order.
 * For a zero-size shape no element is addressed; any stride that would not be a safe integer is 0.
 *
 * @example
 * ```ts
 * import { denseStrides } from '@tenferro/core';
 *
 * console.log(denseStrides([2, 3, 4], 'col'), denseStrides([2, 3, 4], 'row')); // prints: [ 1, 2, 6 ] [ 12, 4, 1 ]
 * ```
 */
export function denseStrides(shape: readonly number[], order: DenseOrder): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let k = 0; k < shape.length; k++) {
    const axis = order === 'col' ? k : shape.length - 1 - k;
    strides[axis] = step <= MAX ? step : 0;
    step *= shape[axis]!;
  }
  return strides;
}

/** True when the layout addresses one contiguous block in `order` (extent-1 axes ignored; zero-size is dense). */
export function isDenseLayout(shape: readonly number[], strides: readonly number[], order: DenseOrder): boolean {
  if (shape.includes(0)) return true;
  let expected = 1;
  for (let k = 0; k < shape.length; k++) {
    const axis = order === 'col' ? k : shape.length - 1 - k;
    const extent = shape[axis]!;
    if (extent !== 1 && strides[axis] !== expected) return false;
    expected *= extent;
  }
  return true;
}

/** Storage length of `buffer` in elements of `dtype`. */
export function storageLength(buffer: SharedArrayBuffer, dtype: DType): number {
  return Math.floor(buffer.byteLength / DTYPE_INFO[dtype].bytes);
}

/**
 * Validates layout metadata (R102): ranks agree (`RankMismatch`); extents, strides and offset are
 * non-negative safe integers (`InvalidArgument`); the element count and the largest reachable
 * offset fit in 2^53-1 (`IntegerOverflow`); every reachable element lies inside the storage, or for
 * a zero-size view the offset is at most the storage length (`ViewOutOfBounds`).
 *
 * @example
 * ```ts
 * import { TenferroError, validateLayout } from '@tenferro/core';
 *
 * const buffer = new SharedArrayBuffer(6 * 8); // six f64
 * validateLayout({ dtype: 'f64', buffer, shape: [2, 3], strides: [1, 2], offset: 0 }, 'myOp', 'lhs'); // fits: no error
 * try {
 *   validateLayout({ dtype: 'f64', buffer, shape: [2, 3], strides: [1, 2], offset: 1 }, 'myOp', 'lhs');
 * } catch (e) {
 *   console.log(TenferroError.is(e) && e.code); // prints: ViewOutOfBounds
 * }
 * ```
 */
export function validateLayout(d: LayoutLike, op: string, role: string): void {
  if (typeof d !== 'object' || d === null) throw invalidArgument(op, role, 'a tensor descriptor', d);
  checkDType(d.dtype, op, `${role}.dtype`);
  if (!isSharedArrayBuffer(d.buffer)) throw invalidArgument(op, `${role}.buffer`, 'a SharedArrayBuffer', d.buffer);
  checkShape(d.shape, op, `${role}.shape`);
  const { shape, strides, offset } = d;
  if (!Array.isArray(strides)) throw invalidArgument(op, `${role}.strides`, 'an array of non-negative integers', strides);
  if (strides.length !== shape.length) {
    throw new TenferroError(
      'RankMismatch',
      `expected ${shape.length} strides (the rank of ${role}.shape) for ${role}.strides but received ${strides.length}`,
      { op, detail: { role, rank: shape.length, strides: strides.length } },
    );
  }
  for (let i = 0; i < strides.length; i++) {
    if (!isNonNegativeSafeInteger(strides[i])) {
      throw invalidArgument(op, `${role}.strides[${i}]`, 'a non-negative safe integer (negative strides are not supported)', strides[i]);
    }
  }
  if (!isNonNegativeSafeInteger(offset)) throw invalidArgument(op, `${role}.offset`, 'a non-negative safe integer', offset);
  const count = elementCount(shape, op);
  const length = storageLength(d.buffer, d.dtype);
  if (count === 0) {
    if (offset > length) {
      throw new TenferroError(
        'ViewOutOfBounds',
        `expected an offset of at most the storage length ${length} for zero-size ${role} but received ${offset}`,
        { op, detail: { role, offset, storageLength: length } },
      );
    }
    return;
  }
  let maxOffset = offset;
  for (let i = 0; i < shape.length; i++) {
    maxOffset += (shape[i]! - 1) * strides[i]!;
    if (maxOffset > MAX) {
      throw new TenferroError('IntegerOverflow', `expected the largest reachable offset of ${role} to be at most 2^53-1 but it overflows`, {
        op,
        detail: { role, shape: [...shape], strides: [...strides], offset },
      });
    }
  }
  if (maxOffset >= length) {
    throw new TenferroError(
      'ViewOutOfBounds',
      `expected every reachable element of ${role} inside its storage of ${length} elements but the largest reachable offset is ${maxOffset}`,
      { op, detail: { role, maxOffset, storageLength: length } },
    );
  }
}

/**
 * True when no two indices address the same element. First the sufficient rule (exact for layouts
 * whose axes nest, e.g. permutations of dense layouts): axes of extent > 1 sorted by stride must
 * each have stride ≥ previous stride × previous extent; a zero stride with extent > 1 aliases.
 * Layouts that fail the rule (stepped slices can) are decided exactly up to 2^16 elements and
 * refused above. Zero-size layouts are injective.
 *
 * @example
 * ```ts
 * import { layoutIsInjective } from '@tenferro/core';
 *
 * console.log(layoutIsInjective([2, 3], [3, 1])); // prints: true
 * console.log(layoutIsInjective([2, 3], [0, 1])); // prints: false
 * console.log(layoutIsInjective([2, 3], [3, 4])); // prints: true
 * ```
 */
export function layoutIsInjective(shape: readonly number[], strides: readonly number[]): boolean {
  if (shape.includes(0)) return true;
  // The common case without sorting: strides of the axes of extent > 1 already ascending
  // (column-major views, slices of them) and each covering the previous axis.
  let reach = 1;
  let ascending = true;
  for (let i = 0; i < shape.length; i++) {
    if (shape[i]! === 1) continue;
    const stride = strides[i]!;
    if (stride < reach) {
      ascending = false;
      break;
    }
    reach = stride * shape[i]!;
  }
  if (ascending) return true;
  return sortedRuleOrExact(shape, strides);
}

function sortedRuleOrExact(shape: readonly number[], strides: readonly number[]): boolean {
  const axes: number[] = [];
  for (let i = 0; i < shape.length; i++) if (shape[i]! > 1) axes.push(i);
  axes.sort((a, b) => strides[a]! - strides[b]!);
  let reach = 1; // the smallest stride the next axis may have
  let covered = true;
  for (const axis of axes) {
    const stride = strides[axis]!;
    if (stride === 0) return false;
    if (stride < reach) {
      covered = false;
      break;
    }
    reach = stride * shape[axis]!;
  }
  if (covered) return true;
  // The sorted-stride rule is only sufficient (e.g. extents [2, 3] with strides [3, 4] never
  // repeat an element but fail it): decide small layouts exactly, refuse large ones.
  return axes.reduce((n, a) => n * shape[a]!, 1) <= EXACT_INJECTIVITY_LIMIT && distinctOffsets(axes.map((a) => shape[a]!), axes.map((a) => strides[a]!));
}

/** Layouts up to this many elements are checked for self-overlap exactly. */
const EXACT_INJECTIVITY_LIMIT = 1 << 16;

function distinctOffsets(extents: readonly number[], strides: readonly number[]): boolean {
  const seen = new Set<number>();
  const index = new Array<number>(extents.length).fill(0);
  for (let offset = 0; ; ) {
    if (seen.has(offset)) return false;
    seen.add(offset);
    let k = 0;
    for (; k < extents.length; k++) {
      offset += strides[k]!;
      if (++index[k]! < extents[k]!) break;
      offset -= strides[k]! * extents[k]!;
      index[k] = 0;
    }
    if (k === extents.length) return true;
  }
}

/**
 * First and last reachable element offsets (inclusive), or `undefined` for a zero-size layout.
 *
 * @example
 * ```ts
 * import { reachableSpan } from '@tenferro/core';
 *
 * console.log(reachableSpan({ shape: [2, 3], strides: [1, 4], offset: 5 })); // prints: { first: 5, last: 14 }
 * console.log(reachableSpan({ shape: [0, 3], strides: [1, 4], offset: 5 })); // prints: undefined
 * ```
 */
export function reachableSpan(d: { readonly shape: readonly number[]; readonly strides: readonly number[]; readonly offset: number }):
  | { first: number; last: number }
  | undefined {
  if (d.shape.includes(0)) return undefined;
  let last = d.offset;
  for (let i = 0; i < d.shape.length; i++) last += (d.shape[i]! - 1) * d.strides[i]!;
  return { first: d.offset, last };
}
