#!/usr/bin/env node
// No native package copies the plumbing @tenferro/native and @tenferro/os provide (#40): in
// `packages/<pkg>/native/{src,include}` (C++) no CPU feature check, ISA override reading, typed-array
// reading, 2^53 index bound or floor-based integer test of its own (tenferro/isa.h,
// tenferro/napi_args.h), no hand-written Status/Desc enum (the ABI table's abi.generated.h); in
// `packages/<pkg>/src/native/*.ts` no hand-written status table or descriptor length (the ABI
// table, through abiCodes); no package has its own scripts/install-native.mjs (the
// tenferro-install-native bin).
//
//   node scripts/checks/native-plumbing.mjs [--root <dir>]
//
// prints a one-line summary and exits 0, or lists each `file:line what` and exits 1.
// packages/os/test/native-plumbing.test.ts runs the same check. Plain Node ESM, no dependencies.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain } from './is-main.mjs';

/** The package that holds the plumbing (its own files are never findings). */
export const TOOLKIT = 'native';

/** What counts as copied plumbing in C++ (matched with comments removed). */
export const CXX_RULES = Object.freeze([
  { what: 'a CPU feature check of its own (tenferro/isa.h: tenferro::isa::runs_here)', re: /__builtin_cpu_supports\s*\(/ },
  { what: 'an ISA override read of its own (tenferro/isa.h: tenferro::isa::pick)', re: /getenv\s*\(\s*"[A-Z0-9_]*_ISA"/ },
  { what: 'a typed-array reader of its own (tenferro/napi_args.h: typed_view, typed)', re: /napi_get_typedarray_info\s*\(|\.IsTypedArray\s*\(\s*\)/ },
  { what: 'an exact-integer index check of its own (tenferro/napi_args.h: as_index, is_int)', re: /9007199254740992|std::floor\s*\(\s*(\w+)\s*\)\s*!=\s*\1\b/ },
  { what: 'a hand-written Status or Desc enum (the ABI table: native/src/abi.mjs → abi.generated.h)', re: /\benum\s+(Status|Desc)\b/ },
]);

/** What counts as a hand-written ABI table in a package's src/native/*.ts. */
export const TS_RULES = Object.freeze([
  { what: 'a hand-written status table (the ABI table through abiCodes)', re: /\bOk\s*:\s*0\b/ },
  { what: 'a hand-written descriptor length (the ABI table: HEADER is its enum length)', re: /\bHEADER\s*:\s*\d/ },
]);

/** C++ source with comments and string contents blanked (line numbers kept). */
export function stripCxx(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, '')
    .replace(/'(?:\\.|[^'\\\n])'/g, "' '");
}

function* files(dir, keep) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'build' && entry.name !== 'node_modules') yield* files(path, keep);
    } else if (keep(entry.name)) {
      yield path;
    }
  }
}

/** Every finding under `root`: `{ file, line, what }` (file relative to root). */
export function findCopiedPlumbing(root) {
  const findings = [];
  const scan = (path, text, rules) => {
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      for (const rule of rules) if (rule.re.test(line)) findings.push({ file: relative(root, path), line: i + 1, what: rule.what });
    });
  };
  for (const pkg of readdirSync(join(root, 'packages'))) {
    if (pkg === TOOLKIT) continue;
    const base = join(root, 'packages', pkg);
    for (const tree of ['native/src', 'native/include']) {
      for (const path of files(join(base, tree), (n) => /\.(cc|cpp|h|hpp)$/.test(n) && n !== 'abi.generated.h')) {
        scan(path, stripCxx(readFileSync(path, 'utf8')), CXX_RULES);
      }
    }
    for (const path of files(join(base, 'src', 'native'), (n) => n.endsWith('.ts'))) {
      scan(path, readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, ''), TS_RULES);
    }
    const install = join(base, 'scripts', 'install-native.mjs');
    if (existsSync(install)) findings.push({ file: relative(root, install), line: 1, what: 'an install script of its own (the tenferro-install-native bin of @tenferro/native)' });
  }
  return findings;
}

if (isMain(import.meta.url)) {
  const i = process.argv.indexOf('--root');
  const root = resolve(i >= 0 ? process.argv[i + 1] : join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
  const findings = findCopiedPlumbing(root);
  for (const f of findings) console.log(`${f.file}:${f.line} ${f.what}`);
  console.log(findings.length === 0 ? 'native-plumbing: no package copies the native toolkit' : `native-plumbing: ${findings.length} finding(s)`);
  process.exit(findings.length === 0 ? 0 : 1);
}
