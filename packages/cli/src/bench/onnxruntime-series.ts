import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BenchSeries, gflopsOf } from './bench-report.js';
import { notMeasured, type SeriesRunner } from './series-runner.js';
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
export async function openOnnxruntime(threads: number): Promise<SeriesRunner | BenchSeries> {
  const entry = resolveOnnxruntime();
  if (entry === undefined) return notMeasured('onnxruntime', LABEL, 'onnxruntime-node is not installed (optional: install it beside tenferro to compare)');
  let ort: Ort;
  try {
    const mod = (await import(pathToFileURL(entry).href)) as Ort & { default?: Ort };
    ort = mod.InferenceSession === undefined && mod.default !== undefined ? mod.default : mod;
  } catch (e) {
    return notMeasured('onnxruntime', LABEL, `onnxruntime-node cannot be imported: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const version = ort.env?.versions?.node;
  return {
    id: 'onnxruntime',
    label: LABEL,
    description: () => `onnxruntime-node${version ? ` ${version}` : ''} MatMul, CPU execution provider`,
    warnings: [],
    failSoft: true,
    async measure(dtype, n, budget) {
      const session = await ort.InferenceSession.create(onnxMatmulModel(n, dtype === 'f64' ? 11 : 1), {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
      try {
        const make = (seed: number) => {
          const values = operandValues(n * n, seed);
          return dtype === 'f64' ? new ort.Tensor('float64', values, [n, n]) : new ort.Tensor('float32', Float32Array.from(values), [n, n]);
        };
        const feeds = { A: make(1), B: make(2) };
        const seconds = await timeCalls(() => session.run(feeds), budget);
        const m = median(seconds);
        return { dtype, n, gflops: gflopsOf(n, m), medianSeconds: m, reps: seconds.length };
      } finally {
        await session.release?.();
      }
    },
    close: async () => {},
  };
}
