// Bad-input fuzz over the public operations and constructors: whatever the input — shapes,
// strides, offsets, dtypes, options, forged objects — the outcome is a result or a documented
// TenferroError (never TypeError/RangeError/Internal), raised before any output byte changes and,
// for validation errors, before any executor entry.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, ERROR_CODES, TenferroError, Tensor, type DType } from '../../src/index.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

const DTYPES_AND_JUNK = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool', 'f16', '', 'F64', 3] as const;
const weirdNumber = fc.oneof(
  fc.integer({ min: -3, max: 12 }),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, 0.5, -0, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 63, 1e19, -1e19),
);
const extent = fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 5 }) }, { weight: 1, arbitrary: weirdNumber });
const shape = fc.array(extent, { minLength: 0, maxLength: 4 });

/** A descriptor near validity: sometimes valid, often subtly wrong. */
const descriptor = fc.record({
  dtype: fc.constantFrom(...DTYPES_AND_JUNK),
  shape,
  strides: fc.array(weirdNumber, { minLength: 0, maxLength: 4 }),
  offset: weirdNumber,
  bufferBytes: fc.integer({ min: 0, max: 1024 }),
  forge: fc.constantFrom('none', 'tag', 'proto', 'arraybuffer'),
});

type Desc = typeof descriptor extends fc.Arbitrary<infer T> ? T : never;

function bufferOf(d: Desc): unknown {
  switch (d.forge) {
    case 'tag':
      return { [Symbol.toStringTag]: 'SharedArrayBuffer', byteLength: d.bufferBytes };
    case 'proto':
      return Object.create(SharedArrayBuffer.prototype);
    case 'arraybuffer':
      return new ArrayBuffer(d.bufferBytes);
    default:
      return new SharedArrayBuffer(d.bufferBytes);
  }
}

/** A tensor from `d` when the constructor accepts it, else the raw descriptor-shaped object (which operations must refuse). */
function tensorOrRaw(d: Desc): unknown {
  const raw = { dtype: d.dtype, shape: d.shape, strides: d.strides, offset: d.offset, buffer: bufferOf(d) };
  try {
    return Tensor.fromDescriptor(raw as never);
  } catch (e) {
    expectDocumented(e);
    return raw;
  }
}

const FORBIDDEN = new Set(['Internal']);
function expectDocumented(e: unknown): asserts e is TenferroError {
  if (!TenferroError.is(e)) throw new Error(`expected a TenferroError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  expect(Object.hasOwn(ERROR_CODES, e.code)).toBe(true);
  expect(FORBIDDEN.has(e.code)).toBe(false);
}

const options = fc.oneof(
  fc.constant(undefined),
  fc.record({ conjLhs: fc.oneof(fc.boolean(), fc.constant('yes')), analysisSlot: fc.oneof(fc.nat(4), weirdNumber) }, { requiredKeys: [] }),
  fc.record({ alpha: fc.oneof(fc.double(), fc.tuple(fc.double(), fc.double()), fc.constant('x')), beta: fc.oneof(fc.double(), fc.constant([1])) }, { requiredKeys: [] }),
  fc.record({ bogus: fc.anything() }),
  fc.anything(),
);
const axes = fc.array(fc.oneof(fc.integer({ min: -1, max: 4 }), weirdNumber), { maxLength: 3 });
const dims = fc.oneof(
  fc.record({ contracting: fc.tuple(axes, axes) }),
  fc.record({ contracting: fc.tuple(axes, axes), batch: fc.tuple(axes, axes) }),
  fc.anything(),
);

function bytesOf(t: unknown): Uint8Array | undefined {
  if (!Tensor.isTensor(t)) return undefined;
  return new Uint8Array(t.buffer).slice();
}

async function settle(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
    return undefined;
  } catch (e) {
    expectDocumented(e);
    return e;
  }
}

describe('bad-input fuzz', () => {
  it('dotGeneral / dotGeneralInto / matmul: documented errors only, the output untouched, validation before any entry', async () => {
    await fc.assert(
      fc.asyncProperty(descriptor, descriptor, descriptor, dims, options, async (l, r, o, d, opts) => {
        const lhs = tensorOrRaw(l);
        const rhs = tensorOrRaw(r);
        const out = tensorOrRaw(o);
        const before = bytesOf(out);
        const entries = backend.executionInfo().executorEntries.installs;
        for (const action of [
          () => backend.dotGeneral(lhs as Tensor, rhs as Tensor, d as never, opts as never),
          () => backend.matmul(lhs as Tensor, rhs as Tensor, opts as never),
        ]) {
          const e = await settle(action);
          if (TenferroError.is(e) && e.kind === 'Validation') expect(backend.executionInfo().executorEntries.installs).toBe(entries);
        }
        const entriesInto = backend.executionInfo().executorEntries.installs;
        const e = await settle(() => backend.dotGeneralInto(out as Tensor, lhs as Tensor, rhs as Tensor, d as never, opts as never));
        if (e !== undefined && before !== undefined) expect(bytesOf(out)).toEqual(before);
        if (TenferroError.is(e) && e.kind === 'Validation') expect(backend.executionInfo().executorEntries.installs).toBe(entriesInto);
      }),
      { numRuns: 1000, seed: 20261130 },
    );
    expect(backend.bufferPoolStats().outstanding).toBe(0);
  });

  it('reshape and the tensor constructors: documented errors only', async () => {
    await fc.assert(
      fc.asyncProperty(descriptor, shape, fc.constantFrom<DType | string>(...(DTYPES_AND_JUNK as readonly string[])), fc.anything(), async (d, newShape, dtype, data) => {
        const t = tensorOrRaw(d);
        await settle(() => backend.reshape(t as Tensor, newShape as number[]));
        await settle(async () => Tensor.zeros(dtype as DType, newShape as number[]));
        await settle(async () => Tensor.fromArray(dtype as DType, newShape as number[], data as never));
        await settle(async () => (Tensor.isTensor(t) ? t.slice(...(newShape as never[])) : undefined));
      }),
      { numRuns: 1000, seed: 7 },
    );
  });

  it('backend constructors and entry points: documented errors only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), async (x, y) => {
        await settle(async () => (await CpuBackend.create(x as never)).close());
        await settle(async () => (await CpuBackend.fromExternalDomains(x as never)).close());
        await settle(() => backend.install(x as never, y as never));
        await settle(() => backend.withOuterLanes(x as never, () => undefined));
        await settle(async () => backend.forPlacement(x as never));
        await settle(() => backend.withBackendSession(() => undefined, y as never));
        await settle(() => backend.withBackendSession((s) => s.run(x as never, y as never)));
        await settle(() => backend.withBackendSession((s) => s.dotGeneral(x as never, y as never, x as never)));
      }),
      { numRuns: 300, seed: 11 },
    );
  });
});
