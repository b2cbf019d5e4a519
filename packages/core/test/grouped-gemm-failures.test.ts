// Grouped GEMM failures (R110, #35), written as an application would: every job validated before
// any runs; every provider call through ProviderDispatch (one `tenferro:provider` event each) and
// the written-then-declined guard; a decline after other jobs wrote is `PartialGroupedGemm` with
// exactly the jobs written, a decline with none written `ProviderUnsupported` — every output
// checked byte for byte after the failure. And aliasing across jobs is refused when two tensors
// reach one memory through different buffer objects (a buffer that went to a worker and back).
import { tracingChannel } from 'node:diagnostics_channel';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuGemmProvider,
  type CpuGemmRequest,
  CpuProviderBundle,
  DIAGNOSTICS_CHANNELS,
  type GemmJob,
  type ProviderEvent,
  Tensor,
  Unsupported,
  discoverCpuTopology,
  referenceGemmProvider,
} from '../src/index.js';
import { loadOs } from '@tenferro/os';
import { expectedGroupedJob } from '../src/testing/grouped-gemm-oracle.js';
import { relativeError, toleranceFor } from '../src/testing/naive-dot-general.js';
import { expectCode } from './helpers.js';

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;

let two: CpuBackend;
beforeAll(async () => {
  two = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await two.close();
});

/** Every byte of a tensor's storage, copied. */
const bytesOf = (t: Tensor): Uint8Array => new Uint8Array(t.buffer).slice();

/**
 * The reference GEMM's declared support without `declinesBeforeWriting`: core then guards every
 * output around its call (the written-then-declined fingerprint).
 */
const undeclared = (): Pick<CpuGemmProvider, 'declaredSupport'> => ({
  declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), declinesBeforeWriting: false }),
});

/** `count` f64 jobs with beta ≠ 0 over outputs of distinct contents; `empty` lists jobs with an empty output. */
function group(count: number, empty: readonly number[] = []): { jobs: GemmJob[]; before: number[][]; bytes: Uint8Array[] } {
  const jobs: GemmJob[] = [];
  for (let i = 0; i < count; i++) {
    const [m, n, k] = empty.includes(i) ? [0, 3, 2] : [3 + (i % 2), 3, 2];
    jobs.push({
      out: Tensor.fromArray('f64', [m, n], Array.from({ length: m * n }, (_, e) => 100 * i + e)),
      lhs: Tensor.fromArray('f64', [m, k], Array.from({ length: m * k }, (_, e) => e + i + 1)),
      rhs: Tensor.fromArray('f64', [k, n], Array.from({ length: k * n }, (_, e) => (e % 3) - i)),
      alpha: 0.5,
      beta: 2,
    });
  }
  return { jobs, before: jobs.map((j) => j.out.toArray() as number[]), bytes: jobs.map((j) => bytesOf(j.out)) };
}

/** Jobs in `written` hold their result; every other output is byte for byte what it was. */
function expectOutputs(jobs: readonly GemmJob[], before: readonly number[][], bytes: readonly Uint8Array[], written: readonly number[]): void {
  jobs.forEach((job, i) => {
    if (written.includes(i)) {
      const err = relativeError(job.out.toArray() as number[], expectedGroupedJob(job, before[i]!));
      expect(err, `job ${i} written`).toBeLessThanOrEqual(toleranceFor('f64'));
    } else {
      expect(bytesOf(job.out), `job ${i} untouched`).toEqual(bytes[i]);
    }
  });
}

/** The reference GEMM that declines the job whose output is `declines(req)`, recording every call's output buffer in call order. */
function declining(declines: (req: CpuGemmRequest) => boolean, before?: (req: CpuGemmRequest) => Promise<void>) {
  const called: SharedArrayBuffer[] = [];
  const provider: CpuGemmProvider = {
    ...referenceGemmProvider,
    ...undeclared(),
    name: 'declining reference GEMM',
    async gemm(ctx, req) {
      called.push(req.out.buffer);
      await before?.(req);
      if (declines(req)) return Unsupported.layout('output');
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { provider, called };
}

const providerOwned = (gemm: CpuGemmProvider) => CpuProviderBundle.builder('faer').gemmProvider(gemm).build();
const engineOuter = (gemm: CpuGemmProvider) => CpuProviderBundle.builder('faer').gemmProvider(gemm).engineOuterGroupedGemm().build();

/** The `tenferro:provider` events of `fn`'s provider calls (the event objects, complete once `fn` settled). */
async function providerEvents(fn: () => Promise<unknown>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  const tc = tracingChannel(DIAGNOSTICS_CHANNELS.provider);
  const handlers = { start: (m: unknown) => void events.push(m as ProviderEvent) };
  tc.subscribe(handlers as never);
  try {
    await fn();
  } finally {
    tc.unsubscribe(handlers as never);
  }
  return events;
}

describe('gemmGrouped: every job validated before any runs (R99, R110)', () => {
  it('an invalid last job: no provider call, no executor entry, every output byte for byte as it was', async () => {
    const { provider, called } = declining(() => false);
    const h = two.withProviderBundle(providerOwned(provider));
    const { jobs, bytes, before } = group(4);
    const entries = h.executionInfo().executorEntries;
    await expectCode(h.gemmGrouped([...jobs, { out: Tensor.zeros('f64', [2, 2]), lhs: jobs[0]!.lhs, rhs: jobs[1]!.rhs }]), 'ShapeMismatch', 'Validation');
    const disposed = Tensor.zeros('f64', [3, 3]);
    disposed.dispose();
    await expectCode(h.gemmGrouped([...jobs, { out: disposed, lhs: jobs[0]!.lhs, rhs: jobs[0]!.rhs }]), 'TensorDisposed');
    expect(called).toEqual([]);
    expect(h.executionInfo().executorEntries).toEqual(entries);
    expectOutputs(jobs, before, bytes, []);
  });
});

describe('gemmGrouped: a decline after other jobs wrote (#35)', () => {
  it('core runs the jobs one by one: a decline of a later job is PartialGroupedGemm naming exactly the jobs written (caller indexes)', async () => {
    // caller job 1 has an empty output (never scheduled); caller job 3 declines after jobs 0 and 2 wrote
    const { jobs, before, bytes } = group(5, [1]);
    const declinedOut = jobs[3]!.out.buffer;
    const { provider, called } = declining((req) => req.out.buffer === declinedOut);
    const events = await providerEvents(async () => {
      const e = await expectCode(two.withProviderBundle(providerOwned(provider)).gemmGrouped(jobs), 'PartialGroupedGemm', 'Unsupported');
      expect(e.detail).toEqual({ slot: 'gemm', reason: { kind: 'layout', operand: 'output' }, job: 3, writtenJobs: [0, 2] });
    });
    expectOutputs(jobs, before, bytes, [0, 2]);
    // job 4 was never called; each call was its own traced provider call
    expect(called).toEqual([jobs[0]!.out.buffer, jobs[2]!.out.buffer, declinedOut]);
    expect(events.map((e) => [e.slot, e.outcome, e.shapes[2]])).toEqual([
      ['gemm', 'executed', [3, 3]],
      ['gemm', 'executed', [3, 3]],
      ['gemm', 'declined', [4, 3]],
    ]);
  });

  it('a decline of the first job is ProviderUnsupported: nothing written, every output byte for byte as it was', async () => {
    const { jobs, before, bytes } = group(3);
    const first = jobs[0]!.out.buffer;
    const { provider, called } = declining((req) => req.out.buffer === first);
    const e = await expectCode(two.withProviderBundle(providerOwned(provider)).gemmGrouped(jobs), 'ProviderUnsupported', 'Unsupported');
    expect(e.detail).toMatchObject({ slot: 'gemm', job: 0 });
    expect(called).toEqual([first]);
    expectOutputs(jobs, before, bytes, []);
  });

  it('a job that writes its output and then declines is ProviderContractViolation naming it, on both forms of the provider-owned call', async () => {
    const { jobs } = group(3);
    const victim = jobs[1]!.out.buffer;
    const scribbler: CpuGemmProvider = {
      ...referenceGemmProvider,
      ...undeclared(),
      async gemm(ctx, req) {
        if (req.out.buffer !== victim) return referenceGemmProvider.gemm(ctx, req);
        new Float64Array(req.out.buffer, req.out.offset * 8, 1)[0] = -1;
        return Unsupported.layout('output');
      },
    };
    const e = await expectCode(two.withProviderBundle(providerOwned(scribbler)).gemmGrouped(jobs), 'ProviderContractViolation', 'BackendFailure');
    expect(e.detail).toEqual({ slot: 'gemm', job: 1 });
    // a groupedGemm that runs job 0 and then declines the group
    const { jobs: again, bytes } = group(3);
    const grouped: CpuGemmProvider = {
      ...referenceGemmProvider,
      ...undeclared(),
      async groupedGemm(ctx, req) {
        await referenceGemmProvider.gemm(ctx, req.jobs[0]!);
        return Unsupported.of({ kind: 'grouped' });
      },
    };
    const g = await expectCode(two.withProviderBundle(providerOwned(grouped)).gemmGrouped(again), 'ProviderContractViolation', 'BackendFailure');
    expect(g.detail).toEqual({ slot: 'gemm', job: 0 });
    expect(bytesOf(again[1]!.out)).toEqual(bytes[1]);
    expect(bytesOf(again[2]!.out)).toEqual(bytes[2]);
  });

  it('a groupedGemm that declines before any job ran is ProviderUnsupported, outputs byte for byte as they were; its call is one traced provider call', async () => {
    const { jobs, before, bytes } = group(3);
    const grouped: CpuGemmProvider = { ...referenceGemmProvider, ...undeclared(), groupedGemm: async () => Unsupported.of({ kind: 'grouped' }) };
    const events = await providerEvents(() => expectCode(two.withProviderBundle(providerOwned(grouped)).gemmGrouped(jobs), 'ProviderUnsupported', 'Unsupported'));
    expectOutputs(jobs, before, bytes, []);
    expect(events.map((e) => [e.slot, e.outcome, e.shapes.length])).toEqual([['gemm', 'declined', 9]]);
  });

  it.skipIf(!twoCpus)('engine-scheduled: each job a traced Sequential provider call; a decline after jobs 0–2 wrote is PartialGroupedGemm [0, 1, 2] (needs 2 CPUs)', async () => {
    // lane 0 runs jobs 0 and 2, lane 1 jobs 1 and 3; job 3 declines only once job 2 has been written
    const { jobs, before, bytes } = group(4);
    let job2Written!: () => void;
    const job2 = new Promise<void>((resolve) => (job2Written = resolve));
    const outs = jobs.map((j) => j.out.buffer);
    const provider: CpuGemmProvider = {
      ...referenceGemmProvider,
      ...undeclared(),
      async gemm(ctx, req) {
        if (req.out.buffer === outs[3]) {
          await job2;
          return Unsupported.layout('output');
        }
        const outcome = await referenceGemmProvider.gemm(ctx, req);
        if (req.out.buffer === outs[2]) job2Written();
        return outcome;
      },
    };
    const h = two.withProviderBundle(engineOuter(provider));
    const submits = h.executionInfo().executorEntries.submits;
    const events = await providerEvents(async () => {
      const e = await expectCode(h.gemmGrouped(jobs), 'PartialGroupedGemm', 'Unsupported');
      expect(e.detail).toEqual({ slot: 'gemm', reason: { kind: 'layout', operand: 'output' }, job: 3, writtenJobs: [0, 1, 2] });
    });
    expect(h.executionInfo().executorEntries.submits).toBe(submits + 1);
    expectOutputs(jobs, before, bytes, [0, 1, 2]);
    expect(events).toHaveLength(4);
    for (const e of events) expect([e.slot, e.mode, e.threadLimit]).toEqual(['gemm', 'sequential', 1]);
    expect(events.map((e) => e.outcome).sort()).toEqual(['declined', 'executed', 'executed', 'executed']);
  });
});

describe('gemmGrouped: aliasing across jobs through a buffer that went to a worker and back (R99, #35)', () => {
  /** `buffer` sent to a worker and back: another SharedArrayBuffer object over the same memory. */
  async function roundTrip(buffer: SharedArrayBuffer): Promise<SharedArrayBuffer> {
    const worker = new Worker('require("node:worker_threads").parentPort.once("message", (b) => require("node:worker_threads").parentPort.postMessage(b));', { eval: true });
    try {
      const back = new Promise<SharedArrayBuffer>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage(buffer);
      return await back;
    } finally {
      await worker.terminate();
    }
  }

  it.skipIf(!loadOs().available)('an output and another job\'s input (or output) over one memory under two buffer objects is OutputAliasing; nothing runs', async () => {
    const memory = new SharedArrayBuffer(8 * 8);
    const back = await roundTrip(memory);
    // the same memory under a different JS object
    expect(back).not.toBe(memory);
    new Float64Array(back)[0] = 42;
    expect(new Float64Array(memory)[0]).toBe(42);
    new Float64Array(memory).fill(1);
    const mine = Tensor.from(new Float64Array(memory), [2, 4]);
    const theirs = Tensor.from(new Float64Array(back), [2, 4]);
    const { provider, called } = declining(() => false);
    const h = two.withProviderBundle(engineOuter(provider));
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const out = Tensor.zeros('f64', [2, 2]);
    const outAfter = bytesOf(out);
    const memoryAfter = new Uint8Array(memory.slice(0));
    // job 0 writes columns 0–1 of the memory; job 1 reads columns 1–2 of it through the other object
    const e = await expectCode(
      h.gemmGrouped([
        { out: mine.slice(undefined, [0, 2]), lhs: a, rhs: a },
        { out, lhs: theirs.slice(undefined, [1, 3]), rhs: a },
      ]),
      'OutputAliasing',
      'Validation',
    );
    expect(e.detail).toMatchObject({ job: 0, input: 'jobs[1].lhs' });
    // two outputs over that memory, one through each object
    await expectCode(
      h.gemmGrouped([
        { out: mine.slice(undefined, [0, 2]), lhs: a, rhs: a },
        { out: theirs.slice(undefined, [1, 3]), lhs: a, rhs: a },
      ]),
      'OutputAliasing',
      'Validation',
    );
    expect(called).toEqual([]);
    expect(bytesOf(out)).toEqual(outAfter);
    expect(new Uint8Array(memory.slice(0))).toEqual(memoryAfter);
    // disjoint column blocks through the two objects are fine
    await h.gemmGrouped([
      { out: mine.slice(undefined, [0, 2]), lhs: a, rhs: a },
      { out: theirs.slice(undefined, [2, 4]), lhs: a, rhs: a, alpha: 2 },
    ]);
    expect(Array.from(new Float64Array(memory))).toEqual([7, 10, 15, 22, 14, 20, 30, 44]);
  });
});
