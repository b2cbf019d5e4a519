/**
 * The main-thread side of the faer GEMM provider: declines what it does not support, plans the
 * partition of C over the context's worker pool (Inner mode), and runs the kernel tasks.
 * It never creates threads: Sequential/Outer mode (or a small GEMM) is one task on the
 * context's own worker (`ctx.run`); Inner mode with a pool is one task per disjoint block of
 * C (or per batch range) through `pool.map`, at most `pool.size` (≤ threadBudget) at a time.
 */
import { types } from 'node:util';
import {
  type CpuGemmProvider,
  type CpuGemmRequest,
  type CpuExecutionContext,
  type CpuGroupedGemmRequest,
  type CpuProviderOutcome,
  type CpuProviderExecutionCapabilities,
  CONTRACTION_DTYPES,
  type DType,
  defineKernel,
  EXECUTED,
  type KernelArgs,
  Unsupported,
  validateGemmRequest,
} from '@tenferro/core';
import { freshChunkCounter } from './chunk-counter.js';
import { type FaerGemmGroupPayload, type FaerGemmTask, packGemmGroupTask, packGemmTask } from './kernels/gemm.js';
import { ABI, type NativeInfo } from './native/binding.js';
import { BATCH_SPLIT_MAX_WORK, CHUNKS_PER_LANE, DYNAMIC_SPLIT_MAX_WORK, defaultParallelMinWork, fixedSplitMinWork } from './options.js';

/** Batch axes the native GEMM takes (native/src/gemm.cc kMaxRank); more are declined. */
export const MAX_BATCH_RANK = ABI.constants.MaxBatchRank;

/** Per-call thread bound honoured exactly, on the engine's own workers (R63, R75, R76). */
export const FAER_CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

/** One task's share of a request: rows [m0, m1) and columns [n0, n1) of C, batches [b0, b1). */
export interface GemmPart {
  readonly m0: number;
  readonly m1: number;
  readonly n0: number;
  readonly n1: number;
  readonly b0: number;
  readonly b1: number;
}

export interface PartitionShape {
  /** Row granule of a split along M (the micro-kernel's MR in elements of the dtype). */
  readonly mr: number;
  /** Column granule of a split along N (NR). */
  readonly nr: number;
}

/** `count` near-equal contiguous ranges of `[0, extent)` on multiples of `granule` (the last may be ragged); empty ranges dropped. */
export function splitRange(extent: number, granule: number, count: number): [number, number][] {
  const units = Math.ceil(extent / granule);
  const parts = Math.max(1, Math.min(count, units));
  const out: [number, number][] = [];
  let unit = 0;
  for (let p = 0; p < parts; p++) {
    const take = Math.floor(units / parts) + (p < units % parts ? 1 : 0);
    const lo = Math.min(extent, unit * granule);
    const hi = Math.min(extent, (unit + take) * granule);
    unit += take;
    if (hi > lo) out.push([lo, hi]);
  }
  return out;
}

/** The number of summed items of a request (`CpuGemmRequest.summed`; 1 without summed axes). */
export function summedCount(request: Pick<CpuGemmRequest, 'summed'>): number {
  return request.summed === undefined ? 1 : request.summed.extents.reduce((a, b) => a * b, 1);
}

/** Real multiply-adds per m·n·k step: 4 for a complex dtype, 1 for a real one. */
export function realMultiplyAdds(dtype: DType | undefined): number {
  return dtype === 'c64' || dtype === 'c128' ? 4 : 1;
}

/** The number of GEMMs of a request's batch. */
function batchCount(request: Pick<CpuGemmRequest, 'batch'>): number {
  let count = 1;
  for (let i = 0; i < request.batch.length; i++) count *= request.batch[i]!;
  return count;
}

/** A request's real multiply-adds: m·n·k over its batches and summed items, ×4 for a complex dtype. */
function requestWork(request: Pick<CpuGemmRequest, 'm' | 'n' | 'k' | 'batch'> & { readonly dtype?: DType; readonly summed?: CpuGemmRequest['summed'] }): number {
  return request.m * request.n * Math.max(request.k, 1) * summedCount(request) * request.batch.reduce((a, b) => a * b, 1) * realMultiplyAdds(request.dtype);
}

/**
 * How a request is split over `lanes` workers: one part when it is small (m·n·k·batches real
 * multiply-adds — ×4 for a complex dtype — below `minWork`) or there is one lane; over batch
 * ranges when there are at least `lanes` batches of small GEMMs; else over the larger of M and N
 * (each part covers every batch). Parts never share an element of C.
 */
export function planParts(
  request: Pick<CpuGemmRequest, 'm' | 'n' | 'k' | 'batch'> & { readonly dtype?: DType; readonly summed?: CpuGemmRequest['summed'] },
  lanes: number,
  shape: PartitionShape,
  minWork: number,
): GemmPart[] {
  const { m, n, k } = request;
  const batches = request.batch.reduce((a, b) => a * b, 1);
  const summed = summedCount(request);
  const whole: GemmPart = { m0: 0, m1: m, n0: 0, n1: n, b0: 0, b1: batches };
  const perGemm = m * n * Math.max(k, 1) * summed;
  if (lanes <= 1 || m === 0 || n === 0 || batches === 0 || perGemm * batches * realMultiplyAdds(request.dtype) < minWork) return [whole];
  if (batches >= lanes && perGemm <= BATCH_SPLIT_MAX_WORK) {
    return splitRange(batches, 1, lanes).map(([b0, b1]) => ({ ...whole, b0, b1 }));
  }
  const byN = () => splitRange(n, shape.nr, lanes).map(([n0, n1]) => ({ ...whole, n0, n1 }));
  const byM = () => splitRange(m, shape.mr, lanes).map(([m0, m1]) => ({ ...whole, m0, m1 }));
  if (summed > 1) {
    // A summed request's granules can be coarse (its kernels may run transposed, MR along N):
    // the axis whose largest part is the smaller block of C (ties: the larger extent).
    const largest = (parts: GemmPart[]) => Math.max(...parts.map((p) => (p.m1 - p.m0) * (p.n1 - p.n0)));
    const [pn, pm] = [byN(), byM()];
    const [ln, lm] = [largest(pn), largest(pm)];
    return ln < lm || (ln === lm && n >= m) ? pn : pm;
  }
  return n >= m ? byN() : byM();
}

/** How the lanes of a split share the rows (`axis` 0) or columns (1) in chunks of `size`. */
export interface ChunkPlan {
  readonly axis: 0 | 1;
  readonly size: number;
}

/**
 * Dynamic chunks for a split of `parts` (as {@link planParts} made them): when they split M or N
 * (not batches) and the whole request is at most `maxWork` real multiply-adds, `CHUNKS_PER_LANE`
 * chunks per lane along the same axis, on the same granule; otherwise undefined (fixed parts).
 */
export function planChunks(
  request: Pick<CpuGemmRequest, 'm' | 'n' | 'k' | 'batch'> & { readonly dtype?: DType; readonly summed?: CpuGemmRequest['summed'] },
  parts: readonly GemmPart[],
  shape: PartitionShape,
  maxWork: number = DYNAMIC_SPLIT_MAX_WORK,
): ChunkPlan | undefined {
  if (parts.length < 2) return undefined;
  const { m, n } = request;
  if (requestWork(request) > maxWork) return undefined;
  const first = parts[0]!;
  const axis: 0 | 1 | undefined = first.m1 - first.m0 < m ? 0 : first.n1 - first.n0 < n ? 1 : undefined;
  if (axis === undefined) return undefined;
  const extent = axis === 0 ? m : n;
  const granule = axis === 0 ? shape.mr : shape.nr;
  const size = Math.ceil(Math.ceil(extent / (CHUNKS_PER_LANE * parts.length)) / granule) * granule;
  return { axis, size };
}

/** Below this k a summed real request's items are thin: gathered into one K (native gemm.cc kGatherItemK). */
const GATHER_ITEM_K = 64;
/** ...when its block of C has at least this many elements (gemm.cc kGatherMinBlock). */
const GATHER_MIN_BLOCK = 1024;

/**
 * The partition granules of a summed real request as the native task runs it. Thin items into a
 * large enough C (gemm.cc run_gather_task; judged on the whole of C) run as one GEMM that, like any,
 * puts C's unit stride along M: with a row-major C the kernels run the transposed product
 * (Cᵀ = Bᵀ·Aᵀ). Other items run one by one in the orientation of wants_rows_unit: transposed when
 * lhs's rows are not unit-stride and rhs's columns are. Transposed, M splits on NR and N on MR.
 * Anything else: `shape`.
 */
export function summedOrientation(request: Pick<CpuGemmRequest, 'dtype' | 'm' | 'n' | 'k' | 'lhs' | 'rhs' | 'out' | 'summed'>, shape: PartitionShape): PartitionShape {
  const real = request.dtype === 'f32' || request.dtype === 'f64';
  if (!real || summedCount(request) < 2) return shape;
  const gathered = request.k < GATHER_ITEM_K && request.m * request.n >= GATHER_MIN_BLOCK;
  const transposed = gathered ? request.out.rowStride !== 1 && request.out.colStride === 1 : request.lhs.rowStride !== 1 && request.rhs.colStride === 1;
  return transposed ? { mr: shape.nr, nr: shape.mr } : shape;
}

const KERNEL_MODULE = './kernels/gemm.js';

/**
 * What a task of the native GEMM keeps busy: its own worker's thread, never more (the addon starts
 * no thread). Said on every `ctx.run`, so that on a backend of several threads the main thread
 * waits for it as for a one-thread task instead of yielding its CPU between checks to helpers that
 * do not exist: a 64×64 f64 `matmul` on a 2-thread backend took 16–21 µs a call posted as two
 * threads (the context's `nativeThreadCount()`), 12.5 µs as one (docs/performance.md).
 */
const ONE_THREAD = Object.freeze({ threads: 1 });

/** The partition granules for `dtype` under the chosen path (complex: one complex row is two real rows). */
export function partitionShape(info: NativeInfo, dtype: DType): PartitionShape {
  const real = dtype === 'f32' || dtype === 'c64' ? info.kernel.f32 : info.kernel.f64;
  const complex = dtype === 'c64' || dtype === 'c128';
  return { mr: complex ? Math.max(1, real.mr / 2) : real.mr, nr: real.nr };
}

export interface GemmProviderConfig {
  readonly info: NativeInfo;
  /** ISA id passed to the kernel (-1: the process's best). */
  readonly isa: number;
  /** The caller's `parallelMinWork`, or undefined for the path's default per dtype (`defaultParallelMinWork`). */
  readonly parallelMinWork: number | undefined;
}

export function createGemmProvider(config: GemmProviderConfig): CpuGemmProvider {
  const kernel = defineKernel<KernelArgs, void>(new URL(KERNEL_MODULE, import.meta.url), 'faerGemm');
  const groupKernel = defineKernel<FaerGemmGroupPayload, void>(new URL(KERNEL_MODULE, import.meta.url), 'faerGemmGroup');
  const shapes = new Map<DType, PartitionShape>(CONTRACTION_DTYPES.map((d) => [d, partitionShape(config.info, d)]));
  const single = (d: DType | undefined) => d === 'f32' || d === 'c64';
  const minWork32 = config.parallelMinWork ?? defaultParallelMinWork(config.info.isaId, 4);
  const minWork64 = config.parallelMinWork ?? defaultParallelMinWork(config.info.isaId, 8);
  const fixedMinWork32 = config.parallelMinWork ?? fixedSplitMinWork(config.info.isaId, 4);
  const fixedMinWork64 = config.parallelMinWork ?? fixedSplitMinWork(config.info.isaId, 8);
  /** Real multiply-adds below which a GEMM of `dtype` is one task. */
  const minWork = (dtype: DType | undefined): number => (single(dtype) ? minWork32 : minWork64);
  /** ...and below which it is one task when its split would be fixed parts (no chunks). */
  const fixedMinWork = (dtype: DType | undefined): number => (single(dtype) ? fixedMinWork32 : fixedMinWork64);
  const executed = (): CpuProviderOutcome => EXECUTED;
  /** `gemm`'s body: every decline first, then one task, or one task per lane. */
  const runGemm = (ctx: CpuExecutionContext, request: CpuGemmRequest): Promise<CpuProviderOutcome> => {
    // Every number is checked before anything else: a malformed request is a typed error here
    // and never reaches the addon (which checks the descriptor again itself).
    validateGemmRequest('gemm', request);
    const shape = shapes.get(request.dtype);
    if (shape === undefined) return Promise.resolve(Unsupported.dtype(request.dtype));
    if (request.batch.length > MAX_BATCH_RANK || (request.summed?.extents.length ?? 0) > MAX_BATCH_RANK) return Promise.resolve(Unsupported.of({ kind: 'stridedBatch' }));
    const pool = ctx.workerPool();
    // The execution's abort word, polled by the native GEMM at its block boundaries.
    const word: unknown = (ctx as { abortWord?: unknown }).abortWord;
    const abort = word instanceof Int32Array && types.isSharedArrayBuffer(word.buffer) ? { buffer: word.buffer, byteOffset: word.byteOffset } : undefined;
    if (pool === undefined || pool.size <= 1 || requestWork(request) < minWork(request.dtype)) {
      // One task over the whole request (planParts' first case, without its arrays): the common case at small sizes.
      const whole: FaerGemmTask = { request, isa: config.isa, m0: 0, m1: request.m, n0: 0, n1: request.n, b0: 0, b1: batchCount(request), abort };
      return ctx.run(kernel, packGemmTask(whole), ONE_THREAD).then(executed);
    }
    const parts = planParts(request, pool.size, summedOrientation(request, shape), minWork(request.dtype));
    const task = (p: GemmPart): KernelArgs => packGemmTask({ request, isa: config.isa, ...p, ...(abort === undefined ? {} : { abort }) } satisfies FaerGemmTask);
    if (parts.length === 1) return ctx.run(kernel, task(parts[0]!), ONE_THREAD).then(executed);
    // A summed request runs its whole sum in each part: fixed parts (a chunk would repeat the sum over a thinner block).
    const chunks = summedCount(request) > 1 ? undefined : planChunks(request, parts, shape);
    if (chunks === undefined) {
      if (requestWork(request) < fixedMinWork(request.dtype)) return ctx.run(kernel, task(planParts(request, 1, shape, 0)[0]!), ONE_THREAD).then(executed);
      return pool.map(kernel, parts.map(task)).then(executed);
    }
    // Every lane gets the whole range and claims chunks through one shared counter: one task,
    // packed once, for every lane (each worker copies the words into its own argument area).
    const counter = freshChunkCounter();
    const whole: GemmPart = { m0: 0, m1: request.m, n0: 0, n1: request.n, b0: 0, b1: parts[0]!.b1 };
    const chunked = packGemmTask({ request, isa: config.isa, ...whole, chunk: { ...chunks, counter }, ...(abort === undefined ? {} : { abort }) } satisfies FaerGemmTask);
    return pool.map(kernel, parts.map(() => chunked)).then(executed);
  };
  const provider: CpuGemmProvider = {
    name: `tenferro faer GEMM (${config.info.isa})`,
    executionCapabilities: () => FAER_CAPABILITIES,
    // Every decline (dtype) comes before a kernel is started.
    declaredSupport: () =>
      Object.freeze({ dtypes: CONTRACTION_DTYPES, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true, summedAxes: true }),
    gemm(ctx, request) {
      // Not `async`: a single-task GEMM (the common case at small sizes) is one `then` on its task.
      try {
        return runGemm(ctx, request);
      } catch (e) {
        return Promise.reject(e);
      }
    },
    // A grouped GEMM (R110's provider-owned path) in one kernel task per lane instead of one task
    // (a worker round trip) per job: every job is checked first (a decline comes before any job
    // runs); jobs big enough to split on their own (at least `parallelMinWork` with a pool of more
    // than one lane) go through `gemm` one after another; the others are one task that runs them
    // in order, or, with a pool, one task per lane, the lanes claiming jobs through a shared counter.
    async groupedGemm(ctx, request: CpuGroupedGemmRequest) {
      const { jobs, ledger } = request;
      for (const job of jobs) {
        validateGemmRequest('gemmGrouped', job);
        if (!shapes.has(job.dtype)) return Unsupported.dtype(job.dtype);
        if (job.batch.length > MAX_BATCH_RANK || (job.summed?.extents.length ?? 0) > MAX_BATCH_RANK) return Unsupported.of({ kind: 'stridedBatch' });
      }
      const pool = ctx.workerPool();
      const lanes = pool?.size ?? 1;
      const work = (r: CpuGemmRequest): number => r.m * r.n * Math.max(r.k, 1) * r.batch.reduce((a, b) => a * b, 1) * realMultiplyAdds(r.dtype);
      const alone: number[] = [];
      const grouped: number[] = [];
      jobs.forEach((job, i) => ((job.batch.length > 0 || (job.summed?.extents.length ?? 0) > 0 || (lanes > 1 && work(job) >= minWork(job.dtype)) || !types.isSharedArrayBuffer(ledger.buffer) ? alone : grouped).push(i)));
      for (const i of alone) {
        // Every reason gemm declines for was checked above, so this cannot decline after a job ran.
        const outcome = await provider.gemm(ctx, jobs[i]!);
        if (!outcome.executed) return outcome;
        Atomics.add(ledger, i, 1);
      }
      if (grouped.length === 0) return EXECUTED;
      const word: unknown = (ctx as { abortWord?: unknown }).abortWord;
      const abort = word instanceof Int32Array && types.isSharedArrayBuffer(word.buffer) ? { buffer: word.buffer, byteOffset: word.byteOffset } : undefined;
      const base = {
        jobs,
        indices: grouped,
        ledger: { buffer: ledger.buffer as SharedArrayBuffer, byteOffset: ledger.byteOffset, length: ledger.length },
        isa: config.isa,
        ...(abort === undefined ? {} : { abort }),
      };
      const total = grouped.reduce((s, i) => s + work(jobs[i]!), 0);
      const parts = Math.min(lanes, grouped.length);
      if (pool === undefined || parts < 2 || total < minWork(jobs[grouped[0]!]!.dtype)) {
        await ctx.run(groupKernel, packGemmGroupTask(base), ONE_THREAD);
      } else {
        // One job table for every lane (the payload is cloned per task; its buffers are shared).
        const payload = packGemmGroupTask({ ...base, counter: new SharedArrayBuffer(4) });
        await pool.map(groupKernel, Array.from({ length: parts }, () => payload));
      }
      return EXECUTED;
    },
  };
  return Object.freeze(provider);
}
