import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { DType } from '../tensor/dtype.js';
import type { StorageHome, TensorStorage } from '../tensor/tensor-storage.js';
import { isSharedArrayBuffer } from '../tensor/layout.js';

/**
 * Where the fresh outputs of a handle made by `backend.withAllocationDomain(domain)` come from
 * (R2; the contract's `SharedTensorAllocationDomain`): an allocator the application supplies — an
 * arena, pre-faulted or huge-page memory, memory it shares with another process. Everything else
 * (temporaries, the buffer pool, execution) is unchanged.
 */
export interface SharedTensorAllocationDomain {
  /** Diagnostic name (`executionInfo().allocationDomain`, `sharedAllocationDomain()`); never a dispatch key. */
  readonly name: string;
  /**
   * A `SharedArrayBuffer` of at least `bytes` bytes for one fresh output (its content need not be
   * zero: core zeroes what it must). Throwing, or returning anything else, fails the operation
   * with `AllocationFailed` before anything was written.
   *
   * @example
   * ```ts
   * import { CpuBackend, type SharedTensorAllocationDomain, Tensor } from '@tenferro/core';
   *
   * const requests: number[] = [];
   * const domain: SharedTensorAllocationDomain = {
   *   name: 'counting',
   *   allocate(bytes) {
   *     requests.push(bytes);
   *     return new SharedArrayBuffer(bytes);
   *   },
   *   release() {},
   * };
   * const backend = await CpuBackend.create({ threads: 1 });
   * const a = Tensor.fromArray('f32', [2, 3], new Float32Array(6));
   * await backend.withAllocationDomain(domain).matmul(a.transpose(), a); // a 3×3 f32 output
   * console.log(requests); // prints: [ 36 ]
   * await backend.close();
   * ```
   */
  allocate(bytes: number): SharedArrayBuffer;
  /**
   * `buffer` comes back: the last tensor over it was disposed or collected, or the operation it
   * was allocated for failed. Called at most once per allocated buffer; errors it throws are
   * ignored (it may run from a finalizer).
   *
   * @example
   * ```ts
   * import { CpuBackend, type SharedTensorAllocationDomain, Tensor } from '@tenferro/core';
   *
   * const free: SharedArrayBuffer[] = [];
   * const recycling: SharedTensorAllocationDomain = {
   *   name: 'recycling',
   *   allocate(bytes) {
   *     const i = free.findIndex((b) => b.byteLength >= bytes);
   *     return i < 0 ? new SharedArrayBuffer(bytes) : free.splice(i, 1)[0]!;
   *   },
   *   release: (buffer) => void free.push(buffer),
   * };
   * const backend = await CpuBackend.create({ threads: 1 });
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const c = await backend.withAllocationDomain(recycling).matmul(a, a);
   * c.dispose(); // its storage goes back to the domain
   * console.log(free.length); // prints: 1
   * await backend.close();
   * ```
   */
  release(buffer: SharedArrayBuffer): void;
  /**
   * Whether handles of another allocation domain (or of none) may read storage allocated here:
   * `'allowed'` (default) or `'refused'` — then their operations reject such inputs with
   * `HostAccess` before anything runs, e.g. for memory the application recycles under its own rules.
   */
  readonly foreignReads?: 'allowed' | 'refused';
}

/** `domain` checked for shape (`InvalidArgument`), once, when a handle is derived for it. */
export function validateAllocationDomain(domain: unknown, op: string): SharedTensorAllocationDomain {
  const d = domain as Partial<SharedTensorAllocationDomain> | null;
  if (typeof d !== 'object' || d === null) throw invalidArgument(op, 'domain', 'an allocation domain { name, allocate(bytes), release(buffer) }', domain);
  if (typeof d.name !== 'string') throw invalidArgument(op, 'domain.name', 'a string', d.name);
  if (typeof d.allocate !== 'function') throw invalidArgument(op, 'domain.allocate', 'a function (bytes) => SharedArrayBuffer', d.allocate);
  if (typeof d.release !== 'function') throw invalidArgument(op, 'domain.release', 'a function (buffer) => void', d.release);
  if (d.foreignReads !== undefined && d.foreignReads !== 'allowed' && d.foreignReads !== 'refused') {
    throw invalidArgument(op, 'domain.foreignReads', "'allowed', 'refused' or undefined", d.foreignReads);
  }
  return d as SharedTensorAllocationDomain;
}

/** Where storage allocated from a domain goes back: the domain's `release`. */
export class AllocationDomainHome implements StorageHome {
  readonly domain: SharedTensorAllocationDomain;

  constructor(domain: SharedTensorAllocationDomain) {
    this.domain = domain;
  }

  returnStorage(_dtype: DType, buffer: SharedArrayBuffer): void {
    releaseQuietly(this.domain, buffer);
  }
}

/** Hand `buffer` back to `domain`; the domain's own error is not ours to report (it may come from a finalizer). */
export function releaseQuietly(domain: SharedTensorAllocationDomain, buffer: SharedArrayBuffer): void {
  try {
    domain.release(buffer);
  } catch {
    // ignored: see SharedTensorAllocationDomain.release
  }
}

/** One buffer of at least `bytes` from `domain`, or `AllocationFailed` (nothing was written; a wrong answer is released). */
export function allocateFromDomain(domain: SharedTensorAllocationDomain, bytes: number, op: string): SharedArrayBuffer {
  let buffer: unknown;
  try {
    buffer = domain.allocate(bytes);
  } catch (e) {
    throw new TenferroError('AllocationFailed', `allocation domain '${domain.name}' could not allocate ${bytes} bytes: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e, detail: { bytes, domain: domain.name } });
  }
  if (!isSharedArrayBuffer(buffer) || buffer.byteLength < bytes) {
    if (isSharedArrayBuffer(buffer)) releaseQuietly(domain, buffer);
    throw new TenferroError('AllocationFailed', `allocation domain '${domain.name}' returned ${isSharedArrayBuffer(buffer) ? `${buffer.byteLength} bytes` : 'no SharedArrayBuffer'} for ${bytes} bytes`, {
      op,
      detail: { bytes, domain: domain.name },
    });
  }
  return buffer;
}

/** The allocation domain `storage` was allocated from, if any. */
export function allocationDomainOf(storage: TensorStorage): SharedTensorAllocationDomain | undefined {
  const home = storage.home;
  return home instanceof AllocationDomainHome ? home.domain : undefined;
}

/**
 * R2, R77: a handle of allocation domain `reader` (or none) may read `storage` unless it was
 * allocated from another domain that refuses foreign reads → `HostAccess`.
 */
export function assertHostAccess(storage: TensorStorage, reader: SharedTensorAllocationDomain | undefined, op: string, role: string): void {
  const owner = allocationDomainOf(storage);
  if (owner === undefined || owner === reader || owner.foreignReads !== 'refused') return;
  throw new TenferroError('HostAccess', `${role} lives in allocation domain '${owner.name}', which refuses reads by ${reader === undefined ? 'handles without an allocation domain' : `allocation domain '${reader.name}'`}`, {
    op,
    detail: { role, domain: owner.name, reader: reader?.name },
  });
}
