// `npm run demo` never hides a failed step (#39 item 5): a child that exits non-zero or crashes
// (a benchmark child killed by a signal) is reported with its exit code or signal and its stderr,
// and the demo exits non-zero. Drives scripts/demo-steps.mjs — the runner demo.mjs uses for
// `tenferro info` and `tenferro bench` — with real failing children.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { failureExitCode, mustRun, runStep } from '../../../scripts/demo-steps.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sink = { write: () => true };

/** mustRun on `node -e <code>` with the report and the exit captured instead of printed and taken. */
async function demoStep(code: string) {
  const report: string[] = [];
  const exits: number[] = [];
  const result = await mustRun('the benchmark child', process.execPath, ['-e', code], {
    cwd: root,
    capture: true,
    stderr: sink,
    report: (line) => report.push(line),
    exit: (c) => exits.push(c),
  });
  return { result, report: report.join('\n'), exits };
}

describe('the demo step runner (scripts/demo-steps.mjs)', () => {
  it('a child that exits 3 is reported with its exit code and stderr, and the demo exits 3', async () => {
    const { report, exits } = await demoStep("process.stderr.write('bench: native addon failed to load\\n'); process.exit(3)");
    expect(report).toContain('the benchmark child exited with code 3');
    expect(report).toContain('bench: native addon failed to load');
    expect(exits).toEqual([3]);
  });

  it('a crashed child (killed by SIGSEGV) is reported with the signal and its stderr, and the demo exits non-zero', async () => {
    const { result, report, exits } = await demoStep("console.error('about to crash'); process.kill(process.pid, 'SIGSEGV')");
    expect(result.signal).toBe('SIGSEGV');
    expect(report).toContain('the benchmark child was killed by SIGSEGV');
    expect(report).toContain('about to crash');
    expect(exits).toEqual([1]);
  });

  it('a child that cannot start is reported and the demo exits non-zero', async () => {
    const report: string[] = [];
    const exits: number[] = [];
    await mustRun('a missing program', join(root, 'no-such-program'), [], { stderr: sink, report: (l) => report.push(l), exit: (c) => exits.push(c) });
    expect(report.join('\n')).toContain('a missing program could not start');
    expect(report.join('\n')).toContain('ENOENT');
    expect(exits).toEqual([1]);
  });

  it('a step that succeeds is not reported, its stdout is captured and its stderr still shown', async () => {
    const shown: string[] = [];
    const { result, report, exits } = await demoStep("process.stdout.write('{\"ok\":1}'); process.stderr.write('progress')");
    expect(result.ok).toBe(true);
    expect(JSON.parse(result.stdout)).toEqual({ ok: 1 });
    expect(report).toBe('');
    expect(exits).toEqual([]);
    const again = await runStep('shown', process.execPath, ['-e', "process.stderr.write('progress line')"], { stderr: { write: (c: string) => shown.push(c) > 0 } });
    expect(again.ok).toBe(true);
    expect(shown.join('')).toBe('progress line');
  });

  it('the exit code of a failed step is never 0', () => {
    expect(failureExitCode({ ok: false, name: 'x', code: null, signal: 'SIGKILL', stdout: '', stderr: '' })).toBe(1);
    expect(failureExitCode({ ok: false, name: 'x', code: 7, signal: null, stdout: '', stderr: '' })).toBe(7);
  });
});

describe('npm run demo (scripts/demo.mjs) with a benchmark child that crashes', () => {
  it('reports the crash with the signal and the child\'s stderr, and exits non-zero', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenferro-demo-'));
    try {
      // A stand-in CLI: `info` works, `bench` writes to stderr and dies of SIGSEGV.
      const fake = join(dir, 'cli.mjs');
      writeFileSync(
        fake,
        "if (process.argv[2] === 'info') console.log('tenferro info: fine');\nelse { console.error('bench: segfault ahead'); process.kill(process.pid, 'SIGSEGV'); }\n",
      );
      const run = spawnSync(process.execPath, [join(root, 'scripts', 'demo.mjs')], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, TENFERRO_DEMO_CLI: fake, NO_COLOR: '1' },
        timeout: 60_000,
      });
      expect(run.stdout).toContain('tenferro info: fine');
      expect(run.stderr).toContain('[demo] FAILED: the benchmark child (`tenferro bench --json`) was killed by SIGSEGV.');
      expect(run.stderr).toContain('[demo]   bench: segfault ahead');
      expect(run.status).toBe(1);
      expect(run.stdout).not.toContain('3. Beyond matmul');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
