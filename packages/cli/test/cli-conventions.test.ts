import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/index.js';
import { hasAnsi, tenferro } from './spawn-cli.js';

const version = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')).version as string;

describe('tenferro: help and version (stdout, exit 0)', () => {
  it('--help lists the commands', () => {
    const r = tenferro(['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Usage: tenferro /);
    for (const c of ['info', 'bench', 'help']) expect(r.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
  });

  it('-h is --help', () => {
    const r = tenferro(['-h']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(tenferro(['--help']).stdout);
  });

  it('help info and info --help print the same help for info', () => {
    const a = tenferro(['help', 'info']);
    const b = tenferro(['info', '--help']);
    for (const r of [a, b]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^Usage: tenferro info /);
      expect(r.stdout).toContain('--json');
    }
    expect(a.stdout).toBe(b.stdout);
  });

  it('bench --help names every option', () => {
    const r = tenferro(['bench', '--help']);
    expect(r.code).toBe(0);
    for (const o of ['--kind', '--sizes', '--threads', '--json', '--svg']) expect(r.stdout).toContain(o);
  });

  it('--version and -V print the package version', () => {
    for (const flag of ['--version', '-V']) {
      const r = tenferro([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
      expect(r.stderr).toBe('');
    }
  });
});

describe('tenferro: usage errors (stderr, exit 2)', () => {
  it('bare tenferro prints the help on stderr', () => {
    const r = tenferro([]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Usage: tenferro /);
  });

  it.each([
    [['bogus'], /^tenferro: unknown command 'bogus'/],
    [['inf'], /^tenferro: unknown command 'inf'\n\(Did you mean info\?\)/],
    [['info', '--bogus'], /^tenferro: unknown option '--bogus'/],
    [['--bogus'], /^tenferro: unknown option '--bogus'/],
    [['bench', '--kind', 'cuda'], /^tenferro: option '--kind <kind>' argument 'cuda' is invalid\. Allowed choices are faer, blas\./],
    [['bench', '--sizes', '64,x'], /^tenferro: option '--sizes <list>' argument '64,x' is invalid\. expected a comma-separated list of sizes/],
    [['bench', '--sizes', '0'], /is invalid/],
    [['bench', '--threads', 'two'], /^tenferro: option '--threads <n>' argument 'two' is invalid\. expected an integer thread count/],
    [['bench', '--svg'], /^tenferro: option '--svg <file>' argument missing/],
  ])('%j', (args, message) => {
    const r = tenferro(args);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('(run tenferro --help for usage)');
  });
});

describe('tenferro: runtime failures (exit 1)', () => {
  it('TENFERRO_NUM_THREADS=abc tenferro info: the report, then one InvalidArgument line on stderr, exit 1', () => {
    for (const args of [['info'], ['info', '--json']]) {
      const r = tenferro(args, { TENFERRO_NUM_THREADS: 'abc' });
      expect(r.code).toBe(EXIT.failure);
      expect(r.stderr).toMatch(/^tenferro: CpuBackend\.create: .*TENFERRO_NUM_THREADS.*"abc" \[InvalidArgument\]\n$/);
      expect(r.stdout).toContain('InvalidArgument');
    }
    const report = JSON.parse(tenferro(['info', '--json'], { TENFERRO_NUM_THREADS: 'abc' }).stdout);
    expect(report.backend.error.code).toBe('InvalidArgument');
  });

  it('TENFERRO_NUM_THREADS=0 tenferro bench: one InvalidArgument line, exit 1, nothing on stdout', () => {
    const r = tenferro(['bench', '--sizes', '4', '--kind', 'faer'], { TENFERRO_NUM_THREADS: '0' });
    expect(r.code).toBe(EXIT.failure);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^tenferro: .*\[InvalidArgument\]$/m);
  });

  it('a valid TENFERRO_NUM_THREADS is no failure', () => {
    expect(tenferro(['info', '--json'], { TENFERRO_NUM_THREADS: '1' }).code).toBe(0);
  });

  it('bench --svg into a folder that does not exist fails with exit 1 after measuring', () => {
    const r = tenferro(['bench', '--sizes', '4', '--kind', 'faer', '--svg', '/nonexistent-dir/x.svg'], { TENFERRO_FAER_DISABLE: '1' });
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toMatch(/^tenferro: .*nonexistent-dir/);
  });
});

describe('tenferro: no colour off a terminal', () => {
  it('piped output has no escape sequences', () => {
    for (const args of [['info'], ['--help'], ['bogus']]) {
      const r = tenferro(args);
      expect(hasAnsi(r.stdout) || hasAnsi(r.stderr), args.join(' ')).toBe(false);
    }
  });
});
