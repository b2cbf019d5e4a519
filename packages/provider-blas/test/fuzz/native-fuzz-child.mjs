// The native fuzz driver of tenferro_blas.node (run as a child process by
// test/native-fuzz.test.ts, and by `npm run test:asan` against the sanitizer build): seeded,
// mutated descriptors straight into `gemm(desc, a, b, c)`, every buffer between guard bands.
// For each case the status must be exactly the one `model()` — a JavaScript transcription of the
// checks in native/src/gemm.cc — predicts, no guard byte may change, and a refusal must leave
// the operands untouched. Work per case is clamped to 2^20 multiply-adds.
//
//   node native-fuzz-child.mjs [--addon path] --seed S --count N --trace file
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Guarded, NASTY, fuzzArgs, num, runFuzz } from '@tenferro/native-build/fuzz';

const args = fuzzArgs(process.argv.slice(2), {
  addon: fileURLToPath(new URL('../../native/build/Release/tenferro_blas.node', import.meta.url)),
  seed: 1,
  count: 1000,
  trace: '/dev/null',
});
const binding = createRequire(import.meta.url)(args.addon);
binding.load({ candidates: [] }); // the addon links no BLAS: dlopen the system's (its built-in candidate list)
const vendor = binding.info().vendor;

// Status codes (native/src/blas_addon.h).
const S = { Ok: 0, BadArguments: 1, BadDescriptor: 2, OutOfBoundsA: 3, OutOfBoundsB: 4, OutOfBoundsC: 5, TooLarge: 6, BadDType: 7, BadTranspose: 8, Misaligned: 9 };
const DOCUMENTED = Object.values(S);
const H = 18; // header entries
const [M, N, K, LDA, LDB, LDC, OFFA, OFFB, OFFC, THREADS, RANK] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17];
const MAX_SAFE = 2 ** 53;
const MAX_WORK = 2 ** 20;
const ESIZE = [4, 8, 8, 16];

const isInt = (v) => Number.isFinite(v) && Math.floor(v) === v;
const asIndex = (v) => v >= 0 && v <= MAX_SAFE && Math.floor(v) === v;
const validTrans = (t) => t === 111 || t === 112 || t === 113 || (t === 114 && vendor === 'openblas');

/** The status native/src/gemm.cc returns for `d` (its first min(length, 146) entries), and the work it would do. */
function model(d, lens, shifts) {
  const dlen = Math.min(d.length, H + 4 * 32);
  if (dlen < H) return { status: S.BadDescriptor };
  const dt = d[0];
  if (!(dt === 0 || dt === 1 || dt === 2 || dt === 3)) return { status: S.BadDType };
  if (!validTrans(d[1]) || !validTrans(d[2])) return { status: S.BadTranspose };
  const blas = [M, N, K, LDA, LDB, LDC];
  for (const f of blas) if (!(d[f] >= 0) || Math.floor(d[f]) !== d[f]) return { status: S.BadDescriptor };
  for (const f of blas) if (d[f] > 0x7fffffff) return { status: S.TooLarge };
  const [m, n, k, lda, ldb, ldc] = blas.map((f) => d[f]);
  if (!asIndex(d[OFFA]) || !asIndex(d[OFFB]) || !asIndex(d[OFFC])) return { status: S.BadDescriptor };
  if (!(d[THREADS] >= 0 && d[THREADS] <= 2 ** 20) || Math.floor(d[THREADS]) !== d[THREADS]) return { status: S.BadDescriptor };
  const rank = d[RANK];
  if (!asIndex(rank) || rank > 32 || dlen < H + 4 * rank) return { status: S.BadDescriptor };
  const aNo = d[1] === 111 || d[1] === 114;
  const bNo = d[2] === 111 || d[2] === 114;
  const [aRows, aCols] = aNo ? [m, k] : [k, m];
  const [bRows, bCols] = bNo ? [k, n] : [n, k];
  if (lda < Math.max(1, aRows) || ldb < Math.max(1, bRows) || ldc < Math.max(1, m)) return { status: S.BadDescriptor };
  const ext = [], sa = [], sb = [], sc = [];
  let batches = 1n;
  let empty = false;
  for (let t = 0; t < rank; t++) {
    const e = d[H + t], x = d[H + rank + t], y = d[H + 2 * rank + t], z = d[H + 3 * rank + t];
    if (!asIndex(e) || !asIndex(x) || !asIndex(y) || !asIndex(z)) return { status: S.BadDescriptor };
    ext.push(e), sa.push(x), sb.push(y), sc.push(z);
    if (e === 0) empty = true;
    if (batches <= BigInt(MAX_SAFE)) batches *= BigInt(e);
  }
  if (m === 0 || n === 0 || empty) return { status: S.Ok, work: 0 };
  if (batches > BigInt(MAX_SAFE)) return { status: S.BadDescriptor };
  const align = dt === 0 || dt === 2 ? 4 : 8;
  if (shifts[2] % align !== 0 || (k > 0 && (shifts[0] % align !== 0 || shifts[1] % align !== 0))) return { status: S.Misaligned };
  const reach = (off, rows, cols, ld, strides) => {
    let last = BigInt(off) + BigInt(rows - 1) + BigInt(cols - 1) * BigInt(ld);
    for (let t = 0; t < rank; t++) last += BigInt(ext[t] - 1) * BigInt(strides[t]);
    return last;
  };
  const fits = (last, len) => (last + 1n) * BigInt(ESIZE[dt]) <= BigInt(len);
  if (k > 0) {
    if (!fits(reach(d[OFFA], aRows, aCols, lda, sa), lens[0])) return { status: S.OutOfBoundsA };
    if (!fits(reach(d[OFFB], bRows, bCols, ldb, sb), lens[1])) return { status: S.OutOfBoundsB };
  }
  if (!fits(reach(d[OFFC], m, n, ldc, sc), lens[2])) return { status: S.OutOfBoundsC };
  return { status: S.Ok, work: Number(BigInt(m) * BigInt(n) * BigInt(Math.max(k, 1)) * batches) };
}

function makeCase(r) {
  // --- a valid descriptor -------------------------------------------------------------------
  const dt = r.int(0, 3);
  const es = ESIZE[dt];
  const transCodes = dt >= 2 ? [111, 112, 113, 114] : [111, 112, 113];
  const ta = r.pick(transCodes), tb = r.pick(transCodes);
  const dim = () => (r.chance(0.08) ? 0 : r.int(1, r.chance(0.03) ? 160 : r.chance(0.2) ? 40 : 9));
  const m = dim(), n = dim(), k = dim();
  const aNo = ta === 111 || ta === 114, bNo = tb === 111 || tb === 114;
  const [aRows, aCols] = aNo ? [m, k] : [k, m];
  const [bRows, bCols] = bNo ? [k, n] : [n, k];
  const ld = (rows) => Math.max(1, rows) + (r.chance(0.5) ? 0 : r.int(1, 3));
  const lda = ld(aRows), ldb = ld(bRows), ldc = ld(m);
  const rank = r.chance(0.4) ? 0 : r.int(1, 3);
  const ext = Array.from({ length: rank }, () => (r.chance(0.05) ? 0 : r.int(1, 3)));
  const span = (rows, cols, l) => (rows > 0 && cols > 0 ? rows + (cols - 1) * l : 0);
  const strides = (sp) => {
    // Batch strides: packed after each other, broadcast (0), or spread out.
    const out = [];
    let step = Math.max(1, sp);
    for (let t = rank - 1; t >= 0; t--) {
      out[t] = r.chance(0.15) ? 0 : step + (r.chance(0.3) ? r.int(0, 3) : 0);
      step = out[t] * Math.max(1, ext[t]) || step;
    }
    return out;
  };
  const sa = strides(span(aRows, aCols, lda)), sb = strides(span(bRows, bCols, ldb)), sc = strides(span(m, n, ldc));
  const offs = [r.int(0, 5), r.int(0, 5), r.int(0, 5)];
  const d = new Array(H + 4 * rank).fill(0);
  Object.assign(d, { 0: dt, 1: ta, 2: tb, [M]: m, [N]: n, [K]: k, [LDA]: lda, [LDB]: ldb, [LDC]: ldc, [OFFA]: offs[0], [OFFB]: offs[1], [OFFC]: offs[2] });
  d[12] = r.chance(0.05) ? NaN : r.next() * 2 - 1;
  d[13] = r.next() - 0.5;
  d[14] = r.pick([0, 0, 1, r.next() - 0.5, NaN]);
  d[15] = r.pick([0, r.next() - 0.5]);
  d[THREADS] = r.pick([0, 0, 1, 2]);
  d[RANK] = rank;
  for (let t = 0; t < rank; t++) {
    d[H + t] = ext[t];
    d[H + rank + t] = sa[t];
    d[H + 2 * rank + t] = sb[t];
    d[H + 3 * rank + t] = sc[t];
  }
  // Buffers sized to the valid descriptor's reach: exactly, with slack, or one element short.
  const need = (off, rows, cols, l, st) => {
    if (rows === 0 || cols === 0 || ext.includes(0)) return 0;
    let last = off + (rows - 1) + (cols - 1) * l;
    for (let t = 0; t < rank; t++) last += (ext[t] - 1) * st[t];
    return (last + 1) * es;
  };
  const size = (bytes) => Math.max(0, bytes + (r.chance(0.1) ? -es : r.chance(0.5) ? 0 : r.int(0, 3) * es));
  const lens = [size(need(offs[0], aRows, aCols, lda, sa)), size(need(offs[1], bRows, bCols, ldb, sb)), size(need(offs[2], m, n, ldc, sc))];

  // --- mutations ---------------------------------------------------------------------------
  const mutations = r.chance(0.5) ? r.int(1, 3) : 0;
  for (let i = 0; i < mutations; i++) {
    const at = r.int(0, d.length - 1);
    d[at] = r.chance(0.6) ? r.pick(NASTY) : r.chance(0.5) ? d[at] + r.pick([-1, 1, 2 ** 20, -(2 ** 20)]) : r.int(-3, 2 ** 20);
  }
  if (r.chance(0.03)) d.length = r.int(0, d.length);
  if (r.chance(0.03)) for (let i = r.int(1, 8); i > 0; i--) d.push(r.pick(NASTY));
  const shifts = [0, 0, 0].map(() => (r.chance(0.04) ? r.int(1, 7) : 0));

  // --- bounded work: halve the largest extent until at most 2^20 multiply-adds ---------------
  let predicted = model(d, lens, shifts);
  while (predicted.status === S.Ok && predicted.work > MAX_WORK) {
    const rk = Math.min(d[RANK], 32);
    const fields = [M, N, K, ...Array.from({ length: rk }, (_, t) => H + t)];
    const largest = fields.reduce((a, f) => (d[f] > d[a] ? f : a), fields[0]);
    d[largest] = Math.floor(d[largest] / 2);
    predicted = model(d, lens, shifts);
  }

  // --- buffers and arguments -------------------------------------------------------------------
  const ops = lens.map((len, i) => new Guarded(len, shifts[i]));
  for (const o of ops) o.fillWith(dt === 0 || dt === 2 ? Float32Array : Float64Array, () => r.next() * 2 - 1);
  const sharedAB = r.chance(0.05) && lens[0] === lens[1] && shifts[0] === shifts[1];
  if (sharedAB) ops[1] = ops[0];
  let desc;
  if (r.chance(0.1)) {
    desc = new Float64Array(new SharedArrayBuffer(8 * (d.length + 2)), 8, d.length); // a descriptor over shared memory
    desc.set(d);
  } else {
    desc = Float64Array.from(d);
  }
  const argv = [desc, ...ops.map((o) => o.view(Uint8Array))];
  let expect = predicted.status;
  if (r.chance(0.02)) {
    // Arguments of the wrong kind: BadArguments before the descriptor is read.
    const slot = r.int(0, 3);
    argv[slot] = r.pick([undefined, null, 7, [1, 2], new Float32Array(H), new Int8Array(8), new Uint16Array(4), {}]);
    if (r.chance(0.3)) argv.length = r.int(0, 3);
    expect = S.BadArguments;
  }
  const unique = [...new Set(ops)];
  return {
    describe: { desc: d.map(num), lens, shifts, sharedAB, descShared: desc.buffer instanceof SharedArrayBuffer, args: argv.length, expect },
    operands: unique,
    call: () => binding.gemm(...argv),
    expect,
  };
}

runFuzz({ name: `tenferro_blas.gemm (${vendor})`, seed: args.seed, count: args.count, trace: args.trace, makeCase, documented: DOCUMENTED });
