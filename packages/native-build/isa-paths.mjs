// Which instruction-set paths a native build compiles (provider-faer, provider-tprims, linalg).
//
// By default every path: a binary runs on any x86-64 and picks, at run time, the best path the
// CPU supports. TENFERRO_NATIVE_ISA=host compiles only the paths this machine can run (the
// AVX-512 translation units are left out on a CPU without AVX-512 F/DQ/BW/VL): a faster source
// build for development and CI, where a path the CPU cannot run could not be tested anyway. The
// addon then reports the path as not built (status() details `isaNotBuilt`), and warns once if
// it is loaded on a CPU that could have run it. The sanitizer builds always use `host`.
import { readFileSync } from 'node:fs';

const AVX512 = ['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'];

/** Whether this CPU runs the AVX-512 paths (the flags the addons' dispatchers check). */
export function hostHasAvx512() {
  if (process.arch !== 'x64') return false;
  let flags = '';
  try {
    flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '';
  } catch {
    return false;
  }
  const have = new Set(flags.trim().split(/\s+/));
  return AVX512.every((f) => have.has(f));
}

/**
 * The gyp variables (`node-gyp rebuild -- <these>`) for `mode` ('all' | 'host'; default from
 * TENFERRO_NATIVE_ISA, else 'all'). Throws on an unknown mode.
 */
export function isaGypArgs(mode = process.env.TENFERRO_NATIVE_ISA ?? 'all') {
  if (mode !== 'all' && mode !== 'host') throw new Error(`TENFERRO_NATIVE_ISA=${mode}: expected 'all' (every instruction-set path, the default) or 'host' (only the paths this CPU runs)`);
  const avx512 = mode === 'all' || hostHasAvx512();
  return [`-Dtenferro_avx512=${avx512 ? 1 : 0}`];
}
