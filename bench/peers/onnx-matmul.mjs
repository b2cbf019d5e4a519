// onnxruntime-node as a benchmark peer: a session running one ONNX `MatMul` (MLAS on the CPU),
// built from a model encoded here (a few protobuf fields; no onnx tooling needed).
import { createRequire } from 'node:module';

/** onnxruntime-node when bench/peers is installed, else undefined. */
export function loadOrt() {
  try {
    return createRequire(import.meta.url)('onnxruntime-node');
  } catch {
    return undefined;
  }
}

/**
 * Wait until onnxruntime's intra-op pool has gone idle after a block of runs: with 2 or more
 * intra-op threads its pool thread keeps spinning for tens of milliseconds after the last `run`
 * returned (per-thread CPU time from /proc on a 2-vCPU VM: ~40 ms of CPU in the first 50 ms, one
 * tick in the next 50, none after), taking a CPU from whatever is measured next — at 2 threads the
 * next contender ran at half speed. Benches call this after an ORT block, before another contender.
 */
export function settleOrt(ms = 150) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const varint = (v) => {
  const out = [];
  let x = BigInt(v);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
};
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, v) => [...key(field, 0), ...varint(v)];
const bytes = (field, b) => [...key(field, 2), ...varint(b.length), ...b];
const str = (field, s) => bytes(field, [...Buffer.from(s, 'utf8')]);

/** ONNX element types. */
const ELEM = { f32: 1, f64: 11 };

function valueInfo(name, elem, dims) {
  const shape = dims.flatMap((d) => bytes(1, int(1, d)));
  const tensorType = [...int(1, elem), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

/** Bytes of a model computing C = A·B for A [...batch, m, k], B [...batch, k, n] (row-major, as ONNX). */
export function matmulModel(dtype, batch, m, k, n) {
  const elem = ELEM[dtype];
  if (elem === undefined) throw new Error(`no ONNX MatMul for ${dtype}`);
  const node = [...str(1, 'A'), ...str(1, 'B'), ...str(2, 'C'), ...str(4, 'MatMul')];
  const graph = [
    ...bytes(1, node),
    ...str(2, 'matmul'),
    ...bytes(11, valueInfo('A', elem, [...batch, m, k])),
    ...bytes(11, valueInfo('B', elem, [...batch, k, n])),
    ...bytes(12, valueInfo('C', elem, [...batch, m, n])),
  ];
  const opset = [...str(1, ''), ...int(2, 13)];
  return Uint8Array.from([...int(1, 8), ...bytes(8, opset), ...bytes(7, graph)]);
}

/** A runner of `C = A·B` with fresh output each call (what `session.run` returns), on `threads` intra-op threads. */
export async function ortMatmul(ort, dtype, batch, n, threads) {
  const session = await ort.InferenceSession.create(matmulModel(dtype, batch, n, n, n), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const Array_ = dtype === 'f64' ? Float64Array : Float32Array;
  const count = batch.reduce((p, b) => p * b, 1) * n * n;
  const fill = () => Array_.from({ length: count }, (_, i) => ((i * 7) % 16) / 4 - 2);
  const feeds = { A: new ort.Tensor(dtype === 'f64' ? 'float64' : 'float32', fill(), [...batch, n, n]), B: new ort.Tensor(dtype === 'f64' ? 'float64' : 'float32', fill(), [...batch, n, n]) };
  return { run: () => session.run(feeds), release: () => session.release() };
}

/** Bytes of a model computing `C = einsum(equation, A, B)` for f64/f32 inputs of the given (row-major) shapes. */
export function einsumModel(dtype, equation, aDims, bDims, cDims) {
  const elem = ELEM[dtype];
  if (elem === undefined) throw new Error(`no ONNX Einsum for ${dtype}`);
  // AttributeProto: name (1), s (4), type (20) = STRING (3).
  const attribute = [...str(1, 'equation'), ...bytes(4, [...Buffer.from(equation, 'utf8')]), ...int(20, 3)];
  const node = [...str(1, 'A'), ...str(1, 'B'), ...str(2, 'C'), ...str(4, 'Einsum'), ...bytes(5, attribute)];
  const graph = [
    ...bytes(1, node),
    ...str(2, 'einsum'),
    ...bytes(11, valueInfo('A', elem, aDims)),
    ...bytes(11, valueInfo('B', elem, bDims)),
    ...bytes(12, valueInfo('C', elem, cDims)),
  ];
  const opset = [...str(1, ''), ...int(2, 13)];
  return Uint8Array.from([...int(1, 8), ...bytes(8, opset), ...bytes(7, graph)]);
}

/** A runner of `C = einsum(equation, A, B)` over the given row-major data, on `threads` intra-op threads. */
export async function ortEinsum(ort, dtype, equation, a, aDims, b, bDims, cDims, threads) {
  const session = await ort.InferenceSession.create(einsumModel(dtype, equation, aDims, bDims, cDims), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const type = dtype === 'f64' ? 'float64' : 'float32';
  const feeds = { A: new ort.Tensor(type, a, aDims), B: new ort.Tensor(type, b, bDims) };
  return { run: () => session.run(feeds), release: () => session.release() };
}
