/**
 * The immutable host tensor: a dtype, a strided layout over a `SharedArrayBuffer`, and placement
 * metadata. Strides and offset are in elements (a complex element is one element). Views
 * (`permute`, `transpose`, `slice`, metadata-only `reshape`) share storage and keep placement (R97).
 */
import { describeValue, invalidArgument, TenferroError } from '../errors/tenferro-error.js';
import { allocateStorage } from '../buffer/storage-alignment.js';
import { DTYPE_INFO, type DType } from './dtype.js';
import {
  checkDType,
  checkShape,
  type DenseOrder,
  denseStrides,
  elementCount,
  isDenseLayout,
  isNonNegativeSafeInteger,
  isSharedArrayBuffer,
  validateLayout,
} from './layout.js';
import { checkData, readElements, writeData } from './tensor-data.js';
import type { TensorDescriptor } from './tensor-descriptor.js';
import { type StorageHome, TensorStorage } from './tensor-storage.js';
import { keepTracked, track } from './tidy-scope.js';
import { copyDense, typedArrayDType } from './typed-arrays.js';

/** The JavaScript type of one scalar of `D` in `toArray`: `bigint` for i64, `number` otherwise (bool as 0/1, complex interleaved). */
export type ElementOf<D extends DType> = D extends 'i64' ? bigint : number;

/** The typed array holding `D` densely (complex: interleaved re, im of the real type). */
export type TypedArrayOf<D extends DType> = D extends 'f64' | 'c128'
  ? Float64Array
  : D extends 'f32' | 'c64'
    ? Float32Array
    : D extends 'i32'
      ? Int32Array
      : D extends 'i64'
        ? BigInt64Array
        : Uint8Array;

/** A typed array `Tensor.from` accepts. */
export type TensorSource = Float64Array | Float32Array | Int32Array | BigInt64Array | Uint8Array;

/** Options of {@link Tensor.from}: the dtype (for complex data) and the linear order of the data. */
export interface TensorFromOptions extends TensorOrderOptions {
  /** The dtype; inferred from the array type when absent (`c64`/`c128` must be named: interleaved re, im). */
  readonly dtype?: DType;
}

/** Routing metadata only (R100, R121): never evidence of CPU affinity or NUMA residency. */
export interface TensorPlacement {
  readonly cpuAffinity?: number | bigint;
}

/** Options naming the linear order of dense data (`Tensor.fromArray`, `zeros`, `toArray`, …). */
export interface TensorOrderOptions {
  /** Linear order of the data: `col` (column-major, first axis fastest; the default) or `row`. */
  readonly order?: DenseOrder;
}

/** One `slice` entry: an index (drops the axis), `[start, end]` or `[start, end, step]`, or `undefined` (whole axis). */
export type SliceRange = number | readonly [start: number, end: number] | readonly [start: number, end: number, step: number] | undefined;

const EMPTY_PLACEMENT: TensorPlacement = Object.freeze({});

/** Fresh zeroed storage for `size` elements of `dtype`, its data starting on a 64-byte line (a 2 MiB boundary from 2 MiB on, where huge pages are placed, #38) at element `offset` (see `storage-alignment.ts`). */
function alignedShared(dtype: DType, size: number, op: string): { buffer: SharedArrayBuffer; offset: number } {
  const bytes = DTYPE_INFO[dtype].bytes;
  const data = size * bytes;
  const { buffer, skip } = allocateStorage(data, bytes, op);
  return { buffer, offset: skip / bytes };
}

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

// Assigned once, in Tensor's static block (which runs when the class is defined).
// eslint-disable-next-line prefer-const
export let tensorInternals: TensorInternals;

/**
 * An immutable host tensor of dtype `D`: shape, strides and offset (in elements) over a
 * `SharedArrayBuffer`, plus placement metadata. Dense data is column-major (first axis fastest)
 * unless `{ order: 'row' }` is asked for. Views (`permute`, `transpose`, `slice`, metadata-only
 * `reshape`) share storage; `dispose()` (or `tidy`) hands engine-made storage back to its pool.
 *
 * @example
 * ```ts
 * import { Tensor } from '@tenferro/core';
 *
 * const t = Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4], { order: 'row' });
 * console.log(t.dtype, t.shape, t.strides, t.size); // prints: f32 [ 2, 2 ] [ 2, 1 ] 4
 * console.log(t.toArray({ order: 'row' })); // prints: [ 1, 2, 3, 4 ]
 * ```
 */
export class Tensor<D extends DType = DType> {
  readonly dtype: D;
  readonly shape: readonly number[];
  /** In elements. */
  readonly strides: readonly number[];
  /** In elements. */
  readonly offset: number;
  readonly placement: TensorPlacement;
  readonly #size: number;
  /** Shared by every view of the same storage. */
  readonly #storage: TensorStorage;
  #disposed = false;

  /** Internal: every argument is already validated; `shape` and `strides` are fresh arrays. */
  private constructor(
    dtype: D,
    shape: number[],
    strides: number[],
    offset: number,
    storage: TensorStorage,
    placement: TensorPlacement,
    size: number,
  ) {
    this.dtype = dtype;
    this.shape = Object.freeze(shape);
    this.strides = Object.freeze(strides);
    this.offset = offset;
    this.placement = placement;
    this.#size = size;
    this.#storage = storage;
    storage.retain();
    track(this);
    Object.freeze(this);
  }

  static {
    tensorInternals = {
      storage: (t) => t.#live('Tensor'),
      buffer: (t) => t.#storage.buffer,
      descriptor: (t) => Object.freeze({ dtype: t.dtype, shape: t.shape, strides: t.strides, offset: t.offset, buffer: t.#storage.buffer }),
      view: (t, shape, strides, offset) => t.#view([...shape], [...strides], offset),
      check: (t, op, param) => {
        if (t.#disposed) throw disposedError(op, param);
      },
      fresh: (dtype, shape, buffer, home, placement, offset = 0, block) => {
        const s = [...shape];
        const storage = new TensorStorage(dtype, buffer, home, false, block?.blockStart ?? 0, block?.blockBytes ?? buffer.byteLength);
        return new Tensor(dtype, s, denseStrides(s, 'col'), offset, storage, placement ?? EMPTY_PLACEMENT, elementCount(s, 'Tensor'));
      },
    };
  }

  /**
   * The storage (a `SharedArrayBuffer`; `offset` and `strides` address it in elements). A fresh
   * output below 2 MiB is a block of a slab that other tensors share, as small Node `Buffer`s
   * share a pool: read and write only what `offset`, `shape` and `strides` address. Reading it
   * hands the memory to the caller: the storage is then recycled only by an explicit `dispose()`
   * of its last tensor, never because the tensors became unreachable.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const t = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const view = new Float64Array(t.buffer, t.offset * 8, t.size);
   * console.log([...view]); // prints: [ 1, 2, 3 ]
   * ```
   */
  get buffer(): SharedArrayBuffer {
    const storage = this.#live('Tensor.buffer');
    storage.escape();
    return storage.buffer;
  }

  /**
   * Whether `dispose()` was called on this tensor.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const t = Tensor.zeros('f64', [2]);
   * t.dispose();
   * console.log(t.disposed); // prints: true
   * ```
   */
  get disposed(): boolean {
    return this.#disposed;
  }

  /**
   * Invalidate this tensor: any later use of it is a `TensorDisposed` error (views made from it
   * stay valid). Idempotent. Storage an engine produced goes back to its pool once no tensor over
   * it is left and no operation uses it; caller-made storage is left alone.
   *
   * @example
   * ```ts
   * import { Tensor, TenferroError } from '@tenferro/core';
   *
   * const t = Tensor.fromArray('f64', [2], [1, 2]);
   * t.dispose();
   * try {
   *   t.toArray();
   * } catch (e) {
   *   if (TenferroError.is(e, 'TensorDisposed')) console.log(e.code); // prints: TensorDisposed
   * }
   * ```
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#storage.release();
  }

  /**
   * {@link Tensor.dispose}, for `using` declarations (TypeScript 5.2+).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * let escaped: Tensor | undefined;
   * {
   *   using t = Tensor.zeros('f64', [2]);
   *   escaped = t;
   * } // disposed here
   * console.log(escaped.disposed); // prints: true
   * ```
   */
  [Symbol.dispose](): void {
    this.dispose();
  }

  #live(op: string): TensorStorage {
    if (this.#disposed) throw disposedError(op, 'tensor');
    return this.#storage;
  }

  /**
   * Whether `value` is a tensor tenferro made (a private-field brand check): an object built with
   * `Object.create(Tensor.prototype)`, or any look-alike, is not — whatever its getters say.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * console.log(Tensor.isTensor(Tensor.zeros('f64', [1]))); // prints: true
   * console.log(Tensor.isTensor(Object.create(Tensor.prototype))); // prints: false
   * ```
   */
  static isTensor(value: unknown): value is Tensor<DType> {
    return typeof value === 'object' && value !== null && #size in value;
  }

  /**
   * The number of axes (`shape.length`); 0 for a scalar.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * console.log(Tensor.zeros('f64', [2, 3, 4]).rank, Tensor.zeros('f64', []).rank); // prints: 3 0
   * ```
   */
  get rank(): number {
    return this.shape.length;
  }

  /**
   * Number of elements (the product of the extents; 1 for a scalar).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * console.log(Tensor.zeros('f64', [2, 3, 4]).size); // prints: 24
   * ```
   */
  get size(): number {
    return this.#size;
  }

  /**
   * A fresh dense tensor holding `data` in `options.order` (default `col`, column-major). `data` is
   * numbers for floats and i32, booleans or 0/1 for bool, bigints or safe integers for i64, and
   * interleaved `re, im` numbers (length 2·size) for complex. Everything is validated first.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.toArray({ order: 'row' })); // prints: [ 1, 3, 5, 2, 4, 6 ]
   * const z = Tensor.fromArray('c128', [2], [1, 2, 3, 4]); // 1+2i, 3+4i
   * const big = Tensor.fromArray('i64', [2], [1n, 2n ** 40n]);
   * console.log(z.size, big.toArray()); // prints: 2 [ 1n, 1099511627776n ]
   * ```
   */
  static fromArray<D extends DType>(
    dtype: D,
    shape: readonly number[],
    data: ArrayLike<number> | ArrayLike<bigint | number> | ArrayLike<boolean | number>,
    options?: TensorOrderOptions,
  ): Tensor<D> {
    const op = 'Tensor.fromArray';
    checkDType(dtype, op, 'dtype');
    checkShape(shape, op, 'shape');
    const order = checkOrder(options, op);
    const size = elementCount(shape, op);
    checkData(dtype, data, size, op);
    const { buffer, offset } = alignedShared(dtype, size, op);
    writeData(dtype, data, buffer, offset);
    return new Tensor(dtype, [...shape], denseStrides(shape, order), offset, new TensorStorage(dtype, buffer, undefined, true), EMPTY_PLACEMENT, size);
  }

  /**
   * A fresh dense tensor of zeros in `options.order` (default `col`).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const z = Tensor.zeros('i32', [2, 3], { order: 'row' });
   * console.log(z.strides, z.toArray()); // prints: [ 3, 1 ] [ 0, 0, 0, 0, 0, 0 ]
   * ```
   */
  static zeros<D extends DType>(dtype: D, shape: readonly number[], options?: TensorOrderOptions): Tensor<D> {
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
    const { buffer, offset } = alignedShared(dtype, size, op);
    return new Tensor(dtype, [...shape], denseStrides(shape, order), offset, new TensorStorage(dtype, buffer, undefined, true), EMPTY_PLACEMENT, size);
  }

  /**
   * A tensor over a typed array's data, dense in `options.order` (default `col`): no copy when the
   * array is over a `SharedArrayBuffer` (the tensor then shares the caller's memory), one copy
   * otherwise. The dtype comes from the array type (`Float64Array` → f64, `Float32Array` → f32,
   * `Int32Array` → i32, `BigInt64Array` → i64, `Uint8Array` → bool) unless `options.dtype` names a
   * complex type over the same real lanes (`c64` over Float32Array, `c128` over Float64Array).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const shared = new Float64Array(new SharedArrayBuffer(4 * 8));
   * const t = Tensor.from(shared, [2, 2]); // no copy: t shares the caller's memory
   * shared[3] = 7;
   * console.log(t.dtype, t.toArray()); // prints: f64 [ 0, 0, 0, 7 ]
   * const z = Tensor.from(new Float32Array([1, 2, 3, 4]), [2], { dtype: 'c64' }); // copied: not shared memory
   * console.log(z.dtype, z.size); // prints: c64 2
   * ```
   */
  static from<A extends TensorSource, D extends DType = DType>(data: A, shape: readonly number[], options?: TensorFromOptions & { readonly dtype?: D }): Tensor<D> {
    const op = 'Tensor.from';
    const { dtype: wanted, order: orderOption, ...rest } = (options ?? {}) as TensorFromOptions;
    if (options !== undefined && (typeof options !== 'object' || options === null)) throw invalidArgument(op, 'options', 'an options object', options);
    for (const key of Object.keys(rest)) throw invalidArgument(op, `options.${key}`, 'one of the options dtype, order', key);
    const dtype = typedArrayDType(data, wanted, op);
    checkShape(shape, op, 'shape');
    const order = checkOrder(orderOption === undefined ? undefined : { order: orderOption }, op);
    const size = elementCount(shape, op);
    const info = DTYPE_INFO[dtype];
    checkData(dtype, data, size, op);
    let buffer: SharedArrayBuffer;
    let offset = 0;
    const shared = isSharedArrayBuffer(data.buffer);
    if (shared) {
      buffer = data.buffer;
      offset = data.byteOffset / info.bytes;
      if (!Number.isInteger(offset)) throw invalidArgument(op, 'data.byteOffset', `a multiple of ${info.bytes} bytes for ${dtype}`, data.byteOffset);
    } else {
      ({ buffer, offset } = alignedShared(dtype, size, op));
      new Uint8Array(buffer, offset * info.bytes).set(new Uint8Array(data.buffer, data.byteOffset, size * info.bytes));
    }
    const storage = new TensorStorage(dtype, buffer, undefined, !shared);
    // The caller holds the buffer of a shared array: never recycled behind its back.
    if (shared) storage.escape();
    return new Tensor(dtype as D, [...shape], denseStrides(shape, order), offset, storage, EMPTY_PLACEMENT, size);
  }

  /**
   * A tensor over existing storage; the layout is validated (`validateLayout`) and copied.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const buffer = new SharedArrayBuffer(6 * 8);
   * new Float64Array(buffer).set([1, 2, 3, 4, 5, 6]);
   * // every other element: a strided view over the caller's buffer
   * const t = Tensor.fromDescriptor({ dtype: 'f64', shape: [3], strides: [2], offset: 0, buffer });
   * console.log(t.toArray()); // prints: [ 1, 3, 5 ]
   * ```
   */
  static fromDescriptor<D extends DType = DType>(d: TensorDescriptor & { readonly dtype: D }, placement?: TensorPlacement): Tensor<D> {
    const op = 'Tensor.fromDescriptor';
    validateLayout(d, op, 'descriptor');
    const p = checkPlacement(placement, op);
    const storage = new TensorStorage(d.dtype, d.buffer);
    storage.escape();
    return new Tensor(d.dtype, [...d.shape], [...d.strides], d.offset, storage, p, elementCount(d.shape, op));
  }

  /**
   * Elements in logical order (`col` by default): complex interleaved, i64 as bigint, bool as 0/1.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.toArray()); // prints: [ 1, 2, 3, 4, 5, 6 ]
   * console.log(m.toArray({ order: 'row' })); // prints: [ 1, 3, 5, 2, 4, 6 ]
   * ```
   */
  toArray(options?: TensorOrderOptions): ElementOf<D>[] {
    const order = checkOrder(options, 'Tensor.toArray');
    const storage = this.#live('Tensor.toArray');
    return readElements(this.dtype, storage.buffer, this.shape, this.strides, this.offset, order) as ElementOf<D>[];
  }

  /**
   * A dense copy of the elements in `options.order` (default `col`) as the dtype's typed array
   * (complex interleaved).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * const column = m.slice(undefined, 1).toTypedArray(); // a Float64Array
   * console.log(column); // prints: Float64Array(2) [ 3, 4 ]
   * ```
   */
  toTypedArray(options?: TensorOrderOptions): TypedArrayOf<D> {
    const order = checkOrder(options, 'Tensor.toTypedArray');
    const storage = this.#live('Tensor.toTypedArray');
    return copyDense(this.dtype, storage.buffer, this.shape, this.strides, this.offset, order) as TypedArrayOf<D>;
  }

  /**
   * The layout and storage; like `buffer`, it hands the memory to the caller.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * const { shape, strides, offset } = m.transpose().descriptor();
   * console.log(shape, strides, offset); // prints: [ 3, 2 ] [ 2, 1 ] 0
   * ```
   */
  descriptor(): TensorDescriptor & { readonly dtype: D } {
    const storage = this.#live('Tensor.descriptor');
    storage.escape();
    return Object.freeze({ dtype: this.dtype, shape: this.shape, strides: this.strides, offset: this.offset, buffer: storage.buffer });
  }

  /**
   * Same storage and layout, new placement metadata (routing only, never evidence of affinity).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const t = Tensor.zeros('f64', [2]).withPlacement({ cpuAffinity: 3 });
   * console.log(t.placement); // prints: { cpuAffinity: 3 }
   * ```
   */
  withPlacement(p: TensorPlacement): Tensor<D> {
    const placement = checkPlacement(p, 'Tensor.withPlacement');
    return new Tensor(this.dtype, [...this.shape], [...this.strides], this.offset, this.#live('Tensor.withPlacement'), placement, this.#size);
  }

  #view(shape: number[], strides: number[], offset: number): Tensor<D> {
    return new Tensor(this.dtype, shape, strides, offset, this.#live('Tensor'), this.placement, this.#size === 0 ? 0 : elementCount(shape, 'Tensor'));
  }

  /**
   * View with axis `i` of the result being axis `axes[i]` of this tensor (no copy).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const t = Tensor.zeros('f64', [2, 3, 4]);
   * const p = t.permute([2, 0, 1]);
   * console.log(p.shape, p.strides); // prints: [ 4, 2, 3 ] [ 6, 1, 2 ]
   * ```
   */
  permute(axes: readonly number[]): Tensor<D> {
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

  /**
   * Reverses all axes (a view, no copy); rank ≤ 1 keeps the layout.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.transpose().toArray({ order: 'row' })); // prints: [ 1, 2, 3, 4, 5, 6 ]
   * ```
   */
  transpose(): Tensor<D> {
    if (this.rank <= 1) return this.#view([...this.shape], [...this.strides], this.offset);
    return this.#view([...this.shape].reverse(), [...this.strides].reverse(), this.offset);
  }

  /**
   * View of a sub-box. One entry per leading axis: `undefined` keeps the axis, an index selects one
   * position and drops the axis, `[start, end]` / `[start, end, step]` (0 ≤ start ≤ end ≤ extent,
   * step ≥ 1) keeps `ceil((end - start) / step)` positions.
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.slice(1).toArray()); // prints: [ 2, 4, 6 ]
   * console.log(m.slice(undefined, [0, 3, 2]).toArray({ order: 'row' })); // prints: [ 1, 5, 2, 6 ]
   * ```
   */
  slice(...ranges: SliceRange[]): Tensor<D> {
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
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.reshape([3, -1]).toArray({ order: 'row' })); // prints: [ 1, 4, 2, 5, 3, 6 ]
   * ```
   */
  reshape(shape: readonly number[]): Tensor<D> {
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

  /**
   * True when the tensor covers one contiguous block in `order` (extent-1 axes ignored; zero-size
   * is dense).
   *
   * @example
   * ```ts
   * import { Tensor } from '@tenferro/core';
   *
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]); // column-major: [[1, 3, 5], [2, 4, 6]]
   * console.log(m.isDense('col'), m.transpose().isDense('col'), m.transpose().isDense('row')); // prints: true false true
   * ```
   */
  isDense(order: DenseOrder): boolean {
    if (order !== 'col' && order !== 'row') throw invalidArgument('Tensor.isDense', 'order', '"col" or "row"', order);
    return isDenseLayout(this.shape, this.strides, order);
  }
}

/**
 * Never recycled by a tidy scope (see `backend.tidy`): `t` outlives the scope it was made in.
 * Returns `t`.
 *
 * @example
 * ```ts
 * import { Tensor, keep, tidy } from '@tenferro/core';
 *
 * let kept: Tensor<'f64'> | undefined;
 * await tidy(() => {
 *   const scratch = Tensor.zeros('f64', [2]); // disposed when the scope settles
 *   kept = keep(Tensor.zeros('f64', [2]));
 * });
 * console.log(kept?.disposed); // prints: false
 * ```
 */
export function keep<T extends Tensor>(t: T): T {
  if (!Tensor.isTensor(t)) throw invalidArgument('keep', 'tensor', 'a Tensor', t);
  keepTracked(t);
  return t;
}

function disposedError(op: string, param: string): TenferroError {
  return new TenferroError('TensorDisposed', `${param} was disposed and cannot be used`, { op, detail: { param } });
}

/** Package-internal access to a tensor's storage (never exported from the package). */
export interface TensorInternals {
  /** The live storage; a disposed tensor throws `TensorDisposed`. */
  storage(t: Tensor): TensorStorage;
  /** The storage buffer without marking it escaped (the tensor may be disposed). */
  buffer(t: Tensor): SharedArrayBuffer;
  /** A descriptor without marking the storage escaped: for providers within one operation. */
  descriptor(t: Tensor): TensorDescriptor;
  /** A view of `t`'s storage with this layout (already validated by the caller), keeping its placement. */
  view<D extends DType>(t: Tensor<D>, shape: readonly number[], strides: readonly number[], offset: number): Tensor<D>;
  /** `TensorDisposed` for `param` of `op` when `t` was disposed. */
  check(t: Tensor, op: string, param: string): void;
  /**
   * A fresh dense column-major tensor over engine storage that returns to `home`, its data from
   * element `offset` on (a pool loan's, default 0); `block`: the part of `buffer` the storage holds
   * (a pool loan's block; default the whole buffer).
   */
  fresh<D extends DType>(
    dtype: D,
    shape: readonly number[],
    buffer: SharedArrayBuffer,
    home: StorageHome | undefined,
    placement?: TensorPlacement,
    offset?: number,
    block?: { readonly blockStart: number; readonly blockBytes: number },
  ): Tensor<D>;
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
