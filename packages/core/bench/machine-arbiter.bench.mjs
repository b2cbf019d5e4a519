// The machine-wide arbiter (#41): what it costs and how fast it hands over and recovers.
//
//   cd packages/core && npx tsc -b && node bench/machine-arbiter.bench.mjs [--json] [--seconds 3]
//
// 1. Uncontended acquire + release (R33's fast path), per operation: the process arbiter (its
//    native state, a private one here), the machine arbiter (the joined segment — the one-level
//    design that was chosen), and a two-level prototype (a process permit, then a machine permit,
//    released in reverse — the design that was not), each as the admission path calls it
//    (admitOrWait + release) and as an application does (await acquire + release).
// 2. Hand-over between two processes that ping-pong a permit on every CPU (each holds it until the
//    other is queued): from one's release to the other's admission (CLOCK_MONOTONIC, shared by
//    processes), p50/p90/p99.
// 3. Kill recovery: a child holds a permit on every CPU, this process waits for it, the child is
//    SIGKILLed; from the kill to this process's admission, p50/p99 over 20 kills.
// 4. Matmul n = 64 (f64), streamed for --seconds: per call in one process unjoined and joined, and
//    the throughput of two joined processes on the same CPUs against one (plus two unjoined, which
//    overlap freely).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    role: { type: 'string', default: 'main' },
    name: { type: 'string', default: '' },
    json: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '3' },
    kills: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2000' },
  },
});
const core = await import('../dist/index.js');
const { CpuBackend, CpuSet, MachineArbiter, ProcessArbiter, Tensor, discoverCpuTopology, joinMachineArbiter, machineArbiter } = core;
const ALL = discoverCpuTopology().allowedCpus;
const now = () => process.hrtime.bigint();
const line = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

function stdinLine() {
  return new Promise((resolve) => {
    let buf = '';
    const on = (d) => {
      buf += d.toString();
      if (buf.includes('\n')) {
        process.stdin.off('data', on);
        process.stdin.pause();
        resolve(buf.trim());
      }
    };
    process.stdin.on('data', on);
  });
}

// ---- child roles ----------------------------------------------------------------------------
if (args.role === 'pingpong') {
  const m = machineArbiter();
  const req = { cpus: ALL };
  line({ ready: true });
  await stdinLine();
  const log = [];
  for (let i = 0; i < Number(args.rounds); i++) {
    const got = m.admitOrWait(req);
    const waited = !(got instanceof core.Permit);
    const p = waited ? await got : got;
    const acquired = now();
    // Hold until the other process is queued (at most 20 ms), so that the release is a hand-over.
    while (m.processStats().waiting === 0 && now() - acquired < 20_000_000n);
    const released = now();
    p.release();
    log.push(Number(acquired), Number(released), waited ? 1 : 0);
  }
  line({ log });
  process.exit(0);
}
if (args.role === 'hold') {
  await machineArbiter().acquire({ cpus: ALL });
  line({ held: true });
  setInterval(() => {}, 1 << 30);
  await new Promise(() => {});
}
if (args.role === 'stream') {
  // faer from the workspace (core does not depend on it: without it the backend would run core's reference GEMM).
  const { createFaerProvider } = await import('../../provider-faer/dist/index.js');
  const b = await CpuBackend.create({ threads: 2, providers: [createFaerProvider()] });
  const n = 64;
  const x = Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => (i % 7) - 3));
  const y = Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => (i % 5) - 2));
  const end0 = Date.now() + 300;
  while (Date.now() < end0) (await b.matmul(x, y)).dispose(); // warm-up
  line({ ready: true, arbiter: b.executionInfo().arbiter, kind: b.executionInfo().backendKind });
  await stdinLine();
  const t0 = now();
  const stop = t0 + BigInt(Number(args.seconds) * 1e9);
  let ops = 0;
  while (now() < stop) {
    for (let k = 0; k < 16; k++) (await b.matmul(x, y)).dispose();
    ops += 16;
  }
  const t1 = now();
  await b.close();
  line({ ops, ns: Number(t1 - t0) });
  process.exit(0);
}

// ---- main -----------------------------------------------------------------------------------
const NAME = `bench41-${process.pid}`;
const load = () => (process.platform === 'linux' ? (awaitLoad ??= import('node:os')).then((os) => os.loadavg().map((l) => l.toFixed(2)).join(' ')) : Promise.resolve('?'));
let awaitLoad;
const quant = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const median = (xs) => quant(xs, 0.5);
const out = { loadBefore: await load() };
const say = (...xs) => {
  if (!args.json) console.log(...xs);
};

function child(role, joined, extra = []) {
  const env = { ...process.env, TENFERRO_DISCOVER_PROVIDERS: process.env.TENFERRO_DISCOVER_PROVIDERS ?? '1' };
  if (joined) env.TENFERRO_MACHINE_ARBITER = NAME;
  else delete env.TENFERRO_MACHINE_ARBITER;
  const proc = spawn(process.execPath, [new URL(import.meta.url).pathname, '--role', role, ...extra], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(msg);
      else lines.push(msg);
    }
  });
  const next = () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
  return { proc, next, go: () => proc.stdin.write('go\n') };
}

try {
  const machine = joinMachineArbiter(NAME);
  const proc = ProcessArbiter.open({ isolated: true });
  const req = { cpus: CpuSet.of(ALL.toArray()) };
  const OPS = 200_000;
  const sync = (arb) => () => {
    for (let i = 0; i < OPS; i++) arb.admitOrWait(req).release();
  };
  const twoLevel = () => {
    for (let i = 0; i < OPS; i++) {
      const owner = core.newExecutionOwner();
      const p = proc.admitOrWait(req, { owner });
      const m = machine.admitOrWait(req, { owner });
      m.release();
      p.release();
    }
  };
  const asyncOf = (arb) => async () => {
    for (let i = 0; i < OPS; i++) (await arb.acquire(req)).release();
  };
  const perOp = async (fn) => {
    await fn();
    const xs = [];
    for (let b = 0; b < 7; b++) {
      const t0 = now();
      await fn();
      xs.push(Number(now() - t0) / 1e3 / OPS);
    }
    return median(xs);
  };
  out.uncontendedUs = {
    process: await perOp(sync(proc)),
    machine: await perOp(sync(machine)),
    twoLevelPrototype: await perOp(twoLevel),
    processAwait: await perOp(asyncOf(proc)),
    machineAwait: await perOp(asyncOf(machine)),
  };
  say(`uncontended acquire + release, µs/op (median of 7 × ${OPS}):`, out.uncontendedUs);

  // Hand-over between processes.
  {
    const a = child('pingpong', true, ['--rounds', args.rounds]);
    const b = child('pingpong', true, ['--rounds', args.rounds]);
    await a.next();
    await b.next();
    a.go();
    b.go();
    const [la, lb] = [(await a.next()).log, (await b.next()).log];
    const ev = [];
    for (let i = 0; i < la.length; i += 3) ev.push([la[i], la[i + 1], 'a', la[i + 2]]);
    for (let i = 0; i < lb.length; i += 3) ev.push([lb[i], lb[i + 1], 'b', lb[i + 2]]);
    ev.sort((x, y) => x[0] - y[0]);
    const hand = [];
    let overlaps = 0;
    for (let i = 1; i < ev.length; i++) {
      if (ev[i][0] < ev[i - 1][1]) overlaps++;
      // A hand-over: this acquisition waited, and the permit came from the other process's release.
      if (ev[i][3] === 1 && ev[i][2] !== ev[i - 1][2]) hand.push((ev[i][0] - ev[i - 1][1]) / 1e3);
    }
    out.handOverUs = { count: hand.length, p50: quant(hand, 0.5), p90: quant(hand, 0.9), p99: quant(hand, 0.99), overlaps };
    say('hand-over between two processes, µs:', out.handOverUs);
  }

  // Kill recovery.
  {
    const ms = [];
    for (let k = 0; k < Number(args.kills); k++) {
      const h = child('hold', true);
      const exited = new Promise((r) => h.proc.once('exit', r));
      await h.next();
      const pending = machine.acquire(req);
      if (machine.stats().waiting !== 1) throw new Error('the bench process should be waiting');
      const t0 = now();
      h.proc.kill('SIGKILL');
      const p = await pending;
      ms.push(Number(now() - t0) / 1e6);
      p.release();
      await exited;
    }
    out.killRecoveryMs = { kills: ms.length, p50: quant(ms, 0.5), p99: quant(ms, 0.99), max: Math.max(...ms) };
    say('kill recovery (SIGKILL of the holder → waiter admitted), ms:', out.killRecoveryMs);
  }

  // Streams of n = 64 matmuls.
  const stream = async (count, joined) => {
    const cs = Array.from({ length: count }, () => child('stream', joined, ['--seconds', args.seconds]));
    const ready = [];
    for (const c of cs) ready.push(await c.next());
    for (const c of cs) c.go();
    const res = [];
    for (const c of cs) res.push(await c.next());
    const opsPerS = res.reduce((s, r) => s + r.ops / (r.ns / 1e9), 0);
    return { processes: count, joined, kind: ready[0].kind, arbiter: ready[0].arbiter, opsPerS: Math.round(opsPerS), usPerCall: res.map((r) => +(r.ns / 1e3 / r.ops).toFixed(2)) };
  };
  out.matmul64 = [await stream(1, false), await stream(1, true), await stream(2, true), await stream(2, false)];
  for (const r of out.matmul64) say(`matmul n=64: ${r.processes} process(es), ${r.arbiter} arbiter (${r.kind}): ${r.opsPerS} calls/s in all, µs/call ${r.usPerCall.join(', ')}`);
  out.twoJoinedVsOne = +(out.matmul64[2].opsPerS / out.matmul64[1].opsPerS).toFixed(3);
  say(`two joined processes / one joined: ${out.twoJoinedVsOne}×`);
  out.census = machineArbiter().census();
} finally {
  rmSync(`/dev/shm/tenferro-${NAME}`, { force: true });
}
out.loadAfter = await load();
say(`load average before: ${out.loadBefore}; after: ${out.loadAfter}`);
if (args.json) console.log(JSON.stringify(out));
process.exit(0);
