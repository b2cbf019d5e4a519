/**
 * The worker-side GEMM kernel module. Engine workers import it lazily (through a KernelRef) the
 * first time they run `faerGemm`; the addon is loaded then, once per worker, and each call runs
 * one task: the whole request, or the block of C (rows [m0, m1), columns [n0, n1)) and batch
 * range [b0, b1) the provider assigned to this worker. All batches of a task run in this call.
 *
 * A task crosses to the worker as packed kernel arguments (`packGemmTask`): the descriptor's
 * words and the operand buffers, with no structured clone. The operands' SharedArrayBuffers are
 * viewed as Float32Array / Float64Array over the whole buffer (views cached per buffer); the addon receives their data pointers (napi_get_typedarray_info works for views over
 * a SharedArrayBuffer) and bounds-checks every index the request reaches against these views.
 */
import type { CpuGemmRequest, Scalar } from '@tenferro/core';
import { type KernelArgs, kernelArgs, kernelWords } from '@tenferro/core/kernel';
import { DESC, DTYPE_CODE, GemmStatus, type GemmStatusName, gemmStatusName } from '../native/binding.js';
import { loadFaer } from '../native/load.js';

/** One kernel task: the validated request (as core passed it) plus this task's part. */
export interface FaerGemmTask {
  readonly request: CpuGemmRequest;
  /** ISA path id, or -1 for the process's best. */
  readonly isa: number;
  readonly m0: number;
  readonly m1: number;
  readonly n0: number;
  readonly n1: number;
  readonly b0: number;
  readonly b1: number;
  /** The execution's abort word (`ctx.abortWord`): its buffer and byte offset; absent: never stops early. */
  readonly abort?: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number };
  /**
   * Dynamic chunks shared by the lanes of a split (every lane gets the same range): chunk
   * `counter++` of `size` rows (`axis` 0) or columns (1), until the range is used up.
   */
  readonly chunk?: { readonly axis: 0 | 1; readonly size: number; readonly counter: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number } };
}

const STATUS_TEXT: Readonly<Record<Exclude<GemmStatusName, 'Ok'>, string>> = {
  BadArguments: 'malformed arguments',
  OutOfBounds: 'an operand reaches outside its buffer',
  IsaUnavailable: 'the requested ISA path cannot run on this CPU',
  BadDtype: 'unsupported dtype',
  BadRange: 'the task range lies outside the request',
  Aborted: 'the execution was aborted (its abort word was raised); the output is partly written',
  NoMemory: 'no packing scratch memory could be allocated',
};

type Lanes = Float32Array | Float64Array;

const views32 = new WeakMap<SharedArrayBuffer, Float32Array>();
const views64 = new WeakMap<SharedArrayBuffer, Float64Array>();

/** The whole of `buffer` as lanes of the dtype's real type, cached per buffer. */
function lanes(single: boolean, buffer: SharedArrayBuffer): Lanes {
  if (single) {
    let v = views32.get(buffer);
    if (v === undefined) views32.set(buffer, (v = new Float32Array(buffer, 0, buffer.byteLength >>> 2)));
    return v;
  }
  let v = views64.get(buffer);
  if (v === undefined) views64.set(buffer, (v = new Float64Array(buffer, 0, Math.floor(buffer.byteLength / 8))));
  return v;
}

function re(s: Scalar): number {
  return typeof s === 'number' ? s : s[0];
}

function im(s: Scalar): number {
  return typeof s === 'number' ? 0 : s[1];
}

/** The descriptor of `task` (see DESC in native/binding.ts). */
export function describeTask(task: FaerGemmTask): Float64Array {
  return fillDescriptor(task, new Float64Array(descriptorLength(task.request)));
}

/** Words of the descriptor of `request`: the header, 4 per batch axis, and 1 + 3 per summed axis when it has summed axes. */
function descriptorLength(r: CpuGemmRequest): number {
  const summed = r.summed?.extents.length ?? 0;
  return DESC.HEADER + 4 * r.batch.length + (summed > 0 ? 1 + 3 * summed : 0);
}

/** Write the descriptor of `task` into `d` ({@link descriptorLength} long) and return `d`. */
function fillDescriptor(task: FaerGemmTask, d: Float64Array): Float64Array {
  const r = task.request;
  const rank = r.batch.length;
  const code = DTYPE_CODE[r.dtype as keyof typeof DTYPE_CODE];
  d[DESC.dtype] = code ?? -1;
  d[DESC.m] = r.m;
  d[DESC.n] = r.n;
  d[DESC.k] = r.k;
  d[DESC.offA] = r.lhs.offset;
  d[DESC.rsA] = r.lhs.rowStride;
  d[DESC.csA] = r.lhs.colStride;
  d[DESC.offB] = r.rhs.offset;
  d[DESC.rsB] = r.rhs.rowStride;
  d[DESC.csB] = r.rhs.colStride;
  d[DESC.offC] = r.out.offset;
  d[DESC.rsC] = r.out.rowStride;
  d[DESC.csC] = r.out.colStride;
  d[DESC.alphaRe] = re(r.alpha);
  d[DESC.alphaIm] = im(r.alpha);
  d[DESC.betaRe] = re(r.beta);
  d[DESC.betaIm] = im(r.beta);
  d[DESC.conjA] = r.conjLhs ? 1 : 0;
  d[DESC.conjB] = r.conjRhs ? 1 : 0;
  d[DESC.isa] = task.isa;
  d[DESC.m0] = task.m0;
  d[DESC.m1] = task.m1;
  d[DESC.n0] = task.n0;
  d[DESC.n1] = task.n1;
  d[DESC.b0] = task.b0;
  d[DESC.b1] = task.b1;
  d[DESC.rank] = rank;
  for (let t = 0; t < rank; t++) {
    d[DESC.HEADER + t] = r.batch[t]!;
    d[DESC.HEADER + rank + t] = r.lhs.batchStrides[t]!;
    d[DESC.HEADER + 2 * rank + t] = r.rhs.batchStrides[t]!;
    d[DESC.HEADER + 3 * rank + t] = r.out.batchStrides[t]!;
  }
  const summed = r.summed;
  if (summed !== undefined && summed.extents.length > 0) {
    const s = summed.extents.length;
    const at = DESC.HEADER + 4 * rank;
    d[at] = s;
    for (let t = 0; t < s; t++) {
      d[at + 1 + t] = summed.extents[t]!;
      d[at + 1 + s + t] = summed.lhsStrides[t]!;
      d[at + 1 + 2 * s + t] = summed.rhsStrides[t]!;
    }
  }
  return d;
}

/**
 * Words of a packed task before the descriptor: the abort word's byte offset in buffer 3 (-1:
 * none), the chunk counter's buffer index (-1: no chunks), the chunk axis and size, and the
 * counter's byte offset in its buffer.
 */
const ABORT_OFFSET = 0;
const COUNTER_BUFFER = 1;
const CHUNK_AXIS = 2;
const CHUNK_SIZE = 3;
const COUNTER_OFFSET = 4;
const DESC_AT = 5;

/** The packed kernel arguments of `task`: `[abort offset, counter buffer, chunk axis, chunk size, counter offset, descriptor…]` and `[A, B, C, abort buffer?, counter buffer?]`. */
export function packGemmTask(task: FaerGemmTask): KernelArgs {
  const words = kernelWords(DESC_AT + descriptorLength(task.request));
  words[ABORT_OFFSET] = task.abort === undefined ? -1 : task.abort.byteOffset;
  fillDescriptor(task, words.subarray(DESC_AT));
  const r = task.request;
  const buffers = [r.lhs.buffer, r.rhs.buffer, r.out.buffer];
  if (task.abort !== undefined) buffers.push(task.abort.buffer);
  words[COUNTER_BUFFER] = -1;
  if (task.chunk !== undefined) {
    words[COUNTER_BUFFER] = buffers.length;
    words[CHUNK_AXIS] = task.chunk.axis;
    words[CHUNK_SIZE] = task.chunk.size;
    words[COUNTER_OFFSET] = task.chunk.counter.byteOffset;
    buffers.push(task.chunk.counter.buffer);
  }
  return kernelArgs(words, buffers);
}

/**
 * Kernel export run by engine workers, on a task packed by `packGemmTask`. Throws (→ KernelFailed)
 * only if the addon is missing or refuses the task; a refusal's error has `code` = the status
 * name (e.g. `'OutOfBounds'`), which core reports as `KernelFailed.detail.kernelCode`. When the
 * execution's abort word was raised the native GEMM stops at its next block boundary and this
 * throws with `code: 'Aborted'`; core then settles the operation with `ExecutionAborted` (or
 * `BackendClosed`).
 */
export function faerGemm(args: KernelArgs): void {
  const status = loadFaer();
  if (!status.available) throw new Error(`@tenferro/provider-faer: ${status.reason}`);
  const { words, buffers } = args;
  const single = words[DESC_AT + DESC.dtype] === DTYPE_CODE.f32 || words[DESC_AT + DESC.dtype] === DTYPE_CODE.c64;
  const a = lanes(single, buffers[0]!);
  const b = lanes(single, buffers[1]!);
  const c = lanes(single, buffers[2]!);
  const abortAt = words[ABORT_OFFSET]!;
  const abort = abortAt >= 0 && buffers[3] !== undefined ? abortView(buffers[3], abortAt) : undefined;
  const at = words[COUNTER_BUFFER]!;
  const counter = at >= 0 ? buffers[at] : undefined;
  const desc = descriptorOf(words);
  const code =
    counter === undefined
      ? status.binding.gemm(desc, a, b, c, abort)
      : status.binding.gemm(desc, a, b, c, abort, new Int32Array(counter, words[COUNTER_OFFSET]!, 1), words[CHUNK_AXIS] as 0 | 1, words[CHUNK_SIZE]!);
  if (code !== GemmStatus.Ok) throw refusal(code);
}

// One-entry caches of the two views a task needs beyond its operands. A worker's tasks arrive in
// one argument area and an engine's abort word stays put, so task after task asks for the same
// window of the same memory: a view is made once instead of twice per call (~0.05 µs).
let lastWords: Float64Array | undefined;
let lastDesc: Float64Array | undefined;
let lastAbort: Int32Array | undefined;

/** The descriptor part of a packed task's words: a view of the same memory, reused while the words occupy the same window. */
function descriptorOf(words: Float64Array): Float64Array {
  const last = lastWords;
  if (last !== undefined && last.buffer === words.buffer && last.byteOffset === words.byteOffset && last.length === words.length) return lastDesc!;
  lastWords = words;
  return (lastDesc = words.subarray(DESC_AT));
}

/** The abort word at `byteOffset` of `buffer` as a one-element Int32Array. */
function abortView(buffer: SharedArrayBuffer, byteOffset: number): Int32Array {
  const last = lastAbort;
  if (last !== undefined && last.buffer === buffer && last.byteOffset === byteOffset) return last;
  return (lastAbort = new Int32Array(buffer, byteOffset, 1));
}

/**
 * A grouped GEMM's jobs as one kernel task (`faerGemmGroup`): unbatched jobs of one dtype, each
 * recorded in `ledger` (core's `CpuGroupedGemmRequest.ledger`) once it has written its output.
 * With `counter`, the lanes of a split all get every job and claim them one by one through it (a
 * lane that starts late runs fewer); without it, the task runs them all in order.
 */
export interface FaerGemmGroupTask {
  readonly jobs: readonly CpuGemmRequest[];
  /** Indices into `jobs` that this task may run (in claim order), each with its ledger word `ledger[index]`. */
  readonly indices: readonly number[];
  readonly ledger: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number; readonly length: number };
  readonly isa: number;
  readonly abort?: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number };
  readonly counter?: SharedArrayBuffer;
}

/**
 * A group task as it crosses to the worker: its job table in a SharedArrayBuffer (`table`, read
 * as a Float64Array: per job its ledger index, the indices in `buffers` of A, B and C, then its
 * descriptor of rank 0) and the distinct operand buffers, the ledger, the counter and the abort
 * word — a structured-clone payload (a grouped GEMM names more numbers and buffers than packed
 * kernel arguments carry), one per task rather than one per job.
 */
export interface FaerGemmGroupPayload {
  readonly count: number;
  readonly dtype: number;
  readonly table: SharedArrayBuffer;
  readonly buffers: readonly SharedArrayBuffer[];
  readonly ledger: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number; readonly length: number };
  readonly counter?: SharedArrayBuffer;
  readonly abort?: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number };
}

/** Words per job in the table: its ledger index, the buffer indices of A, B and C, then its descriptor (rank 0). */
const G_JOB = 4 + DESC.HEADER;

/** The payload of `task` (see {@link FaerGemmGroupPayload}). Every job must be unbatched (`batch: []`). */
export function packGemmGroupTask(task: FaerGemmGroupTask): FaerGemmGroupPayload {
  const table = new SharedArrayBuffer(8 * G_JOB * task.indices.length);
  const words = new Float64Array(table);
  const buffers: SharedArrayBuffer[] = [];
  const index = new Map<SharedArrayBuffer, number>();
  const at = (b: SharedArrayBuffer): number => {
    let i = index.get(b);
    if (i === undefined) index.set(b, (i = buffers.push(b) - 1));
    return i;
  };
  task.indices.forEach((j, t) => {
    const r = task.jobs[j]!;
    const o = G_JOB * t;
    words[o] = j;
    words[o + 1] = at(r.lhs.buffer);
    words[o + 2] = at(r.rhs.buffer);
    words[o + 3] = at(r.out.buffer);
    fillDescriptor({ request: r, isa: task.isa, m0: 0, m1: r.m, n0: 0, n1: r.n, b0: 0, b1: 1 }, words.subarray(o + 4, o + G_JOB));
  });
  const dtype = task.jobs[task.indices[0] ?? 0]?.dtype;
  return {
    count: task.indices.length,
    dtype: dtype === undefined ? -1 : (DTYPE_CODE[dtype as keyof typeof DTYPE_CODE] ?? -1),
    table,
    buffers,
    ledger: task.ledger,
    ...(task.counter === undefined ? {} : { counter: task.counter }),
    ...(task.abort === undefined ? {} : { abort: task.abort }),
  };
}

/**
 * Kernel export run by engine workers on a payload made by `packGemmGroupTask`: runs its jobs (or,
 * with a counter, the ones it claims) one native `gemm` call each, in this one task, and adds 1 to
 * each job's ledger word after the job has written its output. Throws like `faerGemm` on the
 * first refused job (the jobs before it are written and recorded) or when the abort word was raised.
 */
export function faerGemmGroup(task: FaerGemmGroupPayload): void {
  const status = loadFaer();
  if (!status.available) throw new Error(`@tenferro/provider-faer: ${status.reason}`);
  const { count, buffers } = task;
  if (count === 0) return;
  const words = new Float64Array(task.table);
  const single = task.dtype === DTYPE_CODE.f32 || task.dtype === DTYPE_CODE.c64;
  const ledger = new Int32Array(task.ledger.buffer, task.ledger.byteOffset, task.ledger.length);
  const counter = task.counter === undefined ? undefined : new Int32Array(task.counter, 0, 1);
  const abort = task.abort === undefined ? undefined : new Int32Array(task.abort.buffer, task.abort.byteOffset, 1);
  for (let next = 0; ; next++) {
    const t = counter === undefined ? next : Atomics.add(counter, 0, 1);
    if (t >= count) return;
    const o = G_JOB * t;
    const code = status.binding.gemm(
      words.subarray(o + 4, o + G_JOB),
      lanes(single, buffers[words[o + 1]!]!),
      lanes(single, buffers[words[o + 2]!]!),
      lanes(single, buffers[words[o + 3]!]!),
      abort,
    );
    if (code !== GemmStatus.Ok) throw refusal(code);
    Atomics.add(ledger, words[o]!, 1);
  }
}

/** The error for native status `code`: its `code` property is the status name. */
function refusal(code: number): Error & { readonly code: string } {
  const name = gemmStatusName(code);
  const text = name === undefined || name === 'Ok' ? 'unknown status' : STATUS_TEXT[name];
  const error = new Error(`@tenferro/provider-faer: native GEMM refused the task: ${name ?? 'Unknown'} (status ${code}: ${text})`);
  return Object.assign(error, { code: name ?? 'UnknownStatus' });
}
