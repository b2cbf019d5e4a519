/** Element types. Complex types are interleaved `re, im` pairs of f32 (`c64`) or f64 (`c128`). */
export type DType = 'f32' | 'f64' | 'c64' | 'c128' | 'i32' | 'i64' | 'bool';

/** Every dtype, in a fixed order. */
export const DTYPES: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool']);

/** The storage facts of one dtype (see {@link DTYPE_INFO}). */
export interface DTypeInfo {
  /** Bytes of one element (a complex element counts both parts). */
  readonly bytes: number;
  /** Scalars per element: 2 for complex, else 1. */
  readonly components: 1 | 2;
  /** The typed array over one lane. */
  readonly array: Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor | Uint8ArrayConstructor;
  readonly complex: boolean;
  readonly float: boolean;
}

/**
 * Bytes, lanes and typed array of every dtype.
 *
 * @example
 * ```ts
 * import { DTYPE_INFO } from '@tenferro/core';
 *
 * console.log(DTYPE_INFO.c128.bytes, DTYPE_INFO.c128.components, DTYPE_INFO.c128.array.name); // prints: 16 2 Float64Array
 * ```
 */
export const DTYPE_INFO: Readonly<Record<DType, DTypeInfo>> = Object.freeze({
  f32: Object.freeze({ bytes: 4, components: 1, array: Float32Array, complex: false, float: true }),
  f64: Object.freeze({ bytes: 8, components: 1, array: Float64Array, complex: false, float: true }),
  c64: Object.freeze({ bytes: 8, components: 2, array: Float32Array, complex: true, float: true }),
  c128: Object.freeze({ bytes: 16, components: 2, array: Float64Array, complex: true, float: true }),
  i32: Object.freeze({ bytes: 4, components: 1, array: Int32Array, complex: false, float: false }),
  i64: Object.freeze({ bytes: 8, components: 1, array: BigInt64Array, complex: false, float: false }),
  bool: Object.freeze({ bytes: 1, components: 1, array: Uint8Array, complex: false, float: false }),
});

/**
 * Whether `value` names a dtype.
 *
 * @example
 * ```ts
 * import { isDType } from '@tenferro/core';
 *
 * console.log(isDType('c64'), isDType('f16')); // prints: true false
 * ```
 */
export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && Object.hasOwn(DTYPE_INFO, value);
}

/** The floating dtypes contraction providers support (R109). */
export const CONTRACTION_DTYPES: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128']);

/** A scalar: a number for real dtypes, `[re, im]` for complex ones. */
export type Scalar = number | readonly [number, number];
