/**
 * The first line of defence of a GEMM provider: every number of a `CpuGemmRequest` is checked
 * before anything is planned, allocated or sent to a worker, so a malformed request (a batch
 * stride that is NaN, 1e19 or 2^63, an offset past the end, a forged buffer) is a typed
 * `TenferroError` and never reaches native code — which must check every descriptor entry again
 * itself. Core builds requests that pass; providers call this to guard direct callers of their
 * `gemm(ctx, request)`.
 *
 * Codes: `InvalidArgument` (`detail.param` names the field, e.g. `request.out.batchStrides[0]`)
 * for a value of the wrong type or range, `IntegerOverflow` for a batch count above 2^53,
 * `ViewOutOfBounds` (`detail.operand`) for an operand that reaches past its buffer. The reach is
 * summed in BigInt, so it cannot overflow into "reaches nothing".
 */
import { types } from 'node:util';
import { TenferroError } from '../errors/tenferro-error.js';
import { CONTRACTION_DTYPES, DTYPE_INFO, type DType } from '../tensor/dtype.js';
import type { CpuGemmRequest } from './gemm-request.js';

/**
 * A request this copy of core built from validated tensors and a plan, frozen to the last array
 * (`trustedGemmRequest`): nothing can change it after the checks, so `validateGemmRequest` answers
 * for it at once. The mark is a private field: a copy (`{ ...request }`, `structuredClone`) is an
 * ordinary object again, and a request from anywhere else — another copy of core, a test, a
 * caller of a provider — is checked in full. (A class brand rather than a `WeakSet`: adding to a
 * `WeakSet` cost ~0.5 µs per request, paid per job of a grouped GEMM.)
 */
class TrustedGemmRequest implements CpuGemmRequest {
  declare readonly dtype: DType;
  declare readonly m: number;
  declare readonly n: number;
  declare readonly k: number;
  declare readonly batch: readonly number[];
  declare readonly lhs: CpuGemmRequest['lhs'];
  declare readonly rhs: CpuGemmRequest['rhs'];
  declare readonly out: CpuGemmRequest['out'];
  declare readonly alpha: CpuGemmRequest['alpha'];
  declare readonly beta: CpuGemmRequest['beta'];
  declare readonly conjLhs: boolean;
  declare readonly conjRhs: boolean;
  declare readonly summed?: CpuGemmRequest['summed'];
  // The brand: only instances made here have it.
  readonly #trusted = true;

  constructor(r: CpuGemmRequest) {
    const self = this as { -readonly [K in keyof CpuGemmRequest]: CpuGemmRequest[K] };
    self.dtype = r.dtype;
    self.m = r.m;
    self.n = r.n;
    self.k = r.k;
    self.batch = r.batch;
    self.lhs = r.lhs;
    self.rhs = r.rhs;
    self.out = r.out;
    self.alpha = r.alpha;
    self.beta = r.beta;
    self.conjLhs = r.conjLhs;
    self.conjRhs = r.conjRhs;
    if (r.summed !== undefined) self.summed = r.summed;
    Object.freeze(this);
  }

  static is(request: unknown): boolean {
    return typeof request === 'object' && request !== null && #trusted in request;
  }
}

/**
 * `request` (whose operands and arrays must already be frozen) as a frozen request marked as
 * checked. For core's own dispatch only; not exported from the package.
 */
export function trustedGemmRequest(request: CpuGemmRequest): CpuGemmRequest {
  return new TrustedGemmRequest(request);
}

function isIndex(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function index(op: string, param: string, v: unknown): number {
  if (!isIndex(v)) throw TenferroError.invalidArgument(op, param, 'an integer in [0, 2^53)', v);
  return v;
}

function isScalar(v: unknown): boolean {
  return typeof v === 'number' || (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number');
}

/**
 * Check `request` (see the module comment); returns its dtype's element size in bytes, or
 * `undefined` for a dtype that is not a contraction dtype (the provider declines it).
 *
 * @example
 * ```ts
 * import { type CpuGemmRequest, TenferroError, validateGemmRequest } from '@tenferro/core';
 *
 * const buffer = new SharedArrayBuffer(4 * 8); // a 2×2 f64 matrix, row-major
 * const operand = { buffer, offset: 0, rowStride: 2, colStride: 1, batchStrides: [] };
 * const request: CpuGemmRequest = { dtype: 'f64', m: 2, n: 2, k: 2, batch: [], lhs: operand, rhs: operand, out: operand, alpha: 1, beta: 0, conjLhs: false, conjRhs: false };
 * console.log(validateGemmRequest('myGemm', request)); // prints: 8
 * try {
 *   validateGemmRequest('myGemm', { ...request, lhs: { ...operand, offset: 1 } });
 * } catch (e) {
 *   console.log(TenferroError.is(e) && e.code); // prints: ViewOutOfBounds
 * }
 * ```
 */
export function validateGemmRequest(op: string, request: CpuGemmRequest): number | undefined {
  if (TrustedGemmRequest.is(request)) return DTYPE_INFO[request.dtype].bytes;
  if (typeof request !== 'object' || request === null) throw TenferroError.invalidArgument(op, 'request', 'a GEMM request object', request);
  const r = request as unknown as Record<string, unknown>;
  if (typeof r.dtype !== 'string') throw TenferroError.invalidArgument(op, 'request.dtype', 'a dtype name', r.dtype);
  const m = index(op, 'request.m', r.m);
  const n = index(op, 'request.n', r.n);
  const k = index(op, 'request.k', r.k);
  if (!Array.isArray(r.batch)) throw TenferroError.invalidArgument(op, 'request.batch', 'an array of batch extents', r.batch);
  const batch = r.batch as unknown[];
  let batches = 1n;
  for (let t = 0; t < batch.length; t++) batches *= BigInt(index(op, `request.batch[${t}]`, batch[t]));
  if (batches > 2n ** 53n) {
    throw new TenferroError('IntegerOverflow', `the batch count ${batches} exceeds 2^53`, { op, detail: { param: 'request.batch' } });
  }
  for (const name of ['alpha', 'beta'] as const) {
    if (!isScalar(r[name])) throw TenferroError.invalidArgument(op, `request.${name}`, 'a number or a [re, im] pair of numbers', r[name]);
  }
  for (const name of ['conjLhs', 'conjRhs'] as const) {
    if (typeof r[name] !== 'boolean') throw TenferroError.invalidArgument(op, `request.${name}`, 'a boolean', r[name]);
  }
  const summed = summedAxes(op, r.summed);
  const operands = [
    ['lhs', m, k],
    ['rhs', k, n],
    ['out', m, n],
  ] as const;
  const checked = operands.map(([name, rows, cols]) => {
    const param = `request.${name}`;
    const o = r[name] as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null) throw TenferroError.invalidArgument(op, param, 'a GEMM operand', o);
    if (!types.isSharedArrayBuffer(o.buffer)) throw TenferroError.invalidArgument(op, `${param}.buffer`, 'a SharedArrayBuffer', o.buffer);
    const offset = index(op, `${param}.offset`, o.offset);
    const rs = index(op, `${param}.rowStride`, o.rowStride);
    const cs = index(op, `${param}.colStride`, o.colStride);
    const bs = o.batchStrides;
    if (!Array.isArray(bs) || bs.length !== batch.length) {
      throw TenferroError.invalidArgument(op, `${param}.batchStrides`, `an array of ${batch.length} batch strides (one per batch axis)`, bs);
    }
    // The farthest element reached, +1 (0: reaches nothing), in BigInt: no overflow.
    let reach = rows > 0 && cols > 0 && batches > 0n ? BigInt(offset) + BigInt(rows - 1) * BigInt(rs) + BigInt(cols - 1) * BigInt(cs) + 1n : 0n;
    for (let t = 0; t < batch.length; t++) {
      const stride = index(op, `${param}.batchStrides[${t}]`, bs[t]);
      if (reach > 0n) reach += BigInt((batch[t] as number) - 1) * BigInt(stride);
    }
    // An empty sum reads neither lhs nor rhs.
    if (name !== 'out' && summed !== undefined) reach = summed.count === 0n ? 0n : reach > 0n ? reach + summed.reach[name] : 0n;
    return { name, buffer: o.buffer, reach };
  });
  if (!CONTRACTION_DTYPES.includes(r.dtype as DType)) return undefined;
  const bytes = DTYPE_INFO[r.dtype as DType].bytes;
  for (const { name, buffer, reach } of checked) {
    if (reach * BigInt(bytes) > BigInt(buffer.byteLength)) {
      throw new TenferroError('ViewOutOfBounds', `the ${name} operand reaches element ${reach - 1n}, past the end of its buffer (${buffer.byteLength} bytes of ${r.dtype})`, {
        op,
        detail: { operand: name, reach: String(reach), byteLength: buffer.byteLength },
      });
    }
  }
  return bytes;
}

/**
 * Check `request.summed` (absent: undefined): three arrays of one length — extents and lhs and
 * rhs strides, integers in [0, 2^53) — with a product of extents at most 2^53; returns that
 * product and how far the strides move each operand (Σ (extent − 1)·stride, in BigInt).
 */
function summedAxes(op: string, v: unknown): { count: bigint; reach: { lhs: bigint; rhs: bigint } } | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null) throw TenferroError.invalidArgument(op, 'request.summed', 'an object with extents, lhsStrides and rhsStrides', v);
  const s = v as Record<string, unknown>;
  const extents = s.extents;
  if (!Array.isArray(extents)) throw TenferroError.invalidArgument(op, 'request.summed.extents', 'an array of summed extents', extents);
  let count = 1n;
  for (let t = 0; t < extents.length; t++) count *= BigInt(index(op, `request.summed.extents[${t}]`, extents[t]));
  if (count > 2n ** 53n) {
    throw new TenferroError('IntegerOverflow', `the summed count ${count} exceeds 2^53`, { op, detail: { param: 'request.summed.extents' } });
  }
  const reach = { lhs: 0n, rhs: 0n };
  for (const side of ['lhs', 'rhs'] as const) {
    const param = `request.summed.${side}Strides`;
    const strides = s[`${side}Strides`];
    if (!Array.isArray(strides) || strides.length !== extents.length) {
      throw TenferroError.invalidArgument(op, param, `an array of ${extents.length} strides (one per summed axis)`, strides);
    }
    for (let t = 0; t < extents.length; t++) {
      const stride = index(op, `${param}[${t}]`, strides[t]);
      if (count > 0n) reach[side] += BigInt((extents[t] as number) - 1) * BigInt(stride);
    }
  }
  return { count, reach };
}
