import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
export const DIST_INDEX = join(PACKAGE_DIR, 'dist', 'index.js');
export const CORE_DIST_INDEX = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url));

/** Which runtime the test run expects (set by scripts/run-tests.mjs / test-*.sh), if any. */
export const EXPECTED_RUNTIME = process.env.TENFERRO_BLAS_EXPECT as 'openblas' | 'reference' | 'mkl' | 'blis' | undefined;

/**
 * Run an ES module script in a fresh Node process (the BLAS library is loaded once per process,
 * so core-type and availability tests need their own). Returns the JSON it prints last.
 */
export function runChild(
  source: string,
  env: Record<string, string | undefined> = {},
  timeoutMs?: number,
): { status: number | null; signal: NodeJS.Signals | null; json: unknown; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-blas-'));
  const file = join(dir, 'child.mjs');
  writeFileSync(file, source);
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v;
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', env: childEnv, cwd: PACKAGE_DIR, ...(timeoutMs === undefined ? {} : { timeout: timeoutMs, killSignal: 'SIGKILL' }) });
  rmSync(dir, { recursive: true, force: true }); // #39: no temporary folder left
  const lines = (r.stdout ?? '').trim().split('\n');
  let json: unknown;
  try {
    json = JSON.parse(lines[lines.length - 1] ?? 'null');
  } catch {
    json = undefined;
  }
  return { status: r.status, signal: r.signal, json, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** This CPU has the AVX-512 subset OpenBLAS's SkylakeX kernels need. */
export function cpuHasAvx512(): boolean {
  try {
    const flags = execFileSync('grep', ['-m1', '^flags', '/proc/cpuinfo'], { encoding: 'utf8' });
    return ['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'].every((f) => new RegExp(`\\b${f}\\b`).test(flags));
  } catch {
    return false;
  }
}
