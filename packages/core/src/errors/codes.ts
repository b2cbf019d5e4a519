/**
 * Every stable error code of tenferro, in one place.
 *
 * A code is the contract's variant name in PascalCase. Renaming or removing a code is a
 * breaking change. `docs/errors.md` lists the same codes; a test keeps the two equal.
 */
export type ErrorKind = 'Validation' | 'Unsupported' | 'RuntimeState' | 'BackendFailure' | 'Internal';

interface CodeInfo {
  readonly kind: ErrorKind;
  readonly meaning: string;
}

/**
 * Every error code with its kind and meaning (what docs/errors.md lists). Codes are stable:
 * compare `error.code` against them, never messages.
 *
 * @example
 * ```ts
 * import { ERROR_CODES } from '@tenferro/core';
 *
 * console.log(ERROR_CODES.ShapeMismatch.kind); // prints: Validation
 * ```
 */
export const ERROR_CODES = {
  // --- arguments -------------------------------------------------------------------------
  /** An argument has the wrong type or value (the message names the parameter path). */
  InvalidArgument: { kind: 'Validation', meaning: 'An argument has the wrong type or value; the message names the parameter path.' },

  // --- CPU sets and topology (R8, R10, R11) ------------------------------------------------
  /** A Linux cpulist string (or id list) is malformed. */
  InvalidCpuList: { kind: 'Validation', meaning: 'A CPU list is malformed: empty component, reversed range, non-number, negative or non-integer id, or more than 2^20 CPUs.' },
  /** A CPU set would be empty. */
  EmptyCpuSet: { kind: 'Validation', meaning: 'A CPU set was constructed from no CPUs; CPU sets are never empty.' },
  /** The process affinity mask is empty. */
  EmptyAllowedCpuSet: { kind: 'RuntimeState', meaning: 'The process affinity mask read from the OS is empty.' },
  /** The process affinity mask cannot be read. */
  AffinityUnavailable: { kind: 'Unsupported', meaning: 'Thread or process affinity cannot be read or set on this platform (no OS binding, or the OS refused).' },
  /** A NUMA node id appears twice in the OS topology. */
  DuplicateNode: { kind: 'RuntimeState', meaning: 'A NUMA node id appears twice in the OS topology.' },
  /** Two usable NUMA nodes share a CPU. */
  OverlappingNodes: { kind: 'RuntimeState', meaning: 'Two usable NUMA nodes share at least one CPU.' },
  /** A CPU outside the process affinity set was requested (no widening, R9). */
  CpuOutsideAllowedSet: { kind: 'Validation', meaning: 'A CPU outside the process affinity set was named; tenferro never widens process affinity.' },
  /** The OS rejected an affinity system call. */
  AffinitySyscallFailed: { kind: 'BackendFailure', meaning: 'sched_getaffinity or sched_setaffinity failed; the cause carries errno.' },
  /** The OS topology cannot be read at all. */
  TopologyDiscovery: { kind: 'RuntimeState', meaning: 'The CPU topology could not be discovered; the cause says why.' },

  // --- admission and execution (R27–R33, R67–R95) -------------------------------------------
  /** A queued permit wait was aborted through its AbortSignal. */
  AdmissionAborted: { kind: 'RuntimeState', meaning: 'A queued wait for a permit was aborted through its AbortSignal; the queue stays consistent.' },
  /** The process-wide arbiter was asked for where the @tenferro/os binding cannot load. */
  ProcessArbiterUnavailable: {
    kind: 'Unsupported',
    meaning: 'The process-wide arbiter (ProcessArbiter) needs the @tenferro/os binding, which cannot load here; the detail carries its reasons and possible solutions. processArbiter() falls back to the per-isolate arbiter instead.',
  },
  /** A process asked to join a machine-wide arbiter (#41) that it cannot join here. */
  MachineArbiterUnavailable: {
    kind: 'Unsupported',
    meaning: 'The process asked for a machine-wide arbiter (TENFERRO_MACHINE_ARBITER or joinMachineArbiter) that cannot be used here: no @tenferro/os binding, not Linux, an addon built without it, the segment cannot be opened, it was created in another PID namespace, or it is full; or machineArbiter() was called in a process that joined none. Never a silent unjoined run: unset the variable to run unjoined.',
  },
  /** Another copy of @tenferro/os with a different arbiter ABI owns the process arbiter. */
  ArbiterVersionConflict: {
    kind: 'RuntimeState',
    meaning: 'Another copy of @tenferro/os in this process, with a different arbiter ABI, owns the process-wide arbiter — or the machine arbiter\'s segment was created by a tenferro version with another layout; this copy refuses to start a second, independent one (detail: abi, otherAbi). Install one version of @tenferro/os.',
  },
  /** Backend entry from inside an active execution (callback, session, provider, child promise or engine worker). */
  Reentered: { kind: 'RuntimeState', meaning: 'CpuBackend cannot be re-entered while another CPU backend execution is active in this async context or on this engine\'s workers.' },
  /** withExecutionScope opened inside an active execution or scope. */
  ExecutionAlreadyActive: { kind: 'RuntimeState', meaning: 'CPU execution is already active; open the shared scope outside active scopes and backend sessions.' },
  /** An operation inside an execution scope used a handle with another runtime identity. */
  ScopeWitnessMismatch: { kind: 'RuntimeState', meaning: 'The operation backend does not match the execution scope; use a clone of its backend witness.' },
  /** An entered context was used after its execution ended. */
  ContextExpired: { kind: 'RuntimeState', meaning: 'An execution context was used after the execution that entered it ended.' },
  /** Executor scheduling rule broken (Outer through install, lanes, jobs run twice or not at all). */
  Scheduling: { kind: 'BackendFailure', meaning: 'An executor scheduling rule was broken: Outer mode through install, Outer without budget or outer support, a bad lane index, or a job run twice or not at all.' },
  /** The backend handle (and its coordinator) was closed. */
  BackendClosed: { kind: 'RuntimeState', meaning: 'The backend was closed; its engines are shut down. An operation running when close() was called settles with this code at once.' },
  /** The operation's AbortSignal fired while it ran. */
  ExecutionAborted: {
    kind: 'RuntimeState',
    meaning: "The operation's AbortSignal fired while it ran: tenferro's own kernels stopped at their next block boundary (a BLAS call finishes first); a caller-owned output may be partly written.",
  },
  /** The operation is not supported for this domain or configuration. */
  Unsupported: { kind: 'Unsupported', meaning: 'The operation is not supported for this domain or configuration (for example an execution scope on an external domain).' },

  // --- placement and kinds (R12–R20) --------------------------------------------------------
  /** A NUMA placement names a node that is not usable by this process. */
  UnknownNumaNode: { kind: 'RuntimeState', meaning: 'The requested NUMA node is not a usable node of this process (unknown id, or none of its CPUs are allowed).' },
  /** A NUMA placement on a topology without NUMA information. */
  NumaDiscoveryUnavailable: { kind: 'RuntimeState', meaning: 'A NUMA node placement was requested but the topology has no NUMA information.' },
  /** The blas kind accepts only the auto placement. */
  ExternalProviderAffinityUnmanaged: { kind: 'Unsupported', meaning: 'The blas kind accepts only placement auto: tenferro cannot establish the CPU affinity of provider-owned BLAS threads.' },
  /** An explicit placement without verified worker affinity. */
  ManagedAffinityUnavailable: { kind: 'RuntimeState', meaning: 'An explicit placement was requested but verified worker affinity is unavailable (no OS binding); only auto (compatibility mode) works.' },
  /** The requested backend kind needs a provider package that is not installed or not passed. */
  BackendKindUnavailable: { kind: 'Unsupported', meaning: 'The requested backend kind needs a provider package that is not installed or was not passed in options.providers; the message names it.' },

  // --- engines and workers (R21–R26, D2) ----------------------------------------------------
  /** A worker could not be pinned to the domain set, or its observed mask differs. */
  WorkerPinning: { kind: 'BackendFailure', meaning: 'An engine worker could not be pinned to the whole domain CPU set, or the mask read back differs from the declared set.' },
  /** A worker exited or failed before it reported startup. */
  WorkerStartupClosed: { kind: 'BackendFailure', meaning: 'An engine worker exited or failed before it reported startup.' },
  /** A worker died while it held a task. */
  WorkerDied: { kind: 'BackendFailure', meaning: 'An engine worker died (uncaught error or exit) while it ran a task; the task failed and the worker is replaced.' },
  /** A dead worker could not be replaced; the engine is unusable. */
  EngineBroken: { kind: 'BackendFailure', meaning: 'An engine worker died and its replacement could not be started and verified; the engine refuses work.' },
  /** A kernel task threw. */
  KernelFailed: { kind: 'BackendFailure', meaning: 'A kernel task threw on its worker; the cause carries the worker-side error.' },
  /** A provider broke its contract (wrote a caller-owned output, then declined). */
  ProviderContractViolation: {
    kind: 'BackendFailure',
    meaning: 'A provider wrote the caller-owned output and then declined (Unsupported), which its contract forbids; the output may have been modified and no retry was made.',
  },
  /** Memory for an output or temporary could not be allocated. */
  AllocationFailed: { kind: 'BackendFailure', meaning: 'Memory for an output or temporary could not be allocated (the size was representable); nothing the caller owns was touched.' },

  // --- tensors and dot-general validation (R102, R109) --------------------------------------
  /** Shape and strides (or an axis list) have different ranks. */
  RankMismatch: { kind: 'Validation', meaning: 'A shape and its strides, or two operands, have different ranks.' },
  /** A view reaches outside its storage. */
  ViewOutOfBounds: { kind: 'Validation', meaning: 'A tensor view reaches outside its storage (offset plus the farthest strided index is past the end).' },
  /** An element count or offset overflows the safe integer range. */
  IntegerOverflow: { kind: 'Validation', meaning: 'An element count or offset overflows the safe integer range.' },
  /** An axis index is not below the rank. */
  AxisOutOfBounds: { kind: 'Validation', meaning: 'An axis index is negative or not below the rank.' },
  /** An axis is named twice within one role. */
  DuplicateAxis: { kind: 'Validation', meaning: 'An axis is named twice within one role (contracting, batch or a permutation).' },
  /** An axis is both contracting and batch on one side. */
  AxisRoleConflict: { kind: 'Validation', meaning: 'An axis is both a contracting and a batch axis of the same operand.' },
  /** Shapes do not agree. */
  ShapeMismatch: { kind: 'Validation', meaning: 'Shapes do not agree: paired contracted or batch extents differ, operands do not broadcast (aligned at their leading axes), an output has the wrong shape, data does not fill a shape, or a reshape changes the element count.' },
  /** A reduction that picks an element has none. */
  EmptyReduction: { kind: 'Validation', meaning: 'max, min, argmax or argmin over axes with no element (an extent of 0): there is no value to choose.' },
  /** Two dtypes that must agree differ. */
  DTypeMismatch: { kind: 'Validation', meaning: 'Two dtypes that must agree differ (lhs, rhs, output, alpha, beta).' },
  /** An operation does not support this dtype. */
  UnsupportedDType: { kind: 'Unsupported', meaning: 'The operation does not support this dtype (contractions take f32, f64, c64 and c128; convert integers to f64).' },
  /** A tensor of an allocation domain that refuses foreign reads was read by another handle (R2, R77). */
  HostAccess: { kind: 'RuntimeState', meaning: 'An input lives in an allocation domain that refuses reads by handles of another (or no) allocation domain (`foreignReads: \'refused\'`); nothing ran.' },
  /** A disposed tensor was used. */
  TensorDisposed: { kind: 'RuntimeState', meaning: 'A tensor was used after dispose() (or after a tidy scope that made it settled); views made before the dispose stay usable.' },
  /** A reshape would need a copy; use the backend's materialising reshape. */
  ReshapeNeedsCopy: { kind: 'Validation', meaning: 'This reshape is not metadata-only for the view\'s layout; use backend.reshape, which materialises a fresh tensor.' },
  /** An output overlaps itself or an input. */
  OutputAliasing: { kind: 'Validation', meaning: 'An output view is not provably free of self-overlap (strides sorted ascending must each cover the previous axis), or overlaps an input\'s storage.' },

  // --- providers and bundles (R50–R66, R104–R107) --------------------------------------------
  /** A bundle lacks a mandatory slot. */
  BundleIncomplete: { kind: 'Validation', meaning: 'A provider bundle was built without a GEMM or a layout-transform provider.' },
  /** A bundle cannot run on a domain of this backend. */
  IncompatibleDomain: { kind: 'Validation', meaning: 'A provider bundle cannot run on a domain of this backend; the cause says why (thread count, placement or parallel mode).' },
  /** A provider's thread count cannot be bounded by the domain budget. */
  ThreadCountNotEnforceable: { kind: 'Unsupported', meaning: 'A provider\'s thread count is global or uncontrolled, so the domain\'s thread budget cannot be enforced.' },
  /** A caller-managed domain needs engineWorkers or callingThread placement. */
  CallerManagedPlacementNotEnforceable: { kind: 'Unsupported', meaning: 'A caller-managed domain accepts only providers that stay on its executor\'s workers or the calling thread.' },
  /** No populated slot accepts the selected parallel mode. */
  ParallelModeNotSupported: { kind: 'Unsupported', meaning: 'A provider does not accept the parallel mode the domain needs (sequential at budget 1, inner or sequential above).' },
  /** A provider declined an operation terminally. */
  ProviderUnsupported: { kind: 'Unsupported', meaning: 'The configured provider reported the operation unsupported and no retry applies; the detail names the slot and reason.' },
  /** A provider failed while running. */
  ProviderFailed: { kind: 'BackendFailure', meaning: 'A provider failed while it ran; the cause carries its error. The output may have been partly written only for this code.' },
  /** A grouped GEMM whose provider declined a job after other jobs of the group had been written (#35). */
  PartialGroupedGemm: {
    kind: 'Unsupported',
    meaning:
      'The GEMM provider declined a job of a grouped GEMM (detail.job) after other jobs of the group had been written: detail.writtenJobs lists exactly the jobs whose outputs were written (caller indexes); every other output is untouched.',
  },
  /** A provider package cannot load its native runtime. */
  ProviderUnavailable: { kind: 'Unsupported', meaning: 'A provider package cannot load its native runtime (library not found, addon not built); the message lists what was tried and possible solutions.' },
  /** Kept for compatibility; no longer raised (extension keys are identity-by-name). */
  DuplicateExtensionKey: { kind: 'Validation', meaning: 'No longer raised: defineExtensionKey returns the same key for the same name (identity-by-name), so two copies of a package agree.' },

  // --- numerical outcomes (linear algebra) ---------------------------------------------------
  /** Cholesky met a leading minor that is not positive definite. */
  NotPositiveDefinite: { kind: 'Validation', meaning: 'A matrix given to a Cholesky factorisation is not (numerically) positive definite; the detail names the batch index and the LAPACK info (the order of the failing leading minor).' },
  /** solve/inv met an exactly singular U. */
  SingularMatrix: { kind: 'Validation', meaning: 'A matrix given to solve, inv or a triangular solve is exactly singular (a zero pivot of U, or a zero diagonal); the detail names the batch index and the LAPACK info (the 1-based index of the zero pivot).' },
  /** An iterative factorisation did not converge. */
  NoConvergence: { kind: 'BackendFailure', meaning: 'An iterative factorisation (SVD, eigh, eig) did not converge; the detail names the batch index and the LAPACK info.' },

  // --- external domains (R37–R49) ------------------------------------------------------------
  /** A cooperative external domain declared no CPUs. */
  EmptyPlacementCpuSet: { kind: 'Validation', meaning: 'A cooperative external domain must declare a non-empty CPU set.' },
  /** An executor reports zero workers. */
  ZeroExecutorWorkers: { kind: 'Validation', meaning: 'An external domain\'s executor reports zero workers.' },
  /** The thread budget exceeds the executor's workers. */
  ThreadBudgetExceedsWorkerCount: { kind: 'Validation', meaning: 'An external domain\'s thread budget is larger than its executor\'s worker count.' },
  /** No external domains were given. */
  EmptyRegistry: { kind: 'Validation', meaning: 'An external backend needs at least one domain.' },
  /** Two external domains share an id. */
  DuplicateDomainId: { kind: 'Validation', meaning: 'Two external domains have the same id.' },
  /** A NUMA node or all-allowed placement is declared twice. */
  DuplicatePlacementIdentity: { kind: 'Validation', meaning: 'Two cooperative external domains declare the same NUMA node, or both declare all-allowed.' },
  /** An all-allowed declaration is not exactly the process affinity. */
  ExactAllAllowedMismatch: { kind: 'Validation', meaning: 'An all-allowed external domain must declare exactly the process affinity set (its exclusion identity).' },
  /** The default domain id is not registered. */
  MissingDefaultDomain: { kind: 'Validation', meaning: 'The default domain id of an external backend is not one of its domains.' },
  /** A placement routes to no registered external domain. */
  UnregisteredExternalPlacement: { kind: 'RuntimeState', meaning: 'No registered external domain declares the requested placement.' },
  /** forDomain named an id that is not registered (or a managed backend). */
  UnregisteredExternalDomain: { kind: 'RuntimeState', meaning: 'forDomain named an id that is not a registered external domain of this backend.' },
  /** The BLAS family cannot run on a caller-managed domain. */
  CallerManagedBlasUnsupported: { kind: 'Unsupported', meaning: 'The BLAS/LAPACK operation family cannot run on a caller-managed domain: its process-global or provider-owned workers cannot be confined to the supplied executor.' },
  /** An external executor refused or failed an entry. */
  ExecutorFailed: { kind: 'BackendFailure', meaning: 'An external domain\'s executor refused or failed an entry or a task; the cause is its original error. The permit was released.' },

  // --- internal -------------------------------------------------------------------------------
  /** An internal invariant failed (a bug in tenferro). */
  Internal: { kind: 'Internal', meaning: 'An internal invariant failed; this is a bug in tenferro.' },
} as const satisfies Record<string, CodeInfo>;

/** One of tenferro's stable error codes (`TenferroError.code`), e.g. `'ShapeMismatch'`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The kind of an error code: `Validation`, `Unsupported`, `RuntimeState`, `BackendFailure` or
 * `Internal`.
 *
 * @example
 * ```ts
 * import { kindOf } from '@tenferro/core';
 *
 * console.log(kindOf('BackendClosed'), kindOf('InvalidArgument')); // prints: RuntimeState Validation
 * ```
 */
export function kindOf(code: ErrorCode): ErrorKind {
  return ERROR_CODES[code].kind;
}

/**
 * Whether `value` is one of tenferro's error codes.
 *
 * @example
 * ```ts
 * import { isErrorCode } from '@tenferro/core';
 *
 * console.log(isErrorCode('ShapeMismatch'), isErrorCode('ENOENT')); // prints: true false
 * ```
 */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
