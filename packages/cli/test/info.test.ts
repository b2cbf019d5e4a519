import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectInfo, formatInfo, INFO_SCHEMA, type InfoReport } from '../src/index.js';
import { KNOWN_PACKAGES } from '../src/known-packages.js';

const bin = join(import.meta.dirname, '../dist/bin.js');
const fixtures = join(import.meta.dirname, '../../core/test/fixtures/topology');

function tenferro(args: string[], prefix: string[] = [], env: Record<string, string> = {}) {
  const [cmd, ...pre] = prefix.length > 0 ? prefix : [process.execPath];
  const r = spawnSync(cmd!, [...pre, ...(prefix.length > 0 ? [process.execPath] : []), bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const provider = (report: InfoReport, name: string) => report.providers.find((p) => p.name === name);

const statusAllowed = () => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1];

describe('tenferro info', () => {
  it('--json reports the process affinity exactly as /proc shows it', () => {
    const r = tenferro(['info', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.schema).toBe('tenferro.info/2');
    expect(INFO_SCHEMA).toBe('tenferro.info/2');
    expect(report.allowedCpus).toBe(statusAllowed());
    expect(report.node.version).toBe(process.version);
    expect(report.osBinding).toEqual({ available: true, path: expect.stringMatching(/tenferro_os\.node$/) });
    for (const p of report.providers) {
      const known = KNOWN_PACKAGES.find((k) => k.name === p.name);
      expect(known, p.name).toBeDefined();
      expect(p.kind).toBe(known!.kind ?? null);
      expect(JSON.parse(readFileSync(p.path, 'utf8')).version).toBe(p.version);
    }
    expect(report.backend.kind).toBe('faer');
    expect(report.backend.executionMode).toBe('managed');
    expect(report.backend.workers.length).toBe(report.backend.workerCount);
    for (const w of report.backend.workers) expect(w.cpus).toBe(report.allowedCpus);
    for (const n of report.numa.nodes) expect(typeof n.id).toBe('number');
  });

  it('under taskset -c <cpu> the affinity and node 0 show only that CPU', () => {
    const allowed = statusAllowed()!;
    const last = allowed.split(/[,-]/).map(Number).pop()!;
    const r = tenferro(['info', '--json'], ['taskset', '-c', String(last)]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.allowedCpus).toBe(String(last));
    expect(report.effectiveCapacity.cpus).toBe(1);
    for (const n of report.numa.nodes) expect(n.cpus).toBe(String(last));
  });

  it('prints a human report naming every section', () => {
    const r = tenferro(['info']);
    expect(r.code).toBe(0);
    for (const word of ['process affinity', 'online', 'effective capacity', 'NUMA', 'providers', 'OS binding']) {
      expect(r.stdout).toContain(word);
    }
    const report = JSON.parse(tenferro(['info', '--json']).stdout);
    if (report.providers.length === 0) expect(r.stdout).toMatch(/installed\s+none/);
    for (const p of report.providers) expect(r.stdout).toContain(p.name);
  });

  it('reports the THP mode, the defrag mode and whether huge-page advice and pre-faulting apply (#38)', () => {
    const thp = (file: string) => {
      try {
        return /\[([^\]]+)\]/.exec(readFileSync(`/sys/kernel/mm/transparent_hugepage/${file}`, 'utf8'))![1];
      } catch {
        return 'unsupported';
      }
    };
    const report = JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport;
    expect(report.memory.thp).toBe(thp('enabled'));
    expect(report.memory.defrag).toBe(thp('defrag'));
    expect(report.memory.hugePageAdvice).toBe(report.memory.thp === 'madvise');
    expect(report.memory.hugePagePlacement).toBe(report.memory.thp === 'madvise' || report.memory.thp === 'always');
    expect(report.memory.prefault).toBe(true);
    const text = tenferro(['info']).stdout;
    expect(text).toMatch(new RegExp(`transparent huge pages\\s+${report.memory.thp} \\(defrag ${report.memory.defrag.replace('+', '\\+')}\\)`));
    // The off switches, and no binding: said so, with the reason.
    const off = JSON.parse(tenferro(['info', '--json'], [], { TENFERRO_HUGE_PAGES: '0', TENFERRO_PREFAULT: '0' }).stdout) as InfoReport;
    expect(off.memory).toMatchObject({ hugePagePlacement: false, hugePageAdvice: false, prefault: false, reason: 'TENFERRO_HUGE_PAGES=0' });
    const noBinding = tenferro(['info'], [], { TENFERRO_OS_DISABLE: '1' }).stdout;
    expect(noBinding).toMatch(/huge pages\s+not applied — the @tenferro\/os binding is unavailable/);
  });

  it('formats a fixture topology with its caps and nodes', async () => {
    const root = join(fixtures, 'cfs-quota');
    const report = await collectInfo({ sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') });
    const text = formatInfo(report);
    expect(report.effectiveCapacity.quota).not.toBeNull();
    expect(text).toContain('cgroupQuota');
  });

  it('lists each installed provider package with its status(): faer and blas here, both available', () => {
    const report = JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport;
    // The CLI's optional dependencies, installed in this workspace.
    expect(report.providers.map((p) => p.name)).toEqual(expect.arrayContaining(['@tenferro/provider-faer', '@tenferro/provider-blas']));
    for (const p of report.providers) {
      const s = p.status;
      if (s === null) continue; // an installed version without status()
      if (s.available) {
        expect(s.name).toBeTypeOf('string');
        for (const value of Object.values(s.details)) expect(['string', 'number', 'boolean'].includes(typeof value) || value === null).toBe(true);
        expect(Array.isArray(s.warnings)).toBe(true);
      } else {
        expect(s.reasons.length).toBeGreaterThan(0);
        expect(s.possibleSolutions.length).toBeGreaterThan(0);
      }
    }
    const faer = provider(report, '@tenferro/provider-faer')!.status;
    expect(faer?.available && faer.details.isa).toMatch(/avx512f|avx2\+fma|portable/);
    if ('error' in report.backend) throw new Error(report.backend.error.message);
    expect(report.backend.providerDiagnostic).toContain(faer?.available ? faer.name : '?');
    expect(report.backend.arbiter).toBe('process');
  });

  it('says which arbiter is in force: the per-isolate one without the OS binding', () => {
    const r = tenferro(['info', '--json'], [], { TENFERRO_OS_DISABLE: '1' });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as InfoReport;
    if ('error' in report.backend) throw new Error(report.backend.error.message);
    expect(report.backend.arbiter).toBe('isolate');
    const text = tenferro(['info'], [], { TENFERRO_OS_DISABLE: '1' }).stdout;
    expect(text).toMatch(/arbiter\s+isolate \(this isolate only/);
    // #36: the lost exclusion is said in so many words.
    expect(text).toMatch(/arbiter\s+isolate \(this isolate only: exclusion across worker_threads isolates is NOT enforced/);
    expect(tenferro(['info'], [], {}).stdout).toMatch(/arbiter\s+process \(one for every worker_thread isolate/);
  });

  it('a provider package that cannot load is listed with its reasons and fixes; the backend falls back', () => {
    // Without a usable blas either (TENFERRO_IGNORE_SYSTEM_BLAS=1): the default kind stays faer, on the reference kernels (#36).
    const r = tenferro(['info', '--json'], [], { TENFERRO_FAER_DISABLE: '1', TENFERRO_IGNORE_SYSTEM_BLAS: '1' });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as InfoReport;
    expect(provider(report, '@tenferro/provider-faer')!.status).toEqual({
      available: false,
      reasons: ['disabled by TENFERRO_FAER_DISABLE=1'],
      possibleSolutions: ['unset TENFERRO_FAER_DISABLE', expect.stringContaining("core's reference kernels")],
    });
    if ('error' in report.backend) throw new Error(report.backend.error.message);
    expect(report.backend.providerDiagnostic).toContain('reference');
    expect(report.backend.kind).toBe('faer');
    expect(report.backend.kindReason).toBeNull();
    const text = tenferro(['info'], [], { TENFERRO_FAER_DISABLE: '1', TENFERRO_IGNORE_SYSTEM_BLAS: '1' }).stdout;
    expect(text).toMatch(/@tenferro\/provider-faer\s+\S+ — unavailable/);
    expect(text).toMatch(/reason\s+disabled by TENFERRO_FAER_DISABLE=1/);
    expect(text).toMatch(/fix\s+unset TENFERRO_FAER_DISABLE/);
  });

  const blasUsable = (provider(JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport, '@tenferro/provider-blas')?.status?.available ?? false) === true;
  it.skipIf(!blasUsable)('faer unavailable, blas available: the default kind is blas, and info says why (#36; needs a system BLAS)', () => {
    const report = JSON.parse(tenferro(['info', '--json'], [], { TENFERRO_FAER_DISABLE: '1' }).stdout) as InfoReport;
    if ('error' in report.backend) throw new Error(report.backend.error.message);
    expect(report.backend.kind).toBe('blas');
    expect(report.backend.kindReason).toBe('@tenferro/provider-faer is unavailable: disabled by TENFERRO_FAER_DISABLE=1');
    expect(report.backend.executionMode).toBe('providerDefaultExclusive');
    expect(tenferro(['info'], [], { TENFERRO_FAER_DISABLE: '1' }).stdout).toMatch(/kind\s+blas \(the default: @tenferro\/provider-faer is unavailable: disabled by TENFERRO_FAER_DISABLE=1\)/);
    // With faer available the default is faer, no reason given.
    const normal = JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport;
    if ('error' in normal.backend) throw new Error(normal.backend.error.message);
    expect(normal.backend.kind).toBe('faer');
    expect(normal.backend.kindReason).toBeNull();
  });

  it('without the OS binding: its reasons and fixes', () => {
    const report = JSON.parse(tenferro(['info', '--json'], [], { TENFERRO_OS_DISABLE: '1' }).stdout) as InfoReport;
    expect(report.osBinding).toEqual({ available: false, reasons: ['disabled by TENFERRO_OS_DISABLE=1'], possibleSolutions: ['unset TENFERRO_OS_DISABLE'] });
    const text = tenferro(['info'], [], { TENFERRO_OS_DISABLE: '1' }).stdout;
    expect(text).toContain('compatibility mode');
    expect(text).toMatch(/fix\s+unset TENFERRO_OS_DISABLE/);
  });

  const blasInstalled = provider(JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport, '@tenferro/provider-blas') !== undefined;
  it.skipIf(!blasInstalled)('shows the BLAS runtime, and the core-type warning when OpenBLAS runs a core below the CPU (needs @tenferro/provider-blas)', () => {
    const report = JSON.parse(tenferro(['info', '--json']).stdout) as InfoReport;
    const blas = provider(report, '@tenferro/provider-blas')!;
    if (!blas.status?.available) throw new Error(`BLAS unavailable: ${JSON.stringify(blas.status)}`);
    const details = blas.status.details;
    expect(details.version).toMatch(/\d/);
    expect(details.threadingLayer).toBeTypeOf('string');
    expect(tenferro(['info']).stdout).toMatch(new RegExp(`threading layer\\s+${String(details.threadingLayer)}`));
    if (details.runtime !== 'OpenBLAS') return; // the core-type part below is OpenBLAS's alone; the runtime checks above ran
    const prescott = spawnSync(process.execPath, [bin, 'info'], { encoding: 'utf8', env: { ...process.env, OPENBLAS_CORETYPE: 'Prescott' } });
    expect(prescott.status).toBe(0);
    expect(prescott.stdout).toMatch(/core type\s+Prescott/);
    expect(prescott.stdout).toMatch(/WARNING.*OPENBLAS_CORETYPE/);
  });

  it('usage errors start with "tenferro: " on stderr and exit 2 (more in cli-conventions.test.ts)', () => {
    const unknownOption = tenferro(['info', '--bogus']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^tenferro: unknown option '--bogus'/);
    const unknownCommand = tenferro(['frobnicate']);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain('unknown command');
  });
});
