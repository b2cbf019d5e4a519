import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { LoadedPackage } from '../installed-providers.js';
import type { BenchPlan, OnCase } from './bench-plan.js';
import { type BenchResult, type BenchSeries, gflopsOf } from './bench-report.js';

const run = promisify(execFile);

const LABEL = 'C (cblas)';

const unavailable = (reason: string): BenchSeries => ({ id: 'anchor', label: LABEL, available: false, description: null, reason, warnings: [], results: [] });

/**
 * The anchor's builder, `bench/anchor/build-anchor.mjs` of the tenferro repository, looked for in
 * the folders above this CLI and above the current directory. It is not part of a published
 * package.
 */
export function findAnchorBuilder(cwd = process.cwd()): string | undefined {
  for (const start of [dirname(fileURLToPath(import.meta.url)), cwd]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const candidate = join(dir, 'bench', 'anchor', 'build-anchor.mjs');
      if (existsSync(candidate) && existsSync(join(dir, 'bench', 'anchor', 'cblas-anchor.c'))) return candidate;
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** Build (once) the C program that calls cblas_?gemm directly; its path, or why it cannot be built. */
async function buildAnchor(builder: string): Promise<{ path: string } | { reason: string }> {
  try {
    const mod = (await import(pathToFileURL(builder).href)) as { buildAnchor?: () => string };
    if (typeof mod.buildAnchor !== 'function') return { reason: `${builder} exports no buildAnchor()` };
    return { path: mod.buildAnchor() };
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { path?: string };
    if (err.code === 'ENOENT' && err.path === 'cc') return { reason: 'no C compiler (cc) on PATH, so the C anchor was not built' };
    const msg = err instanceof Error ? err.message.split('\n')[0]! : String(e);
    if (/^Command failed: cc /.test(msg)) return { reason: 'cc could not compile the C anchor against the BLAS headers (cblas.h; apt-get install libopenblas-dev)' };
    return { reason: `the C anchor was not built: ${msg}` };
  }
}

interface AnchorLine {
  readonly seconds: readonly number[];
  readonly config: string;
  readonly core: string;
}

/**
 * The C anchor: a C program calling `cblas_dgemm`/`cblas_sgemm` on the system BLAS directly, with
 * the same thread count — what the blas kind is measured against. It runs with the OpenBLAS core
 * type the blas provider reports (when the environment sets none), so both run the same kernels.
 */
export async function benchAnchor(plan: BenchPlan, threads: number, packages: readonly LoadedPackage[], onCase: OnCase): Promise<BenchSeries> {
  const builder = findAnchorBuilder();
  if (builder === undefined) return unavailable('the C anchor (bench/anchor/ of the tenferro repository) is not part of this install');
  const built = await buildAnchor(builder);
  if ('reason' in built) return unavailable(built.reason);
  const env = { ...process.env };
  const blas = packages.find((p) => p.kind === 'blas')?.status;
  const core = blas?.available ? blas.details.coreType : undefined;
  if (env.OPENBLAS_CORETYPE === undefined && typeof core === 'string' && core !== '') env.OPENBLAS_CORETYPE = core;
  const results: BenchResult[] = [];
  let last: AnchorLine | undefined;
  try {
    for (const dtype of plan.dtypes) {
      for (const n of plan.sizes) {
        onCase(`C anchor ${dtype} n=${n}`);
        const once = async (reps: number): Promise<AnchorLine> => {
          const { stdout } = await run(built.path, [dtype === 'f64' ? 'd' : 's', String(n), String(threads), String(reps)], { env, encoding: 'utf8' });
          return JSON.parse(stdout) as AnchorLine;
        };
        const probe = await once(1);
        const each = Math.max(probe.seconds[0] ?? 0, 1e-7);
        const reps = Math.min(1000, plan.budget.maxReps, Math.max(plan.budget.minReps, Math.floor(plan.budget.measureMs / 1e3 / each)));
        last = await once(reps);
        const sorted = [...last.seconds].sort((x, y) => x - y);
        const m = sorted[Math.floor(sorted.length / 2)]!;
        results.push({ dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: sorted.length });
      }
    }
  } catch (e) {
    return unavailable(`the C anchor failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const library = last?.config ? last.config.split(' ').slice(0, 2).join(' ') : 'the system BLAS';
  const description = `C calling cblas_dgemm/cblas_sgemm on ${library}${last?.core ? `, core ${last.core}` : ''}`;
  return { id: 'anchor', label: LABEL, available: true, description, reason: null, warnings: [], results };
}
