// What the linalg benches share before they load anything: `--name value` arguments, and the
// OpenBLAS core type both sides of a comparison run with (`--coretype X`, else SkylakeX on an
// AVX-512 CPU — OpenBLAS 0.3.21 picks slower kernels on these VMs —, else the environment's).
import { readFileSync } from 'node:fs';

/** The value after `--name` on the command line, else `dflt`. */
export const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};

/** Put the core type into the environment (before OpenBLAS loads, here or in the anchor child). */
export function chooseCoretype() {
  if (arg('coretype')) process.env.OPENBLAS_CORETYPE = arg('coretype');
  else if (/\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'))) process.env.OPENBLAS_CORETYPE = 'SkylakeX';
}
