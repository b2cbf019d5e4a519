/**
 * The main isolate's side of the workers' buffer tables: every `SharedArrayBuffer` that crosses
 * to a worker in packed kernel arguments gets a process-isolate-wide id; each worker is sent a
 * buffer once (with its id) and keeps it in its table, and later tasks name the id only.
 *
 * A table is a cache of storage the main isolate can still name, never more (#35): a worker
 * forgets a buffer as soon as the main isolate's object for it is collected, or as soon as the
 * last tensor over caller-made storage is disposed — whether or not that worker runs another task.
 * The ids go with the worker's next task while it has one (a posted task may name any id it
 * knows), otherwise at once through its `ForgetRing`, ringing its doorbell. A table is also
 * bounded in bytes ({@link DEFAULT_WORKER_TABLE_LIMIT_BYTES}, `TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES`)
 * and in entries ({@link WORKER_TABLE_CAPACITY}): past either bound the oldest entries not named by
 * the current task are forgotten first. The worker releases what it drops by collecting its own
 * heap (see worker-entry.ts `collect`); `executionInfo().workers[i].bufferTable` shows both sides.
 */
import { setCallerStorageDisposedHook } from '../../tensor/tensor-storage.js';
import { ForgetRing } from './shared-fields.js';
import { slabBytes } from '../../buffer/storage-slab.js';
import { RunningTotal } from '../../util/running-total.js';

/** Most buffers one worker keeps (a bound on entries; the bound on memory is in bytes). */
export const WORKER_TABLE_CAPACITY = 4096;

/** Default bound of one worker's buffer table: 128 MiB of storage it may keep between tasks. */
export const DEFAULT_WORKER_TABLE_LIMIT_BYTES = 128 * 1024 * 1024;

/** The environment variable that overrides {@link DEFAULT_WORKER_TABLE_LIMIT_BYTES}. */
export const WORKER_TABLE_LIMIT_ENV = 'TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES';

/**
 * The byte bound of worker buffer tables from `TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES`: a
 * non-negative integer string (surrounding whitespace allowed); unset, empty or invalid → the
 * default; `0` keeps no buffer beyond the task that names it. Read when a worker starts.
 */
export function workerTableLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WORKER_TABLE_LIMIT_ENV];
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return DEFAULT_WORKER_TABLE_LIMIT_BYTES;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : DEFAULT_WORKER_TABLE_LIMIT_BYTES;
}

const ids = new WeakMap<SharedArrayBuffer, number>();
let lastId = 0;
const tables = new Set<WorkerBufferTable>();
const collected = new FinalizationRegistry<number>((id) => {
  for (const table of tables) table.forget(id);
});

function idOf(buffer: SharedArrayBuffer): number {
  let id = ids.get(buffer);
  if (id === undefined) {
    id = ++lastId;
    ids.set(buffer, id);
    collected.register(buffer, id);
  }
  return id;
}

/**
 * Every worker table forgets `buffer` now: the last tensor over caller-made storage was disposed
 * (the hook of `tensor-storage.ts`). A later task that names it sends it again.
 */
export function forgetBuffer(buffer: SharedArrayBuffer): void {
  const id = ids.get(buffer);
  if (id === undefined) return;
  for (const table of tables) table.forget(id);
}

/** Table updates a task carries to its worker. */
export interface TableUpdate {
  readonly forget?: number[];
  readonly register?: [number, SharedArrayBuffer][];
}

/** One worker's buffer table, as `executionInfo().workers[i].bufferTable` reports it. */
export interface WorkerBufferTableStats {
  /** Buffers the worker keeps (as the main isolate tracks it: ids it was told to forget are gone). */
  readonly buffers: number;
  /** Their bytes, as the bound counts them: a slab storage is carved from counts the 2 or 8 MiB blocks are carved from (`buffer/storage-slab.ts`). */
  readonly bytes: number;
  /** The table's bound in bytes (`TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES`, default 128 MiB). */
  readonly limitBytes: number;
  /**
   * Bytes the worker was told to forget and has not released yet: dropped from its table, they
   * are freed by the next collection of its heap, which it forces once 32 MiB are pending or
   * when it has been idle for 20 ms. 0 when everything forgotten is released.
   */
  readonly releasingBytes: number;
  /** Collections of its heap the worker forced to release storage so far. */
  readonly collections: number;
}

/** The worker a table belongs to, as the table needs it. */
export interface TableWorker {
  /** A task holds the worker (posted and not yet answered): it may name any id it knows. */
  busy(): boolean;
  /** Ring the worker's doorbell: ids wait in its ring. */
  wake(): void;
}

export interface WorkerBufferTableOptions {
  /** The worker's `ForgetRing` (absent: ids go with its next task only). */
  readonly ring?: SharedArrayBuffer;
  readonly worker?: TableWorker;
  readonly limitBytes?: number;
  readonly capacity?: number;
}

/** What one worker's table holds, as the main isolate tracks it. */
export class WorkerBufferTable {
  /** Ids the worker holds and their buffers' byte lengths, oldest first. */
  readonly #known = new Map<number, number>();
  /**
   * Slabs among them (`buffer/storage-slab.ts`), and the bytes the byte bound counts each as: the
   * part blocks are carved from — the rest is address space that places it on huge pages, never
   * touched. Counted at their length, the ~37 slabs a 64×64 f64 dropping loop keeps in circulation
   * passed the 128 MiB bound, and its worker forgot and relearned slabs every few calls.
   */
  readonly #slabs = new Map<number, number>();
  /** Bytes as the bound counts them. */
  #bytes = 0;
  /** Ids to forget not yet handed to the worker (it was busy, or its ring was full). */
  #forget: number[] = [];
  /** A flush of `#forget` is queued for the end of the current synchronous run. */
  #flushQueued = false;
  /** Bytes forgotten so far (the worker publishes how many of them it released). */
  readonly #forgottenBytes = new RunningTotal();
  readonly #ring: Int32Array | undefined;
  readonly #released: Float64Array | undefined;
  readonly #worker: TableWorker | undefined;
  readonly #limitBytes: number;
  readonly #capacity: number;

  constructor(options: WorkerBufferTableOptions = {}) {
    this.#ring = options.ring === undefined ? undefined : new Int32Array(options.ring);
    this.#released = options.ring === undefined ? undefined : new Float64Array(options.ring, 0, ForgetRing.SLOTS / 2);
    this.#worker = options.worker;
    this.#limitBytes = options.limitBytes ?? workerTableLimitFromEnv();
    this.#capacity = options.capacity ?? WORKER_TABLE_CAPACITY;
    if (tables.size === 0) setCallerStorageDisposedHook(forgetBuffer);
    tables.add(this);
  }

  /**
   * Write the ids of `buffers` into `out` and return what the worker must learn first (or
   * `undefined` when it knows them all and has nothing to forget).
   */
  prepare(buffers: readonly SharedArrayBuffer[], out: Int32Array): TableUpdate | undefined {
    let register: [number, SharedArrayBuffer][] | undefined;
    for (let i = 0; i < buffers.length; i++) {
      const buffer = buffers[i]!;
      const id = idOf(buffer);
      out[i] = id;
      if (this.#known.has(id)) continue;
      const bytes = buffer.byteLength;
      this.#known.set(id, bytes);
      const slab = slabBytes(buffer);
      if (slab !== undefined) this.#slabs.set(id, slab);
      this.#bytes += slab ?? bytes;
      (register ??= []).push([id, buffer]);
    }
    if (register !== undefined && (this.#bytes > this.#limitBytes || this.#known.size > this.#capacity)) this.#evict(out, buffers.length);
    if (register === undefined && this.#forget.length === 0) return undefined;
    const update: TableUpdate = this.#forget.length === 0 ? { register } : { forget: this.#forget, register };
    this.#forget = [];
    return update;
  }

  /**
   * The worker must drop `id` (its buffer was collected on the main isolate, or disposed): handed
   * to it at the end of the current synchronous run if it is idle then, else with its next task.
   */
  forget(id: number): void {
    const bytes = this.#known.get(id);
    if (bytes === undefined) return;
    this.#drop(id, bytes);
    this.#forget.push(id);
    if (this.#ring !== undefined && !this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(() => {
        this.#flushQueued = false;
        this.idle();
      });
    }
  }

  /** The worker has no task now (or may have none): hand it the ids waiting here through its ring. */
  idle(): void {
    if (this.#forget.length === 0 || this.#worker === undefined || this.#worker.busy()) return;
    const ring = this.#ring;
    if (ring === undefined) return;
    const head = ring[ForgetRing.HEAD]!;
    const free = ForgetRing.CAPACITY - ((head - Atomics.load(ring, ForgetRing.TAIL)) | 0);
    const count = Math.min(free, this.#forget.length);
    if (count <= 0) return; // full: the worker drains it before its next task, which carries the rest
    for (let i = 0; i < count; i++) ring[ForgetRing.SLOTS + ((head + i) & (ForgetRing.CAPACITY - 1))] = this.#forget[i]!;
    Atomics.store(ring, ForgetRing.HEAD, (head + count) | 0);
    this.#forget = count === this.#forget.length ? [] : this.#forget.slice(count);
    this.#worker.wake();
  }

  /** Number of buffers the worker holds. */
  get size(): number {
    return this.#known.size;
  }

  stats(): WorkerBufferTableStats {
    const released = this.#released?.[ForgetRing.RELEASED_F64] ?? 0;
    return Object.freeze({
      buffers: this.#known.size,
      bytes: this.#bytes,
      limitBytes: this.#limitBytes,
      releasingBytes: Math.max(0, this.#forgottenBytes.value - released),
      collections: this.#ring === undefined ? 0 : Atomics.load(this.#ring, ForgetRing.COLLECTIONS),
    });
  }

  /** The worker is gone: stop tracking. */
  close(): void {
    tables.delete(this);
    this.#known.clear();
    this.#slabs.clear();
    this.#bytes = 0;
    this.#forget = [];
  }

  /** Stop tracking `id` (a buffer of `bytes` bytes): the worker is to forget it. */
  #drop(id: number, bytes: number): void {
    this.#known.delete(id);
    this.#bytes -= this.#slabs.get(id) ?? bytes;
    this.#slabs.delete(id);
    this.#forgottenBytes.add(bytes);
  }

  #evict(current: Int32Array, count: number): void {
    const named = current.subarray(0, count);
    for (const [id, bytes] of this.#known) {
      if (this.#bytes <= this.#limitBytes && this.#known.size <= this.#capacity) return;
      if (named.includes(id)) continue;
      this.#drop(id, bytes);
      this.#forget.push(id);
    }
  }
}
