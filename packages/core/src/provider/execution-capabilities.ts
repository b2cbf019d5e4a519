import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
/**
 * How a provider's threads behave (contract "Thread controls" / "Placement controls"):
 * - `sequential`: one thread by construction;
 * - `perCallUpperBound`: honours any positive per-call thread bound;
 * - `binaryClampToOne`: the adapter selects single-threaded mode for every finite budget;
 * - `globalOrUncontrolled`: global, startup-fixed or absent control (cannot be bounded per call).
 */
export type CpuThreadCountControl = 'sequential' | 'perCallUpperBound' | 'binaryClampToOne' | 'globalOrUncontrolled';

/**
 * Where a provider's parallel work runs: on the context's engine workers, on the calling
 * (worker) thread, on provider-owned threads, or no claim at all.
 */
export type CpuPlacementControl = 'engineWorkers' | 'callingThread' | 'externalWorkers' | 'none';

/**
 * What a provider declares about its threads and the modes it accepts (R55–R60), sampled once at
 * bundle build and validated against each domain before anything runs.
 */
export interface CpuProviderExecutionCapabilities {
  readonly threadCount: CpuThreadCountControl;
  readonly placement: CpuPlacementControl;
  /** Honours Sequential without spawning workers (needed for Sequential and Outer, R59). */
  readonly workerLocalSequential: boolean;
  readonly acceptsSequential: boolean;
  readonly acceptsOuter: boolean;
  readonly acceptsInner: boolean;
  /**
   * Its native code may start threads the first time it runs on a worker (or on the first call of
   * some path: a pool created lazily), and those threads inherit that worker's CPU mask for their
   * whole life. tenferro then never narrows the mask of a worker running one of its tasks (the
   * lane spreading of a fan-out, R21 as amended for Node by #36): the threads keep the domain's
   * set. Absent: `false`. Sampled with the rest; not a placement value (R56, R57, R63 unchanged).
   */
  readonly spawnsThreadsOnFirstUse?: boolean;
}

/** The conservative default: uncontrolled, no placement claim, Inner only. */
export const DEFAULT_EXECUTION_CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'globalOrUncontrolled',
  placement: 'none',
  workerLocalSequential: false,
  acceptsSequential: false,
  acceptsOuter: false,
  acceptsInner: true,
  spawnsThreadsOnFirstUse: false,
});

const THREAD: ReadonlySet<string> = new Set(['sequential', 'perCallUpperBound', 'binaryClampToOne', 'globalOrUncontrolled']);
const PLACE: ReadonlySet<string> = new Set(['engineWorkers', 'callingThread', 'externalWorkers', 'none']);

/**
 * Sample and validate what a provider declares (once, at bundle build: R52), frozen, every field
 * present (`spawnsThreadsOnFirstUse` included). A
 * declaration that throws or holds an unknown value is `InvalidArgument` naming the provider,
 * its slot and the field.
 */
export function snapshotCapabilities(provider: { readonly name?: string; executionCapabilities(): unknown }, slot: string): CpuProviderExecutionCapabilities {
  const op = 'CpuProviderBundleBuilder.build';
  const who = `the ${slot} provider${typeof provider.name === 'string' ? ` ${JSON.stringify(provider.name)}` : ''}`;
  let value: unknown;
  try {
    value = provider.executionCapabilities();
  } catch (e) {
    throw new TenferroError('InvalidArgument', `${who}: executionCapabilities() threw: ${e instanceof Error ? e.message : String(e)}`, {
      op,
      cause: e,
      detail: { slot, param: 'executionCapabilities' },
    });
  }
  if (value !== undefined && (typeof value !== 'object' || value === null)) {
    throw invalidArgument(op, `${slot}.executionCapabilities()`, `an object from ${who}`, value);
  }
  const v = (value ?? {}) as Record<string, unknown>;
  const field = <T>(name: keyof CpuProviderExecutionCapabilities, ok: (x: unknown) => x is T, expected: string): T => {
    const x = v[name] ?? DEFAULT_EXECUTION_CAPABILITIES[name];
    if (!ok(x)) throw invalidArgument(op, `${slot}.executionCapabilities().${name}`, `${expected} (declared by ${who})`, x);
    return x;
  };
  const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
  return Object.freeze({
    threadCount: field('threadCount', (x): x is CpuThreadCountControl => THREAD.has(x as string), [...THREAD].join(' | ')),
    placement: field('placement', (x): x is CpuPlacementControl => PLACE.has(x as string), [...PLACE].join(' | ')),
    workerLocalSequential: field('workerLocalSequential', isBool, 'a boolean'),
    acceptsSequential: field('acceptsSequential', isBool, 'a boolean'),
    acceptsOuter: field('acceptsOuter', isBool, 'a boolean'),
    acceptsInner: field('acceptsInner', isBool, 'a boolean'),
    spawnsThreadsOnFirstUse: field('spawnsThreadsOnFirstUse', isBool, 'a boolean'),
  });
}

/**
 * R59: what "accepts mode" means.
 *
 * @example
 * ```ts
 * import { DEFAULT_EXECUTION_CAPABILITIES, acceptsMode } from '@tenferro/core';
 *
 * const sequentialOnly = { ...DEFAULT_EXECUTION_CAPABILITIES, workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: false };
 * console.log(acceptsMode(sequentialOnly, 'sequential'), acceptsMode(sequentialOnly, 'inner')); // prints: true false
 * ```
 */
export function acceptsMode(c: CpuProviderExecutionCapabilities, mode: 'sequential' | 'outer' | 'inner'): boolean {
  if (mode === 'sequential') return c.acceptsSequential && c.workerLocalSequential;
  if (mode === 'outer') return c.acceptsOuter && c.workerLocalSequential;
  return c.acceptsInner;
}

/**
 * R55: the thread limit a control enforces under `budget`, or undefined when none can be.
 *
 * @example
 * ```ts
 * import { DEFAULT_EXECUTION_CAPABILITIES, enforcedThreadLimit } from '@tenferro/core';
 *
 * console.log(enforcedThreadLimit({ ...DEFAULT_EXECUTION_CAPABILITIES, threadCount: 'perCallUpperBound' }, 4)); // prints: 4
 * console.log(enforcedThreadLimit({ ...DEFAULT_EXECUTION_CAPABILITIES, threadCount: 'sequential' }, 4)); // prints: 1
 * ```
 */
export function enforcedThreadLimit(c: CpuProviderExecutionCapabilities, budget: number): number | undefined {
  switch (c.threadCount) {
    case 'sequential':
    case 'binaryClampToOne':
      return 1;
    case 'perCallUpperBound':
      return budget;
    default:
      return undefined;
  }
}
