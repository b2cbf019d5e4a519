// Which instruction-set paths a native build compiles (provider-faer, provider-tprims, linalg).
//
// TENFERRO_NATIVE_ISA:
//   all   every path (the default of a source build, e.g. `npm install` of a package without a
//         prebuilt binary for this platform, and of prebuilds and releases): the binary runs on
//         any x86-64 and picks, at run time, the best path the CPU supports. An image built on one
//         CPU often runs on another, so this stays the default.
//   host  the paths this machine can run (the AVX-512 translation units are left out on a CPU
//         without AVX-512 F/DQ/BW/VL): what `npm test` and `.ci/run` build — every path that can
//         be tested here is built, so the AVX2 kernels stay tested on AVX-512 machines.
//   best  the best path this CPU runs plus the portable baseline (AVX-512 and baseline on an
//         AVX-512 CPU, AVX2 and baseline on an AVX2 CPU, the baseline alone otherwise): the
//         fastest build for a machine that only runs the result — `npm run demo`'s set-up (#39).
//         Where that best path is AVX2 or AVX-512, the baseline copy of a kernel that also has a
//         vector copy is dead code on this machine and may be left out too (`portable: false`, gyp
//         `tenferro_portable=0`: linalg's f32/f64 kernels, #39); kernels with no vector copy
//         (linalg's complex ones; provider-faer's and provider-tprims's baselines) are still built.
// A path left out is reported by the addon (status() details `isaNotBuilt`), with a warning once
// if this CPU could have run a faster one (or, for a left-out baseline, runs none of the built
// vector paths: those dtypes are then refused cleanly). The sanitizer builds always use `host`.
import { readFileSync } from 'node:fs';

const AVX2 = ['avx2', 'fma'];
const AVX512 = ['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'];
export const ISA_MODES = ['all', 'host', 'best'];

function cpuFlags() {
  if (process.arch !== 'x64') return new Set();
  try {
    const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '';
    return new Set(flags.trim().split(/\s+/));
  } catch {
    return new Set();
  }
}

/** Whether this CPU runs the AVX2+FMA paths. */
export function hostHasAvx2(flags = cpuFlags()) {
  return AVX2.every((f) => flags.has(f));
}

/** Whether this CPU runs the AVX-512 paths (the flags the addons' dispatchers check). */
export function hostHasAvx512(flags = cpuFlags()) {
  return hostHasAvx2(flags) && AVX512.every((f) => flags.has(f));
}

/**
 * The optional x86-64 paths `mode` builds, beside the portable baseline: { avx2, avx512, portable }
 * booleans. `portable` false: the baseline copy of kernels that also have a built vector copy is
 * left out (only `best` on a CPU with AVX2 or AVX-512); the baseline of every other kernel is always
 * built. `cpu` ({ avx2, avx512 }, default this machine's) is for tests.
 */
export function isaPaths(mode = buildIsaMode(), cpu) {
  if (!ISA_MODES.includes(mode)) {
    throw new Error(
      `TENFERRO_NATIVE_ISA=${mode}: expected 'all' (every instruction-set path, the default), 'host' (every path this CPU runs) or 'best' (this CPU's best path and the portable baseline)`,
    );
  }
  if (mode === 'all') return { avx2: true, avx512: true, portable: true };
  const flags = cpu === undefined ? cpuFlags() : undefined;
  const avx2 = cpu?.avx2 ?? hostHasAvx2(flags);
  const avx512 = cpu?.avx512 ?? hostHasAvx512(flags);
  // `host` keeps AVX2 even where the CPU lacks it: the paths' own dispatchers never pick it there,
  // and building it keeps its compile errors visible on every machine (as before #39).
  if (mode === 'host') return { avx2: true, avx512, portable: true };
  // `best`: a CPU that runs a vector path never runs the baseline copy of a kernel that has one.
  return { avx2: avx2 && !avx512, avx512, portable: !avx2 && !avx512 };
}

/**
 * The mode of a build: TENFERRO_NATIVE_ISA, else `all` (a registry install without a prebuilt
 * binary builds every path unless the user says otherwise).
 */
export function buildIsaMode(env = process.env) {
  return env.TENFERRO_NATIVE_ISA ?? 'all';
}

/**
 * The mode scripts/setup.mjs builds with: `--isa=<mode>`, else TENFERRO_NATIVE_ISA, else `best`
 * under `npm run demo` (npm_lifecycle_event) and `host` otherwise (`npm test`, `.ci/run`, a plain
 * `node scripts/setup.mjs`).
 */
export function setupIsaMode(env = process.env, argv = process.argv) {
  const arg = argv.find((a) => a.startsWith('--isa='))?.slice('--isa='.length);
  return arg ?? env.TENFERRO_NATIVE_ISA ?? (env.npm_lifecycle_event === 'demo' ? 'best' : 'host');
}

/** The paths `mode` builds, for messages: e.g. 'portable + avx2', 'portable (only where no vector path) + avx2'. */
export function describeIsaPaths(mode, cpu) {
  const p = isaPaths(mode, cpu);
  return [p.portable ? 'portable' : 'portable (only where no vector path)', ...(p.avx2 ? ['avx2'] : []), ...(p.avx512 ? ['avx512'] : [])].join(' + ');
}

/**
 * The gyp variables (`node-gyp rebuild -- <these>`) for `mode` ('all' | 'host' | 'best'; default
 * from TENFERRO_NATIVE_ISA, else 'all'). Throws on an unknown mode. An addon whose binding.gyp does
 * not use one of them ignores it (tenferro_portable: linalg only).
 */
export function isaGypArgs(mode = buildIsaMode(), cpu) {
  const p = isaPaths(mode, cpu);
  return [`-Dtenferro_avx2=${p.avx2 ? 1 : 0}`, `-Dtenferro_avx512=${p.avx512 ? 1 : 0}`, `-Dtenferro_portable=${p.portable ? 1 : 0}`];
}
