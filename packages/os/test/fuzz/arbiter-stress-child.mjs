// Stress of the native arbiter across isolates (run by `npm run test:asan` against the sanitizer
// build, and by test/arbiter.test.ts): the main thread and W workers each issue random acquire /
// release / cancel calls on the process-wide state (CPU sets over word 0 and a far word, or
// provider-exclusive), every permit of its own owner, and count the holders of each CPU in a
// SharedArrayBuffer: two holders at once is a violation. Malformed descriptors are mixed in
// (they must answer -1). Half the workers are terminated mid-run; at the end every permit and
// waiter must be gone.
//
//   node arbiter-stress-child.mjs [--addon path] [--ops N] [--workers W]
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const config = isMainThread
  ? { addon: opt('addon', fileURLToPath(new URL('../../native/build/Release/tenferro_os.node', import.meta.url))), ops: Number(opt('ops', '20000')), workers: Number(opt('workers', '4')) }
  : workerData.config;
const b = createRequire(import.meta.url)(config.addon);
// Row r counts the permits isolate r (0: main, 1..W: workers) holds per slot; `dead[r]` is set
// before a worker is terminated, and its row is ignored from then on (its permits are released by
// the addon's cleanup hook, which nothing here can observe).
const SLOTS = 40;
const EXCL = 39;
const rows = config.workers + 1;
const holders = new Int32Array(isMainThread ? new SharedArrayBuffer(4 * SLOTS * rows) : workerData.holders);
const dead = new Int32Array(isMainThread ? new SharedArrayBuffer(4 * rows) : workerData.dead);
const me = isMainThread ? 0 : workerData.row;
const live = (slot) => {
  let n = 0;
  for (let r = 0; r < rows; r++) if (Atomics.load(dead, r) === 0) n += Atomics.load(holders, r * SLOTS + slot);
  return n;
};

let seed = isMainThread ? 1 : workerData.seed;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return (seed >>> 8) % n;
};

/** The CPUs a request names (0..31 in word 0, 32..37 as word 5000's low bits), or EXCL. */
function slots(pairs) {
  if (pairs === null) return [EXCL];
  const out = [];
  for (let k = 0; k < pairs.length; k += 2) for (let bit = 0; bit < 32; bit++) if (pairs[k + 1] & (1 << bit)) out.push(pairs[k] === 0 ? bit : 32 + bit);
  return out;
}

function hold(pairs, delta) {
  for (const s of slots(pairs)) {
    Atomics.add(holders, me * SLOTS + s, delta);
    const n = live(s);
    if (n > 1) throw new Error(`violation: slot ${s} has ${n} holders`);
  }
  // An exclusive holder excludes every other holder, and vice versa.
  if (delta > 0) {
    let others = 0;
    for (let s = 0; s < EXCL; s++) others += live(s);
    if (live(EXCL) > 0 && others > 0) throw new Error('violation: exclusive beside another permit');
  }
}

async function run(ops) {
  const requests = new Map(); // id -> { pairs, state }
  // Well-formed junk requests whose cancel came too late: granted meanwhile, released when the grant arrives.
  const lateJunk = new Set();
  let next = 1;
  let done;
  const finished = new Promise((r) => (done = r));
  const client = b.arbiterOpen((grants) => {
    for (const g of grants) admitted(Math.floor(g / 2));
  }, false);
  b.arbiterRef(client, true);
  function admitted(id) {
    if (lateJunk.delete(id)) {
      if (b.arbiterRelease(client, id) & 4) take();
      return;
    }
    const r = requests.get(id);
    r.state = 'held';
    hold(r.pairs, 1);
  }
  function take() {
    for (const g of b.arbiterTakeGrants(client)) admitted(Math.floor(g / 2));
  }
  for (let i = 0; i < ops; i++) {
    const op = rand(10);
    const held = [...requests].filter(([, r]) => r.state === 'held');
    const waiting = [...requests].filter(([, r]) => r.state === 'waiting');
    if (op < 4 && requests.size < 4) {
      const pairs = rand(10) === 0 ? null : rand(3) === 0 ? new Uint32Array([0, 1 + rand(63), 5000, 1 + rand(63)]) : new Uint32Array([0, 1 << rand(6)]);
      const id = next++;
      const owner = b.arbiterReserveOwners(1, 0);
      requests.set(id, { pairs, state: 'waiting' });
      const flags = b.arbiterAcquire(client, id, owner, pairs);
      if (flags < 0) throw new Error('a valid request was refused');
      if (flags & 1) admitted(id);
      if (flags & 4) take();
    } else if (op < 7 && held.length > 0) {
      const [id, r] = held[rand(held.length)];
      hold(r.pairs, -1);
      requests.delete(id);
      if (b.arbiterRelease(client, id) & 4) take();
    } else if (op < 8 && waiting.length > 0) {
      const [id] = waiting[rand(waiting.length)];
      const flags = b.arbiterCancel(client, id);
      if (flags & 8) requests.delete(id);
      if (flags & 4) take();
    } else if (op < 9) {
      const junk = new Uint32Array(rand(6));
      for (let k = 0; k < junk.length; k++) junk[k] = rand(3) === 0 ? 0 : rand(2) ? rand(40000) : 0xffffffff;
      const flags = b.arbiterAcquire(client, next++, 1, junk);
      if (flags >= 0) {
        // A well-formed one by chance: undo it. A cancel that finds it already granted (the grant
        // not yet delivered) leaves it to `admitted`, which releases it on arrival.
        if (flags & 1) b.arbiterRelease(client, next - 1);
        else if ((b.arbiterCancel(client, next - 1) & 8) === 0) lateJunk.add(next - 1);
        if (flags & 4) take();
      }
    } else {
      await new Promise((r) => setImmediate(r)); // let grants from other isolates arrive
    }
    if (!isMainThread && i === ops >> 2) parentPort.postMessage('busy'); // a quarter in: terminate me now (some)
  }
  // Drain: release what is held, cancel what waits, until nothing is left.
  while (requests.size > 0 || lateJunk.size > 0) {
    for (const [id, r] of [...requests]) {
      if (r.state === 'held') {
        hold(r.pairs, -1);
        requests.delete(id);
        if (b.arbiterRelease(client, id) & 4) take();
      } else if (b.arbiterCancel(client, id) & 8) requests.delete(id);
    }
    take();
    if (requests.size > 0 || lateJunk.size > 0) await new Promise((r) => setImmediate(r));
  }
  b.arbiterRef(client, false);
  done();
  return finished;
}

if (isMainThread) {
  const workers = Array.from({ length: config.workers }, (_, i) =>
    new Worker(new URL(import.meta.url), { workerData: { config, holders: holders.buffer, dead: dead.buffer, row: i + 1, seed: 1000 + i } }),
  );
  const exits = workers.map((w) => new Promise((resolve, reject) => {
    w.on('error', reject);
    w.on('exit', resolve);
  }));
  // Terminate half the workers mid-run (after they have started working).
  workers.slice(0, config.workers >> 1).forEach((w, i) =>
    w.on('message', (m) => {
      if (m !== 'busy') return;
      Atomics.store(dead, i + 1, 1);
      void w.terminate();
    }),
  );
  await run(config.ops);
  await Promise.all(exits);
  // The terminated workers' permits and waiters were released by their cleanup hooks.
  const stats = b.arbiterStats(null);
  if (stats.active !== 0 || stats.waiting !== 0) throw new Error(`left over: ${JSON.stringify(stats)}`);
  console.log('ok');
} else {
  await run(config.ops);
}
