// The native fuzz driver of tenferro_linalg.node (run by test/native-fuzz.test.ts, and by
// `npm run test:asan` against the sanitizer build): seeded jobs for every op (0–9), the team tasks of
// the blocked LU and Cholesky (10, 11: one lane, zeroed sync words, garbage pivots in out1), and every dtype straight
// into `run(words, a, b, out0, out1, out2, info, abort?)` — outputs and info at random offsets of
// their buffers (#35) —, every buffer between guard bands, some
// with an abort word (raised: Aborted before anything is written), then mutated words, short
// buffers, wrong argument kinds; and `info()` once. A well-formed job with large enough buffers
// must succeed; any other must return a documented status; no guard byte may change, and a
// refusal must leave every buffer untouched. Matrices are at most 12×12, batches at most 8.
// A reduced build (binding.gyp's tenferro_linalg_f64_only=1, the sanitizer build of #39) says in
// info().dtypesNotBuilt which dtypes it left out: nine jobs in ten are then of a built dtype, and a
// well-formed job of another must be refused with BadDtype (counted; none seen fails the run).
// --dtypes f64 states which dtypes the build under test must have (packages/native-build/asan.mjs):
// a build that disagrees fails the run.
//
//   node native-fuzz-child.mjs [--addon path] [--dtypes f32,f64,c64,c128] --seed S --count N --trace file
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Guarded, NASTY, fuzzArgs, num, runFuzz } from '@tenferro/native-build/fuzz';

const args = fuzzArgs(process.argv.slice(2), {
  addon: fileURLToPath(new URL('../../native/build/Release/tenferro_linalg.node', import.meta.url)),
  seed: 1,
  count: 1000,
  trace: '/dev/null',
});
const binding = createRequire(import.meta.url)(args.addon);
// native/src/linalg.h
const S = { Ok: 0, BadArguments: 1, OutOfBounds: 2, BadDtype: 3, BadRange: 4, Aborted: 5, BadOp: 6 };
const DOCUMENTED = Object.values(S);
const H = 20; // words 16..18: the outputs' offsets (elements of their type), 19: info's (int32) — #35
const FLAG = { upper: 1, left: 2, unit: 4, full: 8, vectors: 16, rOnly: 32 };

const about = binding.info();

// The dtypes this build compiled (codes 0..3 = f32, f64, c64, c128) and those it left out.
const DTYPES = ['f32', 'f64', 'c64', 'c128'];
const notBuiltNames = about.dtypesNotBuilt === undefined || about.dtypesNotBuilt === '' ? [] : String(about.dtypesNotBuilt).split(',');
const notBuilt = notBuiltNames.map((n) => DTYPES.indexOf(n));
const built = [0, 1, 2, 3].filter((dt) => !notBuilt.includes(dt));
if (notBuilt.includes(-1) || built.length === 0) {
  process.stderr.write(`tenferro_linalg.info().dtypesNotBuilt is ${JSON.stringify(about.dtypesNotBuilt)}: not a list of dtypes\n`);
  process.exit(1);
}
if (args.dtypes !== undefined && args.dtypes !== built.map((dt) => DTYPES[dt]).join(',')) {
  process.stderr.write(`--dtypes ${args.dtypes}, but the addon ${args.addon} has ${built.map((dt) => DTYPES[dt]).join(',')} (info().dtypesNotBuilt ${JSON.stringify(about.dtypesNotBuilt)})\n`);
  process.exit(1);
}
/** A job's dtype: any of the four on a full build (the same draws as ever); else a built one nine times in ten. */
const pickDtype = (r) => (notBuilt.length === 0 ? r.int(0, 3) : r.chance(0.9) ? r.pick(built) : r.pick(notBuilt));
let refusedNotBuilt = 0;
/** The statuses a job may end with: a well-formed job of a dtype this build left out is refused with BadDtype. */
function expectation(dt, wellFormed, okStatus) {
  if (!wellFormed) return { expect: DOCUMENTED };
  if (!notBuilt.includes(dt)) return { expect: [okStatus] };
  return { expect: [S.BadDtype], after: () => { refusedNotBuilt += 1; } };
}

// Per-batch output sizes in bytes (native/src/shapes.cc), scalar size s, real size r.
function outBytes(op, m, n, flags, s, r) {
  const k = Math.min(m, n), vec = (flags & FLAG.vectors) !== 0, full = (flags & FLAG.full) !== 0;
  switch (op) {
    case 0: return [m * m * s, 0, 0];
    case 1: case 4: return [m * n * s, 0, 0];
    case 2: return [m * n * s, k * 4, 0];
    case 3: return [m * m * s, m * k * s, k * n * s];
    case 5: return [flags & FLAG.rOnly ? 0 : (full ? m * m : m * k) * s, (full ? m * n : k * n) * s, 0];
    case 6: return [vec ? (full ? m * m : m * k) * s : 0, k * r, vec ? (full ? n * n : k * n) * s : 0];
    case 7: return [m * r, vec ? m * m * s : 0, 0];
    case 9: return [m * m * s, m * 4, m * 4];
    default: return [m * 2 * r, vec ? m * m * 2 * r : 0, 0];
  }
}

function inShape(op, m, n, flags, which) {
  if (op === 0 || op === 7 || op === 8 || op === 9) return which === 0 ? [m, m] : null;
  if (op === 1) return which === 1 ? [m, n] : flags & FLAG.left ? [m, m] : [n, n];
  if (op === 4) return which === 1 ? [m, n] : [m, m];
  return which === 0 ? [m, n] : null;
}

// Whether op (with flags) has output `which` (native/src/shapes.cc: out_elems ≥ 0).
function used(op, which, flags) {
  const vec = (flags & FLAG.vectors) !== 0;
  switch (op) {
    case 0: case 1: case 4: return which === 0;
    case 2: return which < 2;
    case 5: return which === 1 || (which === 0 && (flags & FLAG.rOnly) === 0);
    case 6: return which === 1 || vec;
    case 7: case 8: return which === 0 || (which === 1 && vec);
    default: return true;
  }
}

// Bytes of one element of output `which` (native/src/shapes.cc out_kind), scalar size s, real size r.
function outElem(op, which, s, r) {
  if (op === 2) return which === 1 ? 4 : s;
  if (op === 9 || op === 10 || op === 11) return which === 0 ? s : 4;
  if (op === 6) return which === 1 ? r : s;
  if (op === 7) return which === 0 ? r : s;
  if (op === 8) return 2 * r;
  return s;
}

// A team task of the blocked factorisations (native/src/linalg.h): one n×n matrix in out0, A read
// by the gathers, pivots in out1 (LU; written by the panels before any update reads them), the sync
// words in out2 — zeroed, as the caller must give them (one lane alone runs every task).
function makeStepCase(r) {
  const op = r.pick([10, 11]), dt = pickDtype(r);
  const s = [4, 8, 8, 16][dt];
  const n = r.int(1, 12), nb = r.int(1, n);
  const panels = Math.ceil(n / nb);
  const flags = r.int(0, 63);
  const col = r.chance(0.6), off = r.int(0, 3);
  const rsd = col ? 1 : n + r.int(0, 2), csd = col ? n + r.int(0, 2) : 1;
  const d = new Array(H).fill(0);
  Object.assign(d, { 0: op, 1: dt, 2: n, 3: n, 4: nb, 5: flags, 8: 0, 9: -1, 10: off, 11: rsd, 12: csd });
  // Outputs and info at random offsets (elements of their type) into longer buffers.
  const offs = [0, 1, 2, 3].map(() => (r.chance(0.5) ? 0 : r.int(1, 3)));
  for (let o = 0; o < 4; o++) d[16 + o] = offs[o];
  const lens = [(off + (n - 1) * (rsd + csd) + 1) * s, 8, (offs[0] + n * n) * s, (offs[1] + (op === 10 ? n : 0)) * 4, (offs[2] + 8 + panels) * 4, (offs[3] + 1) * 4];
  let wellFormed = true;
  const short = r.chance(0.1) ? r.pick([0, 2, 3, 4, 5]) : -1;
  if (short >= 0 && lens[short] > 0) { lens[short] -= r.pick([1, 4, 8]); wellFormed = false; }
  const mutations = r.chance(0.4) ? r.int(1, 3) : 0;
  for (let i = 0; i < mutations; i++) {
    const at = r.int(0, d.length - 1);
    d[at] = r.chance(0.6) ? r.pick(NASTY) : r.chance(0.5) ? d[at] + r.pick([-1, 1, 2 ** 20]) : r.int(-3, 2 ** 20);
    wellFormed = false;
  }
  for (const at of [2, 3, 4]) if (d[at] > 64 && Number.isFinite(d[at])) d[at] = r.int(1, 12);
  const ops = lens.map((l) => new Guarded(Math.max(0, l)));
  ops[0].fillWith(Uint8Array, () => r.int(0, 255));
  if (op === 10) ops[3].fillWith(Int32Array, () => r.int(-3, 20));
  const abort = r.chance(0.15) ? new Int32Array([r.chance(0.5) ? 1 : 0]) : undefined;
  if (abort !== undefined && mutations === 0) d[9] = 0;
  const words = Float64Array.from(d);
  const argv = [words, ...ops.slice(0, 5).map((o) => o.view(Uint8Array)), ops[5].view(Int32Array)];
  if (abort !== undefined) argv.push(abort);
  const aborts = abort !== undefined && abort[0] !== 0 && mutations === 0;
  return {
    describe: { words: d.map(num), lens, argc: argv.length, abort: abort === undefined ? null : abort[0] },
    operands: ops,
    call: () => binding.run(...argv),
    ...expectation(dt, wellFormed, aborts ? S.Aborted : S.Ok),
  };
}

function makeCase(r) {
  if (r.chance(0.2)) return makeStepCase(r);
  const op = r.int(0, 9), dt = pickDtype(r);
  const s = [4, 8, 8, 16][dt], rs = dt === 0 || dt === 2 ? 4 : 8;
  let m = r.chance(0.05) ? 0 : r.int(1, 12), n = r.chance(0.05) ? 0 : r.int(1, 12);
  if (op === 0 || op === 7 || op === 8 || op === 9) n = m;
  const flags = r.int(0, 63);
  const rank = r.chance(0.5) ? 0 : r.int(1, 3);
  const ext = Array.from({ length: rank }, () => (r.chance(0.05) ? 0 : r.int(1, 2)));
  const total = ext.reduce((a, e) => a * e, 1);
  const b0 = r.chance(0.7) ? 0 : r.int(0, total), b1 = r.chance(0.7) ? total : r.int(b0, total);
  const d = new Array(H + 3 * rank).fill(0);
  Object.assign(d, { 0: op, 1: dt, 2: m, 3: n, 4: 0, 5: flags, 6: b0, 7: b1, 8: rank, 9: -1 });
  const lens = [];
  for (const which of [0, 1]) {
    const sh = inShape(op, m, n, flags, which) ?? [1, 1];
    const [rows, cols] = sh;
    const col = r.chance(0.6);
    const rsd = col ? 1 : cols + r.int(0, 2), csd = col ? rows + r.int(0, 2) : 1;
    const off = r.int(0, 3);
    let span = rows > 0 && cols > 0 ? off + (rows - 1) * rsd + (cols - 1) * csd + 1 : off;
    const bs = [];
    for (let t = 0; t < rank; t++) { bs.push(r.chance(0.2) ? 0 : span); span += (Math.max(1, ext[t]) - 1) * bs[t]; }
    d[10 + 3 * which] = off; d[11 + 3 * which] = rsd; d[12 + 3 * which] = csd;
    for (let t = 0; t < rank; t++) { d[H + t] = ext[t]; d[H + rank * (1 + which) + t] = bs[t]; }
    lens.push(span * s);
  }
  // Outputs and info at random offsets (elements of their type; unused outputs: -1 or any) into longer buffers.
  const per = outBytes(op, m, n, flags, s, rs);
  for (let i = 0; i < 3; i++) {
    const off = r.chance(0.5) ? 0 : r.int(1, 3);
    const unused = !used(op, i, flags);
    d[16 + i] = unused && r.chance(0.5) ? -1 : off;
    lens.push(per[i] * total + (unused ? 0 : off * outElem(op, i, s, rs)));
  }
  const infoOff = r.chance(0.5) ? 0 : r.int(1, 3);
  d[19] = infoOff;
  lens.push(4 * (total + infoOff));
  let wellFormed = true;
  const short = r.chance(0.1) ? r.int(0, 5) : -1;
  if (short >= 0 && lens[short] > 0) { lens[short] -= r.pick([1, 4, 8]); wellFormed = false; }
  const mutations = r.chance(0.4) ? r.int(1, 3) : 0;
  for (let i = 0; i < mutations; i++) {
    const at = r.int(0, d.length - 1);
    d[at] = r.chance(0.6) ? r.pick(NASTY) : r.chance(0.5) ? d[at] + r.pick([-1, 1, 2 ** 20]) : r.int(-3, 2 ** 20);
    wellFormed = false;
  }
  // Bounded work even after mutation: the words are clamped only through the native checks; a
  // mutated extent can make a job large, so mutated extents above 64 are put back.
  for (const at of [2, 3]) if (d[at] > 64 && Number.isFinite(d[at])) d[at] = r.int(0, 12);
  for (let t = 0; t < rank; t++) if (d[H + t] > 4 && Number.isFinite(d[H + t])) d[H + t] = 1;
  const ops = lens.map((l) => new Guarded(Math.max(0, l)));
  ops.slice(0, 2).forEach((o) => o.fillWith(Uint8Array, () => r.int(0, 255)));
  // An abort word (word 9 ≥ 0 and an eighth argument), raised or not.
  const abort = r.chance(0.15) ? new Int32Array([r.chance(0.5) ? 1 : 0]) : undefined;
  if (abort !== undefined && mutations === 0) d[9] = 0;
  const words = Float64Array.from(d);
  const argv = [words, ...ops.slice(0, 5).map((o) => o.view(Uint8Array)), ops[5].view(Int32Array)];
  if (abort !== undefined) argv.push(abort);
  const aborts = abort !== undefined && abort[0] !== 0 && mutations === 0 && b1 > b0;
  if (r.chance(0.05)) { argv[r.int(0, 6)] = r.pick([undefined, null, 7, {}, new Float32Array(4)]); wellFormed = false; }
  if (r.chance(0.03)) { argv.length = r.int(0, 6); wellFormed = false; }
  return {
    describe: { words: d.map(num), lens, argc: argv.length, abort: abort === undefined ? null : abort[0] },
    operands: ops,
    call: () => binding.run(...argv),
    ...expectation(dt, wellFormed, aborts ? S.Aborted : S.Ok),
  };
}

if (typeof about.eigen !== 'string' || typeof about.isa !== 'string' || about.descHeader !== H) {
  process.stderr.write(`tenferro_linalg.info() returned ${JSON.stringify(about)}\n`);
  process.exit(1);
}

runFuzz({ name: 'tenferro_linalg.run', seed: args.seed, count: args.count, trace: args.trace, makeCase, documented: DOCUMENTED });
if (notBuilt.length > 0) {
  process.stderr.write(`tenferro_linalg.run: ${refusedNotBuilt} well-formed jobs of the dtypes this build left out (${notBuiltNames.join(',')}) refused with BadDtype\n`);
  // A tenth of the jobs are of those dtypes: a run of 100 with none refused means the model is off.
  if (args.count >= 100 && refusedNotBuilt === 0) {
    process.stderr.write('tenferro_linalg.run: no well-formed job of a dtype left out was refused\n');
    process.exit(1);
  }
}
