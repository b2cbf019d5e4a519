import { TenferroError } from '../../errors/tenferro-error.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import { EngineWorker, type WorkerObservation } from './engine-worker.js';
import type { WorkerBufferTableStats } from './buffer-table.js';
import type { KernelRef } from '../../contract/kernel.js';
import { EngineState } from './shared-fields.js';
import { laneNarrowed, laneTableBuffer } from './lane-spread.js';
import type { LaneRunner } from '../../contract/worker-pool.js';
import { FanOutJoins } from './fan-out-join.js';

export interface EngineWorkerPoolOptions {
  /** Pin every worker to exactly this set (verified); `undefined` = unpinned compatibility pool. */
  readonly cpus: CpuSet | undefined;
  readonly workerCount: number;
  /** Spin time of an idle worker before it sleeps (µs), for lane 0 and the others. */
  readonly spinMicros?: number;
  /** The CPUs the process may use (its topology's effective capacity), when known: see `early-wake.ts`. */
  readonly processCpus?: number | undefined;
}

/** The options with their defaults filled in (`processCpus` stays optional: unknown for external executors). */
type PoolSettings = Required<Omit<EngineWorkerPoolOptions, 'processCpus'>> & Pick<EngineWorkerPoolOptions, 'processCpus'>;

/**
 * How long an idle worker spins for its next task before it sleeps (µs; longer after long tasks:
 * `spinNsAfter`). Long enough to outlast the main thread being woken from `Atomics.waitAsync`
 * (~100 µs here), so a loop of short operations never falls into paying a futex wake-up on both
 * sides per call. Every lane alike — lanes other than 0, busy only during fan-outs, spun 50 µs: a
 * lane asleep between the fan-outs of a stream is woken for the next one onto whichever CPU the
 * scheduler picks — often the one where the other lane has just begun its kernel — and waits there
 * a whole scheduler slice before it can move away (`lane-spread.ts`). With 50 µs a 2-thread faer
 * f64 n = 512 stream on a 2-vCPU guest had one lane start ~1.4 ms late in a quarter of its calls
 * (`perf sched`); with 200 µs it ran 1.65–1.84 ms a call against 1.84–1.96 (five alternating pairs),
 * its main thread 154–236 against 211–271 µs of CPU a call.
 */
export const DEFAULT_SPIN_MICROS = 200;

/**
 * The fixed worker pool of one engine (D2). Every worker is pinned to the whole domain set and
 * verified before `create` resolves; all share one engine-state record registered once (R23).
 * A worker that dies fails its task with `WorkerDied` and is replaced (pinned and verified
 * again); if that fails the pool is broken and says so on every later use.
 */
export class EngineWorkerPool implements LaneRunner {
  readonly engineState: Int32Array;
  readonly #options: PoolSettings;
  readonly #workers: EngineWorker[];
  /** The lane table its workers share (see `lane-spread.ts`); none for a single worker. */
  readonly #lanes: Int32Array | undefined;
  /** The join slots its fan-outs' lanes wait on together (see `fan-out-join.ts`). */
  readonly #joins: FanOutJoins;
  readonly #replacing = new Map<number, Promise<void>>();
  #broken: TenferroError | undefined;
  #closed = false;
  #replacements = 0;

  private constructor(options: PoolSettings, engineState: Int32Array, lanes: Int32Array | undefined, joins: FanOutJoins, workers: EngineWorker[]) {
    this.#options = options;
    this.#joins = joins;
    this.engineState = engineState;
    this.#lanes = lanes;
    this.#workers = workers;
  }

  static async create(options: EngineWorkerPoolOptions): Promise<EngineWorkerPool> {
    const full = { spinMicros: DEFAULT_SPIN_MICROS, ...options };
    const stateBuffer = new SharedArrayBuffer(EngineState.LENGTH * Int32Array.BYTES_PER_ELEMENT);
    // One lane has no other to keep apart from.
    const lanes = full.workerCount > 1 ? laneTableBuffer(full.workerCount) : undefined;
    const joins = new FanOutJoins();
    let pool: EngineWorkerPool | undefined;
    const onDeath = (worker: EngineWorker, code: number) => {
      if (pool !== undefined) pool.#onDeath(worker, code);
    };
    const started = await Promise.allSettled(
      Array.from({ length: full.workerCount }, (_, index) =>
        EngineWorker.start({ index, cpus: full.cpus, engineState: stateBuffer, spinMicros: full.spinMicros, processCpus: full.processCpus, lanes, joins, onDeath }),
      ),
    );
    const failed = started.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed !== undefined) {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
      throw failed.reason;
    }
    const workers = started.map((s) => (s as PromiseFulfilledResult<EngineWorker>).value);
    pool = new EngineWorkerPool(full, new Int32Array(stateBuffer), lanes === undefined ? undefined : new Int32Array(lanes), joins, workers);
    return pool;
  }

  get workerCount(): number {
    return this.#workers.length;
  }

  /** Tell the workers spinning for their next task to sleep now (`EngineState.PARK`). */
  parkSpinning(): void {
    Atomics.add(this.engineState, EngineState.PARK, 1);
  }

  /** What each worker reported at verification (after a replacement: the replacement's). */
  observations(): WorkerObservation[] {
    return this.#workers.map((w) => w.observed);
  }

  /** Each worker's buffer table (see `buffer-table.ts`), by worker index. */
  bufferTables(): WorkerBufferTableStats[] {
    return this.#workers.map((w) => w.bufferTable());
  }

  /** Whether worker `index` has narrowed its mask to one CPU of the set for the task it runs (see `lane-spread.ts`). */
  narrowed(index: number): boolean {
    return this.#lanes !== undefined && laneNarrowed(this.#lanes, index);
  }

  get replacements(): number {
    return this.#replacements;
  }

  get broken(): TenferroError | undefined {
    return this.#broken;
  }

  /** `threads`: see `KernelTask.threads` (absent: 1). */
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads = 1): Promise<R> {
    // Not `async`: one promise less per task; a lane being replaced is waited for first.
    const replacing = this.#replacing.get(lane);
    if (replacing !== undefined) return replacing.then(() => this.#runNow(lane, kernel, payload, op, threads));
    try {
      return this.#runNow(lane, kernel, payload, op, threads);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #runNow<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads: number): Promise<R> {
    if (this.#closed) throw new TenferroError('BackendClosed', 'the engine was closed', { op });
    if (this.#broken !== undefined) throw this.#broken;
    const worker = this.#workers[lane];
    if (worker === undefined) throw new TenferroError('Scheduling', `no worker ${lane} in a pool of ${this.#workers.length}`, { op });
    return worker.run(kernel, payload, op, threads);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#replacing.values());
    await Promise.all(this.#workers.map((w) => w.close()));
  }

  #onDeath(worker: EngineWorker, _code: number): void {
    if (this.#closed) return;
    const index = worker.observed.index;
    const replacement = EngineWorker.start({
      index,
      cpus: this.#options.cpus,
      engineState: this.engineState.buffer as SharedArrayBuffer,
      spinMicros: this.#options.spinMicros,
      processCpus: this.#options.processCpus,
      lanes: this.#lanes?.buffer as SharedArrayBuffer | undefined,
      joins: this.#joins,
      onDeath: (w, c) => this.#onDeath(w, c),
    }).then(
      async (w) => {
        if (this.#closed) return w.close();
        this.#workers[index] = w;
        this.#replacements++;
      },
      (e: unknown) => {
        this.#broken = new TenferroError('EngineBroken', `worker ${index} died and its replacement could not be started and verified`, {
          op: 'CpuEngine',
          cause: e,
          detail: { worker: index },
        });
      },
    );
    const tracked = replacement.finally(() => this.#replacing.delete(index));
    this.#replacing.set(index, tracked);
  }
}
