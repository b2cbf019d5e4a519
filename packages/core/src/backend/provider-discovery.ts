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
 * `TENFERRO_DISCOVER_PROVIDERS=0` turns it all off.
 */
export async function discoverProvider(kind: CpuBackendKind, op: string): Promise<Discovery> {
  // Switched off on purpose, like an explicit `providers: []`: no fallback warning.
  if (process.env.TENFERRO_DISCOVER_PROVIDERS === '0') return { package: undefined, packages: [], note: `provider discovery is off (TENFERRO_DISCOVER_PROVIDERS=0)` };
  const own = await discoverKindPackage(kind, op);
  const extra: CpuProviderPackage[] = [];
  for (const known of discoverableProviderPackages()) {
    if (known.kind === 'any') {
      const found = await discoverAnyPackage(known.name, known.factory);
      if (found !== undefined) extra.push(found);
    }
  }
  return { ...own, packages: own.package === undefined ? extra : [own.package, ...extra] };
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

/** The first backend created without the OS binding warns once (`TENFERRO_UNPINNED`): its workers are not pinned. */
export function reportUnpinned(os: { readonly available: boolean; readonly reasons?: readonly string[]; readonly possibleSolutions?: readonly string[] }): void {
  if (os.available || warnedUnpinned) return;
  warnedUnpinned = true;
  const reasons = os.reasons?.length ? `: ${os.reasons.join('; ')}` : '';
  const solutions = [
    'rebuild it: npm rebuild @tenferro/os (needs python3, make and g++: apt-get install -y python3 make g++)',
    'in a clone of the tenferro repository: npx pnpm@12.4.2 --filter @tenferro/os run build:native',
  ];
  process.emitWarning(
    `tenferro's OS binding (@tenferro/os) is unavailable${reasons}: worker threads are NOT pinned to CPUs and their placement is not verified (compatibility mode). Possible solutions: ${solutions.join('; ')}`,
    { type: 'TenferroWarning', code: 'TENFERRO_UNPINNED' },
  );
}

/** Test seam: forget that the once-per-process warnings were emitted. @internal */
export function resetFallbackWarningsForTests(): void {
  warnedFallback = false;
  warnedUnpinned = false;
  warnedSkipped.clear();
}
