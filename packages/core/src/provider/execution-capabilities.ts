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

export interface CpuProviderExecutionCapabilities {
  readonly threadCount: CpuThreadCountControl;
  readonly placement: CpuPlacementControl;
  /** Honours Sequential without spawning workers (needed for Sequential and Outer, R59). */
  readonly workerLocalSequential: boolean;
  readonly acceptsSequential: boolean;
  readonly acceptsOuter: boolean;
  readonly acceptsInner: boolean;
}

/** The conservative default: uncontrolled, no placement claim, Inner only. */
export const DEFAULT_EXECUTION_CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'globalOrUncontrolled',
  placement: 'none',
  workerLocalSequential: false,
  acceptsSequential: false,
  acceptsOuter: false,
  acceptsInner: true,
});

const THREAD = new Set(['sequential', 'perCallUpperBound', 'binaryClampToOne', 'globalOrUncontrolled']);
const PLACE = new Set(['engineWorkers', 'callingThread', 'externalWorkers', 'none']);

/** Validate and freeze what a provider declared (sampled once, at bundle build: R52). */
export function snapshotCapabilities(value: unknown, slot: string): CpuProviderExecutionCapabilities {
  const v = (value ?? {}) as Partial<CpuProviderExecutionCapabilities>;
  const bad = (what: string) => new TypeError(`${slot} provider: executionCapabilities().${what} is invalid`);
  const threadCount = v.threadCount ?? DEFAULT_EXECUTION_CAPABILITIES.threadCount;
  const placement = v.placement ?? DEFAULT_EXECUTION_CAPABILITIES.placement;
  if (!THREAD.has(threadCount)) throw bad('threadCount');
  if (!PLACE.has(placement)) throw bad('placement');
  const flag = (name: keyof CpuProviderExecutionCapabilities): boolean => {
    const x = v[name] ?? DEFAULT_EXECUTION_CAPABILITIES[name];
    if (typeof x !== 'boolean') throw bad(name);
    return x;
  };
  return Object.freeze({
    threadCount,
    placement,
    workerLocalSequential: flag('workerLocalSequential'),
    acceptsSequential: flag('acceptsSequential'),
    acceptsOuter: flag('acceptsOuter'),
    acceptsInner: flag('acceptsInner'),
  });
}

/** R59: what "accepts mode" means. */
export function acceptsMode(c: CpuProviderExecutionCapabilities, mode: 'sequential' | 'outer' | 'inner'): boolean {
  if (mode === 'sequential') return c.acceptsSequential && c.workerLocalSequential;
  if (mode === 'outer') return c.acceptsOuter && c.workerLocalSequential;
  return c.acceptsInner;
}

/** R55: the thread limit a control enforces under `budget`, or undefined when none can be. */
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
