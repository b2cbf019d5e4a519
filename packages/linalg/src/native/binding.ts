/** The addon's exports (native/src/addon.cc) and the layout of its task words. */
import { abiCodes } from '@tenferro/core/kernel';
import { ABI } from '../../native/src/abi.mjs';

export { ABI };

export interface LinalgBinding {
  run(words: Float64Array, a: ArrayBufferView, b: ArrayBufferView, out0: ArrayBufferView, out1: ArrayBufferView, out2: ArrayBufferView, info: Int32Array, abort?: Int32Array): number;
  info(): {
    readonly eigen: string;
    readonly isa: 'generic' | 'avx2' | 'avx512';
    /** Instruction-set paths left out of this build, comma-separated ('' for a full build; 'avx512' after TENFERRO_NATIVE_ISA=host on a CPU without it). */
    readonly notBuilt: string;
    /** Whether this CPU could run a path left out of this build (the kernels then run slower than they could). */
    readonly runsNotBuilt: boolean;
    /**
     * Only a reduced build has it: the dtypes it left out, whose jobs run() refuses with BadDtype —
     * 'f32,c64,c128' for binding.gyp's tenferro_linalg_f64_only=1 (the sanitizer build and
     * `npm run demo`'s set-up, #39), 'f32,f64' when a `best` build left the portable real kernels
     * out and this CPU runs none of the vector paths built.
     */
    readonly dtypesNotBuilt?: string;
    /** The compiler of each built dtype's kernels on this process's path: 'f32 clang 14.0.6, f64 gcc 12.2.0, c64 clang 14.0.6, c128 clang 14.0.6' (native/cxx-select.cjs). */
    readonly compilers: string;
    readonly descHeader: number;
    readonly maxBatchAxes: number;
  };
  readonly descHeader: number;
  /** The hash of native/src/abi.mjs the addon was built from (defineAddon compares it with the table's, #40). */
  readonly abiHash: string;
}

// Every code, word and flag below is native/src/abi.mjs's, which the addon compiles through the
// generated native/src/abi.generated.h (#40).
const C = ABI.constants;

/**
 * Words 0..19 of a task, then batch extents, A's batch strides, B's batch strides. offOut0..2: each
 * output's offset in elements of its type (-1: no output); offInfo: info's offset in int32 words (#35).
 */
export const W = Object.freeze({ ...abiCodes(ABI.enums.Word), HEADER: ABI.enums.Word.length });

export const MAX_BATCH_AXES = C.MaxBatchAxes;

export const OP_CODE = abiCodes(ABI.enums.Op);
export const DTYPE_CODE = abiCodes(ABI.enums.Dtype);
export const FLAG = Object.freeze({ upper: C.FlagUpper, left: C.FlagLeft, unit: C.FlagUnit, full: C.FlagFull, vectors: C.FlagVectors, rOnly: C.FlagROnly });

/** The team tasks of a blocked factorisation (native/src/linalg.h): op codes. */
export const STEP_OP = Object.freeze({ luFactor: C.StepLuFactor, cholesky: C.StepCholesky });

export const STATUS_NAMES = ABI.enums.Status;
