import { describe, expect, it } from 'vitest';
import { validateGemmRequest } from '../src/index.js';
import type { CpuGemmRequest } from '../src/provider/gemm-request.js';
import { trustedGemmRequest } from '../src/provider/validate-gemm-request.js';
import { expectCode } from './helpers.js';

const buffer = new SharedArrayBuffer(4 * 8); // a 2×2 f64 matrix
const operand = Object.freeze({ buffer, offset: 0, rowStride: 1, colStride: 2, batchStrides: Object.freeze([]) });
const plain: CpuGemmRequest = { dtype: 'f64', m: 2, n: 2, k: 2, batch: Object.freeze([]), lhs: operand, rhs: operand, out: operand, alpha: 1, beta: 0, conjLhs: false, conjRhs: false };

describe('trusted GEMM requests (core-built, frozen, branded)', () => {
  it('are frozen, keep the fields of the request (no summed key unless given), and pass at once', () => {
    const t = trustedGemmRequest(plain);
    expect(Object.isFrozen(t)).toBe(true);
    expect({ ...t }).toEqual(plain);
    expect('summed' in t).toBe(false);
    expect(validateGemmRequest('test', t)).toBe(8);
  });

  it('a spread copy is an ordinary object again and is checked in full: an m past the buffer is refused', async () => {
    const t = trustedGemmRequest(plain);
    await expectCode(() => validateGemmRequest('test', { ...t, m: 3 }), 'ViewOutOfBounds');
    await expectCode(() => validateGemmRequest('test', structuredClone({ ...t, k: 5 })), 'ViewOutOfBounds');
  });

  it('a look-alike is not trusted, and non-objects are refused as before', async () => {
    const forged = Object.freeze({ ...plain, m: 9 });
    await expectCode(() => validateGemmRequest('test', forged), 'ViewOutOfBounds');
    await expectCode(() => validateGemmRequest('test', null as unknown as CpuGemmRequest), 'InvalidArgument');
  });
});
