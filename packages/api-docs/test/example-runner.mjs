// Runs compiled @example programs (#39): one process runs many, each in its own worker thread so
// the state a program sets once per isolate (a backend, a warning already emitted, loaded modules,
// the process arbiter's registration) is fresh for every example. Started by examples.ts:
//   node example-runner.mjs <jobs.json>   — jobs: [{ file, timeoutMs, process }]
// A job with `process: true` (an example that only holds on a main thread) runs as its own node
// process and leaves what it printed in <file>.printed.json.
// prints one JSON line per job: { file, status, stdout, stderr, printed } where printed is what
// each `// prints:` line's console.log formatted ([line, text] pairs, posted as it happens).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8'));

function runProcess({ file, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, NO_COLOR: '1' }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      const printed = existsSync(`${file}.printed.json`) ? JSON.parse(readFileSync(`${file}.printed.json`, 'utf8')) : [];
      resolve({ file, status: code, stdout, stderr, printed });
    });
  });
}

function runOne({ file, timeoutMs, process: own }) {
  if (own) return runProcess({ file, timeoutMs });
  return new Promise((resolve) => {
    const printed = [];
    let stdout = '';
    let stderr = '';
    let error = '';
    const worker = new Worker(file, { stdout: true, stderr: true, env: { ...process.env, NO_COLOR: '1' } });
    worker.stdout.on('data', (d) => (stdout += d));
    worker.stderr.on('data', (d) => (stderr += d));
    worker.on('message', (m) => {
      if (Array.isArray(m) && m[0] === '__print') printed.push([m[1], m[2]]);
    });
    worker.on('error', (e) => (error += `${e?.stack ?? e}\n`));
    const timer = setTimeout(() => {
      error += `timed out after ${timeoutMs} ms\n`;
      void worker.terminate();
    }, timeoutMs);
    worker.on('exit', (code) => {
      clearTimeout(timer);
      // The streams end after 'exit': give them a turn to flush.
      setImmediate(() => resolve({ file, status: error === '' ? code : code || 1, stdout, stderr: `${stderr}${error}`, printed }));
    });
  });
}

for (const job of jobs) process.stdout.write(`${JSON.stringify(await runOne(job))}\n`);
