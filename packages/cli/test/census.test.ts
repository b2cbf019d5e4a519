// `tenferro info --census`: every thread of the process with its mask and owner; `--json` validates
// against docs/schemas/census.schema.json (ajv), and the human form names owners and flags.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { CENSUS_SCHEMA, formatCensus, type CensusReport } from '../src/index.js';
import { tenferro } from './spawn-cli.js';

const schema = JSON.parse(readFileSync(join(import.meta.dirname, '../../../docs/schemas/census.schema.json'), 'utf8')) as Record<string, unknown>;
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);

describe('tenferro info --census', () => {
  const r = tenferro(['info', '--census', '--json']);
  const report = JSON.parse(r.stdout) as CensusReport;

  it('--json validates against the documented schema', () => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(validate(report), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(report.schema).toBe(CENSUS_SCHEMA);
  });

  it('lists the main thread and the engine workers of each backend inside their domain', () => {
    expect(report.threads.find((t) => t.tid === report.pid)?.owner).toEqual({ kind: 'main' });
    const workers = report.threads.filter((t) => t.owner.kind === 'engineWorker');
    const kinds = report.backends.filter((b) => !('error' in b)).map((b) => b.kind);
    expect(kinds).toContain('faer');
    for (const kind of kinds) expect(workers.some((t) => t.owner.kind === 'engineWorker' && t.owner.backendKind === kind)).toBe(true);
    for (const w of workers) {
      expect(w.identifiedBy).toBe('tenferro');
      expect(w.outsideDomain).toBe(false);
    }
    expect(report.outsideDomain).toEqual(report.threads.filter((t) => t.outsideDomain).map((t) => t.tid));
  });

  it('the schema rejects what it must (a flagged thread without a tid, an unknown owner kind)', () => {
    const bad = structuredClone(report) as unknown as { threads: Record<string, unknown>[] };
    bad.threads[0]!.owner = { kind: 'gpu' };
    expect(validate(bad)).toBe(false);
    const noTid = structuredClone(report) as unknown as { threads: Record<string, unknown>[] };
    delete noTid.threads[0]!.tid;
    expect(validate(noTid)).toBe(false);
  });

  it('the human census names owners and says whether anything runs outside its domain', () => {
    const human = tenferro(['info', '--census']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`thread census of pid`);
    expect(human.stdout).toContain('main thread');
    expect(human.stdout).toMatch(/tenferro faer engine worker \(domain \d+, lane 0\)/);
    expect(human.stdout).toMatch(/every thread tenferro or a provider owns runs inside its domain|WARNING: \d+ thread/);
  });

  it('a thread outside its domain is flagged in words', () => {
    const flagged: CensusReport = {
      ...report,
      threads: [{ tid: 42, name: 'node', cpus: '0-1', owner: { kind: 'provider', provider: 'blas', role: 'OpenBLAS pthreads thread' }, identifiedBy: 'provider', domainCpus: '1', outsideDomain: true }],
      outsideDomain: [42],
    };
    const text = formatCensus(flagged);
    expect(text).toContain('OpenBLAS pthreads thread (blas)');
    expect(text).toContain('OUTSIDE its domain 1');
    expect(text).toContain('WARNING: 1 thread(s) tenferro or a provider owns run outside their domain: 42');
  });
});

describe('tenferro info (without --census)', () => {
  it('says whether threads of tenferro and its providers run inside their domain', () => {
    const r = tenferro(['info', '--json']);
    const info = JSON.parse(r.stdout) as { backend: { threadsOutsideDomain: unknown[] } };
    expect(info.backend.threadsOutsideDomain).toEqual([]);
    expect(tenferro(['info']).stdout).toContain('every thread of tenferro and its providers inside its domain');
  });
});
