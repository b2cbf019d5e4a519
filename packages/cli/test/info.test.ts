import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectInfo, formatInfo, INFO_SCHEMA, KNOWN_PROVIDER_PACKAGES } from '../src/index.js';

const bin = join(import.meta.dirname, '../dist/bin.js');
const fixtures = join(import.meta.dirname, '../../core/test/fixtures/topology');

function tenferro(args: string[], prefix: string[] = []) {
  const [cmd, ...pre] = prefix.length > 0 ? prefix : [process.execPath];
  const r = spawnSync(cmd!, [...pre, ...(prefix.length > 0 ? [process.execPath] : []), bin, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const statusAllowed = () => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1];

describe('tenferro info', () => {
  it('--json reports the process affinity exactly as /proc shows it', () => {
    const r = tenferro(['info', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.schema).toBe(INFO_SCHEMA);
    expect(report.allowedCpus).toBe(statusAllowed());
    expect(report.node.version).toBe(process.version);
    for (const p of report.providers) {
      expect(KNOWN_PROVIDER_PACKAGES).toContain(p.name);
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

  it('formats a fixture topology with its caps and nodes', async () => {
    const root = join(fixtures, 'cfs-quota');
    const report = await collectInfo({ sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') });
    const text = formatInfo(report);
    expect(report.effectiveCapacity.quota).not.toBeNull();
    expect(text).toContain('cgroupQuota');
  });

  it('shows the BLAS runtime, and the core-type warning when OpenBLAS runs a core below the CPU', () => {
    const report = JSON.parse(tenferro(['info', '--json']).stdout);
    if (report.blas === null) return; // @tenferro/provider-blas not installed
    expect(report.blas.available).toBe(true);
    expect(report.blas.version).toMatch(/\d/);
    expect(report.blas.threadingLayer).toBeTypeOf('string');
    if (report.blas.name !== 'OpenBLAS') return;
    const prescott = spawnSync(process.execPath, [bin, 'info'], { encoding: 'utf8', env: { ...process.env, OPENBLAS_CORETYPE: 'Prescott' } });
    expect(prescott.status).toBe(0);
    expect(prescott.stdout).toMatch(/core type\s+Prescott/);
    expect(prescott.stdout).toMatch(/WARNING.*OPENBLAS_CORETYPE/);
  });

  it('errors are one line with a non-zero exit', () => {
    const unknownOption = tenferro(['info', '--bogus']);
    expect(unknownOption.code).toBe(1);
    expect(unknownOption.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknownOption.stderr).toMatch(/^tenferro: /);
    const unknownCommand = tenferro(['frobnicate']);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain('unknown command');
  });
});
