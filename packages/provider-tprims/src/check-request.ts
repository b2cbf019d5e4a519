/**
 * The provider's own check of every descriptor it is given, before anything is started: core
 * validated the request, but a provider never lets a malformed one reach a worker (the addon checks
 * its copy again). `InvalidArgument` names the field; a view reaching outside its buffer is
 * `ViewOutOfBounds`.
 */
import { types } from 'node:util';
import { DTYPE_INFO, isDType, type TensorDescriptor, TenferroError } from '@tenferro/core';

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Check `d` (named `name`) and, when `shape` is given, that its shape equals it. */
export function checkDescriptor(op: string, name: string, d: TensorDescriptor, shape?: readonly number[]): void {
  if (typeof d !== 'object' || d === null) throw TenferroError.invalidArgument(op, name, 'a tensor descriptor', d);
  if (!isDType(d.dtype)) throw TenferroError.invalidArgument(op, `${name}.dtype`, 'a dtype', d.dtype);
  if (!types.isSharedArrayBuffer(d.buffer)) throw TenferroError.invalidArgument(op, `${name}.buffer`, 'a SharedArrayBuffer', d.buffer);
  if (!Array.isArray(d.shape) || !Array.isArray(d.strides) || d.shape.length !== d.strides.length) {
    throw TenferroError.invalidArgument(op, `${name}.strides`, 'one stride per axis', d.strides);
  }
  if (!isIndex(d.offset)) throw TenferroError.invalidArgument(op, `${name}.offset`, 'a non-negative safe integer', d.offset);
  let last = d.offset;
  let empty = false;
  for (let i = 0; i < d.shape.length; i++) {
    const n = d.shape[i];
    const s = d.strides[i];
    if (!isIndex(n)) throw TenferroError.invalidArgument(op, `${name}.shape[${i}]`, 'a non-negative safe integer', n);
    if (!isIndex(s)) throw TenferroError.invalidArgument(op, `${name}.strides[${i}]`, 'a non-negative safe integer', s);
    if (shape !== undefined && n !== shape[i]) throw TenferroError.invalidArgument(op, `${name}.shape[${i}]`, `${shape[i]}`, n);
    if (n === 0) empty = true;
    else last += (n - 1) * s;
  }
  if (shape !== undefined && shape.length !== d.shape.length) throw TenferroError.invalidArgument(op, `${name}.shape`, `rank ${shape.length}`, d.shape.length);
  if (empty) return;
  const bytes = DTYPE_INFO[d.dtype].bytes;
  if (!Number.isSafeInteger(last) || (last + 1) * bytes > d.buffer.byteLength) {
    throw new TenferroError('ViewOutOfBounds', `${name} reaches element ${last} of a ${d.buffer.byteLength}-byte buffer of ${d.dtype}`, { op, detail: { operand: name } });
  }
}
