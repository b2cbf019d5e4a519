/**
 * The raw exports of the native addon `tenferro_faer.node` (registered in native/src/addon.cc;
 * `gemm` is native/src/gemm.cc, `info` and `fmaPeak` native/src/info.cc).
 *
 * No function throws. `gemm` returns a status code (0 = done; nothing is written otherwise,
 * except after `Aborted`) and bounds-checks every index the request reaches against the arrays
 * it is given.
 */
import { abiCodes } from '@tenferro/core/kernel';
import { ABI } from '../../native/src/abi.mjs';

export { ABI };

/** Status codes of {@link FaerBinding.gemm} (native/src/abi.mjs, shared with gemm.cc): `Ok` 0, `BadArguments`, `OutOfBounds`, `IsaUnavailable`, `BadDtype`, `BadRange`, `Aborted` (the abort word was raised: C is partly written), `NoMemory` (no packing scratch: nothing was computed). */
export const GemmStatus = abiCodes(ABI.enums.Status);
export type GemmStatusName = keyof typeof GemmStatus;

/** The name of status `status`, or undefined for a number the addon does not define. */
export function gemmStatusName(status: number): GemmStatusName | undefined {
  return (Object.keys(GemmStatus) as GemmStatusName[]).find((name) => GemmStatus[name] === status);
}

/** Dtype codes of the descriptor. */
export const DTYPE_CODE = abiCodes(ABI.enums.Dtype);

/** ISA path ids (`-1` in a descriptor: the process's best path). */
export const ISA_ID = abiCodes(ABI.enums.IsaId);
/** An ISA path of the native kernels: `avx512f`, `avx2` or `portable`. */
export type FaerIsa = keyof typeof ISA_ID;

/**
 * Layout of the Float64Array descriptor of one GEMM task. Strides and offsets are in elements
 * (a complex element counts once). Entries from `HEADER` on: `rank` batch extents, then the
 * batch strides of A, of B and of C (`rank` each); then, optionally (a descriptor that ends there
 * has none), the summed axes (`CpuGemmRequest.summed`): their count `s`, `s` extents, then the
 * summed strides of A and of B (`s` each).
 */
export const DESC = Object.freeze({ ...abiCodes(ABI.enums.Desc), HEADER: ABI.enums.Desc.length });

/** The register tile of a micro-kernel: MR rows by NR columns (in elements of the real type). */
export interface KernelShapeInfo {
  /** Rows of the register tile (real elements). */
  readonly mr: number;
  /** Columns of the register tile. */
  readonly nr: number;
}

/** The cache blocking derived from the cache sizes: MC, KC, NC and the direct-path thresholds. */
export interface BlockingInfo {
  readonly mc: number;
  readonly kc: number;
  readonly nc: number;
  /** Direct (unpacked) path for real dtypes when m·n·k is at most this. */
  readonly small: number;
  /** Direct path for complex dtypes when m·n·k is at most this. */
  readonly smallComplex: number;
  /** ... and (real dtypes) while the operand it streams per row panel (k·n elements) takes at most this many bytes (a quarter of L2). */
  readonly smallStreamBytes: number;
}

/** What the native addon reports about itself: the ISA path, its tiles and blocking per real type, and the cache sizes it read. */
export interface NativeInfo {
  /** `'avx512f'`, `'avx2+fma'` or `'portable'`. */
  readonly isa: string;
  readonly isaId: number;
  readonly bestIsaId: number;
  readonly supported: { readonly portable: boolean; readonly avx2: boolean; readonly avx512f: boolean };
  /** Paths left out of this binary (a source build with `TENFERRO_NATIVE_ISA=host`); empty for a full build. */
  readonly notBuilt: readonly string[];
  /** Whether this CPU could run a path left out of this binary (then it runs slower than it could). */
  readonly runsNotBuilt: boolean;
  readonly kernel: { readonly f32: KernelShapeInfo; readonly f64: KernelShapeInfo };
  readonly blocking: { readonly f32: BlockingInfo; readonly f64: BlockingInfo };
  readonly cache: { readonly l1d: number; readonly l2: number; readonly l3: number; readonly fromSysfs: boolean };
}

type Lanes = Float32Array | Float64Array;

export interface FaerBinding {
  /**
   * Run the GEMM task described by `desc` on the calling thread; returns a {@link GemmStatus}.
   * `abort` (core's `ctx.abortWord` or a view of its buffer) is polled at block boundaries: once
   * `abort[0]` is non-zero the call stops with `Aborted`. With `counter, axis, size` the lanes of
   * a split share the task's M (`axis` 0) or N (1) range: each claims chunk `counter[0]++` of
   * `size` rows/columns until the range is used up (native/src/gemm.cc).
   */
  gemm(desc: Float64Array, a: Lanes, b: Lanes, c: Lanes, abort?: Int32Array, counter?: Int32Array, axis?: 0 | 1, size?: number): number;
  /** The ISA path `isa` (default: the process's best), or null when it cannot run here. */
  info(isa?: number): NativeInfo | null;
  /** Single-thread FMA throughput (GFLOP/s, f64) of path `isa` measured for about `seconds` on the calling thread. */
  fmaPeak(seconds: number, isa?: number): number;
  readonly descHeader: number;
  /** The hash of native/src/abi.mjs the addon was built from (defineAddon compares it with the table's, #40). */
  readonly abiHash: string;
  /** True when the addon reads the summed axes at the end of a descriptor (an older addon would ignore them and compute one item). */
  readonly descSummed?: boolean;
}
