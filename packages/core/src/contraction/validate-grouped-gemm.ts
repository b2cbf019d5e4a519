import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { CONTRACTION_DTYPES, DTYPE_INFO, type DType, type Scalar } from '../tensor/dtype.js';
import { layoutIsInjective, reachableSpan } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import { validateSignal } from '../util/abort-listeners.js';
import { bufferAddress } from '../util/buffer-address.js';

/**
 * One job of a grouped GEMM: `out = alpha · op(lhs) · op(rhs) + beta · out` over rank-2 tensors
 * (`lhs` m×k, `rhs` k×n, `out` m×n, any strides); `op` conjugates when `conjLhs`/`conjRhs` (complex
 * dtypes only). `alpha` defaults to 1 and `beta` to 0 (the output is overwritten, never read).
 */
export interface GemmJob<D extends DType = DType> {
  readonly out: Tensor<D>;
  readonly lhs: Tensor<D>;
  readonly rhs: Tensor<D>;
  readonly alpha?: Scalar;
  readonly beta?: Scalar;
  readonly conjLhs?: boolean;
  readonly conjRhs?: boolean;
}

/** Options of `gemmGrouped`. */
export interface GemmGroupedOptions {
  /** Abort the operation: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal;
}

/** One validated job: the tensors and the GEMM extents. */
export interface GroupedJobSpec {
  /** The job's position in the caller's array. */
  readonly index: number;
  readonly out: Tensor;
  readonly lhs: Tensor;
  readonly rhs: Tensor;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly alpha: Scalar;
  readonly beta: Scalar;
  readonly conjLhs: boolean;
  readonly conjRhs: boolean;
}

/** A validated grouped GEMM: one dtype, jobs whose outputs are pairwise disjoint and overlap no input. */
export interface GroupedGemmSpec {
  readonly dtype: DType;
  /** The jobs with a non-empty output, in the caller's order (a job with an empty output has nothing to write). */
  readonly jobs: readonly GroupedJobSpec[];
  /** Every tensor the jobs name (to hold their storage while the operation runs). */
  readonly tensors: readonly Tensor[];
  readonly signal: AbortSignal | undefined;
}

const JOB_KEYS: ReadonlySet<string> = new Set(['out', 'lhs', 'rhs', 'alpha', 'beta', 'conjLhs', 'conjRhs']);
const OPTION_KEYS: ReadonlySet<string> = new Set(['signal']);
const ROLES = ['out', 'lhs', 'rhs'] as const;

/**
 * Validate a grouped GEMM before anything is admitted, allocated or written (R99, R110): every job
 * an object with known keys only, three live rank-2 tensors of one contraction dtype (R109) with
 * paired extents, scalars of that dtype; then the output ranges: each output free of self-overlap,
 * the outputs pairwise disjoint and none overlapping any input of any job (`OutputAliasing`).
 * Disjointness is decided on the byte spans the views reach, so it is conservative: two
 * interleaved outputs that never share an element still count as overlapping.
 */
export function validateGroupedGemm(op: string, jobs: unknown, options: unknown): GroupedGemmSpec {
  if (!Array.isArray(jobs)) throw invalidArgument(op, 'jobs', 'an array of { out, lhs, rhs, alpha?, beta?, conjLhs?, conjRhs? } jobs', jobs);
  const opts = (options ?? {}) as GemmGroupedOptions;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(opts)) {
    if (!OPTION_KEYS.has(key)) throw invalidArgument(op, `options.${key}`, 'the option signal', key);
  }
  const signal = validateSignal(opts.signal, op);
  let dtype: DType | undefined;
  const specs: GroupedJobSpec[] = [];
  const tensors: Tensor[] = [];
  // Per job: no allocation beyond its spec. Labels such as `jobs[3].out` are built only for an error.
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i] as Record<string, unknown> | null;
    if (typeof job !== 'object' || job === null || Array.isArray(job)) throw invalidArgument(op, `jobs[${i}]`, 'a { out, lhs, rhs } job', job);
    for (const key in job) {
      if (Object.hasOwn(job, key) && !JOB_KEYS.has(key)) throw invalidArgument(op, `jobs[${i}].${key}`, `one of the job keys ${[...JOB_KEYS].join(', ')}`, key);
    }
    for (let r = 0; r < ROLES.length; r++) {
      const role = ROLES[r]!;
      const t = job[role];
      if (!Tensor.isTensor(t)) throw invalidArgument(op, `jobs[${i}].${role}`, 'a Tensor', t);
      if (t.disposed) tensorInternals.check(t, op, `jobs[${i}].${role}`);
      if (t.rank !== 2) throw new TenferroError('RankMismatch', `jobs[${i}].${role} must be rank 2 but has rank ${t.rank}`, { op, detail: { role: `jobs[${i}].${role}`, expected: 2, actual: t.rank } });
      dtype ??= t.dtype;
      if (t.dtype !== dtype) {
        throw new TenferroError('DTypeMismatch', `jobs[${i}].${role} must be ${dtype} (the dtype of the first job) but is ${t.dtype}`, { op, detail: { role: `jobs[${i}].${role}`, expected: dtype, actual: t.dtype } });
      }
    }
    const out = job.out as Tensor;
    const lhs = job.lhs as Tensor;
    const rhs = job.rhs as Tensor;
    const complex = DTYPE_INFO[lhs.dtype].complex;
    const alpha = job.alpha === undefined && !complex ? 1 : scalar(op, `jobs[${i}].alpha`, job.alpha ?? 1, lhs.dtype, complex);
    const beta = job.beta === undefined && !complex ? 0 : scalar(op, `jobs[${i}].beta`, job.beta ?? 0, lhs.dtype, complex);
    if (!CONTRACTION_DTYPES.includes(lhs.dtype)) {
      throw new TenferroError('UnsupportedDType', `contractions support ${CONTRACTION_DTYPES.join(', ')}; convert ${lhs.dtype} operands to f64`, { op, detail: { dtype: lhs.dtype } });
    }
    if (job.conjLhs !== undefined && typeof job.conjLhs !== 'boolean') throw invalidArgument(op, `jobs[${i}].conjLhs`, 'a boolean', job.conjLhs);
    if (job.conjRhs !== undefined && typeof job.conjRhs !== 'boolean') throw invalidArgument(op, `jobs[${i}].conjRhs`, 'a boolean', job.conjRhs);
    const m = lhs.shape[0]!;
    const k = lhs.shape[1]!;
    const k2 = rhs.shape[0]!;
    const n = rhs.shape[1]!;
    if (k !== k2) {
      throw new TenferroError('ShapeMismatch', `jobs[${i}]: contracted extents differ: lhs has ${k} columns, rhs has ${k2} rows`, {
        op,
        detail: { kind: 'ContractedDimensions', job: i, lhsExtent: k, rhsExtent: k2 },
      });
    }
    if (out.shape[0] !== m || out.shape[1] !== n) {
      throw new TenferroError('ShapeMismatch', `jobs[${i}].out shape must be [${m}, ${n}] but is [${out.shape.join(', ')}]`, {
        op,
        detail: { kind: 'ExpectedActual', job: i, expected: [m, n], actual: [...out.shape] },
      });
    }
    if (!layoutIsInjective(out.shape, out.strides)) {
      throw new TenferroError('OutputAliasing', `jobs[${i}].out is not provably free of self-overlap`, { op, detail: { role: 'out', job: i } });
    }
    tensors.push(out, lhs, rhs);
    if (m === 0 || n === 0) continue;
    specs.push(Object.freeze({ index: i, out, lhs, rhs, m, n, k, alpha, beta, conjLhs: complex && job.conjLhs === true, conjRhs: complex && job.conjRhs === true }));
  }
  checkOutputRanges(op, specs);
  return Object.freeze({ dtype: dtype ?? 'f64', jobs: Object.freeze(specs), tensors: Object.freeze(tensors), signal });
}

/** A byte range of memory: `space` is the buffer object, or `'memory'` when absolute addresses are known. */
interface Span {
  readonly space: SharedArrayBuffer | 'memory';
  readonly lo: number;
  readonly hi: number;
  readonly job: number;
}

/** The last buffer {@link spanOf} looked up, and its address (the jobs of a group usually slice a few buffers). */
let lastBuffer: SharedArrayBuffer | undefined;
let lastBase: number | undefined;

/** The memory a view reaches (first to last element), or `undefined` when it reaches nothing. */
function spanOf(t: Tensor, job: number): Span | undefined {
  const s = reachableSpan(t);
  if (s === undefined) return undefined;
  const bytes = DTYPE_INFO[t.dtype].bytes;
  const buffer = tensorInternals.buffer(t);
  // Two buffer objects can share one store (a buffer that went through postMessage and back):
  // with the OS binding, compare absolute addresses (below 2^53, exact as numbers).
  if (buffer !== lastBuffer) {
    lastBuffer = buffer;
    lastBase = buffer.byteLength === 0 ? undefined : bufferAddress(buffer);
  }
  const base = lastBase;
  if (base === undefined) return { space: buffer, lo: s.first * bytes, hi: (s.last + 1) * bytes, job };
  return { space: 'memory', lo: base + s.first * bytes, hi: base + (s.last + 1) * bytes, job };
}

/** Outputs pairwise disjoint, and no input overlapping any output: sorted spans, O(J log J). */
function checkOutputRanges(op: string, jobs: readonly GroupedJobSpec[]): void {
  try {
    checkSpans(op, jobs);
  } finally {
    lastBuffer = undefined; // hold no caller buffer past the check
    lastBase = undefined;
  }
}

function checkSpans(op: string, jobs: readonly GroupedJobSpec[]): void {
  const outputs = new Map<Span['space'], Span[]>();
  for (let i = 0; i < jobs.length; i++) {
    const s = spanOf(jobs[i]!.out, jobs[i]!.index);
    if (s === undefined) continue;
    let list = outputs.get(s.space);
    if (list === undefined) outputs.set(s.space, (list = []));
    list.push(s);
  }
  for (const list of outputs.values()) {
    list.sort((a, b) => a.lo - b.lo);
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.lo < list[i - 1]!.hi) {
        const [a, b] = [list[i - 1]!.job, list[i]!.job].sort((x, y) => x - y);
        throw new TenferroError('OutputAliasing', `the outputs of jobs ${a} and ${b} are not provably disjoint`, { op, detail: { role: 'out', jobs: [a, b] } });
      }
    }
  }
  for (let i = 0; i < jobs.length; i++) {
    for (let r = 1; r < ROLES.length; r++) {
      const role = ROLES[r] as 'lhs' | 'rhs';
      const s = spanOf(jobs[i]![role], jobs[i]!.index);
      const list = s === undefined ? undefined : outputs.get(s.space);
      if (s === undefined || list === undefined) continue;
      // The first output ending after the input starts; outputs are disjoint and sorted, so their ends are too.
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (list[mid]!.hi <= s.lo) lo = mid + 1;
        else hi = mid;
      }
      const hit = list[lo];
      if (hit !== undefined && hit.lo < s.hi) {
        throw new TenferroError('OutputAliasing', `the output of job ${hit.job} overlaps the storage of jobs[${s.job}].${role}`, { op, detail: { role: 'out', job: hit.job, input: `jobs[${s.job}].${role}` } });
      }
    }
  }
}

function scalar(op: string, param: string, value: unknown, dtype: DType, complex: boolean): Scalar {
  if (typeof value === 'number') return complex ? Object.freeze([value, 0] as const) : value;
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'number' && typeof value[1] === 'number') {
    if (!complex) throw new TenferroError('DTypeMismatch', `${param} must be ${dtype} but is complex`, { op, detail: { role: param, expected: dtype, actual: 'complex' } });
    return Object.freeze([value[0], value[1]] as const);
  }
  throw invalidArgument(op, param, complex ? 'a number or [re, im]' : 'a number', value);
}
