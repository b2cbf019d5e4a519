import { adjustExternalMemory, deathTokens } from '@tenferro/os';
import type { DeathTokenFactory } from '@tenferro/os';
import { getHeapStatistics } from 'node:v8';
import type { DType } from './dtype.js';
import { fillYoungGeneration, scavengeNow, youngGenerationUsed } from './young-generation.js';

/** Where storage made by an engine goes back to (its buffer pool). */
export interface StorageHome {
  /**
   * Take the storage back for reuse: `bytes` of `buffer` from byte `start` (a block carved from a
   * slab, or the whole buffer); `how` says whether a dispose or the collection of every tensor over
   * it returned it.
   */
  returnStorage(dtype: DType, buffer: SharedArrayBuffer, how: 'disposed' | 'collected', made: number, start: number, bytes: number): void;
}

/** What outlives the storage object for its finalizer: never a reference back to the storage. @internal */
export interface StorageCell {
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  /** The storage's block of `buffer`: its first byte and byte length (the whole buffer unless carved from a slab). */
  readonly start: number;
  readonly bytes: number;
  home: StorageHome | undefined;
  /** The buffer was handed to the caller (`tensor.buffer`, `descriptor()`): never recycled by collection. */
  escaped: boolean;
  /** Handed back already (at most once). */
  returned: boolean;
  /** Bytes reported to V8 as kept alive by this storage (see `adjustExternalMemory`), 0 once taken back. */
  reported: number;
  /** Counted in `watched`: pooled storage watched for collection. */
  watched: boolean;
  /** The number of asks made before it was made (its epoch) when counted in `pooledOut` (see {@link holdPooled}), else -1. */
  epoch: number;
  /** When the storage was made (a count of storages made): collected storage made last is lent first, it is the likeliest in cache. */
  readonly made: number;
}

/** Storages made so far (the `made` stamp). */
let storagesMade = 0;

/**
 * V8 does not count SharedArrayBuffers towards when to collect: storage tenferro allocates for the
 * caller (`fromArray`, `zeros`, `from`'s copy) — and engine storage handed to tensors where
 * scavenges are not asked for (no death tokens: {@link collectionsAreAsked}) — is reported as
 * external memory while they may hold it (storage under 2 MiB in bulk: {@link BULK_BELOW}), so that
 * a loop dropping large outputs or inputs triggers the collections that bring them back (without
 * it, none ever happens: #35 measured 2.4 GB of dropped 200×200 inputs after 4,000 calls without a
 * forced `gc()`). Engine storage paced by asked scavenges is told only once they cannot bring it
 * home ({@link holdPooled}).
 */
function unreport(cell: StorageCell): void {
  if (cell.epoch >= 0) {
    holdPooled(-cell.bytes, cell.epoch);
    cell.epoch = -1;
  }
  if (cell.reported === 0) return;
  if (cell.reported < BULK_BELOW) holdBulk(-cell.reported);
  else adjustExternalMemory(-cell.reported);
  cell.reported = 0;
}

/**
 * Storage below this size is reported in bulk (#37, #38): V8 is told only how far the total of
 * such storage alive exceeds {@link BULK_ALLOWANCE}. Without death tokens (see `batches`) dropped
 * storage comes home only through full collections (a minor one runs no registry callback), and
 * on 2 CPUs each one cost a dropping loop of small outputs ~20–30 ms: its pauses, and V8's helper
 * threads marking beside the kernels (four of them at ~10 % of a CPU each through a 128² f32 loop). Told of every 32 KiB output one by one, V8
 * ran one per ~300 calls of a 64×64 f64 loop; counted in bulk with 32 MiB allowed, one per
 * ~1,700 (a 128² f32 loop: per ~600). Larger storage is reported one by one: a few outputs are
 * worth a collection, and `fresh-output.ts`'s nudge is tuned against V8's cadence for them.
 */
const BULK_BELOW = 2 * 1024 * 1024;
/**
 * Small storage alive that V8 is not told of: what a loop dropping small outputs keeps in
 * circulation before collections start (a third of the pool's default cap). 64 MiB halved the
 * collections again at n ≤ 128 but made a 256² f64 dropping loop 20–30 % slower: its 512 KiB
 * outputs then circulate through more than the last-level cache.
 */
const BULK_ALLOWANCE = 32 * 1024 * 1024;
/** V8 is told in steps of this size (one native call per MiB of change, not per storage). */
const BULK_STEP = 1024 * 1024;
/** Bytes of small storage alive (reported kind: pooled, or allocated for the caller). */
let bulkHeld = 0;
/** What of it V8 has been told. */
let bulkTold = 0;

function holdBulk(delta: number): void {
  bulkHeld += delta;
  const want = Math.max(0, Math.floor((bulkHeld - BULK_ALLOWANCE) / BULK_STEP) * BULK_STEP);
  if (want !== bulkTold) {
    adjustExternalMemory(want - bulkTold);
    bulkTold = want;
  }
}

/** Bytes of small storage alive, and how many of them V8 was told of. @internal test seam */
export function bulkExternalMemory(): { readonly held: number; readonly told: number; readonly allowance: number } {
  return { held: bulkHeld, told: bulkTold, allowance: BULK_ALLOWANCE };
}

/**
 * Young-generation pacing (#38). Pooled storage out of its pool comes home when a collection finds
 * its tensors dead: a scavenge does (death tokens, see `batches`). A loop making little JavaScript
 * garbage sees V8's own scavenges rarely (a 256² f32 matmul loop: one per ~400 calls), and telling
 * V8 of the storage meanwhile makes it start *full* collections instead (`young-generation.ts`):
 * a loop of 256² f32 matmuls on 2 threads lost ~30 % of its time to them, a loop dropping 1024² f64
 * products or factorisations ran one every two to five calls. So when pooled storage out has grown
 * by {@link PACE_BYTES} since its lowest point — no collection brought any home meanwhile — or a
 * pool is about to run out of buffers for outputs of 2 MiB or more ({@link askScavenge}), tenferro
 * asks V8 for a scavenge (`young-generation.ts`: with V8's `gc` where it can be taken; else by
 * filling the young generation, at most 4 MiB of garbage a turn for the growth, all at once for a
 * pool running low). A loop that disposes never grows
 * it; one that keeps its outputs would ask in vain, so each ask doubles the growth the next one
 * waits for (up to {@link PACE_MOST}) until storage comes home (half of {@link PACE_BYTES} below
 * the last ask), which resets it.
 *
 * V8 is told only of storage a scavenge cannot bring home: storage still out {@link AGED_AFTER_ASKS}
 * asks after it was made outlived two scavenges (V8 has promoted its tensors, and only a full
 * collection finds them dead) or is kept; of that, what exceeds {@link BULK_ALLOWANCE}. A loop's
 * last output is reachable until its next await returns (the async function's suspended frame
 * holds it): an ask is skipped when a scavenge already ran since the last large storage was made
 * ({@link scavengedSinceLarge}), and `fresh-output.ts` asks for a full collection when a pool is
 * about to miss while aged storage is out ({@link promotedPooledBytes}). Telling V8 of aged storage
 * without the allowance started a cascade: each full collection promotes the young tensors alive at
 * that moment, which then need the next one.
 */
const PACE_BYTES = 20 * 1024 * 1024;
/**
 * Asks after which storage still out counts as aged (told to V8 beyond the allowance, and a reason
 * for a full collection). Three, not two: storage a loop dropped is still out when the second ask
 * after it is made — its tensor was alive at the first (the suspended frame held it) and is found
 * dead by the second's scavenge, but it comes home only when its finalizer runs after that
 * scavenge. Counted at the second, every output of a loop dropping 1024² f64 factorisations was
 * told to V8 for a moment, and V8 ran 18–22 full collections in 64 calls (158–239 ms of pauses,
 * the calls 25–35 % slower than disposing ones); counted at the third, 2–3 (docs/performance.md,
 * 2026-12-09). Storage that is kept or promoted is still told, one ask later.
 */
const AGED_AFTER_ASKS = 3;
const PACE_MOST = 1024 * 1024 * 1024;
/** Bytes of pooled storage held by tensors (not home yet: neither disposed nor collected). */
let pooledOut = 0;
/** The least `pooledOut` since the last ask. */
let pooledLow = 0;
/** `pooledOut` at the last ask. */
let pooledAtAsk = 0;
/** The growth of `pooledOut` over `pooledLow` that makes the next ask. */
let paceEvery = PACE_BYTES;
let paceQueued = false;
let paceAsks = 0;
/**
 * Of `pooledOut`, bytes made since the last ask (epoch `paceAsks`): kept apart from the older
 * epochs' map, so that a disposing loop's make and return touch no map (a map emptied by a
 * `delete` reallocates its table, in a runtime call, on every call of such a loop).
 */
let outThisEpoch = 0;
/** Of `pooledOut`, bytes made before the last ask, by the number of asks made before they were made (their epoch); no zero entries. */
const outByEpoch = new Map<number, number>();
/** Of `pooledOut`, bytes made {@link AGED_AFTER_ASKS} asks ago or earlier, and what V8 was told of them. */
let aged = 0;
let agedTold = 0;

function tellAged(): void {
  const want = Math.max(0, Math.floor((aged - BULK_ALLOWANCE) / BULK_STEP) * BULK_STEP);
  if (want !== agedTold) {
    adjustExternalMemory(want - agedTold);
    agedTold = want;
  }
}

function holdPooled(delta: number, epoch: number): void {
  if (epoch === paceAsks) outThisEpoch += delta;
  else {
    const inEpoch = (outByEpoch.get(epoch) ?? 0) + delta;
    if (inEpoch === 0) outByEpoch.delete(epoch);
    else outByEpoch.set(epoch, inEpoch);
  }
  if (epoch <= paceAsks - AGED_AFTER_ASKS) {
    aged += delta;
    tellAged();
  }
  pooledOut += delta;
  if (pooledOut < pooledLow) {
    pooledLow = pooledOut;
    if (pooledAtAsk - pooledLow >= PACE_BYTES / 2) paceEvery = PACE_BYTES; // the last ask brought storage home
  } else if (!paceQueued && pooledOut - pooledLow >= paceEvery) {
    paceQueued = true;
    setImmediate(queuedAsk).unref(); // never what keeps a finished program alive
  }
}

/** Operations in their turn before posting their kernel ({@link turnBeforePost}). */
let postsPending = 0;

/**
 * One event-loop turn (`setImmediate`) an operation takes before it posts its kernel, so that
 * storage of dropped outputs waiting for its finalizer comes home first (`fresh-output.ts`). An
 * ask queued before it — e.g. by the previous operation's output, once made — waits until the
 * post: run in that turn, its scavenge (0.3–0.7 ms) fell in front of every other post of a 1024²
 * f64 `la.cholesky` drop loop (`tenferro:task`: 0.37–0.41 ms from call to post against 0.14 for a
 * disposing loop), where it runs while the kernel runs instead ({@link reportQueuedNudge}).
 */
export function turnBeforePost(): Promise<void> {
  postsPending++;
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      postsPending--;
      resolve();
    }),
  );
}

/** A queued ask at its turn: made now, or after the posts of operations in their pre-post turn. */
function queuedAsk(): void {
  if (postsPending > 0 && paceQueued) {
    setImmediate(queuedAsk).unref();
    return;
  }
  askYoungCollection();
}

/**
 * Whether pooled storage is paced by asked scavenges: death tokens here, so a scavenge brings
 * dropped storage home. Otherwise it is reported to V8 like caller-made storage.
 */
export function collectionsAreAsked(): boolean {
  tokenFactory ??= deathTokens(batchDied) ?? null;
  return tokenFactory !== null;
}

/** Bytes used in the young generation when the last pooled storage of 2 MiB or more was made, or -1. */
let youngUsedAtLarge = -1;
/** Bytes of pooled storage made since, counted up to {@link LARGE_GUARD_BYTES} (a total without a bound passes 2^31 in a long loop of small outputs: see util/running-total.ts). */
let madeSinceLarge = 0;
/** Whether a scavenge ran (or was asked for) since it was made. */
let scavengedAtLarge = false;
/**
 * Pooled storage made after the last large one beyond which it no longer keeps asks back: a loop
 * that moved on to small outputs is paced again (half the growth that asks).
 */
const LARGE_GUARD_BYTES = PACE_BYTES / 2;

/**
 * Whether a scavenge ran, or an ask was made, since the last large pooled storage was made (the
 * young generation shrank: seen once, remembered until the next large storage). Remembered, not
 * consumed by the check: an ask skipped for V8's own scavenge let the next ask of the same call
 * through, and its scavenge promoted the loop's last output.
 */
function scavengedSinceLarge(): boolean {
  if (youngUsedAtLarge < 0 || madeSinceLarge >= LARGE_GUARD_BYTES) return false;
  if (!scavengedAtLarge && youngGenerationUsed() < youngUsedAtLarge) scavengedAtLarge = true;
  return scavengedAtLarge;
}

/** Note pooled storage of `bytes` made now (see {@link scavengedSinceLarge}). */
function pooledMade(bytes: number): void {
  if (bytes < BULK_BELOW) {
    if (madeSinceLarge < LARGE_GUARD_BYTES) madeSinceLarge += bytes;
    return;
  }
  youngUsedAtLarge = youngGenerationUsed(); // a few microseconds: large storage only
  madeSinceLarge = 0;
  scavengedAtLarge = false;
}

/**
 * Bytes of pooled storage out that outlived {@link AGED_AFTER_ASKS} asks: kept, or promoted (found
 * alive by two scavenges) so that only a full collection can bring it home.
 */
export function promotedPooledBytes(): number {
  return aged;
}

/** Whether the queued ask fills the young generation in one go (see {@link askScavenge}). */
let askUrgent = false;

/**
 * Ask for a scavenge whatever the growth: a pool is about to run out of buffers for outputs of
 * 2 MiB or more (`fresh-output.ts`). Made while the main thread next waits for a kernel, or at the
 * next event-loop turn; its fill is not spread over turns (each turn of a loop of large outputs
 * is a kernel apart: the pool would run dry first).
 */
export function askScavenge(): void {
  askUrgent = true;
  if (paceQueued) return;
  paceQueued = true;
  setImmediate(queuedAsk).unref();
}

function askYoungCollection(): void {
  if (!paceQueued) return; // asked while a kernel ran
  paceQueued = false;
  const urgent = askUrgent;
  askUrgent = false;
  // The last ask's fill is still under way (a step a turn): its scavenge is this ask's too, and an
  // urgent ask makes it now. Counted as an ask of its own, it saw nothing made since the last one
  // and was skipped — and the pool ran dry while the fill crept on, a kernel a step (a 1024² f64
  // luFactor drop loop beside two busy CPUs: 28 of 32 hits).
  if (fillUnderWay()) {
    if (urgent) {
      registerDeferred();
      fillOn(Number.POSITIVE_INFINITY);
    }
    return;
  }
  // Nothing made since the last ask, or a scavenge ran since the last large storage was made: a
  // scavenge now could find nothing new dead, and would promote what was alive at both — a loop's
  // last output is, until its next await returns (the async function's suspended frame holds it) —
  // so that only a full collection could find it dead.
  if (outThisEpoch === 0 || scavengedSinceLarge()) return;
  if (youngUsedAtLarge >= 0) scavengedAtLarge = true; // this ask's scavenge is the one it may have
  // Doubled until storage comes home (`holdPooled` resets it then).
  paceEvery = Math.min(2 * paceEvery, PACE_MOST);
  pooledAtAsk = pooledLow = pooledOut;
  outByEpoch.set(paceAsks, outThisEpoch);
  outThisEpoch = 0;
  paceAsks++;
  // Storage made AGED_AFTER_ASKS asks ago and still out outlived two scavenges and the finalizers
  // after them (or is kept): only a full collection can find its tensors dead now, so V8 is told
  // of it, beyond the allowance.
  const newlyAged = outByEpoch.get(paceAsks - AGED_AFTER_ASKS);
  if (newlyAged !== undefined) {
    aged += newlyAged;
    tellAged();
  }
  // Storage waiting for its registration is held by the list: the scavenge would find it alive.
  registerDeferred();
  fillOn(urgent ? Number.POSITIVE_INFINITY : FILL_STEP);
}

/** Bytes of garbage made per event-loop turn by an ask (~0.3 ms): the rest at the next turns. */
const FILL_STEP = 4 * 1024 * 1024;
/** Whether an ask's fill is under way (not yet at the allocation that runs the scavenge). */
let filling = false;
/** Whether its next step is queued for the next turn. */
let fillQueued = false;
/** Fill steps made so far. */
let fillSteps = 0;
/** Bytes in use in the young generation after its last step. */
let usedAfterStep = 0;

function fillOn(budget: number): void {
  // V8's `gc` where it could be taken: the scavenge at once, without a fill.
  if (scavengeNow()) {
    filling = false;
    return;
  }
  fillSteps++;
  filling = !fillYoungGeneration(budget);
  if (!filling) return;
  usedAfterStep = youngGenerationUsed();
  if (!fillQueued) {
    fillQueued = true;
    setImmediate(fillStep).unref();
  }
}

/** Whether an ask's fill is still under way: a scavenge since its last step (V8's own) did its work. */
function fillUnderWay(): boolean {
  if (filling && youngGenerationUsed() < usedAfterStep) filling = false;
  return filling;
}

function fillStep(): void {
  fillQueued = false;
  if (fillUnderWay()) fillOn(FILL_STEP); // finished meanwhile by an urgent ask or a scavenge otherwise
}

/**
 * Scavenges asked for so far, the pooled storage out now, what V8 was told of it, the growth that
 * makes the next ask, whether an ask's fill is under way, and fill steps made. @internal test seam
 */
export function youngCollectionAsks(): {
  readonly asks: number;
  readonly pooledOut: number;
  readonly told: number;
  readonly paceEvery: number;
  readonly filling: boolean;
  readonly fillSteps: number;
} {
  return { asks: paceAsks, pooledOut, told: agedTold, paceEvery, filling, fillSteps };
}

/** Whether reports reach V8 (the OS binding loaded), asked once. */
let canReport: boolean | undefined;

/** Count `bytes` of new storage as external memory: in bulk below {@link BULK_BELOW}. Returns what was counted (0 without the OS binding). */
function report(bytes: number): number {
  if (bytes === 0) return 0;
  canReport ??= adjustExternalMemory(0) !== undefined;
  if (!canReport) return 0;
  if (bytes < BULK_BELOW) holdBulk(bytes);
  else adjustExternalMemory(bytes);
  return bytes;
}

/**
 * Told the buffer of caller-made storage (no home) whose last tensor was disposed and that no
 * operation uses any more: the workers' buffer tables forget it at once (set by
 * `runtime/workers/buffer-table.ts` when the first worker starts; #35).
 */
let callerStorageDisposed: ((buffer: SharedArrayBuffer) => void) | undefined;

/** Set the hook told of disposed caller-made storage (see `callerStorageDisposed`). */
export function setCallerStorageDisposedHook(hook: (buffer: SharedArrayBuffer) => void): void {
  callerStorageDisposed = hook;
}

/**
 * External memory reported for an instant by {@link nudgeCollection}: above V8's soft limit
 * (64 MiB over the external memory of the last full collection), so that V8 starts incremental
 * marking (or advances the marking under way) — and far below its hard limit (half the old
 * generation), above which it would run a synchronous memory-reducing collection instead.
 */
let nudgeBytes: number | undefined;

/** Whether a {@link nudgeCollection} is queued for the next event-loop turn. */
let nudgeQueued = false;
/** Reports made by nudges so far. */
let pressureReported = 0;

/** How many times nudges have reported memory pressure to V8. @internal test seam */
export function pressureReports(): number {
  return pressureReported;
}

/**
 * Ask V8 to start collecting soon rather than after 64 MiB more of external memory (#38), where
 * scavenges cannot bring storage home (no death tokens, {@link collectionsAreAsked}): a loop
 * that drops large outputs gets their storage back only through collections, and at V8's own
 * cadence its pool needs 64 MiB of buffers in circulation — 16 fresh 4 MiB outputs before the
 * first comes back. The report is not made now: the operation asking is about to post its kernel,
 * and V8 answers the report synchronously — it starts incremental marking, or finishes the
 * marking under way with a full pause (1.6–15 ms for a 1024² f64 cholesky's drop loop on a
 * 2-vCPU Xeon) — which made here would precede the kernel. It is made when the main thread next
 * waits for a kernel that outlasted its poll ({@link reportQueuedNudge}), on the main thread the
 * operation leaves idle, or at the next event-loop turn if that comes first. The next turn alone
 * was not enough: a loop whose operations take a turn before posting (`fresh-output.ts`) ran the
 * report in that turn, in front of the next kernel (2–5 ms of marking before the post in one call
 * of six of that loop). The finalizers then bring the storage home. Several asks before the report
 * make one. A no-op without the OS binding.
 */
export function nudgeCollection(): void {
  if (nudgeQueued) return;
  nudgeQueued = true;
  setImmediate(reportPressure).unref(); // never what keeps a finished program alive
}

/**
 * Report a queued nudge now, if any, and make a queued ask for a scavenge ({@link holdPooled}):
 * the main thread is about to wait for a kernel that outlasted its blocking poll, so V8's
 * synchronous answer overlaps that kernel — at the queued turn it could fall in front of the next
 * operation's post instead.
 */
export function reportQueuedNudge(): void {
  if (nudgeQueued) reportPressure();
  if (paceQueued) askYoungCollection();
}

function reportPressure(): void {
  if (!nudgeQueued) return; // reported while a kernel ran
  nudgeQueued = false;
  pressureReported++;
  nudgeBytes ??= Math.min(128 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 8));
  if (adjustExternalMemory(nudgeBytes) !== undefined) adjustExternalMemory(-nudgeBytes);
}

/** Pooled storages watched for collection and not yet home: their collection may bring storage back. */
let watched = 0;

/**
 * Whether some engine storage is watched for collection and not yet back home: after a collection
 * its finalizer runs at the next event-loop turn, so a pool miss may be worth one turn.
 */
export function collectionMayReturnStorage(): boolean {
  return watched > 0;
}

/** The storage of `cell` is unreachable: stop counting it, and send it home unless escaped or home already. */
function storageCollected(cell: StorageCell): void {
  if (cell.watched) {
    cell.watched = false;
    watched--;
  }
  unreport(cell);
  if (cell.escaped || cell.returned || cell.home === undefined) return;
  cell.returned = true;
  cell.home.returnStorage(cell.dtype, cell.buffer, 'collected', cell.made, cell.start, cell.bytes);
}

/** Told after a full collection (of each storage's anchor, see `register`): the backstop of {@link batchDied}. */
const collected = new FinalizationRegistry<StorageCell>(storageCollected);

/**
 * Pooled storage registered together at one event-loop turn, watched by one death token
 * (`@tenferro/os`), by batch id (#38). Every storage of a batch holds the token, so its
 * collection — by a scavenge too — says that the whole batch is unreachable, and it goes home
 * at the next turn. A registry alone cannot do that: V8's scavenger keeps the targets of weak
 * references alive, so storage watched only by `collected` came home after full collections —
 * one per ~1,700 calls of a loop dropping 64² f64 outputs, ~60 MiB in circulation. A batch that
 * keeps one storage reachable waits for it; every storage comes home by `collected` after a full
 * collection as well, by itself.
 */
const batches = new Map<number, StorageCell[]>();
/**
 * Storages per batch at most: a token costs ~1.5 µs to make and to see die (0.1 µs a storage at
 * 16), and a batch with one storage kept waits for a full collection — so a program keeping one
 * output in k still gets the rest back at scavenges when k ≥ 16.
 */
const BATCH_MAX = 16;
let batchesMade = 0;
/** The token factory: asked for once (`null`: no tokens here, `collected` alone brings storage home). */
let tokenFactory: DeathTokenFactory | null | undefined;

function batchDied(id: number): void {
  const cells = batches.get(id);
  if (cells === undefined) return;
  batches.delete(id);
  for (const cell of cells) storageCollected(cell);
}

/** A token for a new batch of `cells` (the caller fills it), or undefined without tokens. */
function newBatch(cells: StorageCell[]): ArrayBuffer | undefined {
  tokenFactory ??= deathTokens(batchDied) ?? null;
  if (tokenFactory === null) return undefined;
  const id = batchesMade;
  batchesMade = (batchesMade + 1) >>> 0;
  if (batches.has(id)) return undefined; // a batch 2^32 batches old is still alive: leave its id alone
  const token = tokenFactory(id);
  if (token !== undefined) batches.set(id, cells);
  return token;
}

/** Batches whose token is not collected yet. @internal test seam */
export function liveStorageBatches(): number {
  return batches.size;
}

/**
 * Storage made since the last event-loop turn, registered with `collected` at the next one if it
 * is still in use: the loop that disposes each output right away (the idiomatic one) then never
 * pays for a registration and its removal. Until then the list holds the storage, so nothing made
 * here can be collected unregistered. The list is bounded ({@link MAX_DEFERRED},
 * {@link MAX_DEFERRED_BYTES}): a loop that drops its outputs without ever yielding to the event
 * loop (every await resolved by a polled worker answer) registers them in batches, so they can be
 * collected and come back — without the bound it would hold all of them until its end.
 */
const unregistered: TensorStorage[] = [];
let unregisteredBytes = 0;
let flushScheduled = false;
const MAX_DEFERRED = 64;
const MAX_DEFERRED_BYTES = 16 * 1024 * 1024;

/** Register every storage in the list that is still in use (storage already home is skipped), and empty it. */
function registerDeferred(): void {
  let cells: StorageCell[] | undefined;
  let token: ArrayBuffer | undefined;
  for (const storage of unregistered) {
    const cell = storage.register();
    if (cell === undefined) continue;
    // Storage of 2 MiB or more has a token of its own: batched with the loop's live output (the
    // registrations made before an ask), a dropped one came home only with it, a scavenge later.
    if (cell.bytes >= BULK_BELOW) {
      const own = newBatch([cell]);
      if (own !== undefined) storage.holdToken(own);
      continue;
    }
    if (cells === undefined || cells.length === BATCH_MAX) token = newBatch((cells = []));
    if (token === undefined) continue;
    cells.push(cell);
    storage.holdToken(token);
  }
  unregistered.length = 0;
  unregisteredBytes = 0;
}

/** How many storages wait for their deferred registration now (bounded by {@link MAX_DEFERRED}). @internal test seam */
export function deferredRegistrations(): number {
  return unregistered.length;
}

function registerSurvivors(): void {
  flushScheduled = false;
  registerDeferred();
}

/**
 * The storage under one tensor and all its views. It counts references — every live (not
 * disposed) tensor over it and every operation using it right now — and goes back to its home
 * when the count drops to zero after a dispose, or when it becomes unreachable (unless escaped).
 * Caller-made storage has no home: disposing only invalidates tensors.
 */
export class TensorStorage {
  readonly #cell: StorageCell;
  #refs = 0;
  #registered = false;
  /** What `collected` watches for this storage (see `register`). */
  #anchor: object | undefined;
  /** Its batch's death token (see `batches`): held, never read. */
  #token: ArrayBuffer | undefined;

  /**
   * `allocated`: storage without a home that tenferro allocated for the caller (reported to V8 like
   * pooled storage). `start`, `bytes`: the block of `buffer` the storage holds (default the whole
   * buffer; a block carved from a slab shares its buffer with other storage).
   */
  constructor(dtype: DType, buffer: SharedArrayBuffer, home?: StorageHome, allocated = false, start = 0, bytes = buffer.byteLength) {
    this.#cell = { dtype, buffer, start, bytes, home, escaped: false, returned: false, reported: 0, watched: false, epoch: -1, made: ++storagesMade };
    if (home !== undefined || allocated) {
      if (home !== undefined && collectionsAreAsked()) {
        this.#cell.epoch = paceAsks;
        pooledMade(bytes);
        holdPooled(bytes, paceAsks);
      } else this.#cell.reported = report(bytes);
      unregistered.push(this);
      unregisteredBytes += bytes;
      if (unregistered.length >= MAX_DEFERRED || unregisteredBytes >= MAX_DEFERRED_BYTES) registerDeferred();
      else if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(registerSurvivors).unref();
      }
    }
  }

  /**
   * Watch for the collection of this storage, unless it went home (or was disposed) already.
   * Answers its cell when the storage is pooled: a batch's death token may watch it too.
   */
  register(): StorageCell | undefined {
    const cell = this.#cell;
    if (this.#registered || cell.returned || (cell.home === undefined && cell.reported === 0)) return undefined;
    this.#registered = true;
    // The registry watches an anchor only this storage holds, never the storage itself: a weak
    // target outlives every scavenge, so the storage would too — and with it its batch's token.
    const anchor = (this.#anchor = {});
    collected.register(anchor, cell, anchor);
    if (cell.home === undefined) return undefined;
    cell.watched = true;
    watched++;
    return cell;
  }

  /** Hold the death token of the batch this storage was registered in. */
  holdToken(token: ArrayBuffer): void {
    this.#token = token;
  }

  get buffer(): SharedArrayBuffer {
    return this.#cell.buffer;
  }

  /** Bytes of `buffer` the storage holds (its block: the whole buffer unless carved from a slab). */
  get bytes(): number {
    return this.#cell.bytes;
  }

  /** Where the storage goes back to (an engine pool, an allocation domain), if anywhere. */
  get home(): StorageHome | undefined {
    return this.#cell.home;
  }

  /** Whether the storage can go back to an engine pool. */
  get pooled(): boolean {
    return this.#cell.home !== undefined && !this.#cell.returned;
  }

  get escaped(): boolean {
    return this.#cell.escaped;
  }

  /** The caller holds the buffer now: only an explicit dispose may recycle it. */
  escape(): void {
    this.#cell.escaped = true;
  }

  /** Give storage without a home one (`backend.reclaim` of caller-made storage). */
  adoptInto(home: StorageHome): void {
    const cell = this.#cell;
    if (cell.home === undefined && !cell.returned) {
      cell.home = home;
      if (!this.#registered) this.register();
      else if (!cell.watched) {
        cell.watched = true;
        watched++;
      }
    }
  }

  retain(): void {
    this.#refs++;
  }

  /** Drop one reference; at zero the storage goes home (a dispose), or workers forget caller-made storage. */
  release(): void {
    if (--this.#refs > 0) return;
    const cell = this.#cell;
    if (cell.home === undefined) {
      // Caller-made storage, disposed: the workers forget it. Its memory lives until its buffer is
      // collected (the caller may hold it), so it stays reported until this object is collected.
      if (callerStorageDisposed !== undefined && cell.buffer.byteLength > 0) callerStorageDisposed(cell.buffer);
      return;
    }
    if (cell.returned) return;
    cell.returned = true;
    if (this.#anchor !== undefined && collected.unregister(this.#anchor) && cell.watched) {
      cell.watched = false;
      watched--;
    }
    unreport(cell);
    cell.home.returnStorage(cell.dtype, cell.buffer, 'disposed', cell.made, cell.start, cell.bytes);
  }
}
