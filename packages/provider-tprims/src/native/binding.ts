/**
 * The raw exports of the native addon `tenferro_tprims.node` (registered in native/src/addon.cc;
 * `run` and `supports` are native/src/entry.cc, `info` native/src/info.cc).
 *
 * No function throws. `run` returns a status code (0 = done; nothing is written otherwise) and
 * bounds-checks every element the task reaches against the byte arrays it is given.
 */

/** Status codes of {@link TprimsBinding.run}, named as in native/include/tprims.h (`kBadArguments` → `BadArguments`). */
export const TprimsStatus = Object.freeze({ Ok: 0, BadArguments: 1, OutOfBounds: 2, IsaUnavailable: 3, BadDtype: 4, NoMemory: 5, Aborted: 6 } as const);
export type TprimsStatusName = keyof typeof TprimsStatus;

export function statusName(status: number): TprimsStatusName | undefined {
  return (Object.keys(TprimsStatus) as TprimsStatusName[]).find((name) => TprimsStatus[name] === status);
}

/** Task kinds. */
export const KIND = Object.freeze({ unary: 0, binary: 1, reduce: 2 } as const);
/** Dtype codes. */
export const DTYPE_CODE = Object.freeze({ f32: 0, f64: 1, c64: 2, c128: 3, i32: 4, i64: 5, bool: 6 } as const);
/** Unary op codes (`copy` / `copyConj` serve the layout-transform slot). */
export const UNARY_CODE = Object.freeze({
  copy: 0, copyConj: 1, neg: 2, abs: 3, exp: 4, log: 5, sqrt: 6, sin: 7, cos: 8, tanh: 9, conj: 10, real: 11, imag: 12, scale: 13, cast: 14,
} as const);
export const BINARY_CODE = Object.freeze({ add: 0, sub: 1, mul: 2, div: 3, maximum: 4, minimum: 5, pow: 6, eq: 7, lt: 8, le: 9, gt: 10, ge: 11 } as const);
export const REDUCE_CODE = Object.freeze({ sum: 0, mean: 1, max: 2, min: 3, prod: 4, argmax: 5, argmin: 6, norm: 7 } as const);

/** ISA path ids (`-1` in a descriptor: the process's best path). */
export const ISA_ID = Object.freeze({ portable: 0, avx2: 1, avx512f: 2 } as const);
/** An ISA path of the tprims kernels: `portable`, `avx2` (with FMA) or `avx512f`. */
export type TprimsIsa = keyof typeof ISA_ID;

/**
 * Layout of the Float64Array descriptor of one task; offsets and strides in elements of each
 * operand's dtype. From `HEADER` on: `rank` extents, `rank` output strides, `rank` strides of a,
 * then `rank` strides of b (binary) or reduced-axis flags 0/1 (reduce).
 */
export const DESC = Object.freeze({ kind: 0, op: 1, din: 2, dout: 3, rank: 4, alphaRe: 5, alphaIm: 6, isa: 7, offOut: 8, offA: 9, offB: 10, HEADER: 11 } as const);

/** Axes a task may have (native/include/tprims.h kMaxRank); more are declined (`rank`). */
export const MAX_RANK = 32;

/** What the tprims addon reports about the ISA paths: the one in use, the best this CPU runs, and which it can run. */
export interface NativeInfo {
  /** `'avx512f'`, `'avx2+fma'` or `'portable'`. */
  readonly isa: string;
  /** The id of the path in use. */
  readonly isaId: number;
  /** The id of the best path this CPU can run. */
  readonly bestIsaId: number;
  /** Which paths this CPU can run. */
  readonly supported: { readonly portable: boolean; readonly avx2: boolean; readonly avx512f: boolean };
  /** Paths left out of this binary (a source build with `TENFERRO_NATIVE_ISA=host`); empty for a full build. */
  readonly notBuilt: readonly string[];
  /** Whether this CPU could run a path left out of this binary (then it runs slower than it could). */
  readonly runsNotBuilt: boolean;
}

export interface TprimsBinding {
  /**
   * Run the task `desc` on the calling thread over byte views of the operands' buffers; a {@link
   * TprimsStatus}. `abort` (core's `ctx.abortWord`) is polled between rows and tiles: once it is
   * non-zero the task stops with `Aborted`, its output partly written.
   */
  run(desc: Float64Array, out: Uint8Array, a: Uint8Array, b?: Uint8Array, abort?: Int32Array): number;
  /** Whether a kernel exists for (kind, op, din, dout). */
  supports(kind: number, op: number, din: number, dout: number): boolean;
  /** The ISA path `isa` (default: the process's best), or null when it cannot run here. */
  info(isa?: number): NativeInfo | null;
  readonly descHeader: number;
  readonly maxRank: number;
}
