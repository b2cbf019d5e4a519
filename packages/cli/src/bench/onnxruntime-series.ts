import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchPlan, OnCase } from './bench-plan.js';
import { type BenchResult, type BenchSeries, gflopsOf } from './bench-report.js';
import { onnxMatmulModel } from './onnx-matmul-model.js';
import { median, operandValues, timeCalls } from './timing.js';

const LABEL = 'onnxruntime-node';

/** The part of onnxruntime-node's API the bench uses. */
interface Ort {
  readonly InferenceSession: {
    create(model: Uint8Array, options: Record<string, unknown>): Promise<{
      run(feeds: Record<string, unknown>): Promise<Record<string, unknown>>;
      release?(): Promise<void>;
    }>;
  };
  readonly Tensor: new (type: 'float32' | 'float64', data: Float32Array | Float64Array, dims: readonly number[]) => unknown;
  readonly env?: { readonly versions?: { readonly node?: string } };
}

const unavailable = (reason: string): BenchSeries => ({ id: 'onnxruntime', label: LABEL, available: false, description: null, reason, warnings: [], results: [] });

/** onnxruntime-node's entry, resolved from this CLI or from the current directory, or `undefined`. */
export function resolveOnnxruntime(cwd = process.cwd()): string | undefined {
  for (const base of [import.meta.url, pathToFileURL(join(cwd, 'noop.js')).href]) {
    try {
      return createRequire(base).resolve('onnxruntime-node');
    } catch {
      // not installed there
    }
  }
  return undefined;
}

/**
 * onnxruntime-node, when it is installed (it is no dependency of tenferro): a one-node MatMul
 * model per size and element type, `intraOpNumThreads` = the same thread count, timed through
 * `session.run` (input tensors made once).
 */
export async function benchOnnxruntime(plan: BenchPlan, threads: number, onCase: OnCase): Promise<BenchSeries> {
  const entry = resolveOnnxruntime();
  if (entry === undefined) return unavailable('onnxruntime-node is not installed (optional: install it beside tenferro to compare)');
  let ort: Ort;
  try {
    const mod = (await import(pathToFileURL(entry).href)) as Ort & { default?: Ort };
    ort = mod.InferenceSession === undefined && mod.default !== undefined ? mod.default : mod;
  } catch (e) {
    return unavailable(`onnxruntime-node cannot be imported: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const results: BenchResult[] = [];
  try {
    for (const dtype of plan.dtypes) {
      for (const n of plan.sizes) {
        onCase(`onnxruntime ${dtype} n=${n}`);
        const session = await ort.InferenceSession.create(onnxMatmulModel(n, dtype === 'f64' ? 11 : 1), {
          intraOpNumThreads: threads,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
        });
        const make = (seed: number) => {
          const values = operandValues(n * n, seed);
          return dtype === 'f64' ? new ort.Tensor('float64', values, [n, n]) : new ort.Tensor('float32', Float32Array.from(values), [n, n]);
        };
        const feeds = { A: make(1), B: make(2) };
        const seconds = await timeCalls(() => session.run(feeds), plan.budget);
        await session.release?.();
        const m = median(seconds);
        results.push({ dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: seconds.length });
      }
    }
  } catch (e) {
    return unavailable(`onnxruntime-node failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const version = ort.env?.versions?.node;
  return { id: 'onnxruntime', label: LABEL, available: true, description: `onnxruntime-node${version ? ` ${version}` : ''} MatMul, CPU execution provider`, reason: null, warnings: [], results };
}
