// The native fuzz harness every addon's fuzz driver uses (test/native-fuzz.test.ts + a plain
// .mjs child in each native package). The child feeds seeded, mutated descriptors straight into
// the addon's entry point; the parent runs the child as a separate process, so a crash is a
// child exit with a signal, reported with the descriptor that caused it.
//
// Child side: `runFuzz(...)` — before each call the current case (seed, index, descriptor) is
// written to the trace file, so it survives a crash; every buffer the addon sees lies between
// two guard bands of a known pattern (`Guarded`), checked after every call; a refusal must leave
// the operands byte-for-byte unchanged; every status must be the one the driver's model of the
// native checks predicts. The first violation ends the child with exit code 1 and the case on
// stderr; success prints one JSON summary line.
//
// Parent side: `spawnFuzz(...)` — runs the child and returns its exit, summary and, after a
// crash, the last case from the trace file.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';

/** A small, fast, seedable PRNG (mulberry32): floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    /** An integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
  return r;
}

/** The PRNG of case `index` of a run with `seed`: each case can be replayed on its own. */
export function caseRng(seed, index) {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  return rng(h ^ (h >>> 13));
}

/** Values that have broken descriptor checks before: non-finite, negative, fractional, huge. */
export const NASTY = Object.freeze([
  Number.NaN, Infinity, -Infinity, -1, -0, 0.5, 1.5, -0.5, 1e19, 2 ** 63, -(2 ** 63), 2 ** 64, 2 ** 53, 2 ** 53 + 2, 2 ** 53 - 1,
  2 ** 52 + 0.5, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 62, 1e300, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON, 1e6, 65536,
]);

const GUARD = 64; // bytes of guard band on each side (a multiple of 16: the operand stays aligned)

/** The guard pattern byte at position i of a band (not constant, so a shifted write shows). */
function pattern(i) {
  return (0xa5 ^ (i * 29)) & 0xff;
}

/**
 * One operand buffer of `byteLength` bytes in the middle of a larger SharedArrayBuffer, with
 * guard bands before and after (and `shift` extra bytes before the operand, to misalign it).
 */
export class Guarded {
  constructor(byteLength, shift = 0) {
    this.byteLength = byteLength;
    this.start = GUARD + shift;
    this.sab = new SharedArrayBuffer(GUARD + shift + byteLength + GUARD);
    this.bytes = new Uint8Array(this.sab);
    for (let i = 0; i < this.start; i++) this.bytes[i] = pattern(i);
    for (let i = this.start + byteLength; i < this.bytes.length; i++) this.bytes[i] = pattern(i);
  }

  /** Fill the operand with `fill(i)` for element i of `Ctor` (or random bytes). */
  fillWith(Ctor, fill) {
    const n = Math.floor(this.byteLength / Ctor.BYTES_PER_ELEMENT);
    if (this.start % Ctor.BYTES_PER_ELEMENT === 0) {
      const v = new Ctor(this.sab, this.start, n);
      for (let i = 0; i < n; i++) v[i] = fill(i);
    } else {
      for (let i = 0; i < this.byteLength; i++) this.bytes[this.start + i] = fill(i) & 0xff;
    }
  }

  /** A view of the operand only: `Ctor` over [start, start + byteLength) (whole elements). */
  view(Ctor) {
    return new Ctor(this.sab, this.start, Math.floor(this.byteLength / Ctor.BYTES_PER_ELEMENT));
  }

  /** The offset of the first guard byte that changed, or -1. */
  touchedGuard() {
    const b = this.bytes;
    for (let i = 0; i < this.start; i++) if (b[i] !== pattern(i)) return i;
    for (let i = this.start + this.byteLength; i < b.length; i++) if (b[i] !== pattern(i)) return i;
    return -1;
  }

  snapshot() {
    return Buffer.from(this.bytes.slice(this.start, this.start + this.byteLength));
  }

  unchangedSince(snapshot) {
    return Buffer.from(this.sab, this.start, this.byteLength).equals(snapshot);
  }
}

/** A number as text that keeps NaN, ±Infinity and -0 (JSON would not). */
export function num(x) {
  return typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : `${typeof x}:${String(x)}`;
}

/**
 * Run `count` cases. `makeCase(r, index)` returns `{ describe, operands: Guarded[], call, expect }`:
 * `describe` (a JSON-able record of the descriptor and buffers, written to the trace before the
 * call), `call()` (runs the addon, returns its status), `expect` (the status the model predicts,
 * or a list of acceptable statuses) and `documented` (every status the addon may return).
 */
export function runFuzz({ name, seed, count, trace, makeCase, documented }) {
  // TENFERRO_FUZZ_SABOTAGE=crash|guard|write breaks a run on purpose, so the tests can show that
  // each check fails when it should (a crash, a touched guard byte, a refusal that wrote).
  const sabotage = process.env.TENFERRO_FUZZ_SABOTAGE;
  const fd = openSync(trace, 'w');
  const histogram = {};
  const started = process.hrtime.bigint();
  const fail = (index, c, text) => {
    process.stderr.write(`${name}: case ${index} (seed ${seed}): ${text}\n${JSON.stringify(c.describe)}\n`);
    process.exit(1);
  };
  for (let index = 0; index < count; index++) {
    const r = caseRng(seed, index);
    const c = makeCase(r, index);
    const line = `${JSON.stringify({ name, seed, index, ...c.describe })}\n`;
    ftruncateSync(fd, 0);
    writeSync(fd, line, 0);
    const snapshots = c.operands.map((o) => o.snapshot());
    if (sabotage === 'crash' && index === 3) process.kill(process.pid, 'SIGSEGV'); // as a crashing call would
    const status = c.call();
    if (sabotage === 'guard' && index === 3 && c.operands.length > 0) c.operands[0].bytes[0] ^= 1;
    if (sabotage === 'write' && status !== 0 && c.operands[0]?.byteLength > 0) c.operands[0].bytes[c.operands[0].start] ^= 1;
    histogram[status] = (histogram[status] ?? 0) + 1;
    if (!documented.includes(status)) fail(index, c, `undocumented status ${status}`);
    const expected = Array.isArray(c.expect) ? c.expect : [c.expect];
    if (!expected.includes(status)) fail(index, c, `status ${status}, but the model of the native checks predicts ${expected.join(' or ')}`);
    for (const [i, o] of c.operands.entries()) {
      const at = o.touchedGuard();
      if (at >= 0) fail(index, c, `guard byte ${at} of operand ${i} was written (operand bytes [${o.start}, ${o.start + o.byteLength}))`);
      if (status !== 0 && !o.unchangedSince(snapshots[i])) fail(index, c, `status ${status} (a refusal), but operand ${i} was written`);
    }
    c.after?.(status);
  }
  closeSync(fd);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  process.stdout.write(`${JSON.stringify({ name, seed, count, ms: Math.round(ms), statuses: histogram })}\n`);
}

/**
 * Run a fuzz child: `[wrapper] node [nodeArgs] script ...args --seed S --count N --trace T`. Returns the
 * exit status and signal, the child's JSON summary (on success), its stderr, the last case written
 * to the trace (the one that was running when it crashed) and the wall time.
 */
export function spawnFuzz({ script, args = [], seed, count, trace, env = {}, timeoutMs = 300_000, nodeArgs = [], wrapper = [] }) {
  const started = Date.now();
  const argv = [...nodeArgs, script, ...args, '--seed', String(seed), '--count', String(count), '--trace', trace];
  // `wrapper` runs the child under another command, e.g. ['taskset', '-c', '1'].
  const [command, ...commandArgs] = wrapper.length > 0 ? [...wrapper, process.execPath, ...argv] : [process.execPath, ...argv];
  const r = spawnSync(command, commandArgs, {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: timeoutMs,
    maxBuffer: 16 * 1024 * 1024,
  });
  let summary;
  try {
    summary = JSON.parse((r.stdout ?? '').trim().split('\n').pop() ?? '');
  } catch {
    summary = undefined;
  }
  const lastCase = existsSync(trace) ? readFileSync(trace, 'utf8').trim() : '';
  return { status: r.status, signal: r.signal, error: r.error, summary, stderr: r.stderr ?? '', lastCase, ms: Date.now() - started };
}

/** `--seed`, `--count`, `--trace` and `--addon` from argv, with defaults. */
export function fuzzArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]?.replace(/^--/, '');
    if (key === undefined) break;
    out[key] = key === 'seed' || key === 'count' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return out;
}

/**
 * Worker termination while a binding call runs: a child process starts a worker that calls
 * `binding[fn](...args)` in a loop, terminates it (`rounds` times, each after the worker said it
 * is looping), and prints `ok`. A binding whose N-API call fails during termination must not
 * take the process down (node-addon-api without NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS aborts
 * with "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw").
 */
export function spawnTerminationProbe({ addon, fn, args = [], rounds = 20, env = {}, timeoutMs = 60_000 }) {
  const source = `
    import { Worker } from 'node:worker_threads';
    const data = ${JSON.stringify({ addon, fn, args })};
    for (let round = 0; round < ${Number(rounds)}; round++) {
      const w = new Worker("const { parentPort, workerData: d } = require('node:worker_threads'); const b = require(d.addon); parentPort.postMessage('looping'); for (;;) b[d.fn](...d.args);", { eval: true, execArgv: [], workerData: data });
      await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
      await w.terminate();
    }
    console.log('ok');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: timeoutMs });
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
