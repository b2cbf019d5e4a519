// What a package's native/binding.gyp needs on disk, read from the gyp file itself (#40): every file
// or folder its strings name — `sources`, `include_dirs`, `includes`, `<(module_root_dir)/…` paths
// — and every file a `<!(…)` / `<!@(…)` command names (linalg's `<!(node eigen-include.cjs)`),
// plus what the package lists once in package.json as `"tenferro": { "nativeInputs": [...] }`
// (paths relative to native/) for an input no gyp string names.
//
// A gyp file is a Python literal (comments with #, '…' or "…" strings, trailing commas); only its
// string literals matter here, so they are read with a small tokenizer rather than a parser.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Folders under native/ that are outputs, never inputs. */
const OUTPUTS = new Set(['build', 'prebuilds', 'node_modules']);

/** The string literals of a gyp (Python literal) text, in order. */
export function gypStrings(text) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '"' || c === "'") {
      let s = '';
      i += 1;
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\' && i + 1 < text.length) {
          const n = text[i + 1];
          s += n === 'n' ? '\n' : n === 't' ? '\t' : n;
          i += 2;
        } else {
          s += text[i];
          i += 1;
        }
      }
      i += 1;
      out.push(s);
    } else i += 1;
  }
  return out;
}

/** The words of a shell command (quotes removed; no expansion). */
function words(command) {
  const out = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(command); m !== null; m = re.exec(command)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The commands (`<!(…)`, `<!@(…)`) in a gyp string, with their parentheses balanced. */
function commands(s) {
  const out = [];
  for (let at = s.indexOf('<!'); at >= 0; at = s.indexOf('<!', at + 2)) {
    let open = at + 2;
    if (s[open] === '@') open += 1;
    if (s[open] !== '(') continue;
    let depth = 0;
    for (let j = open; j < s.length; j += 1) {
      if (s[j] === '(') depth += 1;
      else if (s[j] === ')' && --depth === 0) {
        out.push(s.slice(open + 1, j));
        break;
      }
    }
  }
  return out;
}

/** A candidate path as written in the gyp file, if it can be one (no flags, variables or URLs). */
function pathLike(s) {
  const p = s.replace(/^<\(module_root_dir\)\//, '');
  if (p === '' || p.startsWith('-') || /[<>$()=\s*?]/.test(p) || p.includes('://')) return undefined;
  return p;
}

/**
 * The inputs of `<nativeDir>/binding.gyp`:
 *   entries   top-level entries of native/ to copy (`binding.gyp`, `src`, `include`, `eigen-include.cjs`, …)
 *   external  paths outside native/ that the gyp file names, as written (`../scripts/x.mjs`) and
 *             absolute — a staged copy must name them by their absolute path
 *   commands  the `<!(…)` commands, as written
 *   declared  what package.json's tenferro.nativeInputs adds
 *   missing   paths the package declares (or a command names as a script) that do not exist
 */
export function gypInputs(nativeDir, { declared = declaredInputs(nativeDir) } = {}) {
  const gypFile = join(nativeDir, 'binding.gyp');
  const text = readFileSync(gypFile, 'utf8');
  const entries = new Set(['binding.gyp']);
  const external = new Map();
  const cmds = [];
  const missing = [];
  const add = (written, { mustExist = false } = {}) => {
    const abs = resolve(nativeDir, written);
    if (!existsSync(abs)) {
      if (mustExist) missing.push(written);
      return;
    }
    const rel = relative(nativeDir, abs);
    if (rel === '') return;
    if (rel.startsWith('..') || isAbsolute(rel)) {
      if (!isAbsolute(written)) external.set(written, abs);
      return;
    }
    const top = rel.split(sep)[0];
    if (!OUTPUTS.has(top)) entries.add(top);
  };
  for (const s of gypStrings(text)) {
    for (const m of s.matchAll(/<\(module_root_dir\)\/([^\s'"]+)/g)) add(m[1]);
    const cs = commands(s);
    for (const c of cs) {
      cmds.push(c);
      const w = words(c);
      // `node <script> …`, `python3 <script>`, `sh <script>`: the script must be there.
      const script = w.findIndex((x, k) => k > 0 && !x.startsWith('-') && /\.(c?js|mjs|py|sh)$/.test(x));
      for (const [k, x] of w.entries()) {
        const p = pathLike(x);
        if (p !== undefined) add(p, { mustExist: k === script });
      }
    }
    if (cs.length === 0) {
      const p = pathLike(s);
      if (p !== undefined) add(p);
    }
  }
  for (const d of declared) add(d, { mustExist: true });
  return { entries: [...entries].sort(), external: [...external].map(([written, abs]) => ({ written, abs })), commands: cmds, declared, missing };
}

/** package.json's `tenferro.nativeInputs` (paths relative to native/) of the package that holds `nativeDir`. */
export function declaredInputs(nativeDir) {
  const file = join(nativeDir, '..', 'package.json');
  if (!existsSync(file)) return [];
  const list = JSON.parse(readFileSync(file, 'utf8')).tenferro?.nativeInputs ?? [];
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) {
    throw new TypeError(`${file}: tenferro.nativeInputs must be an array of paths relative to native/`);
  }
  return list;
}

/** Every file under the entries (sorted, relative to `dir`), for hashing. */
export function filesOf(dir, entries) {
  const out = [];
  const walk = (rel) => {
    const abs = join(dir, rel);
    if (statSync(abs).isDirectory()) {
      for (const e of readdirSync(abs).sort()) walk(join(rel, e));
    } else out.push(rel);
  };
  for (const e of entries) walk(e);
  return out;
}
