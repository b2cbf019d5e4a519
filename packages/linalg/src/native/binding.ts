/** The addon's exports (native/src/addon.cc) and the layout of its task words. */

export interface LinalgBinding {
  run(words: Float64Array, a: ArrayBufferView, b: ArrayBufferView, out0: ArrayBufferView, out1: ArrayBufferView, out2: ArrayBufferView, info: Int32Array, abort?: Int32Array): number;
  info(): {
    readonly eigen: string;
    readonly isa: 'generic' | 'avx2' | 'avx512';
    /** Instruction-set paths left out of this build, comma-separated ('' for a full build; 'avx512' after TENFERRO_NATIVE_ISA=host on a CPU without it). */
    readonly notBuilt: string;
    /** Whether this CPU could run a path left out of this build (the kernels then run slower than they could). */
    readonly runsNotBuilt: boolean;
    readonly descHeader: number;
    readonly maxBatchAxes: number;
  };
  readonly descHeader: number;
}

/**
 * Words 0..19 of a task, then batch extents, A's batch strides, B's batch strides. offOut0..2: each
 * output's offset in elements of its type (-1: no output); offInfo: info's offset in int32 words (#35).
 */
export const W = Object.freeze({
  op: 0, dtype: 1, m: 2, n: 3, k: 4, flags: 5, b0: 6, b1: 7, nb: 8, abortAt: 9,
  offA: 10, rsA: 11, csA: 12, offB: 13, rsB: 14, csB: 15, offOut0: 16, offOut1: 17, offOut2: 18, offInfo: 19, HEADER: 20,
});

export const MAX_BATCH_AXES = 16;

export const OP_CODE = Object.freeze({ cholesky: 0, solveTriangular: 1, luFactor: 2, lu: 3, solve: 4, qr: 5, svd: 6, eigh: 7, eig: 8, luFullPivot: 9 });
export const DTYPE_CODE = Object.freeze({ f32: 0, f64: 1, c64: 2, c128: 3 });
export const FLAG = Object.freeze({ upper: 1, left: 2, unit: 4, full: 8, vectors: 16, rOnly: 32 });

/** The team tasks of a blocked factorisation (native/src/linalg.h): op codes. */
export const STEP_OP = Object.freeze({ luFactor: 10, cholesky: 11 });

export const STATUS_NAMES = ['Ok', 'BadArguments', 'OutOfBounds', 'BadDtype', 'BadRange', 'Aborted', 'BadOp'] as const;
