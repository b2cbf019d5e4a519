/**
 * The raw exports of the native addon `tenferro_tprims.node` (registered in native/src/addon.cc;
 * `run` and `supports` are native/src/entry.cc, `info` native/src/info.cc).
 *
 * No function throws. `run` returns a status code (0 = done; nothing is written otherwise) and
 * bounds-checks every element the task reaches against the byte arrays it is given.
 */
import { abiCodes } from '@tenferro/core/kernel';
import { ABI } from '../../native/src/abi.mjs';

export { ABI };

// Every code and descriptor field below is native/src/abi.mjs's, which the addon compiles through
// the generated native/src/abi.generated.h (#40).

/** Status codes of {@link TprimsBinding.run}: `Ok` 0, `BadArguments`, `OutOfBounds`, `IsaUnavailable`, `BadDtype`, `NoMemory`, `Aborted`. */
export const TprimsStatus = abiCodes(ABI.enums.Status);
export type TprimsStatusName = keyof typeof TprimsStatus;

export function statusName(status: number): TprimsStatusName | undefined {
  return (Object.keys(TprimsStatus) as TprimsStatusName[]).find((name) => TprimsStatus[name] === status);
}

/** Task kinds. */
export const KIND = abiCodes(ABI.enums.Kind);
/** Dtype codes. */
export const DTYPE_CODE = abiCodes(ABI.enums.Dtype);
/** Unary op codes (`copy` / `copyConj` serve the layout-transform slot). */
export const UNARY_CODE = abiCodes(ABI.enums.Unary);
export const BINARY_CODE = abiCodes(ABI.enums.Binary);
export const REDUCE_CODE = abiCodes(ABI.enums.Reduce);

/** ISA path ids (`-1` in a descriptor: the process's best path). */
export const ISA_ID = abiCodes(ABI.enums.IsaId);
/** An ISA path of the tprims kernels: `portable`, `avx2` (with FMA) or `avx512f`. */
export type TprimsIsa = keyof typeof ISA_ID;

/**
 * Layout of the Float64Array descriptor of one task; offsets and strides in elements of each
 * operand's dtype. From `HEADER` on: `rank` extents, `rank` output strides, `rank` strides of a,
 * then `rank` strides of b (binary) or reduced-axis flags 0/1 (reduce).
 */
export const DESC = Object.freeze({ ...abiCodes(ABI.enums.Desc), HEADER: ABI.enums.Desc.length });

/** Axes a task may have; more are declined (`rank`). */
export const MAX_RANK = ABI.constants.MaxRank;

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
  /** The hash of native/src/abi.mjs the addon was built from (defineAddon compares it with the table's, #40). */
  readonly abiHash: string;
}
