/**
 * The x86 ISA levels that matter for BLAS kernels, of this CPU (from /proc/cpuinfo) and of
 * OpenBLAS core types, so that "OpenBLAS chose a core below this CPU" is computed, not assumed.
 */
import { readFileSync } from 'node:fs';

/** The widest x86 vector ISA level of this CPU, as far as BLAS core selection cares. */
export type IsaLevel = 'sse' | 'avx' | 'avx2' | 'avx512';

const ORDER: readonly IsaLevel[] = ['sse', 'avx', 'avx2', 'avx512'];

export function isaRank(level: IsaLevel): number {
  return ORDER.indexOf(level);
}

/** The CPU's level from its flags (`avx512f`+`dq`+`bw`+`vl` → avx512; `avx2`+`fma` → avx2; `avx` → avx). */
export function isaOfFlags(flags: ReadonlySet<string>): IsaLevel {
  if (['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'].every((f) => flags.has(f))) return 'avx512';
  if (flags.has('avx2') && flags.has('fma')) return 'avx2';
  if (flags.has('avx')) return 'avx';
  return 'sse';
}

export interface CpuIsa {
  readonly level: IsaLevel;
  readonly vendor: string;
  readonly model: string;
}

let cachedCpu: CpuIsa | undefined | null = null;

/** This CPU's ISA level, or undefined when /proc/cpuinfo has no x86 flags. */
export function cpuIsa(): CpuIsa | undefined {
  if (cachedCpu !== null) return cachedCpu;
  cachedCpu = undefined;
  try {
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
    const flags = field('flags');
    if (flags !== '') cachedCpu = Object.freeze({ level: isaOfFlags(new Set(flags.split(/\s+/))), vendor: field('vendor_id'), model: field('model name') });
  } catch {
    // not Linux, or no /proc
  }
  return cachedCpu;
}

/** The ISA level OpenBLAS's kernels for `core` need (lower-case lookup); undefined when unknown. */
export function isaOfOpenblasCore(core: string): IsaLevel | undefined {
  const c = core.toLowerCase();
  if (['skylakex', 'cooperlake', 'sapphirerapids'].includes(c)) return 'avx512';
  if (['haswell', 'zen', 'excavator', 'skylake'].includes(c)) return 'avx2';
  if (['sandybridge', 'bulldozer', 'piledriver', 'steamroller'].includes(c)) return 'avx';
  if (['prescott', 'core2', 'penryn', 'dunnington', 'nehalem', 'atom', 'barcelona', 'opteron', 'opteron_sse3', 'nano', 'bobcat', 'katmai', 'coppermine', 'northwood', 'banias', 'athlon'].includes(c)) return 'sse';
  return undefined;
}

/** The OpenBLAS core to recommend for a CPU level (what `OPENBLAS_CORETYPE` should say). */
export function recommendedOpenblasCore(level: IsaLevel, vendor: string): string | undefined {
  switch (level) {
    case 'avx512':
      return 'SkylakeX';
    case 'avx2':
      return /amd/i.test(vendor) ? 'Zen' : 'Haswell';
    case 'avx':
      return 'Sandybridge';
    default:
      return undefined;
  }
}
