/**
 * The immutable host tensor: a dtype, a strided layout over a `SharedArrayBuffer`, and placement
 * metadata. Strides and offset are in elements (a complex element is one element). Views
 * (`permute`, `transpose`, `slice`, metadata-only `reshape`) share storage and keep placement (R97).
 */
import { describeValue, invalidArgument, TenferroError } from '../errors/tenferro-error.js';
import { allocateShared } from '../util/allocate-shared.js';
import { DTYPE_INFO, type DType } from './dtype.js';
import {
  checkDType,
  checkShape,
  type DenseOrder,
  denseStrides,
  elementCount,
  isDenseLayout,
  isNonNegativeSafeInteger,
  validateLayout,
} from './layout.js';
import { checkData, readElements, writeData } from './tensor-data.js';
import type { TensorDescriptor } from './tensor-descriptor.js';

/** Routing metadata only (R100, R121): never evidence of CPU affinity or NUMA residency. */
export interface TensorPlacement {
  readonly cpuAffinity?: number | bigint;
}

export interface TensorOrderOptions {
  /** Linear order of the data: `col` (column-major, first axis fastest; the default) or `row`. */
  readonly order?: DenseOrder;
}

/** One `slice` entry: an index (drops the axis), `[start, end]` or `[start, end, step]`, or `undefined` (whole axis). */
export type SliceRange = number | readonly [start: number, end: number] | readonly [start: number, end: number, step: number] | undefined;

const EMPTY_PLACEMENT: TensorPlacement = Object.freeze({});

function checkOrder(options: unknown, op: string): DenseOrder {
  if (options === undefined) return 'col';
  if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
  const order = (options as { order?: unknown }).order;
  if (order === undefined) return 'col';
  if (order !== 'col' && order !== 'row') throw invalidArgument(op, 'options.order', '"col" or "row"', order);
  return order;
}

function checkPlacement(placement: unknown, op: string): TensorPlacement {
  if (placement === undefined) return EMPTY_PLACEMENT;
  if (typeof placement !== 'object' || placement === null) throw invalidArgument(op, 'placement', 'a placement object', placement);
  const affinity = (placement as { cpuAffinity?: unknown }).cpuAffinity;
  if (affinity === undefined) return EMPTY_PLACEMENT;
  const ok = typeof affinity === 'bigint' ? affinity >= 0n : isNonNegativeSafeInteger(affinity);
  if (!ok) throw invalidArgument(op, 'placement.cpuAffinity', 'a non-negative integer or bigint domain id', affinity);
  return Object.freeze({ cpuAffinity: affinity as number | bigint });
}

function checkAxis(axis: unknown, rank: number, op: string, param: string): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) throw invalidArgument(op, param, 'an integer axis', axis);
  if (axis < 0 || axis >= rank) {
    throw new TenferroError('AxisOutOfBounds', `expected an axis in [0, ${rank}) for ${param} but received ${describeValue(axis)}`, {
      op,
      detail: { param, axis, rank },
    });
  }
  return axis;
}

export class Tensor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** In elements. */
  readonly strides: readonly number[];
  /** In elements. */
  readonly offset: number;
  readonly buffer: SharedArrayBuffer;
  readonly placement: TensorPlacement;
  readonly #size: number;

  /** Internal: every argument is already validated; `shape` and `strides` are fresh arrays. */
  private constructor(
    dtype: DType,
    shape: number[],
    strides: number[],
    offset: number,
    buffer: SharedArrayBuffer,
    placement: TensorPlacement,
    size: number,
  ) {
    this.dtype = dtype;
    this.shape = Object.freeze(shape);
    this.strides = Object.freeze(strides);
    this.offset = offset;
    this.buffer = buffer;
    this.placement = placement;
    this.#size = size;
    Object.freeze(this);
  }

  /**
   * Whether `value` is a tensor tenferro made (a private-field brand check): an object built with
   * `Object.create(Tensor.prototype)`, or any look-alike, is not — whatever its getters say.
   */
  static isTensor(value: unknown): value is Tensor {
    return typeof value === 'object' && value !== null && #size in value;
  }

  get rank(): number {
    return this.shape.length;
  }

  /** Number of elements. */
  get size(): number {
    return this.#size;
  }

  /**
   * A fresh dense tensor holding `data` in `options.order` (default `col`, column-major). `data` is
   * numbers for floats and i32, booleans or 0/1 for bool, bigints or safe integers for i64, and
   * interleaved `re, im` numbers (length 2·size) for complex. Everything is validated first.
   */
  static fromArray(
    dtype: DType,
    shape: readonly number[],
    data: ArrayLike<number> | ArrayLike<bigint | number> | ArrayLike<boolean | number>,
    options?: TensorOrderOptions,
  ): Tensor {
    const op = 'Tensor.fromArray';
    checkDType(dtype, op, 'dtype');
    checkShape(shape, op, 'shape');
    const order = checkOrder(options, op);
    const size = elementCount(shape, op);
    checkData(dtype, data, size, op);
    const buffer = allocateShared(size * DTYPE_INFO[dtype].bytes, op);
    writeData(dtype, data, buffer);
    return new Tensor(dtype, [...shape], denseStrides(shape, order), 0, buffer, EMPTY_PLACEMENT, size);
  }

  /** A fresh dense tensor of zeros in `options.order` (default `col`). */
  static zeros(dtype: DType, shape: readonly number[], options?: TensorOrderOptions): Tensor {
    const op = 'Tensor.zeros';
    checkDType(dtype, op, 'dtype');
    checkShape(shape, op, 'shape');
    const order = checkOrder(options, op);
    const size = elementCount(shape, op);
    const bytes = size * DTYPE_INFO[dtype].bytes;
    if (!Number.isSafeInteger(bytes)) {
      throw new TenferroError('IntegerOverflow', `expected a byte length of at most 2^53-1 for shape but received ${describeValue([...shape])}`, {
        op,
        detail: { shape: [...shape], dtype },
      });
    }
    return new Tensor(dtype, [...shape], denseStrides(shape, order), 0, allocateShared(bytes, op), EMPTY_PLACEMENT, size);
  }

  /** A tensor over existing storage; the layout is validated (`validateLayout`) and copied. */
  static fromDescriptor(d: TensorDescriptor, placement?: TensorPlacement): Tensor {
    const op = 'Tensor.fromDescriptor';
    validateLayout(d, op, 'descriptor');
    const p = checkPlacement(placement, op);
    return new Tensor(d.dtype, [...d.shape], [...d.strides], d.offset, d.buffer, p, elementCount(d.shape, op));
  }

  /** Elements in logical order (`col` by default): complex interleaved, i64 as bigint, bool as 0/1. */
  toArray(options?: TensorOrderOptions): number[] | bigint[] {
    const order = checkOrder(options, 'Tensor.toArray');
    return readElements(this.dtype, this.buffer, this.shape, this.strides, this.offset, order);
  }

  descriptor(): TensorDescriptor {
    return Object.freeze({ dtype: this.dtype, shape: this.shape, strides: this.strides, offset: this.offset, buffer: this.buffer });
  }

  /** Same storage and layout, new placement metadata. */
  withPlacement(p: TensorPlacement): Tensor {
    const placement = checkPlacement(p, 'Tensor.withPlacement');
    return new Tensor(this.dtype, [...this.shape], [...this.strides], this.offset, this.buffer, placement, this.#size);
  }

  #view(shape: number[], strides: number[], offset: number): Tensor {
    return new Tensor(this.dtype, shape, strides, offset, this.buffer, this.placement, this.#size === 0 ? 0 : elementCount(shape, 'Tensor'));
  }

  /** View with axis `i` of the result being axis `axes[i]` of this tensor. */
  permute(axes: readonly number[]): Tensor {
    const op = 'Tensor.permute';
    if (!Array.isArray(axes)) throw invalidArgument(op, 'axes', 'an array of axes', axes);
    const rank = this.rank;
    if (axes.length !== rank) {
      throw new TenferroError('RankMismatch', `expected ${rank} axes (the rank) for axes but received ${axes.length}`, {
        op,
        detail: { rank, axes: axes.length },
      });
    }
    const seen = new Array<boolean>(rank).fill(false);
    for (let i = 0; i < rank; i++) {
      const axis = checkAxis(axes[i], rank, op, `axes[${i}]`);
      if (seen[axis]) {
        throw new TenferroError('DuplicateAxis', `expected distinct axes for axes but received ${describeValue([...axes])}`, {
          op,
          detail: { axis, axes: [...axes] },
        });
      }
      seen[axis] = true;
    }
    return this.#view(
      axes.map((a) => this.shape[a]!),
      axes.map((a) => this.strides[a]!),
      this.offset,
    );
  }

  /** Reverses all axes; rank ≤ 1 keeps the layout. */
  transpose(): Tensor {
    if (this.rank <= 1) return this;
    return this.#view([...this.shape].reverse(), [...this.strides].reverse(), this.offset);
  }

  /**
   * View of a sub-box. One entry per leading axis: `undefined` keeps the axis, an index selects one
   * position and drops the axis, `[start, end]` / `[start, end, step]` (0 ≤ start ≤ end ≤ extent,
   * step ≥ 1) keeps `ceil((end - start) / step)` positions.
   */
  slice(...ranges: SliceRange[]): Tensor {
    const op = 'Tensor.slice';
    const rank = this.rank;
    if (ranges.length > rank) {
      throw new TenferroError('RankMismatch', `expected at most ${rank} ranges (the rank) for ranges but received ${ranges.length}`, {
        op,
        detail: { rank, ranges: ranges.length },
      });
    }
    const shape: number[] = [];
    const strides: number[] = [];
    let offset = this.offset;
    for (let axis = 0; axis < rank; axis++) {
      const extent = this.shape[axis]!;
      const stride = this.strides[axis]!;
      const r = ranges[axis];
      const param = `ranges[${axis}]`;
      if (r === undefined) {
        shape.push(extent);
        strides.push(stride);
      } else if (typeof r === 'number') {
        if (!Number.isInteger(r)) throw invalidArgument(op, param, 'an integer index', r);
        if (r < 0 || r >= extent) {
          throw new TenferroError('ViewOutOfBounds', `expected an index in [0, ${extent}) for ${param} but received ${r}`, {
            op,
            detail: { axis, index: r, extent },
          });
        }
        offset += r * stride;
      } else {
        if (!Array.isArray(r) || (r.length !== 2 && r.length !== 3)) {
          throw invalidArgument(op, param, 'an index, [start, end], [start, end, step] or undefined', r);
        }
        const [start, end, step = 1] = r as readonly [unknown, unknown, unknown?];
        if (typeof start !== 'number' || !Number.isInteger(start)) throw invalidArgument(op, `${param}[0]`, 'an integer start', start);
        if (typeof end !== 'number' || !Number.isInteger(end)) throw invalidArgument(op, `${param}[1]`, 'an integer end', end);
        if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 1) {
          throw invalidArgument(op, `${param}[2]`, 'an integer step ≥ 1', step);
        }
        if (start < 0 || end > extent) {
          throw new TenferroError('ViewOutOfBounds', `expected 0 ≤ start ≤ end ≤ ${extent} for ${param} but received [${start}, ${end}]`, {
            op,
            detail: { axis, start, end, extent },
          });
        }
        if (start > end) throw invalidArgument(op, param, `start ≤ end`, r);
        const count = Math.ceil((end - start) / step);
        shape.push(count);
        // A stride only matters for an extent > 1, where stride·step·(count-1) stays inside storage.
        strides.push(count > 1 ? stride * step : stride);
        if (count > 0) offset += start * stride;
      }
    }
    // A zero-size view addresses nothing: keep the (valid) base offset.
    if (shape.includes(0)) offset = this.offset;
    return this.#view(shape, strides, offset);
  }

  /**
   * Metadata-only reshape in column-major linear order (as tenferro): the elements in `col` order
   * are unchanged. One extent may be -1 (inferred). Throws `ReshapeNeedsCopy` when the layout does
   * not allow a view; the backend's reshape materialises instead.
   */
  reshape(shape: readonly number[]): Tensor {
    const op = 'Tensor.reshape';
    if (!Array.isArray(shape)) throw invalidArgument(op, 'shape', 'an array of non-negative integers (one may be -1)', shape);
    let inferred = -1;
    let known = 1;
    for (let i = 0; i < shape.length; i++) {
      const e = shape[i];
      if (e === -1 && inferred === -1) {
        inferred = i;
        continue;
      }
      if (!isNonNegativeSafeInteger(e)) {
        throw invalidArgument(op, `shape[${i}]`, e === -1 ? 'at most one -1 extent' : 'a non-negative safe integer or -1', e);
      }
      known *= e;
    }
    const target = [...shape];
    if (inferred !== -1) {
      if (known === 0 || this.#size % known !== 0) {
        throw new TenferroError('ShapeMismatch', `cannot infer the -1 extent of ${describeValue(target)} from ${this.#size} elements`, {
          op,
          detail: { shape: target, size: this.#size },
        });
      }
      target[inferred] = this.#size / known;
    }
    const size = elementCount(target, op);
    if (size !== this.#size) {
      throw new TenferroError(
        'ShapeMismatch',
        `expected a shape of ${this.#size} elements for shape but received ${describeValue(target)} (${size} elements)`,
        { op, detail: { shape: target, size, expected: this.#size, from: [...this.shape] } },
      );
    }
    const strides = size === 0 ? denseStrides(target, 'col') : viewStrides(this.shape, this.strides, target);
    if (strides === undefined) {
      throw new TenferroError(
        'ReshapeNeedsCopy',
        `cannot reshape ${describeValue([...this.shape])} with strides ${describeValue([...this.strides])} to ${describeValue(target)} without a copy; use the backend reshape`,
        { op, detail: { from: [...this.shape], strides: [...this.strides], to: target } },
      );
    }
    return this.#view(target, strides, this.offset);
  }

  /** True when the tensor covers one contiguous block in `order` (extent-1 axes ignored; zero-size is dense). */
  isDense(order: DenseOrder): boolean {
    if (order !== 'col' && order !== 'row') throw invalidArgument('Tensor.isDense', 'order', '"col" or "row"', order);
    return isDenseLayout(this.shape, this.strides, order);
  }
}

/**
 * Strides for viewing a non-empty layout as `newShape` in column-major linear order, or
 * `undefined` when no strides exist. Old and new axes are grouped into runs of equal extent
 * product; each old run must be contiguous in column-major order (stride[k+1] = stride[k]·extent[k]).
 */
function viewStrides(oldShape: readonly number[], oldStrides: readonly number[], newShape: readonly number[]): number[] | undefined {
  const oe: number[] = [];
  const os: number[] = [];
  for (let i = 0; i < oldShape.length; i++) {
    if (oldShape[i] !== 1) {
      oe.push(oldShape[i]!);
      os.push(oldStrides[i]!);
    }
  }
  const ne = newShape;
  const ns = new Array<number>(ne.length);
  let oi = 0;
  let ni = 0;
  while (ni < ne.length && oi < oe.length) {
    let oj = oi + 1;
    let nj = ni + 1;
    let np = ne[ni]!;
    let opr = oe[oi]!;
    while (np !== opr) {
      if (np < opr) np *= ne[nj++]!;
      else opr *= oe[oj++]!;
    }
    for (let k = oi; k < oj - 1; k++) if (os[k + 1] !== os[k]! * oe[k]!) return undefined;
    ns[ni] = os[oi]!;
    for (let k = ni + 1; k < nj; k++) ns[k] = ns[k - 1]! * ne[k - 1]!;
    ni = nj;
    oi = oj;
  }
  // Trailing new axes have extent 1: give them the next dense stride (they address nothing new).
  for (; ni < ne.length; ni++) ns[ni] = ni === 0 ? 1 : ns[ni - 1]! * ne[ni - 1]!;
  return ns;
}
