// The invariant monitor of the reliability suite, fed by `tenferro:execution` events in the shape
// `forwardDiagnostics` gives them (from this isolate through a function, from worker isolates
// through a MessagePort).
import { CpuSet, type ForwardedDiagnosticsEvent } from '../../src/index.js';

/**
 * The invariant monitor: executions (keyed by isolate and owner) between their `start` and `end`
 * on `tenferro:execution`; an execution that starts while a conflicting one of another owner is
 * active (overlapping CPUs, or either provider-exclusive) is a violation.
 */
export function executionMonitor() {
  const active = new Map<string, { cpus: CpuSet | undefined; exclusive: boolean }>();
  const violations: string[] = [];
  let peak = 0;
  let starts = 0;
  const conflict = (a: { cpus: CpuSet | undefined; exclusive: boolean }, b: { cpus: CpuSet | undefined; exclusive: boolean }) =>
    a.exclusive || b.exclusive || (a.cpus !== undefined && b.cpus !== undefined && a.cpus.overlaps(b.cpus));
  const onEvent = (e: ForwardedDiagnosticsEvent) => {
    if (e.channel !== 'tenferro:execution') return;
    const p = e.payload as { owner: number; cpus: string | null; exclusive: boolean };
    const key = `${e.threadId}/${p.owner}`;
    if (e.phase === 'end') {
      active.delete(key);
      return;
    }
    if (e.phase !== 'start') return;
    starts++;
    // Caller-managed executions hold no permit (cpus null, not exclusive): nothing to check.
    const mine = { cpus: p.cpus === null ? undefined : CpuSet.parse(p.cpus), exclusive: p.exclusive };
    for (const [other, request] of active) {
      if (other !== key && conflict(request, mine)) violations.push(`${key} started at ${e.time} while ${other} was active`);
    }
    active.set(key, mine);
    peak = Math.max(peak, active.size);
  };
  return { onEvent, violations, peak: () => peak, starts: () => starts, active };
}

