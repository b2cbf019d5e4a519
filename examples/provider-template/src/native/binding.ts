// src/native/binding.ts — the addon's exports, typed, and the codes of the shared table
import { abiCodes } from '@tenferro/core/kernel';
import { ABI } from '../../native/src/abi.mjs';

export { ABI };

/** gemm()'s status codes and the descriptor's slots, numbered as the generated C++ header numbers them. */
export const STATUS = abiCodes(ABI.enums.Status);
export const DESC = abiCodes(ABI.enums.Desc);

export interface XBinding {
  /** C = alpha·A·B + beta·C on the rows the descriptor names (DESC's slots); returns a STATUS code. */
  gemm(a: Float32Array | Float64Array, b: Float32Array | Float64Array, c: Float32Array | Float64Array, desc: Float64Array): number;
  /** The hash of the ABI table the addon was compiled with. */
  readonly abiHash: string;
}
