// The @example blocks of the TSDoc are programs: each is compiled as a strict TypeScript module
// against the built packages (as an application would import them), then run with node. A line
// that ends in `// prints: <text>` must call console.log once, and what that call prints must
// equal <text> (whitespace ignored: Node wraps long arrays); `// e.g. <text>` marks output that
// depends on the machine and is not compared.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { Example } from './reflections.js';

/** The directory the examples are written to: inside this package, so `@tenferro/*` resolve from its node_modules. */
function scratch(pkg: string): string {
  const dir = join(pkg, 'test', '.examples');
  mkdirSync(dir, { recursive: true });
  return dir;
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
export function compileExamples(pkg: string, examples: readonly Example[]): string[] {
  rmSync(join(pkg, 'test', '.examples'), { recursive: true, force: true }); // no leftovers of earlier runs
  const dir = scratch(pkg);
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

/** Run one example with node: `undefined` when it exits 0 having printed what it says, else why not. */
export async function runExample(pkg: string, e: Example): Promise<string | undefined> {
  const inst = instrument(e.code);
  if ('error' in inst) return inst.error;
  const dir = scratch(pkg);
  const base = join(dir, fileName(e));
  const printed = `${base}.printed.json`;
  rmSync(printed, { force: true });
  const prelude = [
    "import { format as __format } from 'node:util';",
    "import { writeFileSync as __write } from 'node:fs';",
    'const __printed: [number, string][] = [];',
    'function __print(line: number, ...args: unknown[]): void { __printed.push([line, __format(...args)]); }',
    `process.on('exit', () => __write(${JSON.stringify(printed)}, JSON.stringify(__printed)));`,
  ].join(' ');
  const js = ts.transpileModule(`${prelude}\n${inst.code}\nexport {};\n`, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
  writeFileSync(`${base}.mjs`, js);
  const { status, stdout, stderr } = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [`${base}.mjs`], { cwd: pkg, env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ status: code, stdout, stderr }));
  });
  if (status !== 0) return `exited with ${status}\n${stderr || stdout}\n${e.code}`;
  const got = JSON.parse(readFileSync(printed, 'utf8')) as [number, string][];
  const problems: string[] = [];
  for (const x of inst.expected) {
    const outputs = got.filter(([line]) => line === x.line).map(([, text]) => text);
    if (outputs.length === 0) problems.push(`line ${x.line}: printed nothing, expected ${x.text}`);
    else if (outputs.some((o) => squash(o) !== squash(x.text))) problems.push(`line ${x.line}: printed ${outputs.join(' | ')}, expected ${x.text}`);
  }
  return problems.length === 0 ? undefined : `${problems.join('\n')}\n${e.code}`;
}
