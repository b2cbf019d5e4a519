import { loadOs } from '@tenferro/os';
import type { Arbiter } from './arbiter.js';
import { machineArbiterNameToJoin, openJoined } from './machine-arbiter.js';
import { ProcessArbiter } from './process-arbiter.js';
import { ResourceArbiter } from './resource-arbiter.js';

const GLOBAL_KEY = Symbol.for('tenferro.core.v0.arbiter');

/**
 * The arbiter every backend uses (contract §3.E), created on first use and kept under
 * `Symbol.for('tenferro.core.v0.arbiter')` so every copy of @tenferro/core in the isolate shares
 * it: a `ProcessArbiter` — one state for the whole process, every worker_thread isolate — when
 * the `@tenferro/os` binding loads, else a `ResourceArbiter` of this isolate (`kind` says which).
 * Throws `ArbiterVersionConflict` when another copy of `@tenferro/os` with a different arbiter
 * ABI owns the process's arbiter (never two independent arbiters silently).
 *
 * In a process that joined a machine arbiter (#41) — `TENFERRO_MACHINE_ARBITER=<name>` in its
 * environment, or `joinMachineArbiter(name)` in any of its isolates — it is that `MachineArbiter`
 * instead, and joining errors (`MachineArbiterUnavailable`, `ArbiterVersionConflict`) are thrown
 * here, at the first backend: never a silent unjoined run.
 *
 * @example
 * ```ts
 * import { CpuSet, processArbiter } from '@tenferro/core';
 *
 * const arbiter = processArbiter();
 * console.log(arbiter === processArbiter(), arbiter.kind); // prints: true process
 * const permit = await arbiter.acquire({ cpus: CpuSet.of([0]) });
 * permit.release();
 * ```
 */
export function processArbiter(): Arbiter {
  const g = globalThis as Record<symbol, unknown>;
  let arbiter = g[GLOBAL_KEY] as Arbiter | undefined;
  if (arbiter === undefined) {
    const machine = machineArbiterNameToJoin();
    if (machine !== undefined) arbiter = openJoined(machine, false, 'processArbiter');
    else arbiter = loadOs().available ? ProcessArbiter.open() : new ResourceArbiter();
    Object.defineProperty(g, GLOBAL_KEY, { value: arbiter, enumerable: false, configurable: false, writable: false });
  }
  return arbiter;
}
