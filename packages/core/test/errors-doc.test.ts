import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, TenferroError } from '../src/index.js';

const doc = readFileSync(join(import.meta.dirname, '../../../docs/errors.md'), 'utf8');

describe('docs/errors.md', () => {
  it('lists exactly the codes of codes.ts with the same kind and meaning', () => {
    const rows = [...doc.matchAll(/^\| `(\w+)` \| (\w+) \| (.*) \|$/gm)].map((m) => [m[1], { kind: m[2], meaning: m[3] }]);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(ERROR_CODES).map(([c, i]) => [c, { kind: i.kind, meaning: i.meaning }])),
    );
  });
});

describe('TenferroError', () => {
  it('carries code, kind, op, detail and cause', () => {
    const cause = new Error('root');
    const e = new TenferroError('EmptyCpuSet', 'no CPUs', { op: 'CpuSet.of', cause, detail: { n: 0 } });
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe('EmptyCpuSet');
    expect(e.kind).toBe('Validation');
    expect(e.op).toBe('CpuSet.of');
    expect(e.message).toBe('CpuSet.of: no CPUs');
    expect(e.cause).toBe(cause);
    expect(e.detail).toEqual({ n: 0 });
    expect(Object.isFrozen(e.detail)).toBe(true);
  });

  it('recognises branded errors from other packages by brand and code, not instanceof', () => {
    const foreign = Object.assign(new Error('setThreadAffinity: bad'), { code: 'InvalidCpuList', kind: 'Validation', op: 'setThreadAffinity' });
    expect(TenferroError.is(foreign)).toBe(false);
    Object.defineProperty(foreign, Symbol.for('tenferro.error'), { get: () => true });
    expect(TenferroError.is(foreign)).toBe(true);
    expect(TenferroError.is(foreign, 'InvalidCpuList')).toBe(true);
    expect(TenferroError.is(foreign, 'EmptyCpuSet')).toBe(false);
    const converted = TenferroError.from(foreign, 'x');
    expect(converted).toBeInstanceOf(TenferroError);
    expect(converted.code).toBe('InvalidCpuList');
    expect(converted.op).toBe('setThreadAffinity');
    expect(converted.message).toBe('setThreadAffinity: bad');
  });

  it('rejects unknown codes in the brand check', () => {
    const fake = { code: 'NoSuchCode', [Symbol.for('tenferro.error')]: true };
    expect(TenferroError.is(fake)).toBe(false);
  });
});

describe('codes raised by @tenferro/os', () => {
  it('are all core codes with the same kind', async () => {
    const os = await import('@tenferro/os');
    for (const code of os.OS_ERROR_CODES) {
      expect(ERROR_CODES).toHaveProperty(code);
      expect(os.osErrorKind(code)).toBe(ERROR_CODES[code as keyof typeof ERROR_CODES].kind);
    }
  });
});
