// The API reference builds from the TSDoc of every public entry point (core with its testing and
// piscina entries, os, the providers, linalg with its testing entry). This test fails on
//  - a broken {@link} or a referenced-but-unexported type;
//  - an undocumented export not in undocumented.txt (a list that may only shrink: an entry that
//    became documented must be removed from it);
//  - a public function or method without an @example, unless listed in missing-examples.txt
//    (which may only shrink too). Methods of the interfaces that provider and executor authors
//    implement (IMPLEMENTED_BY_AUTHORS), function-valued options and the executor classes' side of
//    the executor protocol are exempt: their TSDoc says what an implementation does, and
//    examples/provider-template/ is a whole one; so are the two functions that register vitest
//    suites (REGISTERS_VITEST_SUITE), which cannot run outside a vitest test file;
//  - an @example that does not compile (strict TypeScript against the built packages) or does
//    not run as written: see examples.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileExamples, runExamples } from './examples.js';
import { type Callable, type Example, type Reflection, readApi } from './reflections.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'tenferro-api-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Interfaces whose methods third parties implement (and tenferro calls): no @example required. */
const IMPLEMENTED_BY_AUTHORS: ReadonlySet<string> = new Set([
  'CpuGemmProvider',
  'CpuLayoutTransformProvider',
  'CpuGeneralContractionProvider',
  'CpuTensorPrimitivesProvider',
  'CpuLinalgKernels',
  // runExtension's (#35): what an extension family and its providers write, core calls.
  'CpuExtensionProvider',
  'ExtensionBuiltin',
  'ExtensionKernelCall',
  'CpuDomainExecutor',
  'ScopedCpuJobs',
  'PiscinaPoolLike',
]);

/** Executor classes' side of the executor protocol: called by tenferro's operation entry, never by applications (R67). */
const EXECUTOR_PROTOCOL: ReadonlySet<string> = new Set(['capabilities', 'install', 'submit', 'workerPool', 'runKernel', 'scopeRecord']);
const EXECUTOR_CLASSES: ReadonlySet<string> = new Set(['WorkerThreadsDomainExecutor', 'PiscinaDomainExecutor']);

/**
 * Functions that register a vitest suite (`describe`/`it`): they run only while vitest collects a
 * test file, never as a standalone program, so an @example could not run. Their TSDoc shows the
 * test-file usage instead, and the unregistered `…Cases` functions they wrap have @examples.
 */
const REGISTERS_VITEST_SUITE: ReadonlySet<string> = new Set(['@tenferro/core/testing runProviderConformance', '@tenferro/core/testing runTensorPrimitivesConformance']);

function exampleRequired(c: Callable): boolean {
  if (REGISTERS_VITEST_SUITE.has(c.id)) return false;
  // Function-valued options (`LoadAddonOptions.check`) are written by the caller, like the interfaces above.
  if (c.where === 'interface method') return !IMPLEMENTED_BY_AUTHORS.has(c.owner!) && !c.owner!.endsWith('Options');
  if (c.where === 'class method' && EXECUTOR_CLASSES.has(c.owner!)) return !EXECUTOR_PROTOCOL.has(c.id.slice(c.id.lastIndexOf('.') + 1));
  return true;
}

function listed(file: string): Set<string> {
  return new Set(
    readFileSync(join(here, file), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#')),
  );
}

let warnings: string[] = [];
let callables: Callable[] = [];
let examples: Example[] = [];

beforeAll(() => {
  const typedoc = join(here, 'node_modules', '.bin', 'typedoc');
  // Warnings are reported, not fatal, here: the tests sort them.
  const r = spawnSync(typedoc, ['--out', join(out, 'html'), '--json', join(out, 'api.json'), '--treatWarningsAsErrors', 'false'], {
    cwd: here,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  warnings = `${r.stdout}${r.stderr}`
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.startsWith('[warning]') && !/^\[warning\] Found \d+ errors/.test(l));
  ({ callables, examples } = readApi(JSON.parse(readFileSync(join(out, 'api.json'), 'utf8')) as Reflection));
}, 600_000);

describe('API reference (typedoc)', () => {
  it('builds for core, os, the providers, tprims and linalg: no broken link, no export undocumented but those listed', () => {
    const undocumented = new Set<string>();
    const other: string[] = [];
    for (const line of warnings) {
      const m = /^\[warning\] (\S+) \(\w+\), defined in (\S+?), does not have any documentation/.exec(line);
      if (m !== null) undocumented.add(`${m[2]} ${m[1]}`);
      else other.push(line);
    }
    expect(other).toEqual([]);
    const allowed = listed('undocumented.txt');
    expect([...undocumented].filter((u) => !allowed.has(u)), 'exports without TSDoc (document them)').toEqual([]);
    expect([...allowed].filter((u) => !undocumented.has(u)), 'documented now: remove from undocumented.txt').toEqual([]);
    expect(existsSync(join(out, 'html', 'index.html'))).toBe(true);
    const pages = readdirSync(join(out, 'html', 'classes')).join(' ');
    for (const name of ['CpuBackend', 'Tensor', 'TenferroError']) expect(pages).toContain(name);
    // linalg's namespace is an interface since #35 (a frozen object of functions, no class).
    expect(readdirSync(join(out, 'html', 'interfaces')).join(' ')).toContain('Linalg');
    const modules = readdirSync(join(out, 'html', 'modules')).join(' ');
    for (const name of ['linalg', 'provider-tprims', 'provider-faer', 'provider-blas']) expect(modules).toContain(name);
  });

  it('every public function and method has an @example, but those listed in missing-examples.txt', () => {
    // The check sees the API: core's CpuBackend, Tensor and ops façade are among what it counts.
    for (const id of ['@tenferro/core CpuBackend.create', '@tenferro/core Tensor.fromArray', '@tenferro/core TensorOps.add', '@tenferro/linalg Linalg.solve']) {
      expect(callables.map((c) => c.id)).toContain(id);
    }
    const required = callables.filter(exampleRequired);
    const missing = new Set(required.filter((c) => !c.hasExample).map((c) => c.id));
    const allowed = listed('missing-examples.txt');
    expect([...missing].filter((id) => !allowed.has(id)), 'functions and methods without an @example (add one)').toEqual([]);
    expect([...allowed].filter((id) => !missing.has(id)), 'has an @example now: remove from missing-examples.txt').toEqual([]);
  });

  it('every @example compiles as strict TypeScript against the built packages', () => {
    expect(examples.length).toBeGreaterThan(100);
    const errors = compileExamples(here, examples, out);
    expect(errors, errors.join('\n\n')).toEqual([]);
  }, 600_000);

  it('every @example runs and prints what its `// prints:` comments say', async () => {
    // Two runner processes (one per CPU here), each example in its own worker thread (#39).
    const failures = await runExamples(here, examples, out, 2);
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 1_200_000);
});
