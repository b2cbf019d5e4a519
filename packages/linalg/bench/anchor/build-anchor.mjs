#!/usr/bin/env node
// Compiles bench/anchor/lapack-anchor.cc with g++ against the system OpenBLAS (pkg-config
// `openblas`, else -lopenblas; its LAPACK symbols are the ones provider-blas dlsym()s) into
// bench/anchor/build/lapack-anchor, once. Prints the binary's path; exits 1 with the reason when no
// OpenBLAS or compiler is available.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, 'lapack-anchor.cc');
const out = join(here, 'build', 'lapack-anchor');

export function buildLapackAnchor() {
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) return out;
  let flags;
  try {
    flags = execFileSync('pkg-config', ['--cflags', '--libs', 'openblas'], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
  } catch {
    flags = ['-lopenblas'];
  }
  mkdirSync(dirname(out), { recursive: true });
  execFileSync('g++', ['-O2', '-std=c++17', '-o', out, source, ...flags, '-ldl'], { stdio: 'inherit' });
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(buildLapackAnchor());
  } catch (e) {
    console.error(`lapack-anchor: ${e.message}`);
    process.exit(1);
  }
}
