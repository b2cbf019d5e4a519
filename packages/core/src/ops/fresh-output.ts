import { AllocationDomainHome, allocateFromDomain, releaseQuietly } from '../buffer/allocation-domain.js';
import { DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { denseStrides, elementCount } from '../tensor/layout.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import { type BufferLoan, type BufferPool, loanIsFresh } from '../buffer/buffer-pool.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { prefault, prefaultPool } from './prefault.js';
import { askScavenge, collectionMayReturnStorage, collectionsAreAsked, nudgeCollection, promotedPooledBytes, turnBeforePost } from '../tensor/tensor-storage.js';
import { rejectedThrough } from './rejected-through.js';

/**
 * A loop that drops its outputs gets their storage back only through collections: V8 finishes a
 * collection with tasks on the event loop, and the finalizers that bring the storage home run
 * there too — turns a loop whose awaits all resolve by polling rarely takes. Its pool then runs
 * dry and it allocates (and page-faults) fresh storage while its old outputs wait (measured at
 * 512 KiB: 30–40 misses per 1,500 calls; with a turn whenever fewer than 16 fitting buffers are
 * retained, 0–2). So once storage of this pool has come back through collection, an operation
 * whose output is at least {@link TURN_MIN_BYTES} gives the event loop one turn (microseconds)
 * when fewer than {@link LOW_WATER} fitting buffers are retained and collection may bring more.
 * A loop that disposes never got storage back through collection: it takes no turn.
 */
const TURN_MIN_BYTES = 256 * 1024;
const LOW_WATER = 16;

function wantsTurn(pool: BufferPool, dtype: DType, length: number): boolean {
  return length * DTYPE_INFO[dtype].bytes >= TURN_MIN_BYTES && pool.returnedByCollection > 0 && collectionMayReturnStorage() && pool.lendable(dtype, length) < LOW_WATER;
}

/**
 * Where death tokens let a scavenge bring dropped outputs home (`collectionsAreAsked`), an output
 * of at least {@link NUDGE_MIN_BYTES} about to take one of the pool's last {@link NUDGE_SLACK}
 * fitting buffers asks V8 for one ({@link ASK_OUTPUTS} outputs apart, one at the last buffer:
 * `askScavenge`), made while the kernel runs. A loop dropping 1024² products or factorisations
 * then saw 2–4 full-collection entries (`gc` observer) in 80 calls instead of 32–40, and its pool
 * lent 94–100 % of its outputs after ten warm-up calls. A loop's last output stays reachable from
 * the async function's suspended frame until its next await returns, so a second scavenge within
 * one call (V8's own, from the program's garbage) promotes it, and only a full collection finds it
 * dead then: an ask is skipped when a scavenge ran (or was asked) since the last large output was
 * made (`tensor-storage.ts`), and a pool about to miss while aged outputs (out three asks after they were made) are out
 * asks V8 for a full collection (`nudgeCollection`). Two outputs apart at the last buffer too, the
 * ask came a call late whenever the last one had brought a single output home: a 1024² f64
 * luFactor drop loop beside two busy CPUs lent 30–31 of 32 (32 of 32 with one apart; docs/performance.md). Otherwise:
 *
 * At V8's own cadence a loop that drops its outputs gets storage back once per 64 MiB of external
 * memory — so its pool needs 64 MiB in circulation before it stops missing: 16 fresh outputs of
 * 4 MiB (a 1024² f32), each a page-faulting allocation (#38 measured 56 % pool hits in the 16
 * calls after 10 warm-up calls). So when an output of at least {@link NUDGE_MIN_BYTES} is about to
 * take one of the pool's last {@link NUDGE_SLACK} fitting buffers (or finds none), and this pool
 * gave away six such outputs since it last asked (16 MiB at least, 64 MiB at most), it asks V8 to
 * collect while the next kernel runs (`nudgeCollection`): the collection's pauses fall while the
 * operation's kernel runs, not in front of it, and the dropped outputs are home before the pool
 * runs dry. Each collection costs the whole heap's marking
 * (5–10 ms of CPU on the 2-vCPU guest, taken from the kernels' CPUs): after every fourth output
 * (the first setting) a 1024² f64 cholesky's drop loop ran 1.13–1.35× its dispose loop, after
 * every eighth 1.09–1.23× (four interleaved rounds each, load 3.8–5.4; f32 GEMM n = 1024, 1 thread,
 * `into`/drop 0.80–0.93 against 0.87–1.03), for 12–28 MiB more resident memory.
 *
 * Asked only at the last buffer (eight outputs apart), the collection came too late whenever the
 * pool's circulation was no larger than the outputs between two asks — a 1024² f64 takes a 10 MiB
 * buffer (huge-page alignment), so seven of them passed 64 MiB just as the pool ran dry — and a
 * loaded machine then missed once per cycle: 28 of 32 hits for a 1024² f64 luFactor beside two
 * busy CPUs (a clean-clone CI run of `4adc2b9`; the same in 14 runs beside two busy loops). Six
 * outputs apart with two buffers of slack, its worst of 22 such runs was 29 of 32 (the misses left
 * are the warm-up's: a pool grows only by missing); four apart was no better (29 of 32 in 16) and
 * a 1024² f32 faer drop loop ran 0.94–0.96 of `into` against 0.98–1.00 (docs/performance.md).
 * A nudge that brought nothing home doubles the distance to the next (up to four times:
 * `BufferPool.nudgeBackoff`), so a program that keeps its outputs pays no more collections than at
 * V8's own cadence (64 MiB).
 */
const NUDGE_MIN_BYTES = 2 * 1024 * 1024;
const NUDGE_OUTPUTS = 6;
/** Outputs apart that asked scavenges are (see above). */
const ASK_OUTPUTS = 2;
/** Buffers still lendable when a nudge may be asked: the collection gets that many kernels' time to finish. */
const NUDGE_SLACK = 2;
const NUDGE_LEAST_BYTES = 16 * 1024 * 1024;
const NUDGE_MOST_BYTES = 64 * 1024 * 1024;

function maybeNudge(pool: BufferPool, dtype: DType, length: number): void {
  const bytes = length * DTYPE_INFO[dtype].bytes;
  if (bytes < NUDGE_MIN_BYTES || !collectionMayReturnStorage()) return;
  // Where death tokens let a scavenge bring the dropped outputs home (`collectionsAreAsked`), one
  // is asked for: a fraction of a full collection's cost, so two outputs apart.
  const asked = collectionsAreAsked();
  const lendable = pool.lendable(dtype, length);
  if (lendable > NUDGE_SLACK) return;
  // About to miss while outputs promoted past a scavenge's reach are out: a full collection brings
  // them home for the next calls (backed off while it brings nothing home: `fullCollectionDue`).
  if (asked && lendable === 0 && promotedPooledBytes() >= bytes && pool.fullCollectionDue()) nudgeCollection();
  // One output apart at the last buffer (or none), two otherwise (see above).
  const apart = asked ? (lendable <= 1 ? 1 : ASK_OUTPUTS) * bytes : Math.min(NUDGE_MOST_BYTES, Math.max(NUDGE_LEAST_BYTES, NUDGE_OUTPUTS * bytes));
  if (pool.detachedSinceNudge < pool.nudgeBackoff * apart) return;
  pool.nudged();
  if (asked) askScavenge();
  else nudgeCollection();
}

/** The storage home of each allocation domain's outputs (one per domain object). */
const homes = new WeakMap<object, AllocationDomainHome>();

function homeOf(domain: NonNullable<CpuOperationEntry['allocationDomain']>): AllocationDomainHome {
  let home = homes.get(domain);
  if (home === undefined) homes.set(domain, (home = new AllocationDomainHome(domain)));
  return home;
}

/** Fresh storage an operation holds for one output until it ends: its descriptor, then `finish` (the tensor) or `fail` (given back). */
export interface HeldOutput<D extends DType = DType> {
  /** Dense column-major, from `offset` on (a 64-byte line for 256 bytes or more, like every fresh output). */
  readonly descriptor: TensorDescriptor;
  /** The output as a tensor: its storage belongs to the tensor from here on, back home when its last tensor is disposed or collected. */
  finish(): Tensor<D>;
  /** Give the storage back (the operation failed); its tensor was never made. */
  fail(): void;
}

/**
 * Fresh dense column-major storage of `shape` for an operation's output on `entry`'s storage —
 * the engine's buffer pool, or the handle's allocation domain (R2) — held by the operation (no
 * tensor over it yet, so nothing else can be handed it) until `finish` makes it a tensor tagged
 * with the executing domain (R96) or `fail` gives it back. `zeroed` clears it; otherwise its
 * contents are whatever the storage last held (R108). Aligned like every fresh output (no
 * offset-0 exception, #35). `dtype` and `shape` are validated by the caller.
 */
export function holdOutput<D extends DType>(entry: CpuOperationEntry, dtype: D, shape: readonly number[], zeroed: boolean, op: string): HeldOutput<D> {
  const placement = { cpuAffinity: entry.engine.domain.id };
  const strides = denseStrides(shape, 'col');
  const domain = entry.allocationDomain;
  if (domain !== undefined) {
    const bytes = elementCount(shape, op) * DTYPE_INFO[dtype].bytes;
    const buffer = allocateFromDomain(domain, bytes, op);
    if (zeroed) new Uint8Array(buffer, 0, bytes).fill(0);
    let held = true;
    return {
      descriptor: Object.freeze({ dtype, shape, strides, offset: 0, buffer }),
      finish: () => {
        held = false;
        return tensorInternals.fresh(dtype, shape, buffer, homeOf(domain), placement);
      },
      fail: () => {
        if (held) releaseQuietly(domain, buffer);
        held = false;
      },
    };
  }
  const buffers = entry.engine.bufferPool;
  const length = elementCount(shape, op);
  maybeNudge(buffers, dtype, length); // an extension's outputs (linalg) dropped in a loop come back as promptly
  const loan = buffers.acquire(dtype, length, { zeroed, op });
  let held = true;
  return {
    descriptor: Object.freeze({ dtype, shape, strides, offset: loan.offset, buffer: loan.buffer }),
    finish: () => {
      held = false;
      buffers.detach(loan);
      return tensorInternals.fresh(dtype, shape, loan.buffer, buffers, placement, loan.offset, loan);
    },
    fail: () => {
      if (held) buffers.release(loan);
      held = false;
    },
  };
}

/**
 * Whether an operation about to take fresh outputs of these `[dtype, shape, element count]`
 * should first give the event loop one turn (see {@link TURN_MIN_BYTES}): storage of dropped
 * outputs may be waiting for its finalizer there.
 */
export function outputsWantTurn(entry: CpuOperationEntry, outputs: readonly (readonly [DType, readonly number[], number])[]): boolean {
  if (entry.allocationDomain !== undefined) return false;
  const pool = entry.engine.bufferPool;
  for (let i = 0; i < outputs.length; i++) if (wantsTurn(pool, outputs[i]![0], outputs[i]![2])) return true;
  return false;
}

/** One event-loop turn before the operation's post (queued asks wait until after it: `turnBeforePost`). */
export const eventLoopTurn = turnBeforePost;

/**
 * Run `fill` on fresh dense column-major storage of `shape` from the engine's buffer pool
 * (storage handed back by `dispose`, `tidy` or collection is reused, so a loop pays no page faults after warm-up) and
 * return it tagged with the executing domain (R96). Storage the operation overwrites entirely
 * (`overwritten`) is not zeroed: zeroing it here would also pull its cache lines to this
 * thread's core, only for the worker's core to take them back (R108). A handle with an allocation
 * domain (R2) takes the storage from the domain instead, and gives it back to the domain on
 * failure and when its last tensor goes.
 *
 * `fill(out, finish, fail)` writes `out` and settles with `finish()` (the tensor), or throws
 * through `fail` (which gives the storage back and rethrows) — in its own last reaction, so that
 * the operation pays no promise of its own here. With `ctx` (the operation's entered context),
 * fresh storage of 4 MiB or more that the operation overwrites is pre-faulted on its workers
 * first when it runs on two or more (`prefault.ts`, #38).
 */
export function freshOutput<D extends DType>(
  entry: CpuOperationEntry,
  dtype: D,
  shape: readonly number[],
  op: string,
  fill: (out: TensorDescriptor, finish: () => Tensor<D>, fail: (e: unknown) => never) => Promise<Tensor<D>>,
  overwritten: boolean,
  ctx?: CpuExecutionContext,
): Promise<Tensor<D>> {
  const domain = entry.allocationDomain;
  if (domain !== undefined) {
    // The handle's allocation domain (R2): its storage, given back to it on failure.
    let buffer: SharedArrayBuffer;
    try {
      const bytes = elementCount(shape, op) * DTYPE_INFO[dtype].bytes;
      buffer = allocateFromDomain(domain, bytes, op);
      if (!overwritten) new Uint8Array(buffer, 0, bytes).fill(0);
    } catch (e) {
      return Promise.reject(e);
    }
    const finish = () => tensorInternals.fresh(dtype, shape, buffer, homeOf(domain), { cpuAffinity: entry.engine.domain.id });
    const fail = (e: unknown): never => {
      releaseQuietly(domain, buffer);
      throw e;
    };
    return filled(fill, Object.freeze({ dtype, shape, strides: denseStrides(shape, 'col'), offset: 0, buffer }), finish, fail);
  }
  const buffers = entry.engine.bufferPool;
  let length: number;
  try {
    length = elementCount(shape, op);
  } catch (e) {
    return Promise.reject(e);
  }
  const run = (): Promise<Tensor<D>> => {
    // After the turn: an ask queued before it would run in it, in front of this operation's post,
    // instead of while its kernel runs (`askScavenge`).
    maybeNudge(buffers, dtype, length);
    let loan: BufferLoan;
    try {
      loan = buffers.acquire(dtype, length, { zeroed: !overwritten, op });
    } catch (e) {
      return Promise.reject(e);
    }
    // The storage belongs to the tensor from `finish` on; it comes back when its last tensor is disposed or collected.
    const finish = () => {
      buffers.detach(loan);
      return tensorInternals.fresh(dtype, shape, loan.buffer, buffers, { cpuAffinity: entry.engine.domain.id }, loan.offset, loan);
    };
    const fail = (e: unknown): never => {
      buffers.release(loan);
      throw e;
    };
    const out = Object.freeze({ dtype, shape, strides: denseStrides(shape, 'col'), offset: loan.offset, buffer: loan.buffer });
    // Fresh storage the operation overwrites: its pages faulted in by the permit's workers first (#38).
    const bytes = length * DTYPE_INFO[dtype].bytes;
    const workers = overwritten && loanIsFresh(loan) ? prefaultPool(ctx, bytes) : undefined;
    if (workers === undefined) return filled(fill, out, finish, fail);
    const elementBytes = DTYPE_INFO[dtype].bytes;
    return prefault(workers, dtype, loan.buffer, loan.offset * elementBytes, bytes, () => buffers.stats().retainedBytes).then(() => filled(fill, out, finish, fail), fail);
  };
  return wantsTurn(buffers, dtype, length) ? turnBeforePost().then(run) : run();
}

/** `fill`'s promise; a synchronous throw goes through `fail` too. */
function filled<D extends DType>(
  fill: (out: TensorDescriptor, finish: () => Tensor<D>, fail: (e: unknown) => never) => Promise<Tensor<D>>,
  out: TensorDescriptor,
  finish: () => Tensor<D>,
  fail: (e: unknown) => never,
): Promise<Tensor<D>> {
  try {
    return fill(out, finish, fail);
  } catch (e) {
    return rejectedThrough(fail, e);
  }
}
