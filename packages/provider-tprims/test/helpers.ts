// Test helpers: random strided views between guard bands, a main-thread context (kernel tasks
// run inline, as a worker would run them; a fake pool runs parts one after another), and
// comparison of two outputs with a stated tolerance.
import { type CpuExecutionContext, DTYPE_INFO, type DType, type KernelRef, type TensorDescriptor, type WorkerPool } from '@tenferro/core';

export type Rand = () => number;

export function mulberry(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const modules = new Map<string, Record<string, (p: unknown) => unknown>>();

async function runInline(kernel: KernelRef<unknown, unknown>, payload: unknown): Promise<unknown> {
  let m = modules.get(kernel.module);
  if (m === undefined) modules.set(kernel.module, (m = (await import(kernel.module)) as Record<string, (p: unknown) => unknown>));
  return m[kernel.exportName]!(payload);
}

/** A context whose kernel tasks run on this thread; with `lanes` > 1 it exposes a pool of that size (Inner mode). `tasks` counts them. */
export function inlineContext(lanes = 1): CpuExecutionContext & { tasks: number } {
  const state = { tasks: 0 };
  const run = async <P, R>(kernel: KernelRef<P, R>, payload?: P): Promise<R> => {
    state.tasks++;
    return (await runInline(kernel as KernelRef<unknown, unknown>, payload)) as R;
  };
  const pool: WorkerPool | undefined =
    lanes > 1
      ? {
          size: lanes,
          map: async (kernel, payloads) => {
            const out = [];
            for (const p of payloads) out.push(await run(kernel, p));
            return out;
          },
          runOn: (_lane, kernel, payload) => run(kernel, payload),
        }
      : undefined;
  const ctx = {
    domainId: 0 as never,
    cpus: undefined,
    admissionMode: 'exclusive' as never,
    threadBudget: lanes,
    parallelMode: (lanes > 1 ? 'inner' : 'sequential') as never,
    live: true,
    abortWord: new Int32Array(new SharedArrayBuffer(4)),
    workerPool: () => pool,
    nativeThreadCount: () => lanes,
    run,
    get tasks() {
      return state.tasks;
    },
  };
  return ctx as unknown as CpuExecutionContext & { tasks: number };
}

export const GUARD = 3;

/**
 * A random view of `shape`: axes laid out in a random order with random gaps, a random offset
 * (the guard band before it) and `GUARD` spare elements after; `broadcast` lets axes get stride 0.
 */
export function randomView(rand: Rand, dtype: DType, shape: readonly number[], broadcast = false): TensorDescriptor {
  const order = shape.map((_, i) => i).sort(() => rand() - 0.5);
  const strides = new Array<number>(shape.length).fill(0);
  let step = 1 + (rand() < 0.3 ? Math.floor(rand() * 2) : 0);
  for (const axis of order) {
    if (broadcast && rand() < 0.25) {
      strides[axis] = 0;
      continue;
    }
    strides[axis] = step;
    step *= shape[axis]! + (rand() < 0.3 ? 1 : 0);
    step = Math.max(step, 1);
  }
  const offset = GUARD + Math.floor(rand() * 3);
  let last = offset;
  for (let i = 0; i < shape.length; i++) last += Math.max(0, shape[i]! - 1) * strides[i]!;
  const elements = last + 1 + GUARD;
  const buffer = new SharedArrayBuffer(elements * DTYPE_INFO[dtype].bytes);
  fill(rand, dtype, buffer);
  return Object.freeze({ dtype, shape: Object.freeze([...shape]), strides: Object.freeze(strides), offset, buffer });
}

const SPECIAL = [Number.NaN, 0, -0, Infinity, -Infinity, 1, -1];

export function fill(rand: Rand, dtype: DType, buffer: SharedArrayBuffer): void {
  const info = DTYPE_INFO[dtype];
  if (dtype === 'i64') {
    const a = new BigInt64Array(buffer);
    for (let i = 0; i < a.length; i++) a[i] = rand() < 0.1 ? [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n][Math.floor(rand() * 4)]! : BigInt(Math.floor((rand() - 0.5) * 2 ** 40));
    return;
  }
  const a = new (info.array as unknown as new (b: SharedArrayBuffer) => Float32Array | Float64Array | Int32Array | Uint8Array)(buffer);
  for (let i = 0; i < a.length; i++) {
    if (dtype === 'bool') a[i] = rand() < 0.5 ? 1 : 0;
    else if (dtype === 'i32') a[i] = rand() < 0.1 ? [-2147483648, 2147483647, 0, -1][Math.floor(rand() * 4)]! : Math.floor((rand() - 0.5) * 2000);
    else if (!info.complex && rand() < 0.05) a[i] = SPECIAL[Math.floor(rand() * SPECIAL.length)]!;
    else a[i] = (rand() - 0.5) * 4;
  }
}

/** A copy of `d` over a copy of its buffer. */
export function cloneView(d: TensorDescriptor): TensorDescriptor {
  const buffer = new SharedArrayBuffer(d.buffer.byteLength);
  new Uint8Array(buffer).set(new Uint8Array(d.buffer));
  return Object.freeze({ ...d, buffer });
}

export function sameBytes(a: SharedArrayBuffer, b: SharedArrayBuffer): boolean {
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The element offsets of a view (column-major walk). */
export function offsetsOf(d: TensorDescriptor): number[] {
  const out: number[] = [];
  const n = d.shape.reduce((p, e) => p * e, 1);
  for (let l = 0; l < n; l++) {
    let r = l;
    let off = d.offset;
    for (let i = 0; i < d.shape.length; i++) {
      off += (r % d.shape[i]!) * d.strides[i]!;
      r = Math.floor(r / d.shape[i]!);
    }
    out.push(off);
  }
  return out;
}

/**
 * The first difference between two outputs of the same view, or undefined: every component of
 * every element of the view within `tol` relative (to 1 + |a| + |b|, NaN equal to NaN), every
 * byte outside the view identical.
 */
export function compareOutputs(got: TensorDescriptor, want: TensorDescriptor, tol: number): string | undefined {
  const info = DTYPE_INFO[got.dtype];
  const comps = info.components;
  const G = lanesOf(got);
  const W = lanesOf(want);
  const inView = new Uint8Array(G.length); // a bitmap: a Set of millions of indices costs seconds
  for (const off of offsetsOf(got)) {
    for (let c = 0; c < comps; c++) {
      const i = off * comps + c;
      inView[i] = 1;
      const g = G[i]!;
      const w = W[i]!;
      if (typeof g === 'bigint' || typeof w === 'bigint' || tol === 0) {
        if (g !== w && !(Number.isNaN(g) && Number.isNaN(w))) return `element at ${off} (component ${c}): got ${g}, want ${w}`;
        continue;
      }
      if (Number.isNaN(g) && Number.isNaN(w)) continue;
      if (g === w) continue;
      if (!(Math.abs(g - w) <= tol * (1 + Math.abs(g) + Math.abs(w)))) return `element at ${off} (component ${c}): got ${g}, want ${w}`;
    }
  }
  for (let i = 0; i < G.length; i++) {
    if (inView[i] === 0 && G[i] !== W[i] && !(Number.isNaN(G[i]) && Number.isNaN(W[i]))) return `lane ${i} outside the view changed: ${G[i]} vs ${W[i]}`;
  }
  return undefined;
}

function lanesOf(d: TensorDescriptor): ArrayLike<number | bigint> & { length: number } {
  return new (DTYPE_INFO[d.dtype].array as unknown as new (b: SharedArrayBuffer) => unknown)(d.buffer) as unknown as ArrayLike<number | bigint> & { length: number };
}

/** A fresh output view of `dtype` and `shape` (random layout, random content, guard bands). */
export function outputView(rand: Rand, dtype: DType, shape: readonly number[]): TensorDescriptor {
  return randomView(rand, dtype, shape, false);
}
