#!/usr/bin/env node
// Every rule number the code cites (`R29`, `R104–R107`) must resolve to a heading
// `### R<n> — …` of the rulebook, docs/contracts/execution-contract.md.
//
//   node scripts/checks/rule-refs.mjs [--root <dir>] [--doc <path>]
//
// prints a one-line summary and exits 0, or lists each `file:line R<n>` without a heading (and
// each rule headed twice) and exits 1. `packages/core/test/rulebook.test.ts` runs the same check.
// Plain Node ESM, no dependencies.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain } from './is-main.mjs';

/** The rulebook, relative to the repository root. */
export const DEFAULT_DOC = 'docs/contracts/execution-contract.md';

/** The trees of each package that are scanned: `packages/<name>/<tree>/**`. */
export const SCANNED_TREES = Object.freeze(['src', 'native']);

/** Directories never entered: installed, generated or compiled output. */
export const SKIPPED_DIRS = Object.freeze(['node_modules', 'dist', 'build']);


/**
 * A citation is `R` and one to three digits standing alone as a word: `R7`, `(R29)`, `R61/R62`.
 * The word boundaries keep identifiers out — `AVX2`, `R_OK`, `R2D2`, `xR9`, `R12a` are not
 * citations. The check is case-sensitive (`r8` is a register, not a rule).
 */
const CITATION = /\bR(\d{1,3})\b/g;

/** `R12–R14` (en dash, em dash or hyphen, spaces allowed) cites every rule from 12 to 14. */
const RANGE = /\bR(\d{1,3})\s*[–—-]\s*R(\d{1,3})\b/g;

/** A rule heading of the rulebook: `### R<n> — <title>`. */
const HEADING = /^###[ \t]+R(\d{1,3})\b/;

/** A range wider than this is not expanded (only its ends count): it is a typo, not a citation. */
const MAX_RANGE = 200;

/**
 * Scan `packages/*\/src/**` and `packages/*\/native/**` under `root` for rule citations and check
 * each against the `### R<n>` headings of `doc` (a path relative to `root`, or absolute).
 *
 * Returns `{ missing, cited, defined, duplicates, citations, files }`:
 * - `missing`: `{ rule, file, line }` for every citation without a heading (a range's inner rules
 *   included), `file` relative to `root` with `/` separators, `line` 1-based; sorted by file,
 *   line and rule;
 * - `cited`: the distinct rule numbers cited, ascending (ranges expanded);
 * - `defined`: the rule numbers the doc heads, ascending;
 * - `duplicates`: rule numbers headed more than once, ascending;
 * - `citations`: how many `R<n>` tokens were found (a range's two ends count as two);
 * - `files`: how many files were scanned.
 */
export function checkRuleRefs({ root, doc = DEFAULT_DOC } = {}) {
  if (typeof root !== 'string' || root === '') throw new TypeError('checkRuleRefs: expected a directory path for root');
  if (typeof doc !== 'string' || doc === '') throw new TypeError('checkRuleRefs: expected a file path for doc');
  const rootDir = resolve(root);
  const docPath = isAbsolute(doc) ? doc : join(rootDir, doc);

  const headingCounts = new Map();
  for (const line of readFileSync(docPath, 'utf8').split(/\r?\n/)) {
    const m = HEADING.exec(line);
    if (m !== null) {
      const rule = Number(m[1]);
      headingCounts.set(rule, (headingCounts.get(rule) ?? 0) + 1);
    }
  }
  const defined = [...headingCounts.keys()].sort((a, b) => a - b);
  const duplicates = defined.filter((rule) => headingCounts.get(rule) > 1);

  const cited = new Set();
  const missing = [];
  let citations = 0;
  const files = sourceFiles(rootDir);
  for (const { path, text: content } of files) {
    const file = relative(rootDir, path).split(sep).join('/');
    const lines = content.split(/\r?\n/);
    lines.forEach((text, index) => {
      const rules = new Set();
      for (const m of text.matchAll(CITATION)) {
        citations++;
        rules.add(Number(m[1]));
      }
      for (const m of text.matchAll(RANGE)) {
        const first = Number(m[1]);
        const last = Number(m[2]);
        if (last > first && last - first <= MAX_RANGE) for (let r = first + 1; r < last; r++) rules.add(r);
      }
      for (const rule of [...rules].sort((a, b) => a - b)) {
        cited.add(rule);
        if (!headingCounts.has(rule)) missing.push({ rule, file, line: index + 1 });
      }
    });
  }
  missing.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.rule - b.rule));
  return {
    missing,
    cited: [...cited].sort((a, b) => a - b),
    defined,
    duplicates,
    citations,
    files: files.length,
  };
}

/**
 * The scanned files under `root`, in a stable order, with their text: every file of a scanned tree
 * (`.ts`, `.mjs`, `.cc`, `.h`, `binding.gyp`, a README…) except binary ones (a NUL byte).
 */
function sourceFiles(root) {
  const out = [];
  const packagesDir = join(root, 'packages');
  for (const pkg of entries(packagesDir)) {
    if (!pkg.isDirectory() || SKIPPED_DIRS.includes(pkg.name)) continue;
    for (const tree of SCANNED_TREES) walk(join(packagesDir, pkg.name, tree), out);
  }
  return out;
}

function walk(dir, out) {
  for (const entry of entries(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.includes(entry.name)) walk(path, out);
    } else if (entry.isFile()) {
      const bytes = readFileSync(path);
      if (!bytes.includes(0)) out.push({ path, text: bytes.toString('utf8') });
    }
  }
}

/** A directory's entries sorted by name; none when it does not exist. */
function entries(dir) {
  let list;
  try {
    list = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (e?.code === 'ENOENT' || e?.code === 'ENOTDIR') return [];
    throw e;
  }
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function parseArgs(argv) {
  const args = { root: join(dirname(fileURLToPath(import.meta.url)), '..', '..'), doc: DEFAULT_DOC };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if ((flag === '--root' || flag === '--doc') && argv[i + 1] !== undefined) {
      args[flag.slice(2)] = argv[++i];
    } else {
      throw new TypeError(`rule-refs: unknown argument ${JSON.stringify(flag)} (usage: rule-refs.mjs [--root <dir>] [--doc <path>])`);
    }
  }
  return args;
}

if (isMain(import.meta.url)) {
  const { root, doc } = parseArgs(process.argv.slice(2));
  const r = checkRuleRefs({ root, doc });
  const ok = r.missing.length === 0 && r.duplicates.length === 0;
  console.log(
    `rule-refs: ${r.cited.length} distinct rules cited (${r.citations} citations in ${r.files} files), ` +
      `${r.defined.length} headed in ${doc}; ${r.missing.length} without a heading, ${r.duplicates.length} headed twice` +
      (ok ? ' — ok' : ''),
  );
  for (const m of r.missing) console.log(`${m.file}:${m.line} R${m.rule}`);
  for (const rule of r.duplicates) console.log(`${doc}: R${rule} is headed more than once`);
  process.exitCode = ok ? 0 : 1;
}
