import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { validateSignal } from '../util/abort-listeners.js';
import type { ExternalCpuDomain } from '../contract/external-cpu-domain.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { CpuDomainId } from '../contract/cpu-domain.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import { CpuSet } from '../topology/cpu-set.js';
import type { CpuTopology } from '../topology/topology-types.js';
import { type CpuBackendKind, type CpuPlacement, validateKind, validatePlacement } from '../contract/backend-kind.js';

/** Options of {@link CpuBackend.create}; every key is optional and unknown keys are `InvalidArgument`. */
export interface CpuBackendOptions {
  /**
   * `'faer'` (tenferro-managed workers) or `'blas'` (needs `@tenferro/provider-blas`). Omitted: the
   * default kind follows what is installed (R40, #36) — faer when `@tenferro/provider-faer` is
   * installed and its addon loads; else blas when `@tenferro/provider-blas` is installed and
   * available and the placement is `'auto'` (warning `TENFERRO_DEFAULT_KIND_BLAS`, once); else faer
   * on core's reference kernels (warning `TENFERRO_REFERENCE_FALLBACK`). With `providers` given, or
   * `TENFERRO_DISCOVER_PROVIDERS=0`, the default is faer.
   */
  readonly kind?: CpuBackendKind;
  /** Thread budget; default `TENFERRO_NUM_THREADS`, else the topology's effective capacity. */
  readonly threads?: number;
  /** `'auto'` (default), `'allAllowed'` or `{ numaNode: id }`. */
  readonly placement?: CpuPlacement;
  /** A topology to use instead of discovering this machine's (tests, containers). */
  readonly topology?: CpuTopology;
  /**
   * Provider packages, e.g. `[createFaerProvider()]`. Omitted: the kind's package is used when the
   * application has it installed (`@tenferro/provider-faer`, `@tenferro/provider-blas`), else core's
   * reference kernels (faer) or `BackendKindUnavailable` (blas). `[]`: core's reference kernels only.
   */
  readonly providers?: readonly CpuProviderPackage[];
}

/** `CpuBackend.fromExternalDomains` options. */
export interface ExternalBackendOptions {
  /** The domain `auto` routes to. */
  readonly defaultDomain: CpuDomainId;
  readonly domains: readonly ExternalCpuDomain[];
  /** A bundle to validate and use instead of the kind's strict standard bundle. */
  readonly bundle?: CpuProviderBundle;
  readonly topology?: CpuTopology;
  /**
   * Ignored (forced to `'faer'`) when a caller-managed domain is present (R40). Omitted: `'faer'`
   * whatever is installed — an external backend uses the strict standard bundle, which refuses an
   * uncontrolled BLAS (R54); for blas pass `kind: 'blas'` with a `bundle` (#36).
   */
  readonly kind?: CpuBackendKind;
  readonly providers?: readonly CpuProviderPackage[];
}

export interface NormalizedBackendOptions {
  /** `undefined` when not given: the default kind follows what is installed (R40, #36). */
  readonly kind: CpuBackendKind | undefined;
  readonly threads: number | undefined;
  readonly placement: CpuPlacement;
  readonly topology: CpuTopology | undefined;
  /** `undefined` when not given: discover the kind's installed package. */
  readonly providers: readonly CpuProviderPackage[] | undefined;
}

const KNOWN = new Set(['kind', 'threads', 'placement', 'topology', 'providers']);

/** Validate `CpuBackend.create` options once, returning a frozen normalised copy. */
export function validateBackendOptions(options: unknown, op: string): NormalizedBackendOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgument(op, 'options', 'an options object', options);
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) throw invalidArgument(op, `options.${key}`, `one of ${[...KNOWN].join(', ')}`, key);
  }
  const kind = o.kind === undefined ? undefined : validateKind(o.kind, op);
  const threads = o.threads === undefined ? undefined : validateThreads(o.threads, op, 'options.threads');
  const placement = o.placement === undefined ? 'auto' : validatePlacement(o.placement, op);
  const topology = o.topology === undefined ? undefined : validateTopology(o.topology, op);
  const providers = o.providers;
  if (providers !== undefined && !Array.isArray(providers)) throw invalidArgument(op, 'options.providers', 'an array of provider packages', providers);
  (providers ?? []).forEach((p: unknown, i: number) => {
    if (typeof p !== 'object' || p === null || (p as CpuProviderPackage).kind === undefined) {
      throw invalidArgument(op, `options.providers[${i}]`, 'a provider package (e.g. createBlasProvider())', p);
    }
    if ((p as CpuProviderPackage).kind !== 'any') validateKind((p as CpuProviderPackage).kind, op, `options.providers[${i}].kind`);
  });
  return Object.freeze({ kind, threads, placement, topology, providers: providers === undefined ? undefined : Object.freeze([...providers]) });
}

export function validateThreads(value: unknown, op: string, param: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 4096) {
    throw invalidArgument(op, param, 'an integer thread count in [1, 4096]', value);
  }
  return value;
}

/** `TENFERRO_NUM_THREADS` (R18 analogue): unset → undefined; malformed or zero → `InvalidArgument`. */
export function threadsFromEnv(op: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.TENFERRO_NUM_THREADS;
  if (raw === undefined || raw === '') return undefined;
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 4096) {
    throw new TenferroError('InvalidArgument', `expected an integer thread count in [1, 4096] for TENFERRO_NUM_THREADS but received ${JSON.stringify(raw)}`, {
      op,
      detail: { param: 'TENFERRO_NUM_THREADS' },
    });
  }
  return n;
}

/** Options of operations that take nothing but a signal (`install`, `reshape`, sessions, scopes, outer lanes). */
export interface RunOptions {
  /** Abort the operation: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal;
}

/** Validate {@link RunOptions} (unknown keys are errors) and return the signal. */
export function validateRunOptions(options: unknown, op: string): AbortSignal | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'signal') throw invalidArgument(op, `options.${key}`, 'the option signal', key);
  }
  return validateSignal((options as RunOptions).signal, op);
}

/** A topology as `discoverCpuTopology()` returns it: checked field by field, `InvalidArgument` naming the first that is not. */
export function validateTopology(value: unknown, op: string, param = 'options.topology'): CpuTopology {
  if (typeof value !== 'object' || value === null) throw invalidArgument(op, param, 'a CpuTopology from discoverCpuTopology()', value);
  const t = value as Partial<CpuTopology>;
  if (!(t.allowedCpus instanceof CpuSet)) throw invalidArgument(op, `${param}.allowedCpus`, 'a CpuSet', t.allowedCpus);
  if (!Array.isArray(t.nodes)) throw invalidArgument(op, `${param}.nodes`, 'an array of NUMA nodes', t.nodes);
  t.nodes.forEach((n: unknown, i: number) => {
    if (typeof n !== 'object' || n === null || !((n as { cpus?: unknown }).cpus instanceof CpuSet) || !Number.isSafeInteger((n as { id?: unknown }).id)) {
      throw invalidArgument(op, `${param}.nodes[${i}]`, 'a node { id, cpus: CpuSet }', n);
    }
  });
  if (typeof t.node !== 'function' || typeof t.hasNumaNodes !== 'function') throw invalidArgument(op, param, 'a CpuTopology from discoverCpuTopology()', value);
  const cpus = t.effectiveCapacity?.cpus;
  if (!Number.isSafeInteger(cpus) || (cpus as number) < 1) throw invalidArgument(op, `${param}.effectiveCapacity.cpus`, 'a positive integer', cpus);
  return value as CpuTopology;
}
