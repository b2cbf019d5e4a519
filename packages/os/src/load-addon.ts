/**
 * The one native addon loader of tenferro's packages (`@tenferro/os`, `@tenferro/provider-faer`,
 * `@tenferro/provider-blas`; core re-exports it). It loads one `.node` file and says either what
 * it loaded or, in sharp's style, every reason it cannot and what would fix each — including what
 * the build driver recorded about the last native build (`native/build/status.json`).
 *
 * It caches nothing: each caller keeps its own result (one load per JavaScript realm).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OsError, describeValue } from './os-error.js';

/** Where a load stopped: the platform, the disable switch, loading the file, a missing export, or the caller's check. */
export type AddonFailure = 'platform' | 'disabled' | 'load' | 'exports' | 'check';

/** A package's own explanation of a failed load, added after the loader's. */
export interface AddonAdvice {
  readonly reasons?: readonly string[];
  readonly possibleSolutions?: readonly string[];
}

/** What `loadAddon` loads: the package, the addon file and its build record, the exports it must have, and how to advise the user when it cannot. */
export interface LoadAddonOptions<B> {
  /** The npm package the addon belongs to (messages, and how to rebuild it). */
  readonly packageName: string;
  /** The `.node` file: an absolute path or a `file:` URL. */
  readonly addon: string | URL;
  /** The build record the build driver writes (`native/build/status.json`): an absolute path or a `file:` URL. */
  readonly status?: string | URL;
  /** Names the binding must export as functions. */
  readonly exports: readonly (keyof B & string)[];
  /** An environment variable that, set to `1`, makes the addon unavailable without loading it. */
  readonly disableEnv: string;
  /** Where the addon can run, as `platform` or `platform-arch` (`'linux'`, `'linux-x64'`); default: anywhere. */
  readonly platforms?: readonly string[];
  /** Why a loaded binding is unusable (e.g. a layout it disagrees on), or `undefined` when it is fine. */
  readonly check?: (binding: B) => string | undefined;
  /**
   * What to tell the user to run to build the addon. Default: from the package's `package.json`
   * beside the addon — `npm rebuild <package>` when it has an install step, else
   * `npm run build:native` in its directory.
   */
  readonly buildCommand?: string;
  /** The package's own reasons and solutions, appended to the loader's (a function is called only on failure). */
  readonly advice?: AddonAdvice | ((failure: AddonFailure) => AddonAdvice);
}

/** A loaded addon: its binding (with every required export) and where it came from. */
export interface AddonAvailable<B> {
  readonly available: true;
  readonly binding: B;
  /** The file that was loaded. */
  readonly path: string;
}

/** Why the addon cannot be used here, and what would fix it (the shape of core's `ProviderPackageUnavailable`). */
export interface AddonUnavailable {
  readonly available: false;
  readonly reasons: readonly string[];
  readonly possibleSolutions: readonly string[];
}

/** The outcome of `loadAddon`: available with its binding, or unavailable with reasons and fixes. */
export type AddonLoad<B> = AddonAvailable<B> | AddonUnavailable;

const OP = 'loadAddon';

/**
 * Where the addon of a package is: given its `native/` folder (which holds `binding.gyp`), the
 * file node-gyp-build picks — a local build in `build/Release/`, else the prebuilt binary in
 * `prebuilds/<platform>-<arch>/` that matches this platform, libc and Node (prebuildify's layout).
 * When there is neither it returns `build/Release/<file>`, so that {@link loadAddon} explains
 * the missing file with the build record. Never throws.
 */
export function findAddon(nativeDir: string | URL, file: string): string {
  const dir = nativeDir instanceof URL || nativeDir.startsWith('file:') ? fileURLToPath(nativeDir) : nativeDir;
  try {
    const nodeGypBuild = createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string };
    return nodeGypBuild.path(dir);
  } catch {
    return join(dir, 'build', 'Release', file);
  }
}
const KNOWN_OPTIONS = new Set(['packageName', 'addon', 'status', 'exports', 'disableEnv', 'platforms', 'check', 'buildCommand', 'advice']);
const TOOLCHAIN = 'install python3, make and g++ (Debian/Ubuntu, as root: apt-get install -y python3 make g++)';

export interface Normalized<B> {
  readonly packageName: string;
  readonly path: string;
  readonly statusPath: string | undefined;
  readonly exports: readonly string[];
  readonly disableEnv: string;
  readonly platforms: readonly string[] | undefined;
  readonly check: ((binding: B) => string | undefined) | undefined;
  readonly buildCommand: string | undefined;
  readonly advice: LoadAddonOptions<B>['advice'];
}

/**
 * Load the addon `options.addon` (no caching). Never throws for anything about this machine or
 * the file: the outcome is `{ available: true, binding, path }` or `{ available: false, reasons,
 * possibleSolutions }`, frozen. Options that are not what it takes are a programming error:
 * `OsError` `InvalidArgument`, before anything is loaded.
 *
 * @example
 * ```ts
 * import { loadAddon } from '@tenferro/os';
 *
 * interface Binding {
 *   hello(): string;
 * }
 * const load = loadAddon<Binding>({
 *   packageName: 'example-addon',
 *   addon: '/nonexistent/example.node',
 *   exports: ['hello'],
 *   disableEnv: 'EXAMPLE_ADDON_DISABLE',
 *   buildCommand: 'npm run build:native',
 * });
 * if (load.available) console.log(load.binding.hello());
 * else console.log(load.reasons[0]); // e.g. cannot load the native addon /nonexistent/example.node: Cannot find module ...
 * console.log(load.available); // prints: false
 * ```
 */
export function loadAddon<B extends object>(options: LoadAddonOptions<B>): AddonLoad<B> {
  const o = validateOptions(options);
  const here = `${process.platform}-${process.arch}`;
  if (o.platforms !== undefined && !o.platforms.some((p) => p === process.platform || p === here)) {
    return unavailable(o, 'platform', [`platform ${here} is not supported: ${o.packageName} runs on ${o.platforms.join(', ')}`], [
      `run it on ${o.platforms.join(' or ')}`,
    ]);
  }
  if (process.env[o.disableEnv] === '1') {
    return unavailable(o, 'disabled', [`disabled by ${o.disableEnv}=1`], [`unset ${o.disableEnv}`]);
  }
  let binding: unknown;
  try {
    binding = createRequire(import.meta.url)(o.path);
  } catch (error) {
    const build = buildRecord(o);
    return unavailable(o, 'load', [`cannot load the native addon ${o.path}: ${firstLine(error)}`, ...build.reasons], build.possibleSolutions);
  }
  const exported = typeof binding === 'object' && binding !== null ? (binding as Record<string, unknown>) : {};
  const missing = o.exports.filter((name) => typeof exported[name] !== 'function');
  const mismatch = `rebuild the addon, so that it matches this version of ${o.packageName}: ${buildStep(o)}`;
  if (missing.length > 0) {
    return unavailable(o, 'exports', [`${o.path} does not export ${missing.map((n) => `${n}()`).join(', ')}`], [mismatch]);
  }
  let problem: string | undefined;
  try {
    problem = o.check?.(binding as B);
  } catch (error) {
    problem = `checking the addon failed: ${firstLine(error)}`;
  }
  if (problem !== undefined) return unavailable(o, 'check', [problem], [mismatch]);
  return Object.freeze({ available: true, binding: binding as B, path: o.path });
}

function unavailable<B>(o: Normalized<B>, failure: AddonFailure, reasons: readonly string[], possibleSolutions: readonly string[]): AddonUnavailable {
  let advice: AddonAdvice = {};
  try {
    advice = (typeof o.advice === 'function' ? o.advice(failure) : o.advice) ?? {};
  } catch (error) {
    advice = { reasons: [`${o.packageName} could not explain further: ${firstLine(error)}`] };
  }
  return Object.freeze({
    available: false,
    reasons: Object.freeze([...new Set([...reasons, ...strings(advice.reasons)])]),
    possibleSolutions: Object.freeze([...new Set([...possibleSolutions, ...strings(advice.possibleSolutions)])]),
  });
}

/** What the build record says about a file that did not load: reasons, and the fixes they call for. */
function buildRecord<B>(o: Normalized<B>): { reasons: string[]; possibleSolutions: string[] } {
  const build = buildStep(o);
  const fromScratch = { reasons: [] as string[], possibleSolutions: [`${TOOLCHAIN}, then ${build}`] };
  if (o.statusPath === undefined) return fromScratch;
  let text: string;
  try {
    text = readFileSync(o.statusPath, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    fromScratch.reasons.push(missing ? `no native build recorded (${o.statusPath} is missing)` : `cannot read ${o.statusPath}: ${firstLine(error)}`);
    return fromScratch;
  }
  let status: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
    status = parsed as Record<string, unknown>;
  } catch {
    fromScratch.reasons.push(`${o.statusPath} is not a valid build record`);
    return fromScratch;
  }
  if (status.ok === true) {
    if (status.abi !== undefined && String(status.abi) !== process.versions.modules) {
      return {
        reasons: [`the addon was built for Node.js ${String(status.node)} (ABI ${String(status.abi)}), but this is Node.js ${process.version} (ABI ${process.versions.modules})`],
        possibleSolutions: [`rebuild the addon with this Node.js: ${build}`],
      };
    }
    return {
      reasons: ['the last native build succeeded, so the addon was moved or deleted since, or a library it links to is missing'],
      possibleSolutions: [build],
    };
  }
  const why = typeof status.reason === 'string' ? firstLine(status.reason).replace(/:$/, '') : 'no reason recorded';
  const recorded = { reasons: strings(status.reasons), possibleSolutions: strings(status.possibleSolutions) };
  return {
    reasons: [`the native build failed: ${why}`, ...recorded.reasons],
    // A build that said what it lacked (e.g. a system library) knows better than the generic toolchain advice.
    possibleSolutions: recorded.possibleSolutions.length > 0 ? [...recorded.possibleSolutions, build] : fromScratch.possibleSolutions,
  };
}

/** The non-empty strings of `v` when it is an array (a build record or advice is not trusted to be well formed). */
function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/** How to build the addon, in words a user of the installed package can act on. */
function buildStep<B>(o: Normalized<B>): string {
  if (o.buildCommand !== undefined) return o.buildCommand;
  const pkg = packageBeside(o.path, o.packageName);
  const scripts = pkg?.scripts ?? {};
  if (['preinstall', 'install', 'postinstall'].some((s) => typeof scripts[s] === 'string')) {
    return `reinstall the package so its install step builds the addon: npm rebuild ${o.packageName}`;
  }
  if (pkg !== undefined && typeof scripts['build:native'] === 'string') return `build the addon in ${pkg.dir}: npm run build:native`;
  return `reinstall ${o.packageName}`;
}

/** The `package.json` of `packageName` in a directory above `file`, if there is one. */
function packageBeside(file: string, packageName: string): { dir: string; scripts: Record<string, unknown> } | undefined {
  let dir = dirname(file);
  for (let up = 0; up < 6; up++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; scripts?: unknown };
      if (pkg.name === packageName) {
        return { dir, scripts: typeof pkg.scripts === 'object' && pkg.scripts !== null ? (pkg.scripts as Record<string, unknown>) : {} };
      }
    } catch {
      // no (readable) package.json here
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

function firstLine(value: unknown): string {
  const text = value instanceof Error ? value.message : String(value);
  return text.split('\n')[0]!.trim();
}

// --- options ---------------------------------------------------------------------------------------

function invalid(param: string, expected: string, received: unknown): OsError {
  return new OsError('InvalidArgument', OP, `expected ${expected} for ${param} but received ${describeValue(received)}`, { detail: { param } });
}

function filePath(value: unknown, param: string): string {
  const expected = 'an absolute path or a file: URL';
  if (value instanceof URL || (typeof value === 'string' && value.startsWith('file:'))) {
    try {
      return fileURLToPath(value);
    } catch {
      throw invalid(param, expected, value instanceof URL ? value.href : value);
    }
  }
  if (typeof value !== 'string' || !isAbsolute(value)) throw invalid(param, expected, value);
  return value;
}

function stringList(value: unknown, param: string, expected: string): readonly string[] {
  if (!Array.isArray(value)) throw invalid(param, expected, value);
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string' || value[i] === '') throw invalid(`${param}[${i}]`, 'a non-empty string', value[i]);
  }
  return Object.freeze([...(value as string[])]);
}

/** @internal Checks `loadAddon`'s options (also `defineAddon`'s, at definition time); not exported from the package. */
export function validateOptions<B>(options: LoadAddonOptions<B>): Normalized<B> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid('options', 'an options object', options);
  const o = options as unknown as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN_OPTIONS.has(key)) throw invalid(`options.${key}`, `one of ${[...KNOWN_OPTIONS].join(', ')}`, key);
  }
  if (typeof o.packageName !== 'string' || o.packageName === '') throw invalid('options.packageName', 'a package name', o.packageName);
  if (typeof o.disableEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.disableEnv)) {
    throw invalid('options.disableEnv', 'an environment variable name', o.disableEnv);
  }
  if (o.check !== undefined && typeof o.check !== 'function') throw invalid('options.check', 'a function', o.check);
  if (o.buildCommand !== undefined && (typeof o.buildCommand !== 'string' || o.buildCommand === '')) {
    throw invalid('options.buildCommand', 'a non-empty string', o.buildCommand);
  }
  if (o.advice !== undefined && typeof o.advice !== 'function' && (typeof o.advice !== 'object' || o.advice === null)) {
    throw invalid('options.advice', '{ reasons?, possibleSolutions? } or a function returning one', o.advice);
  }
  return {
    packageName: o.packageName,
    path: filePath(o.addon, 'options.addon'),
    statusPath: o.status === undefined ? undefined : filePath(o.status, 'options.status'),
    exports: stringList(o.exports, 'options.exports', 'a list of export names'),
    disableEnv: o.disableEnv,
    platforms: o.platforms === undefined ? undefined : stringList(o.platforms, 'options.platforms', "a list of platforms such as 'linux' or 'linux-x64'"),
    check: o.check as Normalized<B>['check'],
    buildCommand: o.buildCommand as string | undefined,
    advice: o.advice as LoadAddonOptions<B>['advice'],
  };
}
