/**
 * provider-blas's `CpuLinalgKernels` (the `@tenferro/linalg` extension, R53/R65): every primitive
 * of the interface — Cholesky (`?potrf_`), triangular solve (`?trsm_`), LU and its unpacked form
 * (`?getrf_`), solve (`?gesv_`), QR (`?geqrf_` + `?orgqr_`/`?ungqr_`), SVD
 * (`?gesdd_`), Hermitian eigensolver (`?syevd_`/`?heevd_`), general eigensolver (`?geev_`) and
 * full-pivot LU (`?getc2_`) — in f32, f64, c64 and c128 (s, d, c, z), through the Fortran LAPACK
 * routines of the BLAS runtime already loaded for GEMM, found with dlsym in the same library.
 * Whatever the loaded runtime does not export is declined before anything is written.
 *
 * The extension key is found by name (`defineExtensionKey('tenferro.linalg.kernels')`: keys are
 * identity-by-name), so this package needs nothing of `@tenferro/linalg` at run time; the types
 * below are the subset of `@tenferro/linalg/contract`'s `LinalgRequest` it reads.
 *
 * The kernels return LAPACK's raw results (geqrf/orgqr's signs, gesdd's and syevd's vectors, geev's
 * order and vectors): `@tenferro/linalg` applies its output convention after any kernel (#35).
 * Each output is a descriptor with an offset (`{ buffer, offset, dtype, shape }`): it is checked
 * here against its buffer and the request before the task is posted, and again natively.
 */
import { type CpuExecutionContext, type CpuProviderOutcome, EXECUTED, type ExtensionKey, type KernelArgs, TenferroError, Unsupported, abiCodes, defineExtensionKey, defineKernel, kernelArgs, kernelWords } from '@tenferro/core';
import type { BlasSession } from './gemm-provider.js';
import type { BlasRuntime } from './runtime.js';
import { ABI } from './native/binding.js';
import type { BlasBinding } from './native/binding.js';

const lapackKernel = defineKernel<KernelArgs, void>(new URL('./kernels/lapack.js', import.meta.url), 'blasLapack');

/** The name `@tenferro/linalg/contract` defines its key under. */
export const LINALG_KERNELS_KEY_NAME = 'tenferro.linalg.kernels';

export function linalgKey(): ExtensionKey<unknown> {
  return defineExtensionKey<unknown>(LINALG_KERNELS_KEY_NAME);
}

interface Operand {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/** An output descriptor of `@tenferro/linalg`'s LinalgRequest (its `LinalgOutput`). */
export interface LapackOutput {
  readonly buffer: SharedArrayBuffer;
  /** Where batch 0 starts, in elements of `dtype`. */
  readonly offset: number;
  readonly dtype: string;
  /** Matrix (or vector) extents, then the request's batch extents. */
  readonly shape: readonly number[];
}

/** The fields of `@tenferro/linalg`'s LinalgRequest this provider reads. */
export interface LapackRequest {
  readonly op: string;
  readonly dtype: string;
  readonly m: number;
  readonly n: number;
  readonly batch: readonly number[];
  readonly flags: { readonly upper: boolean; readonly left: boolean; readonly unitDiagonal: boolean; readonly full: boolean; readonly vectors: boolean; readonly rOnly: boolean };
  readonly a: Operand;
  readonly b?: Operand;
  readonly out: readonly (LapackOutput | undefined)[];
  readonly info: Int32Array;
}

/** `@tenferro/linalg`'s op codes; the words and flags below: the ABI table native/src/abi.mjs, which lapack.cc compiles (#40). */
const OP = abiCodes(ABI.enums.LapackOp);
const LW = abiCodes(ABI.enums.LapackWord);
const FLAG = ABI.constants;
type Op = keyof typeof OP;
const DTYPE: Readonly<Record<string, number>> = { f32: 0, f64: 1, c64: 2, c128: 3 };
const PREFIX = ['s', 'd', 'c', 'z'] as const;
/** Words: LapackWord, then the batch extents and strides; output o's offset (-1: none), rows, cols from OUT_WORDS + 3o. */
const HEADER = ABI.enums.LapackWord.length;
const INFO_WORD = LW.offInfo;
const OUT_WORDS = LW.out0Offset;
const INT_MAX = 0x7fffffff;
/** Bytes of an element of each output dtype. */
const ELEMENT_BYTES: Readonly<Record<string, number>> = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4 };
/** The element type of output `which` of each op (0: the dtype, 1: its real type, 2: i32, 3: its complex type), as lapack.cc's out_kind. */
function outKind(op: Op, which: number): 0 | 1 | 2 | 3 {
  if (op === 'luFactor') return which === 1 ? 2 : 0;
  if (op === 'luFullPivot') return which === 0 ? 0 : 2;
  if (op === 'svd') return which === 1 ? 1 : 0;
  if (op === 'eigh') return which === 0 ? 1 : 0;
  if (op === 'eig') return 3;
  return 0;
}
const KIND_DTYPE = [['f32', 'f64', 'c64', 'c128'], ['f32', 'f64', 'f32', 'f64'], ['i32', 'i32', 'i32', 'i32'], ['c64', 'c128', 'c64', 'c128']] as const;

/**
 * Every output descriptor and the info view of `r` checked against its buffer (#35), before the
 * task is posted: a SharedArrayBuffer; a non-negative integer offset; the element type the op writes
 * in that slot; integer extents (one or two) followed by the request's batch extents; the
 * dense batch-contiguous span from the offset inside the buffer; info an Int32Array of at least
 * the batch count. The native side checks the same again (and each routine's extents). A request
 * that fails is a caller's bug: `InvalidArgument`, nothing written.
 */
function checkRequest(name: Op, r: LapackRequest, dtype: number, count: number): void {
  const op = `provider-blas LAPACK ${name}`;
  const nb = r.batch.length;
  for (let o = 0; o < 3; o++) {
    const d = r.out[o];
    if (d === undefined) continue;
    if (typeof d !== 'object' || d === null || !(d.buffer instanceof SharedArrayBuffer)) throw TenferroError.invalidArgument(op, `request.out[${o}]`, 'an output descriptor { buffer: SharedArrayBuffer, offset, dtype, shape }', d);
    const want = KIND_DTYPE[outKind(name, o)][dtype]!;
    if (d.dtype !== want) throw TenferroError.invalidArgument(op, `request.out[${o}].dtype`, `'${want}'`, d.dtype);
    if (!Number.isSafeInteger(d.offset) || d.offset < 0) throw TenferroError.invalidArgument(op, `request.out[${o}].offset`, 'a non-negative integer', d.offset);
    // Loops, not closures and slices: this runs on every call (#38 item 6).
    const shape = d.shape, lead = Array.isArray(shape) ? shape.length - nb : -1;
    let fits = lead === 1 || lead === 2;
    let elements = count;
    for (let i = 0; fits && i < shape.length; i++) {
      const e = shape[i]!;
      if (!Number.isSafeInteger(e) || e < 0 || (i >= lead && e !== r.batch[i - lead])) fits = false;
      else if (i < lead) elements *= e;
    }
    if (!fits) throw TenferroError.invalidArgument(op, `request.out[${o}].shape`, `one or two extents, then the batch extents [${r.batch.join(', ')}]`, shape);
    if ((d.offset + elements) * ELEMENT_BYTES[want]! > d.buffer.byteLength) throw TenferroError.invalidArgument(op, `request.out[${o}]`, `${elements} elements of ${want} from offset ${d.offset} inside its buffer (${d.buffer.byteLength} bytes)`, d.offset);
  }
  if (!(r.info instanceof Int32Array) || !(r.info.buffer instanceof SharedArrayBuffer) || r.info.length < count) throw TenferroError.invalidArgument(op, 'request.info', `an Int32Array over a SharedArrayBuffer of at least ${count} words`, r.info);
}

/** The LAPACK/BLAS routines (without prefix and trailing underscore) an op calls. */
function routines(op: Op, rOnly: boolean, complex: boolean): string[] {
  switch (op) {
    case 'cholesky': return ['potrf'];
    case 'solveTriangular': return ['trsm'];
    case 'luFactor': case 'lu': return ['getrf'];
    case 'solve': return ['gesv'];
    case 'qr': return rOnly ? ['geqrf'] : ['geqrf', complex ? 'ungqr' : 'orgqr'];
    case 'svd': return ['gesdd'];
    case 'eigh': return [complex ? 'heevd' : 'syevd'];
    case 'eig': return ['geev'];
    case 'luFullPivot': return ['getc2'];
  }
}

function pack(r: LapackRequest, op: number, dtype: number, threads: number): KernelArgs {
  const nb = r.batch.length;
  const w = kernelWords(HEADER + 3 * nb);
  const a = r.a;
  const b = r.b ?? a;
  const f = r.flags;
  w[LW.op] = op;
  w[LW.dtype] = dtype;
  w[LW.m] = r.m;
  w[LW.n] = r.n;
  w[LW.flags] =
    (f.upper ? FLAG.FlagUpper : 0) | (f.left ? FLAG.FlagLeft : 0) | (f.unitDiagonal ? FLAG.FlagUnit : 0) | (f.full ? FLAG.FlagFull : 0) | (f.vectors ? FLAG.FlagVectors : 0) | (f.rOnly ? FLAG.FlagROnly : 0);
  w[LW.threads] = threads;
  w[LW.nb] = nb;
  w[LW.offA] = a.offset;
  w[LW.rsA] = a.rowStride;
  w[LW.csA] = a.colStride;
  w[LW.offB] = b.offset;
  w[LW.rsB] = b.rowStride;
  w[LW.csB] = b.colStride;
  w[INFO_WORD] = r.info.byteOffset >>> 2;
  // Words 14 and 15 stay zero (kernelWords hands out zeroed words; the native side checks them).
  const buffers: SharedArrayBuffer[] = [a.buffer, b.buffer];
  for (let o = 0; o < 3; o++) {
    const d = r.out[o];
    const at = OUT_WORDS + 3 * o;
    if (d === undefined) {
      w[at] = -1;
      w[at + 1] = 0;
      w[at + 2] = 0;
      buffers.push(a.buffer);
    } else {
      w[at] = d.offset;
      w[at + 1] = d.shape[0]!;
      w[at + 2] = d.shape.length - nb === 2 ? d.shape[1]! : 1;
      buffers.push(d.buffer);
    }
  }
  buffers.push(r.info.buffer as SharedArrayBuffer);
  for (let t = 0; t < nb; t++) {
    w[HEADER + t] = r.batch[t]!;
    w[HEADER + nb + t] = a.batchStrides[t]!;
    w[HEADER + 2 * nb + t] = b.batchStrides[t]!;
  }
  return kernelArgs(w, buffers);
}

/**
 * The kernel arguments (words and buffers) of one checked request, exactly as the kernels post them
 * to a worker — for a caller of the native routine on its own thread (linalg's
 * `bench/breakdown.mjs`, #38), so the bench never mirrors the descriptor format. `threads`: the
 * LAPACK thread count word (0: leave the runtime's). Throws `InvalidArgument` as the kernels do.
 */
export function lapackKernelArgs(name: string, r: LapackRequest, threads: number): KernelArgs {
  const op = Object.hasOwn(OP, name) ? OP[name as Op] : undefined;
  const dtype = DTYPE[r.dtype];
  if (op === undefined) throw TenferroError.invalidArgument('provider-blas LAPACK', 'name', `one of ${Object.keys(OP).join(', ')}`, name);
  if (dtype === undefined) throw TenferroError.invalidArgument('provider-blas LAPACK', 'request.dtype', 'f32, f64, c64 or c128', r.dtype);
  let count = 1;
  for (let t = 0; t < r.batch.length; t++) count *= r.batch[t]!;
  checkRequest(name as Op, r, dtype, count);
  return pack(r, op, dtype, threads);
}

/** How many calls each op executed and declined (diagnostics and tests), since the kernels were made. */
export interface LapackCallCounts {
  readonly executed: Readonly<Record<string, number>>;
  readonly declined: Readonly<Record<string, number>>;
}

export function createLapackKernels(session: BlasSession, binding: BlasBinding): object {
  const executed: Record<string, number> = {};
  const declined: Record<string, number> = {};
  let symbols: Readonly<Record<string, boolean>> | undefined;
  const decline = (name: Op, detail: string): CpuProviderOutcome => {
    declined[name] = (declined[name] ?? 0) + 1;
    return Unsupported.of({ kind: 'runtimeUnavailable', detail });
  };
  // What the loaded runtime lacks for (op, dtype, rOnly): asked of the addon once, kept (the
  // loaded runtime's routines never change) — no strings or arrays per call (#38 item 6).
  const missingFor = new Map<number, readonly string[]>();
  const missing = (name: Op, dtype: number, rOnly: boolean): readonly string[] => {
    const key = OP[name] * 8 + dtype * 2 + (rOnly ? 1 : 0);
    let m = missingFor.get(key);
    if (m === undefined) {
      const present = (symbols ??= (binding.lapackSymbols() as Readonly<Record<string, boolean>> | null) ?? undefined);
      const prefix = PREFIX[dtype]!;
      m = Object.freeze(routines(name, rOnly, dtype >= 2).map((s) => `${prefix}${s}`).filter((s) => present?.[s] !== true));
      if (present !== undefined) missingFor.set(key, m);
    }
    return m;
  };
  /** The call on a loaded runtime: the routines it needs looked up, then the kernel — one promise, no async frame (the per-call path). */
  const run = (name: Op, ctx: CpuExecutionContext, r: LapackRequest, runtime: BlasRuntime, dtype: number): CpuProviderOutcome | Promise<CpuProviderOutcome> => {
    const lacking = missing(name, dtype, r.flags.rOnly);
    if (lacking.length > 0) return decline(name, `the loaded runtime (${runtime.label}) does not export ${lacking.map((s) => `${s}_`).join(', ')}`);
    const threads = runtime.setsThreads ? (ctx.parallelMode === 'inner' ? Math.max(1, ctx.threadBudget) : 1) : 0;
    return ctx.run(lapackKernel, pack(r, OP[name], dtype, threads)).then(() => {
      executed[name] = (executed[name] ?? 0) + 1;
      return EXECUTED;
    });
  };
  /** The checks of one call, then the call (a throw is the caller's bug: InvalidArgument). */
  const checked = (name: Op, ctx: CpuExecutionContext, r: LapackRequest): CpuProviderOutcome | Promise<CpuProviderOutcome> => {
    const dtype = DTYPE[r.dtype];
    if (dtype === undefined) return decline(name, `LAPACK ${name} takes f32, f64, c64 and c128, not ${r.dtype}`);
    let count = 1;
    for (let t = 0; t < r.batch.length; t++) count *= r.batch[t]!;
    checkRequest(name, r, dtype, count);
    const mx = Math.max(r.m, r.n), mn = Math.min(r.m, r.n);
    // Every per-matrix array LAPACK indexes (and gesdd's complex workspace) within 32-bit integers.
    if (mx * mx > INT_MAX || (name === 'svd' && 5 * mn * mn + 5 * mn + 2 * mx * mn > INT_MAX)) return decline(name, 'a matrix exceeds the 32-bit LAPACK integer');
    // No promise of its own once the runtime is loaded (as the GEMM provider).
    const loaded = session.loaded();
    return loaded !== undefined ? run(name, ctx, r, loaded, dtype) : session.ensureLoaded(ctx).then((runtime) => run(name, ctx, r, runtime, dtype));
  };
  const call =
    (name: Op) =>
    (ctx: CpuExecutionContext, r: LapackRequest): CpuProviderOutcome | Promise<CpuProviderOutcome> => {
      try {
        return checked(name, ctx, r);
      } catch (e) {
        return Promise.reject(e); // a request that fails its checks: a rejection, as from an async kernel
      }
    };
  return Object.freeze({
    name: 'LAPACK (provider-blas)',
    executionCapabilities: () => session.declared.capabilities,
    // native/src/lapack.cc writes every element of every output of an executed call (a failed
    // batch: zeros; an empty matrix: identities where the factor has entries), and every decline
    // above happens before the kernel runs: outputs may come unzeroed from the pool (R108).
    overwritesOutputs: true,
    declinesBeforeWriting: true,
    /** Calls executed and declined per op (a snapshot). */
    callCounts: (): LapackCallCounts => ({ executed: { ...executed }, declined: { ...declined } }),
    cholesky: call('cholesky'),
    solveTriangular: call('solveTriangular'),
    luFactor: call('luFactor'),
    lu: call('lu'),
    solve: call('solve'),
    qr: call('qr'),
    svd: call('svd'),
    eigh: call('eigh'),
    eig: call('eig'),
    luFullPivot: call('luFullPivot'),
  });
}
