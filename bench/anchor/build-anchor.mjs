#!/usr/bin/env node
// Compiles bench/anchor/cblas-anchor.c against the system BLAS (pkg-config `blas`, the Debian
// alternative, else `openblas`) into bench/anchor/build/cblas-anchor, once. Prints the binary's
// path; exits 1 with the reason when no BLAS or compiler is available. `buildCacheProbe()` does the
// same for cache-retention.c (no library).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, 'cblas-anchor.c');
const out = join(here, 'build', 'cblas-anchor');

const probeSource = join(here, 'cache-retention.c');
const probeOut = join(here, 'build', 'cache-retention');

/** The cache-retention probe's binary, compiled once (throws when no compiler is available). */
export function buildCacheProbe() {
  if (existsSync(probeOut) && statSync(probeOut).mtimeMs >= statSync(probeSource).mtimeMs) return probeOut;
  mkdirSync(dirname(probeOut), { recursive: true });
  execFileSync('cc', ['-O2', '-o', probeOut, probeSource], { stdio: 'inherit' });
  return probeOut;
}

export function buildAnchor() {
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) return out;
  const flags = (pkg) => {
    try {
      return execFileSync('pkg-config', ['--cflags', '--libs', pkg], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
    } catch {
      return undefined;
    }
  };
  const blas = flags('openblas') ?? flags('blas');
  if (blas === undefined) throw new Error('no BLAS found by pkg-config (apt-get install -y libopenblas-dev pkg-config)');
  mkdirSync(dirname(out), { recursive: true });
  execFileSync('cc', ['-O2', '-o', out, source, ...blas, '-ldl'], { stdio: 'inherit' });
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(buildAnchor());
  } catch (e) {
    console.error(`cblas-anchor: ${e.message}`);
    process.exit(1);
  }
}
