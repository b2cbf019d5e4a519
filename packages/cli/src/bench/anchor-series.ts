import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { LoadedPackage } from '../installed-providers.js';
import { type BenchSeries, gflopsOf } from './bench-report.js';
import { notMeasured, type SeriesRunner } from './series-runner.js';
import { median } from './timing.js';

const run = promisify(execFile);

const LABEL = 'C (cblas)';

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
 * Each case runs it once to size the repetitions, then once for the timed calls (after its own
 * warm-up call).
 */
export async function openAnchor(threads: number, packages: readonly LoadedPackage[]): Promise<SeriesRunner | BenchSeries> {
  const builder = findAnchorBuilder();
  if (builder === undefined) return notMeasured('anchor', LABEL, 'the C anchor (bench/anchor/ of the tenferro repository) is not part of this install');
  const built = await buildAnchor(builder);
  if ('reason' in built) return notMeasured('anchor', LABEL, built.reason);
  const env = { ...process.env };
  const blas = packages.find((p) => p.kind === 'blas')?.status;
  const core = blas?.available ? blas.details.coreType : undefined;
  if (env.OPENBLAS_CORETYPE === undefined && typeof core === 'string' && core !== '') env.OPENBLAS_CORETYPE = core;
  let last: AnchorLine | undefined;
  return {
    id: 'anchor',
    label: LABEL,
    description() {
      const library = last?.config ? last.config.split(' ').slice(0, 2).join(' ') : 'the system BLAS';
      return `C calling cblas_dgemm/cblas_sgemm on ${library}${last?.core ? `, core ${last.core}` : ''}`;
    },
    warnings: [],
    failSoft: true,
    async measure(dtype, n, budget) {
      const once = async (reps: number): Promise<AnchorLine> => {
        const { stdout } = await run(built.path, [dtype === 'f64' ? 'd' : 's', String(n), String(threads), String(reps)], { env, encoding: 'utf8' });
        return JSON.parse(stdout) as AnchorLine;
      };
      const probe = await once(1);
      const each = Math.max(probe.seconds[0] ?? 0, 1e-7);
      const reps = Math.min(1000, budget.maxReps, Math.max(budget.minReps, Math.floor(budget.measureMs / 1e3 / each)));
      last = await once(reps);
      const m = median(last.seconds);
      return { dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: last.seconds.length };
    },
    close: async () => {},
  };
}
