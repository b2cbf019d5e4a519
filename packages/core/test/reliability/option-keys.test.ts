// Unknown option keys are typed InvalidArgument errors everywhere, raised before anything runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor, ops } from '../../src/index.js';
import { expectCode } from '../helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await backend.close();
});

const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
const dims = { contracting: [[1], [0]] as [number[], number[]] };

describe('option keys', () => {
  it.each([
    ['matmul', () => backend.matmul(a, a, { signa1: true } as never), 'options.signa1'],
    ['dotGeneral', () => backend.dotGeneral(a, a, dims, { conjlhs: true } as never), 'options.conjlhs'],
    // a fresh output has no previous value: beta would read whatever the pooled buffer held
    ['dotGeneral beta', () => backend.dotGeneral(a, a, dims, { beta: 1 } as never), 'options.beta'],
    ['dotGeneralInto', () => backend.dotGeneralInto(Tensor.zeros('f64', [2, 2]), a, a, dims, { gamma: 2 } as never), 'options.gamma'],
    ['session dotGeneral', () => backend.withBackendSession((s) => s.dotGeneral(a, a, dims, { x: 1 } as never)), 'options.x'],
    ['CpuBackend.create', () => CpuBackend.create({ thread: 2 } as never), 'options.thread'],
    ['ops.add', () => ops(backend).add(a, a, { outt: a } as never), 'options.outt'],
    ['ops.exp', () => ops(backend).exp(a, { sigal: 1 } as never), 'options.sigal'],
    ['ops.sum', () => ops(backend).sum(a, { axis: [0] } as never), 'options.axis'],
    ['ops.contiguous', () => ops(backend).contiguous(a, { orders: 'row' } as never), 'options.orders'],
    ['ops.copyInto', () => ops(backend).copyInto(Tensor.zeros('f64', [2, 2]), a, { conj: true } as never), 'options.conj'],
  ] as const)('%s rejects an unknown key before any executor entry', async (_name, call, param) => {
    const before = backend.executionInfo().executorEntries.installs;
    const e = await expectCode(call(), 'InvalidArgument', 'Validation');
    expect(e.detail.param).toBe(param);
    const after = backend.executionInfo().executorEntries.installs;
    // The session case enters once for the session itself; the operation adds nothing.
    expect(after - before).toBeLessThanOrEqual(_name === 'session dotGeneral' ? 1 : 0);
  });

  it('an options array is not an options object', async () => {
    await expectCode(backend.matmul(a, a, [] as never), 'InvalidArgument');
  });
});
