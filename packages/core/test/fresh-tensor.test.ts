// CpuExecSession.freshTensor: pooled fresh outputs for an extension's operation in a session (R108,
// R96, R2) — from the engine's buffer pool, tagged with the session's domain, back on dispose, never
// handed out twice while a tensor over it is alive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type SharedTensorAllocationDomain, Tensor } from '../src/index.js';
import { expectThrows } from './helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

describe('CpuExecSession.freshTensor', () => {
  it('is dense column-major, tagged with the session domain, zeroed by default', async () => {
    const { t, id } = await backend.withBackendSession((s) => ({ t: s.freshTensor('f64', [3, 2, 2]), id: s.domainId() }));
    expect(t.shape).toEqual([3, 2, 2]);
    expect(t.strides).toEqual([1, 3, 6]);
    expect(t.placement.cpuAffinity).toBe(id);
    expect(t.toArray()).toEqual(new Array(12).fill(0));
    t.dispose();
  });

  it('reuses storage given back by dispose; zeroed clears it, zeroed: false leaves it as it was', async () => {
    backend.resetBufferPool();
    const before = backend.bufferPoolStats();
    const first = await backend.withBackendSession((s) => s.freshTensor('f32', [5, 7], { zeroed: false }));
    new Float32Array(first.buffer, 0, 35).fill(7);
    const buffer = first.buffer;
    first.dispose();
    const mid = backend.bufferPoolStats();
    expect(mid.returnedByDispose - before.returnedByDispose).toBe(1);
    const dirty = await backend.withBackendSession((s) => s.freshTensor('f32', [7, 5], { zeroed: false }));
    expect(dirty.buffer).toBe(buffer);
    expect(dirty.toArray()).toEqual(new Array(35).fill(7));
    expect(backend.bufferPoolStats().hits - mid.hits).toBe(1);
    dirty.dispose();
    const clean = await backend.withBackendSession((s) => s.freshTensor('f32', [35]));
    expect(clean.buffer).toBe(buffer);
    expect(clean.toArray()).toEqual(new Array(35).fill(0));
    clean.dispose();
  });

  it('never hands out storage a live tensor (or a view of it) still holds', async () => {
    const live = await backend.withBackendSession((s) => [s.freshTensor('f64', [16]), s.freshTensor('f64', [16])]);
    const view = live[0]!.slice([0, 8]);
    live[0]!.dispose(); // the view keeps the storage alive
    const next = await backend.withBackendSession((s) => s.freshTensor('f64', [16], { zeroed: false }));
    const buffers = new Set([live[0]!, live[1]!, next].map((t) => (t === live[0] ? view.buffer : t.buffer)));
    expect(buffers.size).toBe(3);
    view.dispose();
    live[1]!.dispose();
    next.dispose();
  });

  it('a zero-size tensor touches nothing', async () => {
    const t = await backend.withBackendSession((s) => s.freshTensor('c128', [0, 4]));
    expect(t.size).toBe(0);
    t.dispose();
  });

  it('takes storage from the handle allocation domain, zeroing dirty memory unless told not to', async () => {
    const log = { allocated: 0, released: 0 };
    const domain: SharedTensorAllocationDomain = {
      name: 'fresh-tensor-arena',
      allocate(bytes) {
        log.allocated++;
        const b = new SharedArrayBuffer(bytes);
        new Uint8Array(b).fill(0xff);
        return b;
      },
      release() {
        log.released++;
      },
    };
    const d = backend.withAllocationDomain(domain);
    const [zeroed, dirty] = await d.withBackendSession((s) => [s.freshTensor('i32', [4]), s.freshTensor('i32', [4], { zeroed: false })]);
    expect(zeroed.toArray()).toEqual([0, 0, 0, 0]);
    expect(dirty.toArray()).toEqual([-1, -1, -1, -1]);
    expect(log.allocated).toBe(2);
    zeroed.dispose();
    dirty.dispose();
    expect(log.released).toBe(2);
  });

  it('validates its arguments and the session', async () => {
    const before = backend.bufferPoolStats();
    await backend.withBackendSession((s) => {
      expectThrows(() => s.freshTensor('f16' as never, [2]), 'UnsupportedDType', 'Unsupported');
      expectThrows(() => s.freshTensor(3 as never, [2]), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', [2, -1]), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', 'x' as never), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', [2], { zero: true } as never), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', [2], { zeroed: 1 } as never), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', [2], null as never), 'InvalidArgument');
      expectThrows(() => s.freshTensor('f64', [2 ** 30, 2 ** 30]), 'IntegerOverflow');
    });
    // nothing was taken from the pool by a refused call
    const after = backend.bufferPoolStats();
    expect([after.hits + after.misses, after.outstanding]).toEqual([before.hits + before.misses, before.outstanding]);
    const ended = await backend.withBackendSession((s) => s);
    expectThrows(() => ended.freshTensor('f64', [2]), 'ContextExpired', 'RuntimeState');
    expect(Tensor.isTensor(await backend.withBackendSession((s) => s.freshTensor('bool', [1])))).toBe(true);
  });
});
