/**
 * The main-thread side of the tprims providers (the tensor-primitives slot and the
 * layout-transform slot): declines what the kernels do not support (before anything is started,
 * R66), checks every descriptor, splits the request over the context's worker pool (Inner mode,
 * budget > 1) and runs the kernel tasks. It never creates threads: Sequential/Outer mode, a small
 * request or one without a splittable axis is one task on the context's own worker (`ctx.run`);
 * Inner mode with a pool is at most `pool.size` (≤ threadBudget) tasks through `pool.map`.
 */
import {
  type CpuBinaryRequest,
  type CpuExecutionContext,
  type CpuIndexedPlans,
  type CpuLayoutRequest,
  type CpuLayoutTransformProvider,
  type CpuProviderExecutionCapabilities,
  type CpuProviderOutcome,
  type CpuReduceRequest,
  type CpuTensorPrimitivesProvider,
  type CpuUnaryRequest,
  type DType,
  DTYPES,
  defineKernel,
  EXECUTED,
  type KernelArgs,
  kernelWords,
  type TensorDescriptor,
  TenferroError,
  Unsupported,
} from '@tenferro/core';
import { types } from 'node:util';
import { checkDescriptor } from './check-request.js';
import { packTask } from './kernels/tprims.js';
import { BINARY_CODE, DESC, DTYPE_CODE, KIND, MAX_RANK, type NativeInfo, REDUCE_CODE, type TprimsBinding, UNARY_CODE } from './native/binding.js';
import { describe, elementsOf, partDescriptors, splitAxis, type TaskShape } from './task-plan.js';

/** Per-call thread bound honoured exactly, on the engine's own workers (R63, R75, R76). */
export const TPRIMS_CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

const SUPPORT = Object.freeze({ dtypes: DTYPES, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true });

const KERNEL_MODULE = './kernels/tprims.js';

export interface TprimsConfig {
  readonly binding: TprimsBinding;
  readonly info: NativeInfo;
  /** ISA id passed to the kernel (-1: the process's best). */
  readonly isa: number;
  readonly parallelMinElements: number;
}

/**
 * The plan of one task shape: the whole task's descriptor and its parts over the pool (or none),
 * with every operand offset at 0 — the same for every request of that shape, so it is kept in the
 * engine's indexed-plan cache (R118) and only the offsets and alpha are filled in per call.
 */
interface TaskPlan {
  readonly whole: Float64Array;
  /** Part descriptors (offsets relative to the operands' own), or undefined: one task. */
  readonly parts: readonly Float64Array[] | undefined;
}

/** Every number a plan depends on: kind, op, dtypes, ISA, lanes, extents, strides, reduced axes. */
function planKey(t: TaskShape, lanes: number): number[] {
  const rank = t.shape.length;
  const key = [t.kind, t.op, DTYPE_CODE[t.din], DTYPE_CODE[t.dout], t.isa, lanes, rank];
  for (let i = 0; i < rank; i++) key.push(t.shape[i]!, t.out.strides[i]!, t.a.strides[i]!, t.b === undefined ? -1 : t.b.strides[i]!, t.reduced?.has(i) ? 1 : 0);
  return key;
}

function buildPlan(t: TaskShape, lanes: number): { plan: TaskPlan; bytes: number } {
  const at0 = (d: TensorDescriptor): TensorDescriptor => ({ ...d, offset: 0 });
  const shape: TaskShape = { ...t, out: at0(t.out), a: at0(t.a), ...(t.b === undefined ? {} : { b: at0(t.b) }), alpha: 0 };
  const whole = describe(shape);
  const axis = lanes > 1 ? splitAxis(shape) : -1;
  const parts = axis < 0 ? undefined : partDescriptors(shape, whole, axis, lanes);
  const bytes = 64 + whole.byteLength + (parts?.reduce((n, p) => n + 32 + p.byteLength, 0) ?? 0);
  return { plan: Object.freeze({ whole, parts: parts === undefined ? undefined : Object.freeze(parts) }), bytes };
}

/**
 * The words of a packed task for plan descriptor `d` (see `packTask`): a copy of `d` after the
 * word `packTask` fills, with this request's offsets and alpha filled in.
 */
function instantiate(d: Float64Array, t: TaskShape): Float64Array {
  const words = kernelWords(1 + d.length);
  words.set(d, 1);
  words[1 + DESC.offOut] = d[DESC.offOut]! + t.out.offset;
  words[1 + DESC.offA] = d[DESC.offA]! + t.a.offset;
  if (t.b !== undefined) words[1 + DESC.offB] = d[DESC.offB]! + t.b.offset;
  const alpha = t.alpha ?? 0;
  words[1 + DESC.alphaRe] = typeof alpha === 'number' ? alpha : alpha[0];
  words[1 + DESC.alphaIm] = typeof alpha === 'number' ? 0 : alpha[1];
  return words;
}

/** What a task of the native kernels keeps busy: its own worker's thread (the addon starts none; see provider-faer's gemm-provider.ts). */
const ONE_THREAD = Object.freeze({ threads: 1 });

/** Runs planned tasks on the context (one, or one per part over the pool); plans come from the engine's indexed-plan cache. */
function runner(config: TprimsConfig) {
  const kernel = defineKernel<KernelArgs, void>(new URL(KERNEL_MODULE, import.meta.url), 'tprimsRun');
  const namespace = `tenferro.tprims/${config.info.isa}`;
  return async (ctx: CpuExecutionContext, t: TaskShape): Promise<CpuProviderOutcome> => {
    // The execution's abort word, polled by the native kernels between rows and tiles.
    const word: unknown = (ctx as { abortWord?: unknown }).abortWord;
    const abort = word instanceof Int32Array && types.isSharedArrayBuffer(word.buffer) ? { buffer: word.buffer, byteOffset: word.byteOffset } : undefined;
    const pool = ctx.workerPool();
    const lanes = pool !== undefined && pool.size > 1 && elementsOf(t.shape) >= config.parallelMinElements ? pool.size : 1;
    // Contexts made by hand (tests) may have no cache: plan afresh.
    const plans = (ctx as { indexedPlans?: CpuIndexedPlans }).indexedPlans;
    const plan = plans !== undefined ? plans.getOrBuild(namespace, planKey(t, lanes), () => buildPlan(t, lanes)) : buildPlan(t, lanes).plan;
    if (pool === undefined || plan.parts === undefined) {
      await ctx.run(kernel, packTask(instantiate(plan.whole, t), t.out.buffer, t.a.buffer, t.b?.buffer, abort), ONE_THREAD);
    } else {
      await pool.map(
        kernel,
        plan.parts.map((d) => packTask(instantiate(d, t), t.out.buffer, t.a.buffer, t.b?.buffer, abort)),
      );
    }
    return EXECUTED;
  };
}

const complex = (d: DType) => d === 'c64' || d === 'c128';

export function createTensorPrimitivesProvider(config: TprimsConfig): CpuTensorPrimitivesProvider {
  const run = runner(config);
  const { binding } = config;
  const supports = (kind: number, op: number, din: DType, dout: DType) => binding.supports(kind, op, DTYPE_CODE[din], DTYPE_CODE[dout]);
  const provider: CpuTensorPrimitivesProvider = {
    name: `tenferro tprims tensor primitives (${config.info.isa})`,
    executionCapabilities: () => TPRIMS_CAPABILITIES,
    declaredSupport: () => SUPPORT,
    async binary(ctx, request: CpuBinaryRequest) {
      const op = 'tensorPrimitives.binary';
      checkDescriptor(op, 'out', request.out);
      checkDescriptor(op, 'lhs', request.lhs, request.out.shape);
      checkDescriptor(op, 'rhs', request.rhs, request.out.shape);
      const code = BINARY_CODE[request.op];
      if (code === undefined || request.lhs.dtype !== request.rhs.dtype || !supports(KIND.binary, code, request.lhs.dtype, request.out.dtype)) {
        return Unsupported.dtype(request.lhs.dtype);
      }
      if (request.out.shape.length > MAX_RANK) return Unsupported.of({ kind: 'rank' });
      return run(ctx, { kind: KIND.binary, op: code, din: request.lhs.dtype, dout: request.out.dtype, shape: request.out.shape, out: request.out, a: request.lhs, b: request.rhs, isa: config.isa });
    },
    async unary(ctx, request: CpuUnaryRequest) {
      const op = 'tensorPrimitives.unary';
      checkDescriptor(op, 'out', request.out);
      checkDescriptor(op, 'src', request.src, request.out.shape);
      const code = UNARY_CODE[request.op];
      const { src, out, alpha } = request;
      if (code === undefined || !supports(KIND.unary, code, src.dtype, out.dtype)) return Unsupported.dtype(src.dtype);
      if (request.op === 'scale') {
        const ok = complex(src.dtype)
          ? Array.isArray(alpha) && alpha.length === 2 && typeof alpha[0] === 'number' && typeof alpha[1] === 'number'
          : typeof alpha === 'number';
        if (!ok) return Unsupported.of({ kind: 'accumulation' });
      }
      if (out.shape.length > MAX_RANK) return Unsupported.of({ kind: 'rank' });
      return run(ctx, { kind: KIND.unary, op: code, din: src.dtype, dout: out.dtype, shape: out.shape, out, a: src, ...(alpha === undefined ? {} : { alpha }), isa: config.isa });
    },
    async reduce(ctx, request: CpuReduceRequest) {
      const op = 'tensorPrimitives.reduce';
      const { src, out, axes } = request;
      checkDescriptor(op, 'src', src);
      const reduced = new Set(axes);
      checkDescriptor(
        op,
        'out',
        out,
        src.shape.map((e, i) => (reduced.has(i) ? 1 : e)),
      );
      if (!Array.isArray(axes) || axes.some((a) => !Number.isInteger(a) || a < 0 || a >= src.shape.length) || reduced.size !== axes.length) {
        throw TenferroError.invalidArgument(op, 'axes', 'distinct axes of src', axes);
      }
      const code = REDUCE_CODE[request.op];
      if (code === undefined || !supports(KIND.reduce, code, src.dtype, out.dtype)) return Unsupported.dtype(src.dtype);
      if (src.shape.length > MAX_RANK) return Unsupported.of({ kind: 'rank' });
      return run(ctx, { kind: KIND.reduce, op: code, din: src.dtype, dout: out.dtype, shape: src.shape, out, a: src, reduced, isa: config.isa });
    },
  };
  return Object.freeze(provider);
}

export function createLayoutProvider(config: TprimsConfig): CpuLayoutTransformProvider {
  const run = runner(config);
  const provider: CpuLayoutTransformProvider = {
    name: `tenferro tprims layout transform (${config.info.isa})`,
    executionCapabilities: () => TPRIMS_CAPABILITIES,
    declaredSupport: () => SUPPORT,
    async materialize(ctx, request: CpuLayoutRequest) {
      const op = 'layoutTransform.materialize';
      const { src, dst, conjugate } = request;
      checkDescriptor(op, 'dst', dst);
      checkDescriptor(op, 'src', src, dst.shape);
      if (src.dtype !== dst.dtype) return Unsupported.dtype(src.dtype);
      if (dst.shape.length > MAX_RANK) return Unsupported.of({ kind: 'rank' });
      const code = conjugate && complex(src.dtype) ? UNARY_CODE.copyConj : UNARY_CODE.copy;
      return run(ctx, { kind: KIND.unary, op: code, din: src.dtype, dout: dst.dtype, shape: dst.shape, out: dst, a: src, isa: config.isa });
    },
  };
  return Object.freeze(provider);
}
