import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/** What `scripts/checks/rule-refs.mjs` returns (plain ESM, so typed here). */
interface RuleRefsResult {
  readonly missing: readonly { readonly rule: number; readonly file: string; readonly line: number }[];
  readonly cited: readonly number[];
  readonly defined: readonly number[];
  readonly duplicates: readonly number[];
  readonly citations: number;
  readonly files: number;
}
type CheckRuleRefs = (options: { readonly root: string; readonly doc?: string }) => RuleRefsResult;

const repoRoot = join(import.meta.dirname, '../../..');
const script = join(repoRoot, 'scripts/checks/rule-refs.mjs');
const rulebook = 'docs/contracts/execution-contract.md';
const fixtureRoot = join(import.meta.dirname, 'fixtures/rulebook');

const loaded = (await import(pathToFileURL(script).href)) as { checkRuleRefs?: unknown };
if (typeof loaded.checkRuleRefs !== 'function') throw new Error(`${script} does not export checkRuleRefs()`);
const checkRuleRefs = loaded.checkRuleRefs as CheckRuleRefs;

function runCli(...args: string[]): { status: number | null; lines: string[] } {
  const r = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  return { status: r.status, lines: r.stdout.trim().split('\n') };
}

describe('the rulebook (docs/contracts/execution-contract.md)', () => {
  it('heads every rule the code cites, and every rule R1–R121 exactly once', () => {
    const r = checkRuleRefs({ root: repoRoot });
    expect(r.missing).toEqual([]);
    expect(r.duplicates).toEqual([]);
    expect(r.defined).toEqual(Array.from({ length: 121 }, (_, i) => i + 1));
    // The scan really read the sources: core alone cites dozens of rules.
    expect(r.files).toBeGreaterThan(50);
    expect(r.cited.length).toBeGreaterThan(50);
    expect(r.cited).toEqual(expect.arrayContaining([1, 29, 89, 105]));
    // test/fixtures is outside packages/*/src and packages/*/native: its planted R999 is not seen.
    expect(r.cited).not.toContain(999);
  });

  it('writes each rule heading as "### R<n> — <title>"', () => {
    const headings = readFileSync(join(repoRoot, rulebook), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('### '));
    expect(headings).toHaveLength(121);
    for (const heading of headings) expect(heading).toMatch(/^### R\d{1,3} — \S/);
  });

  it('passes as a CLI on the repository', () => {
    const { status, lines } = runCli();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^rule-refs: \d+ distinct rules cited .* 0 without a heading, 0 headed twice — ok$/);
    expect(status).toBe(0);
  });
});

describe('scripts/checks/rule-refs.mjs', () => {
  it('reports exactly the planted violation of the fixture tree', () => {
    const r = checkRuleRefs({ root: fixtureRoot, doc: 'docs/rules.md' });
    expect(r.missing).toEqual([{ rule: 999, file: 'packages/x/src/a.ts', line: 4 }]);
    expect(r.cited).toEqual([1, 999]);
    expect(r.defined).toEqual([1, 2]);
    expect(r.duplicates).toEqual([]);
  });

  it('fails as a CLI on the fixture tree, listing file:line R<n>', () => {
    const { status, lines } = runCli('--root', fixtureRoot, '--doc', 'docs/rules.md');
    expect(lines[0]).toMatch(/^rule-refs: 2 distinct rules cited .* 1 without a heading, 0 headed twice$/);
    expect(lines.slice(1)).toEqual(['packages/x/src/a.ts:4 R999']);
    expect(status).toBe(1);
  });

  describe('on a tree built here', () => {
    const root = mkdtempSync(join(tmpdir(), 'tenferro-rule-refs-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const put = (path: string, text: string | Uint8Array) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    put('docs/rules.md', ['### R3 — three', '### R4 — four', '### R5 — five', '### R7 — seven', '### R7 — seven again', ''].join('\n'));
    put('packages/y/src/deep/b.ts', '// R3 and R5–R7\n');
    put('packages/y/native/src/k.cc', '// R4: AVX2, R_OK and the register r8 are not rules\n');
    put('packages/y/native/binding.gyp', "{ 'comment': 'R3' }\n");
    for (const [path, rule] of [
      ['packages/y/native/build/gen.cc', 900],
      ['packages/y/src/node_modules/z/index.js', 901],
      ['packages/y/src/dist/index.js', 902],
      ['packages/y/test/t.test.ts', 903],
      ['packages/y/README.md', 904],
      ['src/top-level.ts', 905],
    ] as const) {
      put(path, `// R${rule}\n`);
    }
    put('packages/y/src/blob.bin', new Uint8Array([0x52, 0x39, 0x30, 0x36, 0x00, 0x0a])); // "R906\0": binary, skipped

    it('expands ranges and scans only packages/*/src and packages/*/native text files', () => {
      const r = checkRuleRefs({ root, doc: 'docs/rules.md' });
      expect(r.cited).toEqual([3, 4, 5, 6, 7]);
      expect(r.missing).toEqual([{ rule: 6, file: 'packages/y/src/deep/b.ts', line: 1 }]);
      expect(r.files).toBe(3);
      expect(r.citations).toBe(5);
    });

    it('reports a rule headed twice, and the CLI fails on it', () => {
      expect(checkRuleRefs({ root, doc: 'docs/rules.md' }).duplicates).toEqual([7]);
      const { status, lines } = runCli('--root', root, '--doc', 'docs/rules.md');
      expect(lines.slice(1)).toEqual(['packages/y/src/deep/b.ts:1 R6', 'docs/rules.md: R7 is headed more than once']);
      expect(status).toBe(1);
    });
  });
});

/** What `scripts/checks/rulebook-amendments.mjs` returns (plain ESM, so typed here). */
interface AmendmentsResult {
  readonly rows: readonly { readonly rule: string; readonly sources: readonly string[] }[];
  readonly amendments: readonly { readonly rule: string; readonly sources: readonly string[]; readonly line: number }[];
  readonly problems: readonly string[];
}
const amendmentsScript = join(repoRoot, 'scripts/checks/rulebook-amendments.mjs');
const loadedAmendments = (await import(pathToFileURL(amendmentsScript).href)) as { checkAmendments?: unknown };
if (typeof loadedAmendments.checkAmendments !== 'function') throw new Error(`${amendmentsScript} does not export checkAmendments()`);
const checkAmendments = loadedAmendments.checkAmendments as (text: string) => AmendmentsResult;

describe('amendments and deviations in the rulebook (#36)', () => {
  const real = readFileSync(join(repoRoot, rulebook), 'utf8');

  it('marks every amendment with the issue or measurement that sanctioned it, and lists each in the table', () => {
    const r = checkAmendments(real);
    expect(r.problems).toEqual([]);
    // The amendments #36 asked to mark, and the ones already written before it.
    const rules = new Set(r.amendments.map((a) => a.rule));
    for (const rule of ['R19', 'R21', 'R27', 'R40', 'R43', 'R65', 'R75', 'R77', 'R85', 'R87', 'R105', 'R108', 'R110', 'main-thread waiting']) expect(rules).toContain(rule);
    expect(r.rows.map((row) => row.rule).sort()).toEqual([...rules].sort());
    for (const a of r.amendments) expect(a.sources.length).toBeGreaterThan(0);
  });

  it('leaves no amendment unmarked: every "On Node.js" paragraph that says amendment uses the marker', () => {
    expect(real).not.toMatch(/\*\*On Node\.js \(amendment\)/);
    expect(real).not.toMatch(/\*\*Amendment \(Node\):/);
  });

  const table = (...rows: string[]) => ['## Amendments and deviations', '', '| Rule | differs | Sanctioned by |', '|---|---|---|', ...rows, '', '## 1. Rules', ''];
  const amended = (marker: string, body = 'Some text.') => ['### R7 — seven', `${marker} ${body}`, ''];

  it('accepts a well-formed rulebook', () => {
    const ok = checkAmendments([...table('| R7 | x | #36, measured |'), ...amended('**Amendment (Node, #36, measured):**', 'Measured: 12 µs against 30 µs.')].join('\n'));
    expect(ok.problems).toEqual([]);
    expect(ok.amendments).toEqual([{ rule: 'R7', sources: ['#36', 'measured'], line: 10 }]);
  });

  it.each([
    ['an amendment citing nothing', table('| R7 | x | #36 |'), amended('**Amendment (Node):**'), /cite issues/],
    ['an amendment citing a path', table('| R7 | x | #36 |'), amended('**Amendment (Node, docs/x.md):**'), /cite issues/],
    ['a "measured" amendment stating no measurement', table('| R7 | x | measured |'), amended('**Amendment (Node, measured):**', 'It was faster.'), /states no measurement/],
    ['a table row citing nothing', table('| R7 | x | because |'), amended('**Amendment (Node, #36):**'), /row R7 is sanctioned by/],
    ['an amended rule missing from the table', table(), amended('**Amendment (Node, #36):**'), /R7 has an amendment paragraph but no row/],
    ['a table row without a paragraph', table('| R7 | x | #36 |', '| R8 | y | #36 |'), amended('**Amendment (Node, #36):**'), /lists R8, which has no amendment/],
    ['the old unmarked form', table('| R7 | x | #36 |'), [...amended('**Amendment (Node, #36):**'), '**On Node.js (amendment):** more'], /must be headed/],
  ])('reports %s', (_name, head, body, problem) => {
    const r = checkAmendments([...head, ...body].join('\n'));
    expect(r.problems).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });
});
