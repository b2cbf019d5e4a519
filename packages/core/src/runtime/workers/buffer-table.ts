/**
 * The main isolate's side of the workers' buffer tables: every `SharedArrayBuffer` that crosses
 * to a worker in packed kernel arguments gets a process-isolate-wide id; each worker is sent a
 * buffer once (with its id) and keeps it in its table, and later tasks name the id only.
 *
 * A worker's table holds its buffers strongly. When the main isolate's object for a buffer is
 * collected, the buffer can never be named again, so each worker that knows its id is told to
 * forget it with its next task. A table is also bounded in size: the oldest entries not named
 * by the current task are forgotten first.
 */

/** Most buffers one worker keeps. */
export const WORKER_TABLE_CAPACITY = 4096;

const ids = new WeakMap<SharedArrayBuffer, number>();
let lastId = 0;
const tables = new Set<WorkerBufferTable>();
const collected = new FinalizationRegistry<number>((id) => {
  for (const table of tables) table.collected(id);
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

/** Table updates a task carries to its worker. */
export interface TableUpdate {
  readonly forget?: number[];
  readonly register?: [number, SharedArrayBuffer][];
}

/** What one worker's table holds, as the main isolate tracks it. */
export class WorkerBufferTable {
  /** Ids the worker holds, oldest first. */
  readonly #known = new Set<number>();
  #forget: number[] = [];
  readonly #capacity: number;

  constructor(capacity = WORKER_TABLE_CAPACITY) {
    this.#capacity = capacity;
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
      this.#known.add(id);
      (register ??= []).push([id, buffer]);
    }
    if (this.#known.size > this.#capacity) this.#evict(out, buffers.length);
    if (register === undefined && this.#forget.length === 0) return undefined;
    const update: TableUpdate = this.#forget.length === 0 ? { register } : { forget: this.#forget, register };
    this.#forget = [];
    return update;
  }

  /** The buffer with `id` was collected on the main isolate: the worker may drop it. */
  collected(id: number): void {
    if (this.#known.delete(id)) this.#forget.push(id);
  }

  /** Number of buffers the worker holds. */
  get size(): number {
    return this.#known.size;
  }

  /** The worker is gone: stop tracking. */
  close(): void {
    tables.delete(this);
    this.#known.clear();
    this.#forget = [];
  }

  #evict(current: Int32Array, count: number): void {
    for (const id of this.#known) {
      if (this.#known.size <= this.#capacity) return;
      if (current.subarray(0, count).includes(id)) continue;
      this.#known.delete(id);
      this.#forget.push(id);
    }
  }
}
