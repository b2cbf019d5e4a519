/**
 * The bytes of an ONNX model computing C = A·B for n×n operands of one element type, encoded by
 * hand (protobuf wire format: varints and length-delimited fields), so that onnxruntime-node can
 * be measured without a model file or a protobuf dependency.
 */

/** ONNX `TensorProto.DataType`: FLOAT = 1, DOUBLE = 11. */
export type OnnxElemType = 1 | 11;

function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** Field `field` with wire type 0 (varint). */
const intField = (field: number, value: number): number[] => [...varint(field << 3), ...varint(value)];

/** Field `field` with wire type 2 (length-delimited: bytes, string or embedded message). */
function bytesField(field: number, bytes: readonly number[] | Uint8Array): number[] {
  return [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
}

const stringField = (field: number, s: string): number[] => bytesField(field, new TextEncoder().encode(s));

/** `ValueInfoProto { name, type: TypeProto { tensor_type { elem_type, shape { dim[] { dim_value } } } } }`. */
function valueInfo(name: string, elemType: OnnxElemType, shape: readonly number[]): number[] {
  const shapeProto = shape.flatMap((d) => bytesField(1, intField(1, d)));
  const tensorType = [...intField(1, elemType), ...bytesField(2, shapeProto)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

export function onnxMatmulModel(n: number, elemType: OnnxElemType): Uint8Array {
  // NodeProto { input: A, B; output: C; name; op_type: MatMul }
  const node = [...stringField(1, 'A'), ...stringField(1, 'B'), ...stringField(2, 'C'), ...stringField(3, 'matmul'), ...stringField(4, 'MatMul')];
  // GraphProto { node; name; input (11); output (12) }
  const graph = [
    ...bytesField(1, node),
    ...stringField(2, 'tenferro-bench'),
    ...bytesField(11, valueInfo('A', elemType, [n, n])),
    ...bytesField(11, valueInfo('B', elemType, [n, n])),
    ...bytesField(12, valueInfo('C', elemType, [n, n])),
  ];
  // ModelProto { ir_version (1) = 7; producer_name (2); graph (7); opset_import (8) { domain "", version 13 } }
  const model = [...intField(1, 7), ...stringField(2, 'tenferro'), ...bytesField(7, graph), ...bytesField(8, intField(2, 13))];
  return Uint8Array.from(model);
}
