// Declines and refusals happen before any kernel task starts and before anything is written:
// the documented reasons for unsupported dtypes, mismatched alpha and too many axes, and typed
// errors for malformed descriptors.
import type { TensorDescriptor } from '@tenferro/core';
import { describe, expect, it } from 'vitest';
import { createTprimsProvider, status } from '../src/index.js';
import { inlineContext } from './helpers.js';

function view(dtype: TensorDescriptor['dtype'], shape: number[], fillByte = 0x5a): TensorDescriptor {
  const n = shape.reduce((p, e) => p * e, 1);
  const bytes = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4, i64: 8, bool: 1 }[dtype];
  const buffer = new SharedArrayBuffer(Math.max(1, n) * bytes);
  new Uint8Array(buffer).fill(fillByte);
  const strides: number[] = [];
  let s = 1;
  for (const e of shape) strides.push(s), (s *= e);
  return { dtype, shape, strides, offset: 0, buffer };
}

describe.runIf(status().available)('declines before writing', () => {
  const tp = () => createTprimsProvider().tensorPrimitives!;
  type Call = (p: ReturnType<typeof tp>, ctx: ReturnType<typeof inlineContext>, out: TensorDescriptor) => Promise<unknown>;
  const cases: [string, Call, TensorDescriptor['dtype'], object][] = [

    ['add of bool', (p, ctx, out) => p.binary(ctx, { op: 'add', lhs: view('bool', [4]), rhs: view('bool', [4]), out }), 'bool', { kind: 'dtype', dtype: 'bool' }],
    ['exp of i32', (p, ctx, out) => p.unary(ctx, { op: 'exp', src: view('i32', [4]), out }), 'i32', { kind: 'dtype', dtype: 'i32' }],
    ['pow of i64', (p, ctx, out) => p.binary(ctx, { op: 'pow', lhs: view('i64', [4]), rhs: view('i64', [4]), out }), 'i64', { kind: 'dtype', dtype: 'i64' }],
    ['mean of i32', (p, ctx, out) => p.reduce(ctx, { op: 'mean', src: view('i32', [4]), axes: [0], out }), 'i32', { kind: 'dtype', dtype: 'i32' }],
    ['max of c128', (p, ctx, out) => p.reduce(ctx, { op: 'max', src: view('c128', [4]), axes: [0], out }), 'c128', { kind: 'dtype', dtype: 'c128' }],
    ['scale of f64 by a complex alpha', (p, ctx, out) => p.unary(ctx, { op: 'scale', src: view('f64', [4]), out, alpha: [1, 2] }), 'f64', { kind: 'accumulation' }],
    ['scale of c64 by a real alpha', (p, ctx, out) => p.unary(ctx, { op: 'scale', src: view('c64', [4]), out, alpha: 2 }), 'c64', { kind: 'accumulation' }],
    ['neg of 33 axes', (p, ctx, out) => p.unary(ctx, { op: 'neg', src: view('f64', new Array(33).fill(1)), out }), 'f64', { kind: 'rank' }],
  ];
  it.each(cases)('%s', async (_, call, dtype, reason) => {
    const rank33 = (reason as { kind: string }).kind === 'rank';
    const isReduce = _.startsWith('mean') || _.startsWith('max');
    const out = view(dtype, rank33 ? new Array(33).fill(1) : isReduce ? [1] : [4], 0x33);
    const before = new Uint8Array(out.buffer).slice();
    const ctx = inlineContext(2);
    const outcome = await call(tp(), ctx, out);
    expect(outcome).toEqual({ executed: false, reason });
    expect(ctx.tasks).toBe(0);
    expect(new Uint8Array(out.buffer).every((b, i) => b === before[i])).toBe(true);
  });

  it('malformed descriptors are typed errors before any task: InvalidArgument, ViewOutOfBounds', async () => {
    const ctx = inlineContext(1);
    const p = tp();
    const src = view('f64', [4]);
    await expect(p.unary(ctx, { op: 'neg', src: { ...src, strides: [-1] }, out: view('f64', [4]) })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(p.unary(ctx, { op: 'neg', src: { ...src, offset: 1 }, out: view('f64', [4]) })).rejects.toMatchObject({ code: 'ViewOutOfBounds' });
    await expect(p.unary(ctx, { op: 'neg', src, out: view('f64', [5]) })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(createTprimsProvider().layoutTransform!.materialize(ctx, { src: { ...src, shape: [4.5] }, dst: view('f64', [4]), conjugate: false })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect(ctx.tasks).toBe(0);
  });
});
