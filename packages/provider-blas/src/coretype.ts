/**
 * The OpenBLAS core-type decision, made before the runtime is loaded in this process: OpenBLAS
 * reads `OPENBLAS_CORETYPE` once, when it loads, and some versions pick a core far below the CPU
 * (0.3.21 on an Intel Xeon family 6 model 207: Prescott, SSE3 kernels, 4–6× slower). What it
 * would pick by itself comes from the child-process probe (src/identify.ts); the CPU's ISA from
 * /proc/cpuinfo (src/cpu-isa.ts). Pure: every input is a parameter.
 */
import { type CpuIsa, isaOfOpenblasCore, isaRank, recommendedOpenblasCore } from './cpu-isa.js';

/**
 * - `set`: tenferro sets `value` (OpenBLAS alone would pick `predicted`, below the CPU);
 * - `option`: `createBlasProvider({ openblasCoretype })` asked for `value`;
 * - `userEnvironment`: `OPENBLAS_CORETYPE` was already set by the user: left alone;
 * - `kept`: `openblasCoretype: 'keep'`: OpenBLAS chooses, whatever it picks;
 * - `notNeeded`: what OpenBLAS picks matches the CPU;
 * - `notOpenblas`: the runtime is not OpenBLAS;
 * - `unknown`: the CPU's ISA or the core OpenBLAS picks is unknown: left alone.
 */
export type CoretypeAction = 'set' | 'option' | 'userEnvironment' | 'kept' | 'notNeeded' | 'notOpenblas' | 'unknown';

/** What the provider does about `OPENBLAS_CORETYPE` before the runtime loads, and why (`tenferro info` shows it). */
export interface CoretypePlan {
  readonly action: CoretypeAction;
  /** What to put into `OPENBLAS_CORETYPE` before loading (set, option). */
  readonly value: string | undefined;
  /** Replace a value already in the environment (only for an explicit option). */
  readonly overwrite: boolean;
  /** The core OpenBLAS picks by itself here, when known (from the probe). */
  readonly predicted: string | undefined;
  /** The user's `OPENBLAS_CORETYPE`, when set. */
  readonly userValue: string | undefined;
}

export interface CoretypeInputs {
  /** `createBlasProvider({ openblasCoretype })`: a core name, `'keep'`, or undefined. */
  readonly option: string | undefined;
  /** `OPENBLAS_CORETYPE` in the environment ('' counts as unset). */
  readonly envValue: string | undefined;
  readonly vendor: string;
  /** `openblas_get_corename()` of the probe (with the environment as it is). */
  readonly predicted: string | undefined;
  readonly cpu: CpuIsa | undefined;
}

export function decideCoretype(i: CoretypeInputs): CoretypePlan {
  const userValue = i.envValue !== undefined && i.envValue !== '' ? i.envValue : undefined;
  const base = { predicted: i.predicted, userValue, overwrite: false, value: undefined };
  if (i.option !== undefined && i.option !== 'keep') return Object.freeze({ ...base, action: 'option', value: i.option, overwrite: true });
  if (userValue !== undefined) return Object.freeze({ ...base, action: 'userEnvironment' });
  if (i.option === 'keep') return Object.freeze({ ...base, action: 'kept' });
  if (i.vendor !== 'openblas') return Object.freeze({ ...base, action: 'notOpenblas' });
  const picked = i.predicted === undefined ? undefined : isaOfOpenblasCore(i.predicted);
  if (i.cpu === undefined || picked === undefined) return Object.freeze({ ...base, action: 'unknown' });
  if (isaRank(picked) >= isaRank(i.cpu.level)) return Object.freeze({ ...base, action: 'notNeeded' });
  const fix = recommendedOpenblasCore(i.cpu.level, i.cpu.vendor);
  if (fix === undefined) return Object.freeze({ ...base, action: 'unknown' });
  return Object.freeze({ ...base, action: 'set', value: fix });
}

/** One line for people: what was decided and why. */
export function describeCoretype(p: CoretypePlan): string {
  switch (p.action) {
    case 'set':
      return `OPENBLAS_CORETYPE=${p.value} set by tenferro (OpenBLAS alone picks ${p.predicted}, below this CPU; opt out with createBlasProvider({ openblasCoretype: 'keep' }))`;
    case 'option':
      return `OPENBLAS_CORETYPE=${p.value} from createBlasProvider({ openblasCoretype })`;
    case 'userEnvironment':
      return `OPENBLAS_CORETYPE=${p.userValue} from the environment (left alone)`;
    case 'kept':
      return `openblasCoretype 'keep': OpenBLAS chooses (${p.predicted ?? 'unknown'})`;
    case 'notNeeded':
      return `OpenBLAS picks ${p.predicted}, which matches this CPU`;
    case 'notOpenblas':
      return 'not OpenBLAS: no core type to set';
    default:
      return `left alone (the CPU's ISA or OpenBLAS's core ${p.predicted ?? '?'} is unknown)`;
  }
}
