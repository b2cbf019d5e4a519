import type { ValidationDomain } from '../contract/cpu-domain.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { ProviderParallelMode } from '../contract/parallel-mode.js';
import type { ProviderSlot } from './cpu-providers.js';
import { acceptsMode, enforcedThreadLimit } from './execution-capabilities.js';
import type { CpuProviderBundle } from './provider-bundle.js';

/**
 * Check `bundle` against `domain` before anything runs (contract §6.6): thread-count
 * enforceability (R55, R56), placement control for caller-managed domains (R57, no bypass), and
 * mode acceptance (R58, R59). A failure is `IncompatibleDomain` whose cause is
 * `ThreadCountNotEnforceable`, `CallerManagedPlacementNotEnforceable` or
 * `ParallelModeNotSupported`. Extensions are never validated (R53).
 */
export function validateBundleForDomain(bundle: CpuProviderBundle, domain: ValidationDomain, op: string): void {
  const callerManaged = domain.admissionMode === 'callerManaged';
  const strict = bundle.capabilityPolicy === 'strict' || callerManaged;
  if (!strict) return;
  const budget = domain.threadBudget;
  const fail = (slot: ProviderSlot, cause: TenferroError): never => {
    throw new TenferroError('IncompatibleDomain', `the ${slot} provider cannot run on domain ${String(domain.id)}: ${cause.message}`, {
      op,
      cause,
      detail: { domainId: domain.id, slot, reason: cause.code },
    });
  };
  const slots = bundle.populatedSlots();
  for (const [slot, caps] of slots) {
    if (enforcedThreadLimit(caps, budget) === undefined) fail(slot, threadCountNotEnforceable(slot, budget, caps.threadCount, op));
    if (callerManaged && caps.placement !== 'engineWorkers' && caps.placement !== 'callingThread') {
      fail(
        slot,
        new TenferroError('CallerManagedPlacementNotEnforceable', `placement control ${caps.placement} would leave the caller's executor (thread budget ${budget})`, {
          op,
          detail: { slot, threadBudget: budget, placement: caps.placement },
        }),
      );
    }
  }
  const mode: ProviderParallelMode = budget === 1 ? 'sequential' : slots.every(([, c]) => acceptsMode(c, 'inner')) ? 'inner' : 'sequential';
  for (const [slot, caps] of slots) {
    if (!acceptsMode(caps, mode)) fail(slot, parallelModeNotSupported(slot, mode, op));
  }
  if (bundle.groupedScheduling === 'engineOuter' && budget > 1 && !acceptsMode(bundle.capabilities('gemm')!, 'outer')) {
    fail('gemm', parallelModeNotSupported('gemm', 'outer', op));
  }
}

/**
 * The mode one provider call runs in (R61, R62), decided before the provider is called or any
 * output touched. The `providerDefaultCompatibility` policy (the built-in BLAS bundle) is
 * Sequential at budget 1 and Inner above, unchecked (R54), except on caller-managed domains.
 */
export function dispatchMode(bundle: CpuProviderBundle, slot: ProviderSlot, domain: ValidationDomain, op: string): ProviderParallelMode {
  const caps = bundle.capabilities(slot);
  const budget = domain.threadBudget;
  if (caps === undefined) throw new TenferroError('Internal', `the bundle has no ${slot} provider`, { op });
  if (bundle.capabilityPolicy === 'providerDefaultCompatibility' && domain.admissionMode !== 'callerManaged') {
    return budget === 1 ? 'sequential' : 'inner';
  }
  if (caps.threadCount === 'globalOrUncontrolled') throw threadCountNotEnforceable(slot, budget, caps.threadCount, op);
  if (budget === 1) {
    if (acceptsMode(caps, 'sequential')) return 'sequential';
    throw parallelModeNotSupported(slot, 'sequential', op);
  }
  if (acceptsMode(caps, 'inner')) return 'inner';
  if (acceptsMode(caps, 'sequential')) return 'sequential';
  throw parallelModeNotSupported(slot, 'inner', op);
}

function threadCountNotEnforceable(slot: ProviderSlot, budget: number, control: string, op: string): TenferroError {
  return new TenferroError('ThreadCountNotEnforceable', `thread control ${control} cannot be bounded by the domain's thread budget ${budget}`, {
    op,
    detail: { slot, threadBudget: budget, control },
  });
}

function parallelModeNotSupported(slot: ProviderSlot, mode: string, op: string): TenferroError {
  return new TenferroError('ParallelModeNotSupported', `the ${slot} provider does not accept the ${mode} parallel mode`, { op, detail: { slot, mode } });
}
