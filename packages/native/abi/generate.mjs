#!/usr/bin/env node
// @tenferro/native/abi — one ABI table per native package (#40), turned into the C++ header its
// addon compiles and the TypeScript declaration its loader imports, so that neither side mirrors
// the other by hand.
//
// The table is a plain module (`native/src/abi.mjs`) exporting `ABI`:
//
//   export const ABI = {
//     namespace: 'faer::abi',                      // the C++ namespace of the header
//     enums: { Status: ['Ok', 'BadArguments'], Desc: ['dtype', 'm', 'n'] },  // names in code order
//     constants: { MaxRank: 32 },                  // integers both sides use
//     prefixed: ['Status'],                        // enums whose C++ names carry the enum's name
//   };
//
// Each enum `E` becomes `enum E : int { kOk = 0, kBadArguments = 1 }` plus `constexpr int
// kECount` (a name's first letter is capitalised: `offA` → `kOffA`; an enum listed in `prefixed`
// carries its name: `kStatusOk`, `kStatusBadArguments`); each constant `C` becomes
// `constexpr long long kC`; and `kAbiHash`, the table's hash, which the addon exports as `abiHash`
// and `defineAddon` (@tenferro/os) compares with the hash of the table the TypeScript imports.
//
// The generated files are committed (and packed): a source build from the tarball needs neither
// TypeScript nor this generator. Run it after editing the table:
//
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs          (writes)
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs --check  (exit 1 when stale)
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The canonical JSON of a value: object keys sorted at every level (as @tenferro/os's abiHash). */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The table's hash: the first 16 hex digits of the SHA-256 of its canonical JSON (what `abiHash` of @tenferro/os computes). */
export function abiHash(table) {
  return createHash('sha256').update(canonicalJson(table)).digest('hex').slice(0, 16);
}

const IDENT = /^[A-Za-z][A-Za-z0-9]*$/;

/** Checks the table's shape; throws an Error naming what is wrong. */
export function validateAbi(table) {
  const fail = (what) => {
    throw new Error(`invalid ABI table: ${what}`);
  };
  if (typeof table !== 'object' || table === null) fail('not an object');
  if (typeof table.namespace !== 'string' || !/^[a-z_][a-z0-9_]*(::[a-z_][a-z0-9_]*)*$/.test(table.namespace)) fail('namespace must be a C++ namespace such as faer::abi');
  for (const key of Object.keys(table)) if (!['namespace', 'enums', 'constants', 'prefixed'].includes(key)) fail(`unknown key ${key}`);
  const prefixed = table.prefixed ?? [];
  if (!Array.isArray(prefixed) || prefixed.some((e) => !Object.hasOwn(table.enums ?? {}, e))) fail('prefixed must list enums of the table');
  const seen = new Set();
  const name = (n) => {
    const c = `k${n[0].toUpperCase()}${n.slice(1)}`;
    if (seen.has(c)) fail(`${c} is defined twice`);
    seen.add(c);
    return c;
  };
  for (const [e, names] of Object.entries(table.enums ?? {})) {
    if (!IDENT.test(e)) fail(`enum name ${e}`);
    if (!Array.isArray(names) || names.length === 0) fail(`enum ${e} must list its names`);
    for (const n of names) if (typeof n !== 'string' || !IDENT.test(n)) fail(`enum ${e}: name ${String(n)}`);
    for (const n of names) name(prefixed.includes(e) ? `${e}${n[0].toUpperCase()}${n.slice(1)}` : n);
    name(`${e}Count`);
  }
  for (const [c, v] of Object.entries(table.constants ?? {})) {
    if (!IDENT.test(c)) fail(`constant name ${c}`);
    if (!Number.isSafeInteger(v)) fail(`constant ${c} must be a safe integer`);
    name(c);
  }
}

const cName = (n) => `k${n[0].toUpperCase()}${n.slice(1)}`;

/** The C++ header of a table; `source` names the table file in its banner. */
export function abiHeader(table, source = 'abi.mjs') {
  validateAbi(table);
  const guard = `TENFERRO_ABI_${table.namespace.replace(/::/g, '_').toUpperCase()}_H_`;
  const lines = [
    `// Generated from ${source} by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.`,
    '// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the',
    "// hash of the table this package's TypeScript imports.",
    `#ifndef ${guard}`,
    `#define ${guard}`,
    '',
    `namespace ${table.namespace} {`,
    '',
    `constexpr char kAbiHash[] = "${abiHash(table)}";`,
  ];
  for (const [e, names] of Object.entries(table.enums ?? {})) {
    const member = (n) => cName((table.prefixed ?? []).includes(e) ? `${e}${n[0].toUpperCase()}${n.slice(1)}` : n);
    lines.push('', `enum ${e} : int {`, ...names.map((n, i) => `  ${member(n)} = ${i},`), '};', `constexpr int ${cName(`${e}Count`)} = ${names.length};`);
  }
  const constants = Object.entries(table.constants ?? {});
  if (constants.length > 0) lines.push('', ...constants.map(([c, v]) => `constexpr ${Math.abs(v) < 2 ** 31 ? 'int' : 'long long'} ${cName(c)} = ${v};`));
  lines.push('', `}  // namespace ${table.namespace}`, '', `#endif  // ${guard}`, '');
  return lines.join('\n');
}

/** The TypeScript declaration of the table module (`abi.d.mts`): every name as a literal type. */
export function abiDeclaration(table, source = 'abi.mjs') {
  validateAbi(table);
  const tuple = (names) => `readonly [${names.map((n) => JSON.stringify(n)).join(', ')}]`;
  const enums = Object.entries(table.enums ?? {}).map(([e, names]) => `    readonly ${e}: ${tuple(names)};`);
  const constants = Object.entries(table.constants ?? {}).map(([c, v]) => `    readonly ${c}: ${v};`);
  return [
    `// Generated from ${source} by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.`,
    'export declare const ABI: {',
    `  readonly namespace: ${JSON.stringify(table.namespace)};`,
    ...(enums.length > 0 ? ['  readonly enums: {', ...enums, '  };'] : []),
    ...(constants.length > 0 ? ['  readonly constants: {', ...constants, '  };'] : []),
    ...(table.prefixed !== undefined ? [`  readonly prefixed: readonly [${table.prefixed.map((e) => JSON.stringify(e)).join(', ')}];`] : []),
    '};',
    '',
  ].join('\n');
}

/** The files a table module generates beside it: `abi.generated.h` and `<table>.d.mts`, with their contents. */
export async function abiFiles(tablePath) {
  const path = resolve(tablePath);
  const { ABI } = await import(pathToFileURL(path).href);
  const source = basename(path);
  return [
    { path: join(dirname(path), 'abi.generated.h'), text: abiHeader(ABI, source) },
    { path: path.replace(/\.mjs$/, '.d.mts'), text: abiDeclaration(ABI, source) },
  ];
}

/** Write the generated files of a table (or, with `check`, list those that are stale). */
export async function generateAbi(tablePath, { check = false } = {}) {
  const stale = [];
  for (const file of await abiFiles(tablePath)) {
    let current;
    try {
      current = readFileSync(file.path, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === file.text) continue;
    stale.push(file.path);
    if (!check) writeFileSync(file.path, file.text);
  }
  return stale;
}

/** Whether this module is the script Node was started with (also through node_modules' symlink). */
function isMain() {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const table = args.find((a) => !a.startsWith('--'));
  if (table === undefined) {
    console.error('usage: generate.mjs <native/src/abi.mjs> [--check]');
    process.exit(2);
  }
  const stale = await generateAbi(table, { check });
  for (const file of stale) console.log(`${check ? 'stale' : 'wrote'} ${file}`);
  if (check && stale.length > 0) process.exit(1);
}
