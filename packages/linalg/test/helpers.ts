import { tracingChannel } from 'node:diagnostics_channel';
import { DIAGNOSTICS_CHANNELS, type ExtensionProviderEvent, Tensor } from '@tenferro/core';
import { LINALG_KERNELS_KEY_NAME } from '../src/index.js';
import type { LinalgKernelCall } from '../src/testing/index.js';

export type Real = 'f32' | 'f64';

/** Column-major matrix helpers on plain arrays (tests only). */
export function mat(t: Tensor, batch = 0): number[][] {
  const [m, n] = [t.shape[0]!, t.shape[1]!];
  const d = t.toArray() as number[];
  const out: number[][] = [];
  for (let i = 0; i < m; i++) {
    const row: number[] = [];
    for (let j = 0; j < n; j++) row.push(d[batch * m * n + i + j * m]!);
    out.push(row);
  }
  return out;
}

export const mul = (a: number[][], b: number[][]): number[][] => a.map((r) => b[0]!.map((_, j) => r.reduce((s, x, k) => s + x * b[k]![j]!, 0)));
export const tr = (a: number[][]): number[][] => (a.length === 0 ? [] : a[0]!.map((_, j) => a.map((r) => r[j]!)));
export const sub = (a: number[][], b: number[][]): number[][] => a.map((r, i) => r.map((x, j) => x - b[i]![j]!));
export const fro = (a: number[][]): number => Math.sqrt(a.reduce((s, r) => s + r.reduce((t, x) => t + x * x, 0), 0));
export const eye = (n: number): number[][] => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

export function fromRows(dtype: Real, rows: number[][]): Tensor<Real> {
  return Tensor.fromArray(dtype, [rows.length, rows[0]?.length ?? 0], rows.flat(), { order: 'row' });
}

/** mulberry32: a small seeded PRNG in [-1, 1) (a sum of sinusoids would make low-rank matrices). */
export function prng(seed: number): () => number {
  let t = (seed * 2654435761) >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 2 ** 31 - 1;
  };
}

/**
 * Records the linalg kernel calls that executed, from `tenferro:provider` (#35: the channel says
 * which kernel ran — extension or built-in — and why an extension declined; `takeCallRecords` is
 * gone): `take()` returns the calls since the last `take()`, `stop()` unsubscribes.
 */
export function kernelRecorder(): { take(): LinalgKernelCall[]; stop(): void } {
  let calls: LinalgKernelCall[] = [];
  const channel = tracingChannel<object, ExtensionProviderEvent>(DIAGNOSTICS_CHANNELS.provider);
  const asyncEnd = (e: ExtensionProviderEvent) => {
    if (e.slot !== LINALG_KERNELS_KEY_NAME || e.outcome !== 'executed') return;
    const r = e.fallbackReason as { kind: string; dtype?: string; detail?: string } | undefined;
    const declined = r === undefined ? undefined : typeof r.detail === 'string' ? `${r.kind}: ${r.detail}` : r.dtype !== undefined ? `${r.kind}: ${r.dtype}` : r.kind;
    calls.push({ op: e.call as LinalgKernelCall['op'], kernel: e.kernel, ...(declined === undefined ? {} : { declined }) });
  };
  const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd, error() {} };
  channel.subscribe(handlers);
  return {
    take: () => {
      const taken = calls;
      calls = [];
      return taken;
    },
    stop: () => channel.unsubscribe(handlers),
  };
}

/** A symmetric positive definite n×n f64 (column-major). */
export function spd(n: number): Float64Array {
  const d = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d[i + j * n] = (i === j ? n : 0) + 1 / (1 + Math.abs(i - j)) + 0.01 * Math.sin(Math.min(i, j) * 7 + Math.max(i, j) * 13);
  return d;
}
