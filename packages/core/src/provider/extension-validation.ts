import type { CpuBackendKind } from '../contract/backend-kind.js';
import type { ValidationDomain } from '../contract/cpu-domain.js';
import type { ProviderParallelMode } from '../contract/parallel-mode.js';
import { TenferroError } from '../errors/tenferro-error.js';
import { type CpuProviderExecutionCapabilities, DEFAULT_EXECUTION_CAPABILITIES, acceptsMode, enforcedThreadLimit, snapshotCapabilities } from './execution-capabilities.js';
import type { CapabilityPolicy } from './provider-bundle.js';

/**
 * What core reads of an extension value that an operation family runs through `runExtension`
 * (every field optional; the family's own methods are its business):
 * - `name`: its diagnostic name (`tenferro:provider`, warnings); the key's name when absent;
 * - `executionCapabilities()`: its threads and modes (R52, R55–R59), validated against the domain
 *   before it runs — absent, it counts as `DEFAULT_EXECUTION_CAPABILITIES` (uncontrolled threads,
 *   Inner only), which strict bundles and caller-managed domains refuse (#35);
 * - `declaredSupport().family`: `'blas'` when its threads belong to a BLAS/LAPACK runtime — then it
 *   is refused on caller-managed domains (R47), like a GEMM provider of that family;
 * - `overwritesOutputs`: every kernel of it that executes writes every element of every output (R108);
 * - `declinesBeforeWriting`: every decline comes before any write (R64): no output fingerprint.
 */
export interface CpuExtensionProvider {
  /** Its diagnostic name (`tenferro:provider`, warnings); the key's name when absent. */
  readonly name?: string;
  /**
   * Its threads and the modes it accepts (R55–R59), asked once per (bundle, domain, key) and
   * validated against the domain before it runs; absent, `DEFAULT_EXECUTION_CAPABILITIES`.
   */
  readonly executionCapabilities?: () => CpuProviderExecutionCapabilities;
  /** `{ family: 'blas' }` when its threads belong to a BLAS/LAPACK runtime: refused on caller-managed domains (R47). */
  readonly declaredSupport?: () => { readonly family?: 'blas' };
  /** Every kernel of it that executes writes every element of every output (R108). */
  readonly overwritesOutputs?: boolean;
  /** Every decline comes before any write (R64): no output fingerprint around its calls. */
  readonly declinesBeforeWriting?: boolean;
}

/**
 * The extension-mode rule (#35; it replaces R73's linalg mode): an extension call runs Sequential
 * at budget 1, Inner on the `blas` kind (the runtime owns its threading, bounded per call), and
 * otherwise in the engine's preferred mode (R72: Inner iff the executor offers a pool). Decided
 * before admission, once per (bundle, domain, key).
 */
export function extensionMode(kind: CpuBackendKind, threadBudget: number, executorHasPool: boolean): ProviderParallelMode {
  if (threadBudget <= 1) return 'sequential';
  if (kind === 'blas') return 'inner';
  return executorHasPool ? 'inner' : 'sequential';
}

/**
 * Sample what an extension declares (its `executionCapabilities()`, once): absent, the
 * conservative default. A declaration that throws or holds an unknown value is `InvalidArgument`
 * naming the extension and the field, raised for `op`.
 */
export function extensionCapabilities(name: string, slot: string, declared: (() => unknown) | undefined, op: string): CpuProviderExecutionCapabilities {
  if (declared === undefined) return DEFAULT_EXECUTION_CAPABILITIES;
  try {
    return snapshotCapabilities({ name, executionCapabilities: declared }, slot);
  } catch (e) {
    if (!TenferroError.is(e)) throw e;
    throw new TenferroError(e.code, e.message, { op, cause: e.cause, detail: e.detail });
  }
}

/**
 * R47 and R55–R59 for an extension's capabilities on one domain, in the mode its calls run in
 * there (the extension-mode rule) — the checks a bundle's slots get (`validateBundleForDomain`),
 * under the same policy: strict bundles and every caller-managed domain; a
 * `providerDefaultCompatibility` bundle (blas) is trusted elsewhere (R54). A BLAS-family extension
 * is refused on caller-managed domains whatever its declaration (R47). A failure is
 * `IncompatibleDomain` whose cause is `CallerManagedBlasUnsupported`, `ThreadCountNotEnforceable`,
 * `CallerManagedPlacementNotEnforceable` or `ParallelModeNotSupported`; `detail.slot` is the key's name.
 */
export function validateExtensionForDomain(
  slot: string,
  name: string,
  caps: CpuProviderExecutionCapabilities,
  family: 'blas' | undefined,
  policy: CapabilityPolicy,
  domain: ValidationDomain,
  mode: ProviderParallelMode,
  op: string,
): void {
  const callerManaged = domain.admissionMode === 'callerManaged';
  const budget = domain.threadBudget;
  const fail = (cause: TenferroError): never => {
    throw new TenferroError('IncompatibleDomain', `the extension ${JSON.stringify(name)} (${slot}) cannot run on domain ${String(domain.id)}: ${cause.message}`, {
      op,
      cause,
      detail: { domainId: domain.id, slot, provider: name, reason: cause.code },
    });
  };
  if (callerManaged && family === 'blas') {
    fail(new TenferroError('CallerManagedBlasUnsupported', 'the BLAS family cannot be confined to a caller-managed executor', { op, detail: { slot } }));
  }
  if (policy !== 'strict' && !callerManaged) return;
  if (enforcedThreadLimit(caps, budget) === undefined) {
    fail(new TenferroError('ThreadCountNotEnforceable', `thread control ${caps.threadCount} cannot be bounded by the domain's thread budget ${budget}`, {
      op,
      detail: { slot, threadBudget: budget, control: caps.threadCount },
    }));
  }
  if (callerManaged && caps.placement !== 'engineWorkers' && caps.placement !== 'callingThread') {
    fail(new TenferroError('CallerManagedPlacementNotEnforceable', `placement control ${caps.placement} would leave the caller's executor (thread budget ${budget})`, {
      op,
      detail: { slot, threadBudget: budget, placement: caps.placement },
    }));
  }
  if (!acceptsMode(caps, mode)) {
    fail(new TenferroError('ParallelModeNotSupported', `the extension does not accept the ${mode} parallel mode its calls run in on this domain (the extension-mode rule, #35)`, {
      op,
      detail: { slot, mode },
    }));
  }
}
