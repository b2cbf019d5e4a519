import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import type { ProviderPackageStatus } from '../provider/provider-package-status.js';
import type { CpuBackendKind } from '../contract/backend-kind.js';
import { discoverableProviderPackages, providerPackageOf } from '../provider/provider-packages.js';

function kindPackage(kind: CpuBackendKind): { readonly name: string; readonly factory: string } {
  return providerPackageOf(kind);
}

export interface Discovery {
  /** The kind's own package, when it was found. */
  readonly package: CpuProviderPackage | undefined;
  /** Every package to use: the kind's (when found), then the `'any'` packages that are installed and available. */
  readonly packages: readonly CpuProviderPackage[];
  /** Why nothing was used, for diagnostics. */
  readonly note: string | undefined;
  /** Set when the kind ends up on core's TypeScript reference GEMM: why, and what fixes it. */
  readonly fallback?: ReferenceFallback;
}

/** Why a backend runs core's TypeScript reference GEMM instead of a native provider, and the fix (`executionInfo().fallback`). */
export interface ReferenceFallback {
  /** e.g. `@tenferro/provider-faer is installed but unavailable: …`. */
  readonly reason: string;
  /** What to run, for users of the published packages first, then in a clone of the repository. */
  readonly possibleSolutions: readonly string[];
}

/**
 * When `CpuBackend.create` is given no `providers`, the kind's provider package is used if the
 * application has it installed — resolved from core's own location, then from the current
 * directory — by calling its factory. Nothing registers itself at import: this is the only
 * place a provider is picked up, at backend creation. A faer package whose native kernels
 * cannot load (or is not installed) leaves core's reference kernels in place and says why and
 * what fixes it (`fallback`, see {@link reportReferenceFallback}); a blas package that cannot
 * load is an error, since the kind has no fallback. The packages of kind `'any'` (tprims) are
 * added for both kinds when they are installed and can run; one that is missing is skipped quietly
 * (it is optional), one that is installed but cannot load or run here is skipped with ONE
 * `TENFERRO_PROVIDER_SKIPPED` warning per package naming the cause and the fix (core's reference
 * kernels fill its slots, slower: never in silence).
 * `TENFERRO_DISCOVER_PROVIDERS=0` turns it all off. `constructor` says which constructor asks:
 * an external one's fallback names the fixes that fit it (R40, R54).
 */
export async function discoverProvider(kind: CpuBackendKind, op: string, constructor: 'create' | 'external' = 'create'): Promise<Discovery> {
  // Switched off on purpose, like an explicit `providers: []`: no fallback warning.
  if (process.env.TENFERRO_DISCOVER_PROVIDERS === '0') return discoveryOff();
  let own = await discoverKindPackage(kind, op);
  if (own.fallback !== undefined && kind === 'faer') {
    // Every fix, the blas kind among them (#36): named when its package is installed (create()),
    // always on external constructors, where it needs a bundle the caller supplies (R54).
    const blas = providerPackageOf('blas').name;
    const extra =
      constructor === 'external'
        ? [externalBlasFix()]
        : resolveInstalled(blas) !== undefined
          ? [`or pass kind: 'blas' (${blas} is installed; placement 'auto' only)`]
          : [];
    own = withMoreFixes(own, extra);
  }
  return { ...own, packages: own.package === undefined ? await anyPackages() : [own.package, ...(await anyPackages())] };
}

/** What `CpuBackend.create()` without `kind` runs on (R40 as #36 amends it for Node). */
export interface DefaultKind {
  readonly kind: CpuBackendKind;
  readonly discovery: Discovery;
  /** Set when the kind is blas because faer cannot run natively: faer's failure and its fixes (`TENFERRO_DEFAULT_KIND_BLAS`). */
  readonly blasInsteadOfFaer?: ReferenceFallback;
}

/**
 * The default kind (R40, amended for Node by #36): faer when `@tenferro/provider-faer` is
 * installed and its addon loads; otherwise blas when `@tenferro/provider-blas` is installed and
 * available (its factory succeeds) and the placement is `'auto'` (the only one blas accepts) —
 * then {@link reportDefaultKindBlas} names faer's failure once; otherwise faer on core's reference
 * kernels, whose fallback names every fix (making blas usable among them, with why it is not).
 * With discovery off (`TENFERRO_DISCOVER_PROVIDERS=0`) the default is faer, as with `providers`.
 */
export async function discoverDefaultKind(op: string, placementIsAuto: boolean): Promise<DefaultKind> {
  if (process.env.TENFERRO_DISCOVER_PROVIDERS === '0') return { kind: 'faer', discovery: discoveryOff() };
  const faer = await discoverKindPackage('faer', op);
  if (faer.package !== undefined || faer.fallback === undefined) return { kind: 'faer', discovery: { ...faer, packages: faer.package === undefined ? await anyPackages() : [faer.package, ...(await anyPackages())] } };
  const { name } = providerPackageOf('blas');
  const blas = await probeDefaultBlas();
  if (blas.package !== undefined && placementIsAuto) {
    return {
      kind: 'blas',
      discovery: { package: blas.package, packages: [blas.package, ...(await anyPackages())], note: undefined },
      blasInsteadOfFaer: faer.fallback,
    };
  }
  const fix =
    blas.package !== undefined
      ? `or pass kind: 'blas' (${name} is installed and available, but the blas kind takes placement 'auto' only)`
      : blas.installed
        ? `or make ${name} usable — it is installed but unavailable: ${blas.reason}; ${blas.possibleSolutions.join('; ')} — then CpuBackend.create() picks the blas kind (or pass kind: 'blas')`
        : `or install ${name} (with a system BLAS): npm install ${name} — then CpuBackend.create() picks the blas kind`;
  return { kind: 'faer', discovery: { ...withMoreFixes(faer, [fix]), packages: await anyPackages() } };
}

type BlasProbe =
  | { readonly package: CpuProviderPackage; readonly installed: true }
  | { readonly package: undefined; readonly installed: false }
  | { readonly package: undefined; readonly installed: true; readonly reason: string; readonly possibleSolutions: readonly string[] };

/** provider-blas for the default kind: never an error — what fails here only keeps the default at faer, said in its warning. */
async function probeDefaultBlas(): Promise<BlasProbe> {
  const { name, factory } = providerPackageOf('blas');
  const resolved = resolveInstalled(name);
  if (resolved === undefined) return { package: undefined, installed: false };
  try {
    const mod = (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    const create = mod[factory];
    if (typeof create !== 'function') return { package: undefined, installed: true, reason: `it has no ${factory}()`, possibleSolutions: [`update it: npm install ${name}@latest`] };
    const p = (create as () => CpuProviderPackage)();
    if (typeof p === 'object' && p !== null && p.kind === 'blas') return { package: p, installed: true };
    return { package: undefined, installed: true, reason: `${factory}() did not return a provider package of kind 'blas'`, possibleSolutions: [`update it: npm install ${name}@latest`] };
  } catch (e) {
    // provider-blas's ProviderUnavailable carries { reasons, possibleSolutions }: use them, not its message (which repeats both).
    const detail = (TenferroError.is(e) ? e.detail : undefined) as { reasons?: unknown; possibleSolutions?: unknown } | undefined;
    const reason = Array.isArray(detail?.reasons) && detail.reasons.length > 0 ? detail.reasons.map(String).join('; ') : e instanceof Error ? e.message : String(e);
    const solutions = Array.isArray(detail?.possibleSolutions) ? detail.possibleSolutions.map(String) : rebuild(name);
    return { package: undefined, installed: true, reason, possibleSolutions: solutions };
  }
}

function discoveryOff(): Discovery {
  return { package: undefined, packages: [], note: `provider discovery is off (TENFERRO_DISCOVER_PROVIDERS=0)` };
}

async function anyPackages(): Promise<CpuProviderPackage[]> {
  const extra: CpuProviderPackage[] = [];
  for (const known of discoverableProviderPackages()) {
    if (known.kind === 'any') {
      const found = await discoverAnyPackage(known.name, known.factory);
      if (found !== undefined) extra.push(found);
    }
  }
  return extra;
}

function withMoreFixes(d: Omit<Discovery, 'packages'>, more: readonly string[]): Omit<Discovery, 'packages'> {
  if (d.fallback === undefined || more.length === 0) return d;
  return { ...d, fallback: Object.freeze({ reason: d.fallback.reason, possibleSolutions: Object.freeze([...d.fallback.possibleSolutions, ...more]) }) };
}

/**
 * The blas alternative on external constructors (#36): never their strict standard bundle, which
 * refuses an uncontrolled BLAS (R54), never on caller-managed domains (R47) — a bundle the caller
 * builds, with the package also passed in `providers` (the kind's check, R40).
 */
function externalBlasFix(): string {
  const { name, factory } = providerPackageOf('blas');
  return (
    `or, on domains that are not caller-managed (R47), pass kind: 'blas' with providers: [${factory}()] from ${name} and a bundle you build from it ` +
    `(CpuProviderBundle.builder('blas').capabilityPolicy('providerDefaultCompatibility').gemmProvider(…)…): the strict standard bundle refuses an uncontrolled BLAS (R54)`
  );
}

/** The module at `name` as resolved from core's location, then from the current directory; `undefined` when not installed. */
function resolveInstalled(name: string): string | undefined {
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    try {
      return createRequire(base).resolve(name);
    } catch {
      // not from here
    }
  }
  return undefined;
}

/**
 * An installed package of kind `'any'`, or `undefined` when it is missing (quietly: it is optional)
 * or installed but cannot load or run here (then {@link reportSkippedProvider} says why, once).
 */
async function discoverAnyPackage(name: string, factory: string): Promise<CpuProviderPackage | undefined> {
  const resolved = resolveInstalled(name);
  if (resolved === undefined) return undefined;
  try {
    const mod = (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    const create = mod[factory];
    if (typeof create !== 'function') return reportSkippedProvider(name, `it has no ${factory}()`, [`update it: npm install ${name}@latest`]);
    const p = (create as () => CpuProviderPackage)();
    if (typeof p === 'object' && p !== null && p.kind === 'any') return p;
    return reportSkippedProvider(name, `${factory}() did not return a provider package of kind 'any'`, [`update it: npm install ${name}@latest`]);
  } catch (e) {
    // An optional package never stops a backend: its slots keep core's reference kernels.
    return reportSkippedProvider(name, `it is installed but cannot ${TenferroError.is(e, 'ProviderUnavailable') ? 'run here' : 'be loaded'} (${e instanceof Error ? e.message : String(e)})`, rebuild(name));
  }
}

const warnedSkipped = new Set<string>();

/** Never silently slow: an installed optional provider package that cannot be used warns once per package (`TENFERRO_PROVIDER_SKIPPED`). */
function reportSkippedProvider(name: string, reason: string, possibleSolutions: readonly string[]): undefined {
  if (warnedSkipped.has(name)) return undefined;
  warnedSkipped.add(name);
  process.emitWarning(
    `${name} is skipped: ${reason}; its slots run core's TypeScript reference kernels (much slower). Possible solutions: ${possibleSolutions.join('; ')}`,
    { type: 'TenferroWarning', code: 'TENFERRO_PROVIDER_SKIPPED', detail: `Uninstall ${name} to use the reference kernels without this warning.` },
  );
  return undefined;
}

async function discoverKindPackage(kind: CpuBackendKind, op: string): Promise<Omit<Discovery, 'packages'>> {
  const { name, factory } = kindPackage(kind);
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    let resolved: string;
    try {
      resolved = createRequire(base).resolve(name);
    } catch {
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    } catch (e) {
      if (kind === 'faer') return fellBack(`${name} is installed but could not be loaded (${e instanceof Error ? e.message : String(e)})`, rebuild(name));
      throw new TenferroError('BackendKindUnavailable', `${name} is installed but could not be loaded`, { op, cause: e, detail: { kind, package: name } });
    }
    const create = mod[factory];
    if (typeof create !== 'function') return fellBack(`${name} has no ${factory}()`, [`update it: npm install ${name}@latest`]);
    try {
      return { package: (create as () => CpuProviderPackage)(), note: undefined };
    } catch (e) {
      if (!TenferroError.is(e, 'ProviderUnavailable')) throw e;
      if (kind === 'faer') return fellBack(`${name} is installed but unavailable: ${e.message}`, rebuild(name));
      throw new TenferroError('BackendKindUnavailable', `${name} is installed but cannot run here: ${e.message}`, { op, cause: e, detail: { kind, package: name } });
    }
  }
  return fellBack(`${name} is not installed`, [`install it: npm install ${name}`]);
}

// Only the faer kind can fall back (blas has no built-in kernels): every fallback is faer's.
function fellBack(note: string, possibleSolutions: readonly string[]): Omit<Discovery, 'packages'> {
  return { package: undefined, note, fallback: Object.freeze({ reason: note, possibleSolutions: Object.freeze([...possibleSolutions]) }) };
}

function rebuild(name: string): string[] {
  return [
    `rebuild its native addon: npm rebuild ${name} (needs python3, make and g++: apt-get install -y python3 make g++)`,
    `in a clone of the tenferro repository: npx pnpm@12.4.2 --filter ${name} run build:native`,
  ];
}

/** `TENFERRO_NO_REFERENCE_FALLBACK=1`: a backend that would run the reference GEMM is an error instead. */
export const NO_REFERENCE_FALLBACK_ENV = 'TENFERRO_NO_REFERENCE_FALLBACK';

let warnedFallback = false;
let warnedUnpinned = false;

/**
 * Never silently slow: a backend created without `providers` that ends up on the TypeScript
 * reference GEMM emits ONE process warning per process (`TENFERRO_REFERENCE_FALLBACK`) naming
 * the cause and the fix — or, with `TENFERRO_NO_REFERENCE_FALLBACK=1`, throws
 * `ProviderUnavailable` instead. An explicit `providers` option never gets here.
 */
export function reportReferenceFallback(fallback: ReferenceFallback, op: string, env: NodeJS.ProcessEnv = process.env): void {
  const message = `tenferro runs the faer kind on its TypeScript reference GEMM (60× slower or worse): ${fallback.reason}. Possible solutions: ${fallback.possibleSolutions.join('; ')}; or pass providers: [] to choose the reference kernels explicitly`;
  if (env[NO_REFERENCE_FALLBACK_ENV] === '1') {
    throw new TenferroError('ProviderUnavailable', `${message} (refused: ${NO_REFERENCE_FALLBACK_ENV}=1)`, {
      op,
      detail: { kind: 'faer', reasons: [fallback.reason], possibleSolutions: fallback.possibleSolutions, env: NO_REFERENCE_FALLBACK_ENV },
    });
  }
  if (warnedFallback) return;
  warnedFallback = true;
  process.emitWarning(message, { type: 'TenferroWarning', code: 'TENFERRO_REFERENCE_FALLBACK', detail: `Set ${NO_REFERENCE_FALLBACK_ENV}=1 to make this an error.` });
}

let warnedDefaultBlas = false;

/**
 * `CpuBackend.create()` without `kind` chose blas because faer cannot run natively (#36): ONE
 * process warning (`TENFERRO_DEFAULT_KIND_BLAS`) naming faer's failure and its fixes, and how to
 * make the choice explicit. The blas kind is no slow fallback — it is the system BLAS — but it is
 * not the faer the application may have expected: its threads are the BLAS runtime's, one
 * provider-exclusive task at a time, placement `'auto'` only (R19, R28).
 */
export function reportDefaultKindBlas(faer: ReferenceFallback, blasName: string): void {
  if (warnedDefaultBlas) return;
  warnedDefaultBlas = true;
  process.emitWarning(
    `tenferro's default kind is blas here (${blasName}), not faer: ${faer.reason}. The blas kind runs GEMM in the BLAS runtime's own threads, one provider-exclusive task at a time, placement 'auto' only. ` +
      `Possible solutions, to get faer: ${faer.possibleSolutions.join('; ')}; or pass kind: 'blas' to choose blas explicitly (no warning), or kind: 'faer' to keep faer (on its TypeScript reference kernels until faer loads)`,
    { type: 'TenferroWarning', code: 'TENFERRO_DEFAULT_KIND_BLAS' },
  );
}

/**
 * The first backend created without the OS binding warns once (`TENFERRO_UNPINNED`): its workers
 * are not pinned, and the arbiter is this isolate's alone, so exclusion across worker_threads
 * isolates is lost (#36; `TENFERRO_ISOLATE_ARBITER` says it again where another isolate is live).
 */
export function reportUnpinned(os: { readonly available: boolean; readonly reasons?: readonly string[]; readonly possibleSolutions?: readonly string[] }): void {
  if (os.available || warnedUnpinned) return;
  warnedUnpinned = true;
  const reasons = os.reasons?.length ? `: ${os.reasons.join('; ')}` : '';
  const solutions = [
    'rebuild it: npm rebuild @tenferro/os (needs python3, make and g++: apt-get install -y python3 make g++)',
    'in a clone of the tenferro repository: npx pnpm@12.4.2 --filter @tenferro/os run build:native',
  ];
  process.emitWarning(
    `tenferro's OS binding (@tenferro/os) is unavailable${reasons}: worker threads are NOT pinned to CPUs and their placement is not verified (compatibility mode), and the arbiter is this isolate's alone: backends in other worker_threads isolates are NOT kept off this one's CPUs (no exclusion across isolates, executionInfo().arbiter === 'isolate'). Possible solutions: ${solutions.join('; ')}`,
    { type: 'TenferroWarning', code: 'TENFERRO_UNPINNED' },
  );
}

/** Test seam: forget that the once-per-process warnings were emitted. @internal */
export function resetFallbackWarningsForTests(): void {
  warnedFallback = false;
  warnedUnpinned = false;
  warnedDefaultBlas = false;
  warnedSkipped.clear();
}
