#!/usr/bin/env node
// The import rule of @tenferro/core (docs/contributing/architecture.md), checked over the source:
//   entry points → backend → ops → {runtime, provider, contraction} → contract → ground
// plus the one sideways edge runtime → contraction; inside runtime/,
// execution → engine → executors → workers; and no import cycle at all (type imports count).
// Provider packages import tenferro only through its public entry points. Core names no package
// downstream of it (@tenferro/linalg, @tenferro/cli, @tenferro/provider-*, any package of an
// operation family) and no operation family (linalg) outside comments (#35): what it discovers by
// name is data (package.json "tenferro.providerPackages"), and families reach it through
// runExtension.
// `node scripts/checks/layers.mjs` prints the violations and exits 1 when there are any.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const GROUND = new Set(['errors', 'topology', 'tensor', 'buffer', 'arbiter', 'extension', 'util', 'diagnostics']);
const ENTRY_DIRS = new Set(['testing', 'piscina', 'kernel']);
const RUNTIME_ORDER = ['workers', 'executors', 'engine', 'execution'];

/** The layer of a core source file (path relative to `src/`), with its rank and, in runtime, its floor. */
export function layerOf(rel) {
  const parts = rel.split('/');
  const top = parts.length === 1 ? '' : parts[0];
  if (top === '' || ENTRY_DIRS.has(top)) return { name: 'entry', rank: 5 };
  if (top === 'backend') return { name: 'backend', rank: 4 };
  if (top === 'ops') return { name: 'ops', rank: 3 };
  if (top === 'runtime') {
    const floor = RUNTIME_ORDER.indexOf(parts[1] ?? '');
    return { name: 'runtime', rank: 2, floor: floor < 0 ? undefined : floor, sub: parts[1] };
  }
  if (top === 'provider' || top === 'contraction') return { name: top, rank: 2 };
  if (top === 'contract') return { name: 'contract', rank: 1 };
  if (GROUND.has(top)) return { name: top, rank: 0, ground: true };
  return { name: `unknown:${top}`, rank: -1 };
}

/** Why `from` may not import `to` (both relative to `src/`), or undefined when it may. */
export function edgeViolation(from, to) {
  const a = layerOf(from);
  const b = layerOf(to);
  if (a.rank < 0) return `${from} is in no layer (add its folder to a layer)`;
  if (b.rank < 0) return `${to} is in no layer`;
  if (b.name === 'entry' && a.name !== 'entry') return `${a.name} imports the entry point ${to}`;
  if (a.name === 'entry') return undefined;
  if (a.name === b.name) {
    if (a.name === 'runtime' && a.floor !== undefined && b.floor !== undefined && b.floor > a.floor) {
      return `runtime/${a.sub} imports runtime/${b.sub} (inside runtime: execution → engine → executors → workers)`;
    }
    return undefined;
  }
  if (a.ground && b.ground) return undefined;
  if (a.name === 'runtime' && b.name === 'contraction') return undefined; // the engine owns the GEMM-analysis cache
  if (b.rank < a.rank) return undefined;
  return `${a.name} imports ${b.name} (${to}): the import rule is backend → ops → {runtime, provider, contraction} → contract → ground`;
}

function listSources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listSources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module specifier a source text imports or re-exports (static, type-only and dynamic). */
export function importsOf(text) {
  const found = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of code.matchAll(IMPORT)) found.push(m[1] ?? m[2]);
  return found;
}

/**
 * `text` with its comments blanked (line and block comments; string and template literals kept,
 * so a `//` inside a string is not taken for a comment). Line breaks are kept: positions in the
 * result are lines of the source.
 */
export function withoutComments(text) {
  let out = '';
  let i = 0;
  let quote;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (quote !== undefined) {
      out += c;
      if (c === '\\') {
        out += next ?? '';
        i += 2;
        continue;
      }
      if (c === quote) quote = undefined;
      i++;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      quote = c;
      out += c;
      i++;
      continue;
    }
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** What core must not name outside comments: the packages downstream of it, and the operation families. */
const DOWNSTREAM = /@tenferro\/(?:linalg|cli|provider-[\w-]+|ext-[\w-]+)\b|linalg/gi;

/**
 * Core files that name a downstream package or an operation family outside comments (#35: core
 * knows no family by name; comments may use one as an example).
 */
export function checkDownstreamNames({ srcDir }) {
  const violations = [];
  for (const file of listSources(srcDir)) {
    const code = withoutComments(readFileSync(file, 'utf8'));
    const lines = code.split('\n');
    for (let l = 0; l < lines.length; l++) {
      for (const m of lines[l].matchAll(DOWNSTREAM)) {
        violations.push({ from: `${relative(srcDir, file)}:${l + 1}`, to: m[0], why: `names ${m[0]} outside a comment: core knows no downstream package or operation family by name` });
      }
    }
  }
  return violations;
}

/** Check a core `src/` tree: layer violations and import cycles. */
export function checkLayers({ srcDir }) {
  const files = listSources(srcDir);
  const graph = new Map();
  const violations = [];
  for (const file of files) {
    const from = relative(srcDir, file);
    const edges = [];
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      const to = relative(srcDir, target);
      edges.push(to);
      const why = edgeViolation(from, to);
      if (why !== undefined) violations.push({ from, to, why });
    }
    graph.set(from, edges);
  }
  return { files: files.length, violations, cycles: findCycles(graph) };
}

/** Strongly connected components with more than one file (or a self-import): Tarjan. */
export function findCycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const cycles = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}

/** Provider packages reach core only through its public entry points (no deep or private imports). */
export function checkProviderImports({ packagesDir }) {
  const allowed = new Set(['@tenferro/core', '@tenferro/core/kernel', '@tenferro/core/testing', '@tenferro/os']);
  const violations = [];
  for (const pkg of readdirSync(packagesDir)) {
    if (!pkg.startsWith('provider-') && pkg !== 'linalg') continue;
    const srcDir = join(packagesDir, pkg, 'src');
    let files;
    try {
      files = listSources(srcDir);
    } catch {
      continue;
    }
    for (const file of files) {
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('@tenferro/') && !allowed.has(spec)) violations.push({ from: relative(packagesDir, file), to: spec, why: `imports ${spec}: providers use @tenferro/core's public entry points only` });
      }
    }
  }
  return violations;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const core = checkLayers({ srcDir: join(root, 'packages', 'core', 'src') });
  const providers = checkProviderImports({ packagesDir: join(root, 'packages') });
  const names = checkDownstreamNames({ srcDir: join(root, 'packages', 'core', 'src') });
  for (const v of [...core.violations, ...providers, ...names]) console.error(`${v.from} → ${v.to}: ${v.why}`);
  for (const c of core.cycles) console.error(`import cycle: ${c.join(' → ')}`);
  const bad = core.violations.length + providers.length + core.cycles.length + names.length;
  console.log(`layers: ${core.files} core files, ${core.violations.length} layer violations, ${core.cycles.length} cycles, ${providers.length} provider import violations, ${names.length} downstream names`);
  process.exit(bad === 0 ? 0 : 1);
}
