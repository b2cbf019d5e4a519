// Allocation domains (R2): a handle whose fresh outputs come from a caller's allocator, with a
// runtime identity of its own; storage of a domain that refuses foreign reads is HostAccess for
// everyone else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, CpuProviderBundle, type SharedTensorAllocationDomain, Tensor, ops, referenceGemmProvider } from '../src/index.js';
import { expectCode, expectThrows } from './helpers.js';

/** An arena-like domain: counts allocations and releases, remembers what it handed out. */
function arena(name: string, foreignReads?: 'allowed' | 'refused') {
  const live = new Set<SharedArrayBuffer>();
  const log = { allocated: 0, released: 0 };
  const domain: SharedTensorAllocationDomain = {
    name,
    ...(foreignReads === undefined ? {} : { foreignReads }),
    allocate(bytes) {
      log.allocated++;
      // pre-faulted, dirty memory: core must zero what it needs zeroed
      const b = new SharedArrayBuffer(bytes + 16);
      new Uint8Array(b).fill(0xff);
      live.add(b);
      return b;
    },
    release(buffer) {
      log.released++;
      expect(live.delete(buffer)).toBe(true);
    },
  };
  return { domain, live, log };
}

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);

describe('withAllocationDomain (R2)', () => {
  it('identity: clone equal; forPlacement, withProviderBundle and withAllocationDomain distinct, from a domain handle too', () => {
    const { domain } = arena('a');
    const d = backend.withAllocationDomain(domain);
    expect(d.runtimeIdentity()).not.toBe(backend.runtimeIdentity());
    expect(d.clone().runtimeIdentity()).toBe(d.runtimeIdentity());
    const derived = [
      d.forPlacement('auto'),
      d.withProviderBundle(d.providerBundle()),
      d.withAllocationDomain(domain),
      backend.withAllocationDomain(domain),
      backend.forPlacement('auto'),
      backend.withProviderBundle(backend.providerBundle()),
    ];
    const ids = new Set([backend.runtimeIdentity(), d.runtimeIdentity(), ...derived.map((h) => h.runtimeIdentity())]);
    expect(ids.size).toBe(derived.length + 2);
    // derived handles keep the domain; the source handle has none
    expect(derived[0]!.sharedAllocationDomain()).toBe(domain);
    expect(derived[1]!.sharedAllocationDomain()).toBe(domain);
    expect(backend.sharedAllocationDomain()).toBeUndefined();
    expect(d.executionInfo().allocationDomain).toBe('a');
    expect(backend.executionInfo().allocationDomain).toBeUndefined();
  });

  it('a malformed domain is InvalidArgument', () => {
    expectThrows(() => backend.withAllocationDomain({} as never), 'InvalidArgument');
    expectThrows(() => backend.withAllocationDomain({ name: 'x', allocate: () => new SharedArrayBuffer(1) } as never), 'InvalidArgument');
    expectThrows(() => backend.withAllocationDomain({ name: 'x', allocate: () => new SharedArrayBuffer(1), release: () => undefined, foreignReads: 'maybe' } as never), 'InvalidArgument');
  });

  it("fresh outputs come from the domain's allocator and go back to its release; results and the pool as without it", async () => {
    const { domain, live, log } = arena('a');
    const d = backend.withAllocationDomain(domain);
    const pool0 = backend.bufferPoolStats();
    const y = await d.matmul(x, x);
    expect(y.toArray()).toEqual((await backend.matmul(x, x)).toArray());
    const s = await ops(d).add(x, x);
    expect(s.toArray()).toEqual([2, 4, 6, 8]);
    const z = await ops(d).sum(x, { axes: [0] });
    expect(z.toArray()).toEqual([3, 7]);
    const r = await d.reshape(x.transpose(), [4]);
    expect(r.toArray()).toEqual([1, 3, 2, 4]);
    const inSession = await d.withBackendSession(async (sess) => {
      expect(sess.sharedAllocationDomain()).toBe(domain);
      return sess.dotGeneral(x, x, { contracting: [[1], [0]] });
    });
    expect(log.allocated).toBe(5);
    for (const t of [y, s, z, r, inSession]) expect(live.has(t.buffer)).toBe(true);
    expect(y.placement.cpuAffinity).toBe(backend.executionInfo().domainId);
    for (const t of [y, s, z, r, inSession]) t.dispose();
    expect(log.released).toBe(5);
    expect(live.size).toBe(0);
    // no fresh output came from (or went to) the engine pool
    const pool1 = backend.bufferPoolStats();
    expect(pool1.returnedByDispose).toBe(pool0.returnedByDispose);
    expect(pool1.outstanding).toBe(pool0.outstanding);
  });

  it('storage goes back to the domain when the operation fails; a misbehaving allocator is AllocationFailed', async () => {
    const { domain, live, log } = arena('a');
    const failing = CpuProviderBundle.builder('faer').gemmProvider({ ...referenceGemmProvider, gemm: async () => { throw new Error('planted'); } }).build();
    const d = backend.withAllocationDomain(domain).withProviderBundle(failing);
    await expectCode(d.matmul(x, x), 'ProviderFailed');
    expect(log).toEqual({ allocated: 1, released: 1 });
    expect(live.size).toBe(0);
    const small = backend.withAllocationDomain({ name: 'small', allocate: () => new SharedArrayBuffer(1), release: () => undefined });
    await expectCode(small.matmul(x, x), 'AllocationFailed', 'BackendFailure');
    const throwing = backend.withAllocationDomain({ name: 'throws', allocate: () => { throw new Error('out of arena'); }, release: () => undefined });
    const e = await expectCode(throwing.matmul(x, x), 'AllocationFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('out of arena');
  });

  it("storage of a domain refusing foreign reads is HostAccess for other handles, before anything runs; its own handle reads it", async () => {
    const { domain } = arena('private', 'refused');
    const mine = backend.withAllocationDomain(domain);
    const t = await mine.matmul(x, x);
    expect((await mine.matmul(t, x)).toArray()).toEqual((await backend.matmul(Tensor.fromArray('f64', [2, 2], t.toArray() as number[]), x)).toArray());
    const entries = backend.executionInfo().executorEntries;
    await expectCode(backend.matmul(t, x), 'HostAccess', 'RuntimeState');
    await expectCode(ops(backend).add(t, x), 'HostAccess', 'RuntimeState');
    await expectCode(backend.reshape(t.transpose(), [4]), 'HostAccess', 'RuntimeState');
    await expectCode(backend.withMaterializedTensorRead(t, () => 1), 'HostAccess', 'RuntimeState');
    await expectCode(backend.gemmGrouped([{ out: Tensor.zeros('f64', [2, 2]), lhs: t, rhs: x }]), 'HostAccess', 'RuntimeState');
    await expectCode(backend.withAllocationDomain(arena('other').domain).matmul(x, t), 'HostAccess', 'RuntimeState');
    expect(backend.executionInfo().executorEntries).toEqual(entries);
    // a domain that allows foreign reads is read by anyone
    const open = await backend.withAllocationDomain(arena('open').domain).matmul(x, x);
    expect((await backend.matmul(open, x)).shape).toEqual([2, 2]);
  });
});
