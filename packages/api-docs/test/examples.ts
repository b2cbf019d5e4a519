// The @example blocks of the TSDoc are programs: each is compiled as a strict TypeScript module
// against the built packages (as an application would import them), then run. A line that ends in
// `// prints: <text>` must call console.log once, and what that call prints must equal <text>
// (whitespace ignored: Node wraps long arrays); `// e.g. <text>` marks output that depends on the
// machine and is not compared.
//
// Running (#39): the examples are transpiled once and run by a few processes (example-runner.mjs),
// each example in its own worker thread, so once-per-isolate state is fresh for each and no node
// process is started per example. Everything is written to a scratch folder outside the
// repository (the caller's temporary folder) whose node_modules links to this package's, so
// `@tenferro/*` resolve as they would in an application.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Example } from './reflections.js';

/** `<dir>/examples`, with node_modules linked to the package's: created on first use. */
function scratch(pkg: string, dir: string): string {
  const examples = join(dir, 'examples');
  mkdirSync(examples, { recursive: true });
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(pkg, 'node_modules'), join(dir, 'node_modules'), 'dir');
  // ES modules, as in an application with "type": "module" (top-level await, import).
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  return examples;
}

function fileName(e: Example): string {
  // The hash keeps ids that differ only in case (`linalg`, `Linalg`) apart on any file system.
  const hash = createHash('sha1').update(e.id).digest('hex').slice(0, 8);
  return `${e.id.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}-${hash}-${e.index + 1}`;
}

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noUncheckedIndexedAccess: true,
  noImplicitReturns: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
};

/** Type errors of every example, each as `<id> (@example n): <message>`; empty when all compile. */
export function compileExamples(pkg: string, examples: readonly Example[], scratchDir: string): string[] {
  const dir = scratch(pkg, scratchDir);
  const byFile = new Map<string, Example>();
  for (const e of examples) {
    const path = join(dir, `${fileName(e)}.ts`);
    writeFileSync(path, `${e.code}\nexport {};\n`);
    byFile.set(path, e);
  }
  const root = join(pkg, '..', '..');
  const program = ts.createProgram([...byFile.keys()], { ...OPTIONS, typeRoots: [join(root, 'node_modules', '@types')] });
  const errors: string[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const e = d.file === undefined ? undefined : byFile.get(d.file.fileName);
    const where = d.file !== undefined && d.start !== undefined ? `line ${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    errors.push(e === undefined ? `${d.file?.fileName ?? 'program'} ${where}: ${message}` : `${e.id} (@example ${e.index + 1}) ${where}: ${message}\n${e.code}`);
  }
  return errors;
}

interface Expectation {
  readonly line: number;
  readonly text: string;
}

/** The example with each `// prints:` line's console.log recording what it prints, and the expectations. */
export function instrument(code: string): { code: string; expected: Expectation[] } | { error: string } {
  const expected: Expectation[] = [];
  const lines = code.split('\n').map((line, i) => {
    const m = /^(.*?)\s*\/\/ prints: (.*)$/.exec(line);
    if (m === null) return line;
    const calls = m[1]!.split('console.log(').length - 1;
    if (calls !== 1) return `__bad(${i + 1})`;
    expected.push({ line: i + 1, text: m[2]! });
    return m[1]!.replace('console.log(', `__print(${i + 1}, `);
  });
  const bad = lines.find((l) => l.startsWith('__bad('));
  if (bad !== undefined) return { error: `line ${bad.slice(6, -1)}: a \`// prints:\` comment must follow exactly one console.log(...) call` };
  return { code: lines.join('\n'), expected };
}

const squash = (s: string): string => s.replace(/\s+/g, '');

/**
 * Examples that need a process of their own, run as their own node process instead of in a worker
 * thread: those that only hold on a process's main thread (a thread id equal to the process id),
 * and those that join a machine arbiter — joining is per process (#41), so a worker's join would
 * reach every later example of the runner's process.
 */
const MAIN_THREAD_ONLY = /gettid\(\)\s*===\s*process\.pid|joinMachineArbiter\(|TENFERRO_MACHINE_ARBITER/;

/** In a worker: each print posted to the runner as it happens. In a process: written on exit. */
const prelude = (printedFile: string | undefined): string =>
  (printedFile === undefined
    ? [
        "import { format as __format } from 'node:util';",
        "import { parentPort as __port } from 'node:worker_threads';",
        "function __print(line: number, ...args: unknown[]): void { __port?.postMessage(['__print', line, __format(...args)]); }",
      ]
    : [
        "import { format as __format } from 'node:util';",
        "import { writeFileSync as __write } from 'node:fs';",
        'const __printed: [number, string][] = [];',
        'function __print(line: number, ...args: unknown[]): void { __printed.push([line, __format(...args)]); }',
        `process.on('exit', () => __write(${JSON.stringify(printedFile)}, JSON.stringify(__printed)));`,
      ]
  ).join(' ');

interface RunResult {
  readonly file: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly printed: [number, string][];
}

/**
 * Run every example (each in its own worker thread, `processes` runner processes side by side):
 * one failure message per example that does not exit 0 having printed what it says, as
 * `<id> (@example n): why`; empty when all pass.
 */
export async function runExamples(pkg: string, examples: readonly Example[], scratchDir: string, processes = 2): Promise<string[]> {
  const dir = scratch(pkg, scratchDir);
  const failures: string[] = [];
  const runnable: { e: Example; file: string; expected: Expectation[]; process: boolean }[] = [];
  for (const e of examples) {
    const inst = instrument(e.code);
    if ('error' in inst) {
      failures.push(`${e.id} (@example ${e.index + 1}): ${inst.error}`);
      continue;
    }
    const file = join(dir, `${fileName(e)}.mjs`);
    const ownProcess = MAIN_THREAD_ONLY.test(e.code);
    const js = ts.transpileModule(`${prelude(ownProcess ? `${file}.printed.json` : undefined)}\n${inst.code}\nexport {};\n`, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    writeFileSync(file, js);
    runnable.push({ e, file, expected: inst.expected, process: ownProcess });
  }
  const runner = fileURLToPath(new URL('./example-runner.mjs', import.meta.url));
  const shares = Array.from({ length: Math.max(1, processes) }, (_, p) => runnable.filter((_, i) => i % Math.max(1, processes) === p)).filter((s) => s.length > 0);
  const results = await Promise.all(
    shares.map(async (share, p) => {
      const jobs = join(scratchDir, `jobs-${p}.json`);
      writeFileSync(jobs, JSON.stringify(share.map((r) => ({ file: r.file, timeoutMs: 120_000, process: r.process }))));
      const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [runner, jobs], { cwd: scratchDir, env: { ...process.env, NO_COLOR: '1' } });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
      });
      const lines = stdout.split('\n').filter((l) => l.startsWith('{'));
      if (code !== 0 || lines.length !== share.length) failures.push(`example runner ${p} exited ${code} after ${lines.length} of ${share.length} examples\n${stderr}`);
      return lines.map((l) => JSON.parse(l) as RunResult);
    }),
  );
  const byFile = new Map(results.flat().map((r) => [r.file, r]));
  for (const { e, file, expected } of runnable) {
    const r = byFile.get(file);
    if (r === undefined) continue; // counted with its runner above
    const why = check(r, expected);
    if (why !== undefined) failures.push(`${e.id} (@example ${e.index + 1}): ${why}\n${e.code}`);
  }
  return failures;
}

function check(r: RunResult, expected: readonly Expectation[]): string | undefined {
  if (r.status !== 0) return `exited with ${r.status}\n${r.stderr || r.stdout}`;
  const problems: string[] = [];
  for (const x of expected) {
    const outputs = r.printed.filter(([line]) => line === x.line).map(([, text]) => text);
    if (outputs.length === 0) problems.push(`line ${x.line}: printed nothing, expected ${x.text}`);
    else if (outputs.some((o) => squash(o) !== squash(x.text))) problems.push(`line ${x.line}: printed ${outputs.join(' | ')}, expected ${x.text}`);
  }
  return problems.length === 0 ? undefined : problems.join('\n');
}
