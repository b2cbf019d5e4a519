/**
 * `defineAddon`: everything a package with a native addon needs to load it, in one call (#40) —
 * the memo (one load per JavaScript realm), node-gyp-build's lookup of the file, the exports and
 * ABI-table checks, the ISA report, and the package's `status()` in the shape every provider
 * package reports. Each package's `src/native/load.ts` is one call of it plus the package's advice.
 *
 * Importing this module loads nothing; `load()` and `status()` load the addon on first use.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';
import { type AddonAdvice, type AddonAvailable, type AddonFailure, type AddonUnavailable, findAddon, loadAddon, validateOptions } from './load-addon.js';
import { OsError, describeValue } from './os-error.js';

/**
 * What an addon says about its instruction-set paths (its `info()`): the path it runs, the paths
 * this CPU can run (`supported`, in the order of the paths, slowest first), the paths this build
 * left out, and whether this CPU could run one of those faster than every built one.
 */
export interface AddonIsaInfo {
  /** The path the kernels run (e.g. `avx2`). */
  readonly isa: string;
  /** Each path, slowest first: whether this build runs it here. */
  readonly supported?: Readonly<Record<string, boolean>>;
  /** The paths this build left out (a list, or their names joined with `, `). */
  readonly notBuilt: readonly string[] | string;
  /** Whether this CPU runs a left-out path faster than every built one. */
  readonly runsNotBuilt: boolean;
}

/** What `defineAddon` is told about an addon. */
export interface DefineAddonOptions<B extends object, I> {
  /** The npm package the addon belongs to (messages, and how to rebuild it). */
  readonly packageName: string;
  /** The package's `native/` folder (which holds `binding.gyp`): a `file:` URL or an absolute path. */
  readonly native: string | URL;
  /** The addon's file name as node-gyp builds it (e.g. `tenferro_faer.node`). */
  readonly file: string;
  /** Names the binding must export as functions. */
  readonly exports: readonly (keyof B & string)[];
  /** An environment variable that, set to `1`, makes the addon unavailable without loading it. */
  readonly disableEnv: string;
  /** Where the addon can run, as `platform` or `platform-arch`; default: anywhere. */
  readonly platforms?: readonly string[];
  /**
   * The package's ABI table (the plain module its TypeScript and the generated C header share):
   * the addon must export `abiHash` equal to {@link abiHash} of it, else it is unavailable with a
   * rebuild hint.
   */
  readonly abi?: object;
  /** Another build of the addon to load instead (e.g. a sanitizer build named by an environment variable), read at load time; its build record is not consulted. */
  readonly override?: () => string | undefined;
  /** Why a loaded binding is unusable, or `undefined` when it is fine. */
  readonly check?: (binding: B) => string | undefined;
  /**
   * What the addon reports about itself once loaded (read once per realm, kept as `info`); `null`
   * makes it unavailable ("no ISA path this CPU can run"). When it has the {@link AddonIsaInfo}
   * fields, `status()` reports the ISA paths and a build that left out a path this CPU runs warns
   * once per realm (`TENFERRO_ISA_PATH_NOT_BUILT`).
   */
  readonly info?: (binding: B) => I | null;
  /** How the package names itself in warnings (e.g. `tenferro faer GEMM`); default: the package name. */
  readonly label?: string;
  /** The package's own reasons and solutions, appended to the loader's. */
  readonly advice?: AddonAdvice | ((failure: AddonFailure) => AddonAdvice);
}

/** A loaded addon: its binding, file, and what its `info` option read. */
export type DefinedAddonAvailable<B, I> = AddonAvailable<B> & { readonly info: I };
/** An addon that cannot be used; `reason` is `reasons` joined with `'; '`. */
export type DefinedAddonUnavailable = AddonUnavailable & { readonly reason: string };
/** The memoised outcome of `load()`. */
export type DefinedAddonLoad<B, I> = DefinedAddonAvailable<B, I> | DefinedAddonUnavailable;

/** The shape of core's `ProviderPackageStatus` (kept here: `@tenferro/os` sits below core). */
export type AddonPackageStatus =
  | {
      readonly available: true;
      readonly name: string;
      readonly details: Readonly<Record<string, string | number | boolean | null>>;
      readonly warnings: readonly string[];
      readonly addonPath?: string;
    }
  | { readonly available: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] };

/** What a package says about its loaded addon in `status()`; the ISA report is added in front of `details`. */
export interface AddonDescription {
  /** The package's diagnostic name for what it runs (e.g. `tenferro faer GEMM (avx2)`). */
  readonly name: string;
  /** Facts after the ISA report, in display order. */
  readonly details?: Readonly<Record<string, string | number | boolean | null>>;
  /** Things that work but not as well as they could, each with its fix (the not-built warning follows). */
  readonly warnings?: readonly string[];
}

/** A defined addon: `load()` (memoised, never throws) and `status()` (a provider package's status). */
export interface DefinedAddon<B, I> {
  /**
   * Load the addon on the first call of this realm; later calls answer the same frozen outcome.
   *
   * @example
   * ```ts
   * import { defineAddon } from '@tenferro/os';
   *
   * const addon = defineAddon<{ hello(): string }>({ packageName: 'example-addon', native: '/nonexistent/native', file: 'example.node', exports: ['hello'], disableEnv: 'EXAMPLE_ADDON_DISABLE' });
   * const load = addon.load();
   * console.log(load.available ? load.binding.hello() : load.reason); // e.g. cannot load the native addon /nonexistent/native/build/Release/example.node: ...
   * ```
   */
  load(): DefinedAddonLoad<B, I>;
  /**
   * The package's status: unavailable with the loader's reasons and solutions (plus
   * `unavailableSolutions`), or available with the package's description, the ISA report in
   * front of its details and the not-built warning after its warnings.
   *
   * @example
   * ```ts
   * import { defineAddon } from '@tenferro/os';
   *
   * const addon = defineAddon<{ hello(): string }>({ packageName: 'example-addon', native: '/nonexistent/native', file: 'example.node', exports: ['hello'], disableEnv: 'EXAMPLE_ADDON_DISABLE' });
   * const s = addon.status(() => ({ name: 'example' }), ['do without it']);
   * console.log(s.available ? s.name : s.possibleSolutions.at(-1)); // prints: do without it
   * ```
   */
  status(describe: (addon: DefinedAddonAvailable<B, I>) => AddonDescription, unavailableSolutions?: readonly string[]): AddonPackageStatus;
}

/**
 * The hash of an ABI table that the generated C header carries (`TENFERRO_ABI_HASH`) and the
 * addon exports as `abiHash`: the first 16 hex digits of the SHA-256 of its canonical JSON (keys
 * sorted at every level). `@tenferro/native`'s generator computes the same.
 *
 * @example
 * ```ts
 * import { abiHash } from '@tenferro/os';
 *
 * const table = { namespace: 'demo::abi', enums: { Status: ['Ok', 'Bad'] } };
 * console.log(abiHash(table).length); // prints: 16
 * console.log(abiHash({ enums: table.enums, namespace: table.namespace }) === abiHash(table)); // prints: true
 * ```
 */
export function abiHash(table: object): string {
  return createHash('sha256').update(canonicalJson(table)).digest('hex').slice(0, 16);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The codes of an ABI table's enum — its names in code order — as `{ name: code }` (frozen), the
 * way the generated C++ header numbers them.
 *
 * @example
 * ```ts
 * import { abiCodes } from '@tenferro/os';
 *
 * console.log(abiCodes(['Ok', 'Bad'])); // prints: { Ok: 0, Bad: 1 }
 * ```
 */
export function abiCodes<const N extends readonly string[]>(names: N): { readonly [K in N[number]]: number } {
  return Object.freeze(Object.fromEntries(names.map((name, code) => [name, code]))) as { readonly [K in N[number]]: number };
}

const OP = 'defineAddon';
const debug = debuglog('tenferro');

/**
 * Define a package's native addon: nothing is loaded until `load()` or `status()` is called.
 * Options that are not what it takes are a programming error: `OsError` `InvalidArgument`, at the
 * `defineAddon` call.
 *
 * @example
 * ```ts
 * import { defineAddon } from '@tenferro/os';
 *
 * interface Binding {
 *   hello(): string;
 * }
 * const addon = defineAddon<Binding>({
 *   packageName: 'example-addon',
 *   native: '/nonexistent/native',
 *   file: 'example.node',
 *   exports: ['hello'],
 *   disableEnv: 'EXAMPLE_ADDON_DISABLE',
 * });
 * const load = addon.load();
 * console.log(load.available); // prints: false
 * console.log(addon.load() === load); // prints: true
 * ```
 */
export function defineAddon<B extends object, I = undefined>(options: DefineAddonOptions<B, I>): DefinedAddon<B, I> {
  const o = validate(options);
  let cached: DefinedAddonLoad<B, I> | undefined;
  const label = o.label ?? o.packageName;
  const notBuiltWarning = (notBuilt: string) =>
    `this CPU runs the ${notBuilt} path, which this build of the addon left out (TENFERRO_NATIVE_ISA=host or best on another machine, or a sanitizer build): rebuild it here (npm rebuild ${o.packageName}) for the faster kernels`;

  const load = (): DefinedAddonLoad<B, I> => {
    if (cached !== undefined) return cached;
    const other = o.override?.();
    let info: I | null | undefined;
    const result = loadAddon<B>({
      packageName: o.packageName,
      addon: other ?? findAddon(o.native, o.file),
      status: other === undefined ? join(o.native, 'build', 'status.json') : undefined,
      exports: o.exports,
      disableEnv: o.disableEnv,
      ...(o.platforms === undefined ? {} : { platforms: o.platforms }),
      check: (binding) => {
        if (o.abi !== undefined) {
          const want = abiHash(o.abi);
          const got = (binding as { abiHash?: unknown }).abiHash;
          if (got !== want) {
            return `the addon was built from ABI table ${typeof got === 'string' ? got : '(none)'} but this package's TypeScript uses ${want}: the addon was built from another version of ${o.packageName}`;
          }
        }
        const problem = o.check?.(binding);
        if (problem !== undefined) return problem;
        if (o.info !== undefined) {
          info = o.info(binding);
          if (info === null) return 'the addon reports no ISA path this CPU can run';
        }
        return undefined;
      },
      ...(o.advice === undefined ? {} : { advice: o.advice }),
    });
    if (result.available) {
      cached = Object.freeze({ ...result, info: info as I });
      const isa = isaReport(info);
      // Never silently slow: a build without a path this CPU runs says so, once per realm (the load is).
      if (isa?.runsNotBuilt) {
        process.emitWarning(`${label}: ${notBuiltWarning(isa.notBuilt)}`, { type: 'TenferroWarning', code: 'TENFERRO_ISA_PATH_NOT_BUILT' });
      }
    } else {
      cached = Object.freeze({ ...result, reason: result.reasons.join('; ') });
    }
    // NODE_DEBUG=tenferro: what was loaded, or why not (once per realm).
    debug(cached.available ? `tenferro: ${label}: loaded ${cached.path}` : `tenferro: ${label}: unavailable: ${cached.reasons.join('; ')}`);
    return cached;
  };

  const status = (describe: (addon: DefinedAddonAvailable<B, I>) => AddonDescription, unavailableSolutions: readonly string[] = []): AddonPackageStatus => {
    const s = load();
    if (!s.available) return Object.freeze({ available: false, reasons: s.reasons, possibleSolutions: Object.freeze([...s.possibleSolutions, ...unavailableSolutions]) });
    const d = describe(s);
    const isa = isaReport(s.info);
    const isaDetails: Record<string, string> = {};
    const warnings = [...(d.warnings ?? [])];
    if (isa !== undefined) {
      isaDetails.isa = isa.isa;
      if (isa.paths !== undefined) isaDetails.isaPaths = isa.paths;
      if (isa.notBuilt !== '') isaDetails.isaNotBuilt = isa.notBuilt;
      if (isa.runsNotBuilt) warnings.push(notBuiltWarning(isa.notBuilt));
    }
    return Object.freeze({
      available: true,
      name: d.name,
      details: Object.freeze({ ...isaDetails, ...d.details }),
      warnings: Object.freeze(warnings),
      addonPath: s.path,
    });
  };
  return Object.freeze({ load, status });
}

/** The ISA report of an addon's info, when it has one: paths this CPU runs fastest first, and what the build left out. */
function isaReport(info: unknown): { isa: string; paths: string | undefined; notBuilt: string; runsNotBuilt: boolean } | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const i = info as Partial<AddonIsaInfo>;
  if (typeof i.isa !== 'string' || typeof i.runsNotBuilt !== 'boolean') return undefined;
  const notBuilt = Array.isArray(i.notBuilt) ? i.notBuilt.join(', ') : typeof i.notBuilt === 'string' ? i.notBuilt : '';
  const paths =
    typeof i.supported === 'object' && i.supported !== null
      ? Object.keys(i.supported)
          .filter((path) => i.supported![path] === true)
          .reverse()
          .join(', ')
      : undefined;
  return { isa: i.isa, paths, notBuilt, runsNotBuilt: i.runsNotBuilt };
}

// --- options ---------------------------------------------------------------------------------------

const KNOWN = new Set(['packageName', 'native', 'file', 'exports', 'disableEnv', 'platforms', 'abi', 'override', 'check', 'info', 'label', 'advice']);

function invalid(param: string, expected: string, received: unknown): OsError {
  return new OsError('InvalidArgument', OP, `expected ${expected} for ${param} but received ${describeValue(received)}`, { detail: { param } });
}

interface Normalized<B extends object, I> extends Omit<DefineAddonOptions<B, I>, 'native'> {
  readonly native: string;
}

function validate<B extends object, I>(options: DefineAddonOptions<B, I>): Normalized<B, I> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid('options', 'an options object', options);
  const o = options as unknown as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) throw invalid(`options.${key}`, `one of ${[...KNOWN].join(', ')}`, key);
  }
  let native: string;
  try {
    native = o.native instanceof URL || (typeof o.native === 'string' && o.native.startsWith('file:')) ? fileURLToPath(o.native as string | URL) : (o.native as string);
  } catch {
    throw invalid('options.native', 'an absolute path or a file: URL', o.native);
  }
  if (typeof native !== 'string' || !native.startsWith('/')) throw invalid('options.native', 'an absolute path or a file: URL', o.native);
  if (typeof o.file !== 'string' || !/^[^/\\]+\.node$/.test(o.file)) throw invalid('options.file', 'a .node file name', o.file);
  if (o.abi !== undefined && (typeof o.abi !== 'object' || o.abi === null)) throw invalid('options.abi', 'an ABI table object', o.abi);
  for (const fn of ['override', 'check', 'info'] as const) {
    if (o[fn] !== undefined && typeof o[fn] !== 'function') throw invalid(`options.${fn}`, 'a function', o[fn]);
  }
  if (o.label !== undefined && (typeof o.label !== 'string' || o.label === '')) throw invalid('options.label', 'a non-empty string', o.label);
  // packageName, exports, disableEnv, platforms and advice are loadAddon's: checked here, so a bad
  // one fails at the definition, not at the first load.
  validateOptions<B>({
    packageName: o.packageName as string,
    addon: join(native, 'build', 'Release', o.file),
    exports: o.exports as readonly (keyof B & string)[],
    disableEnv: o.disableEnv as string,
    ...(o.platforms === undefined ? {} : { platforms: o.platforms as readonly string[] }),
    ...(o.advice === undefined ? {} : { advice: o.advice as AddonAdvice }),
  });
  return { ...(options as DefineAddonOptions<B, I>), native };
}
