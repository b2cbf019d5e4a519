// The step runner of `npm run demo` (scripts/demo.mjs; #39 item 5): runs one child process, its
// stderr shown as it comes and its last lines kept, and — when the child fails (non-zero exit code
// or a signal, e.g. a benchmark child that crashes) — says which step failed, with the exit code or
// signal and the child's last stderr lines, so the demo never hides a failed step.
// Tested by packages/release-checks/test/demo-steps.test.ts.
import { spawn } from 'node:child_process';

/** How many trailing stderr characters a failure report keeps. */
const STDERR_TAIL = 4000;

/**
 * Runs `cmd args` as the step `name`. stdout is collected (`capture: true`) or shown; stderr is
 * forwarded to `opts.stderr` (default process.stderr) as it arrives and its tail kept.
 * Resolves { ok, name, code, signal, stdout, stderr } — never rejects (a spawn error is a failure).
 */
export function runStep(name, cmd, args, opts = {}) {
  const { capture = false, cwd, env, stderr: errOut = process.stderr, stdout: outStream = process.stdout } = opts;
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child;
    try {
      child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ ok: false, name, code: null, signal: null, stdout, stderr: String(error?.message ?? error) });
      return;
    }
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      if (capture) stdout += chunk;
      else outStream.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      errOut.write(chunk);
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    let started = true;
    child.on('error', (error) => {
      if (child.pid === undefined) started = false;
      stderr = `${stderr}${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${error.message}`.slice(-STDERR_TAIL);
    });
    child.on('close', (code, signal) => {
      if (!started) resolve({ ok: false, name, code: null, signal: null, stdout, stderr });
      else resolve({ ok: code === 0 && signal === null, name, code, signal, stdout, stderr });
    });
  });
}

/** The lines that report a failed step (its name, exit code or signal, and its last stderr lines). */
export function failureReport(result) {
  const how = result.signal ? `was killed by ${result.signal}` : result.code === null ? 'could not start' : `exited with code ${result.code}`;
  const lines = [`[demo] FAILED: ${result.name} ${how}.`];
  const tail = result.stderr.trimEnd().split('\n').slice(-20);
  if (tail.length > 0 && tail[0] !== '') {
    lines.push(`[demo] its stderr (last ${tail.length} line${tail.length === 1 ? '' : 's'}):`);
    for (const line of tail) lines.push(`[demo]   ${line}`);
  } else {
    lines.push('[demo] it wrote nothing to stderr.');
  }
  return lines;
}

/** The exit code of the demo after a failed step: the child's own, else 1 (a signal or no start). */
export function failureExitCode(result) {
  return typeof result.code === 'number' && result.code !== 0 ? result.code : 1;
}

/**
 * Runs a step and, when it fails, prints the report to `opts.report` (default console.error) and
 * exits the process with failureExitCode (or, with `opts.exit`, calls that instead). Returns the
 * result of a step that succeeded.
 */
export async function mustRun(name, cmd, args, opts = {}) {
  const result = await runStep(name, cmd, args, opts);
  if (result.ok) return result;
  const report = opts.report ?? ((line) => console.error(line));
  for (const line of failureReport(result)) report(line);
  (opts.exit ?? ((code) => process.exit(code)))(failureExitCode(result));
  return result;
}
