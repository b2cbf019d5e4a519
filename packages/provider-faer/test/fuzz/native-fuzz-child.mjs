// The native fuzz driver of tenferro_faer.node (run as a child process by
// test/native-fuzz.test.ts, and by `npm run test:asan` against the sanitizer build): seeded,
// mutated descriptors straight into `gemm(desc, a, b, c, abort?)`, every buffer between guard
// bands. For each case the status must be exactly the one `model()` — a JavaScript transcription
// of the checks in native/src/gemm.cc — predicts, no guard byte may change, and a refusal must
// leave the operands untouched. Work per case is clamped to 2^20 multiply-adds.
//
//   node native-fuzz-child.mjs [--addon path] --seed S --count N --trace file
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Guarded, NASTY, fuzzArgs, num, runFuzz } from '@tenferro/native-build/fuzz';

const args = fuzzArgs(process.argv.slice(2), {
  addon: fileURLToPath(new URL('../../native/build/Release/tenferro_faer.node', import.meta.url)),
  seed: 1,
  count: 1000,
  trace: '/dev/null',
});
const binding = createRequire(import.meta.url)(args.addon);
const supported = [0, 1, 2].filter((isa) => binding.info(isa) !== null);

// Status codes (native/src/gemm.cc) and descriptor layout (src/native/binding.ts DESC).
const S = { Ok: 0, BadArguments: 1, OutOfBounds: 2, IsaUnavailable: 3, BadDtype: 4, BadRange: 5, Aborted: 6, NoMemory: 7 };
const DOCUMENTED = Object.values(S);
const D = { dtype: 0, m: 1, n: 2, k: 3, offA: 4, rsA: 5, csA: 6, offB: 7, rsB: 8, csB: 9, offC: 10, rsC: 11, csC: 12, alphaRe: 13, alphaIm: 14, betaRe: 15, betaIm: 16, conjA: 17, conjB: 18, isa: 19, m0: 20, m1: 21, n0: 22, n1: 23, b0: 24, b1: 25, rank: 26 };
const H = 27;
const MAX_SAFE = 2 ** 53;
const MAX_WORK = 2 ** 20;
const INTS = ['m', 'n', 'k', 'offA', 'rsA', 'csA', 'offB', 'rsB', 'csB', 'offC', 'rsC', 'csC', 'm0', 'm1', 'n0', 'n1', 'b0', 'b1'].map((f) => D[f]);

const asIndex = (v) => v >= 0 && v <= MAX_SAFE && Math.floor(v) === v;

/** The status native/src/gemm.cc returns, and the work it would do. `lens` are the typed arrays' lengths, `kinds` their types. */
function model(d, lens, kinds, abort) {
  if (abort === 'bad') return { status: S.BadArguments };
  const len = Math.min(d.length, H + 4 * 32 + 1 + 3 * 32);
  if (len < H) return { status: S.BadArguments };
  const dt = d[D.dtype];
  if (!(dt === 0 || dt === 1 || dt === 2 || dt === 3)) return { status: S.BadDtype };
  const rank = d[D.rank];
  if (!asIndex(rank) || rank > 32 || len < H + 4 * rank) return { status: S.BadArguments };
  for (const f of INTS) if (!asIndex(d[f])) return { status: S.BadArguments };
  for (let i = 0; i < 4 * rank; i++) if (!asIndex(d[H + i])) return { status: S.BadArguments };
  const ca = d[D.conjA], cb = d[D.conjB];
  if (!(ca === 0 || ca === 1) || !(cb === 0 || cb === 1)) return { status: S.BadArguments };
  const isa = d[D.isa];
  if (isa === 0 || isa === 1 || isa === 2) {
    if (!supported.includes(isa)) return { status: S.IsaUnavailable };
  } else if (isa !== -1) return { status: S.BadArguments };
  const v = (f) => d[D[f]];
  if (v('m0') > v('m1') || v('m1') > v('m') || v('n0') > v('n1') || v('n1') > v('n')) return { status: S.BadRange };
  let total = 1n;
  const ext = Array.from({ length: rank }, (_, t) => d[H + t]);
  for (const e of ext) {
    total *= BigInt(e);
    if (total > BigInt(MAX_SAFE)) return { status: S.BadArguments };
  }
  if (v('b0') > v('b1') || BigInt(v('b1')) > total) return { status: S.BadRange };
  // The optional summed block after the batch strides: count, extents, A strides, B strides.
  let srank = 0;
  let scount = 1n;
  const at = H + 4 * rank;
  if (len > at) {
    srank = d[at];
    if (!asIndex(srank) || srank > 32 || len < at + 1 + 3 * srank) return { status: S.BadArguments };
    for (let t = 0; t < srank; t++) {
      if (!asIndex(d[at + 1 + t]) || !asIndex(d[at + 1 + srank + t]) || !asIndex(d[at + 1 + 2 * srank + t])) return { status: S.BadArguments };
      scount *= BigInt(d[at + 1 + t]);
      if (scount > BigInt(MAX_SAFE)) return { status: S.BadArguments };
    }
  }
  // An empty sum is run as k = 0.
  const emptySum = scount === 0n;
  if (emptySum) srank = 0;
  const summedReach = (which) => {
    let r = 0n;
    for (let t = 0; t < srank; t++) r += BigInt(d[at + 1 + t] - 1) * BigInt(d[at + 1 + which * srank + t]);
    return r;
  };
  const want = dt === 0 || dt === 2 ? 'Float32Array' : 'Float64Array';
  if (kinds.some((k) => k !== want)) return { status: S.BadArguments };
  const lanes = dt >= 2 ? 2n : 1n;
  const extent = (o, rows, cols, strides) => {
    if (rows === 0 || cols === 0 || ext.includes(0)) return 0n;
    let hi = BigInt(v(`off${o}`)) + BigInt(rows - 1) * BigInt(v(`rs${o}`)) + BigInt(cols - 1) * BigInt(v(`cs${o}`));
    for (let t = 0; t < rank; t++) hi += BigInt(ext[t] - 1) * BigInt(d[H + strides * rank + t]);
    if (o !== 'C') hi += summedReach(strides);
    return hi * lanes + lanes;
  };
  const [m, n, k] = [v('m'), v('n'), emptySum ? 0 : v('k')];
  if (extent('A', m, k, 1) > BigInt(lens[0]) || extent('B', k, n, 2) > BigInt(lens[1]) || extent('C', m, n, 3) > BigInt(lens[2])) return { status: S.OutOfBounds };
  const work = (v('m1') - v('m0')) * (v('n1') - v('n0')) * Math.max(k, 1) * (v('b1') - v('b0')) * Math.max(1, Number(scount));
  if (work === 0) return { status: S.Ok, work: 0 };
  return { status: abort === 'raised' ? S.Aborted : S.Ok, work };
}

function makeCase(r) {
  // --- a valid descriptor -------------------------------------------------------------------
  const dt = r.int(0, 3);
  const lanes = dt >= 2 ? 2 : 1;
  // Sizes around the vector widths and register tiles (the small kernels' masked row tails and
  // column remainders: 8 f64 / 16 f32 lanes with AVX-512, 4 / 8 with AVX2; 6- and 8-wide tiles),
  // else mostly tiny, sometimes medium or large.
  const EDGES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 63, 64, 65];
  const dim = () => (r.chance(0.08) ? 0 : r.chance(0.2) ? r.pick(EDGES) : r.int(1, r.chance(0.03) ? 160 : r.chance(0.2) ? 40 : 9));
  const m = dim(), n = dim(), k = dim();
  const layout = (rows, cols, input) => {
    const kind = r.pick(input ? ['col', 'row', 'strided', 'bcast'] : ['col', 'row', 'strided']);
    if (kind === 'col') return [1, rows + r.int(0, 2)];
    if (kind === 'row') return [cols + r.int(0, 2), 1];
    if (kind === 'bcast') return r.chance(0.5) ? [0, 1] : [1, 0];
    return [r.int(1, 3), (rows + 1) * r.int(1, 3)];
  };
  const [rsA, csA] = layout(m, k, true), [rsB, csB] = layout(k, n, true), [rsC, csC] = layout(m, n, false);
  const rank = r.chance(0.4) ? 0 : r.int(1, 3);
  // Sometimes a long batch (the engine's batch walk over many small items).
  const ext = Array.from({ length: rank }, () => (r.chance(0.05) ? 0 : r.chance(0.1) ? r.int(8, 64) : r.int(1, 3)));
  const span = (rows, cols, rs, cs) => (rows > 0 && cols > 0 ? 1 + (rows - 1) * rs + (cols - 1) * cs : 0);
  const strides = (sp) => {
    const out = [];
    let step = Math.max(1, sp);
    for (let t = rank - 1; t >= 0; t--) {
      out[t] = r.chance(0.15) ? 0 : step + (r.chance(0.3) ? r.int(0, 3) : 0);
      step = out[t] * Math.max(1, ext[t]) || step;
    }
    return out;
  };
  const sa = strides(span(m, k, rsA, csA)), sb = strides(span(k, n, rsB, csB)), sc = strides(span(m, n, rsC, csC));
  const offs = [r.int(0, 5), r.int(0, 5), r.int(0, 5)];
  const total = ext.reduce((a, e) => a * e, 1);
  const range = (extent) => {
    if (r.chance(0.6) || extent === 0) return [0, extent];
    const lo = r.int(0, extent);
    return [lo, r.int(lo, extent)];
  };
  const [m0, m1] = range(m), [n0, n1] = range(n), [b0, b1] = range(total);
  const d = new Array(H + 4 * rank).fill(0);
  Object.assign(d, { [D.dtype]: dt, [D.m]: m, [D.n]: n, [D.k]: k, [D.offA]: offs[0], [D.rsA]: rsA, [D.csA]: csA, [D.offB]: offs[1], [D.rsB]: rsB, [D.csB]: csB });
  Object.assign(d, { [D.offC]: offs[2], [D.rsC]: rsC, [D.csC]: csC, [D.m0]: m0, [D.m1]: m1, [D.n0]: n0, [D.n1]: n1, [D.b0]: b0, [D.b1]: b1, [D.rank]: rank });
  d[D.alphaRe] = r.chance(0.05) ? NaN : r.next() * 2 - 1;
  d[D.alphaIm] = r.next() - 0.5;
  d[D.betaRe] = r.pick([0, 0, 1, r.next() - 0.5, NaN]);
  d[D.betaIm] = r.pick([0, r.next() - 0.5]);
  d[D.conjA] = r.int(0, 1);
  d[D.conjB] = r.int(0, 1);
  d[D.isa] = r.pick([-1, -1, 0, 1, 2]);
  for (let t = 0; t < rank; t++) {
    d[H + t] = ext[t];
    d[H + rank + t] = sa[t];
    d[H + 2 * rank + t] = sb[t];
    d[H + 3 * rank + t] = sc[t];
  }
  const need = (off, rows, cols, rs, cs, st) => {
    if (rows === 0 || cols === 0 || ext.includes(0)) return 0;
    let hi = off + (rows - 1) * rs + (cols - 1) * cs;
    for (let t = 0; t < rank; t++) hi += (ext[t] - 1) * st[t];
    return (hi + 1) * lanes;
  };
  const size = (elements) => Math.max(0, elements + (r.chance(0.1) ? -1 : r.chance(0.5) ? 0 : r.int(0, 3) * lanes));
  const lens = [size(need(offs[0], m, k, rsA, csA, sa)), size(need(offs[1], k, n, rsB, csB, sb)), size(need(offs[2], m, n, rsC, csC, sc))];

  // --- mutations ---------------------------------------------------------------------------
  const mutations = r.chance(0.5) ? r.int(1, 3) : 0;
  for (let i = 0; i < mutations; i++) {
    const at = r.int(0, d.length - 1);
    d[at] = r.chance(0.6) ? r.pick(NASTY) : r.chance(0.5) ? d[at] + r.pick([-1, 1, 2 ** 20, -(2 ** 20)]) : r.int(-3, 2 ** 20);
  }
  if (r.chance(0.03)) d.length = r.int(0, d.length);
  if (r.chance(0.03)) for (let i = r.int(1, 8); i > 0; i--) d.push(r.pick(NASTY));
  const Ctor = dt === 0 || dt === 2 ? Float32Array : Float64Array;
  const kinds = [Ctor, Ctor, Ctor].map((c) => (r.chance(0.02) ? r.pick([Float32Array, Float64Array, Int32Array, Uint8Array]) : c));
  const abort = r.chance(0.9) ? 'none' : r.pick(['zero', 'raised', 'raised', 'bad']);

  // --- bounded work: halve the largest of k and the task's ranges until at most 2^20 ----------
  const elementLens = lens.map((l, i) => Math.floor((l * (dt === 0 || dt === 2 ? 4 : 8)) / kinds[i].BYTES_PER_ELEMENT));
  let predicted = model(d, elementLens, kinds.map((c) => c.name), abort);
  while (predicted.status === S.Ok && predicted.work > MAX_WORK) {
    const spans = [
      [D.k, d[D.k]],
      [D.m1, d[D.m1] - d[D.m0]],
      [D.n1, d[D.n1] - d[D.n0]],
      [D.b1, d[D.b1] - d[D.b0]],
    ];
    const [field, width] = spans.reduce((a, s) => (s[1] > a[1] ? s : a));
    if (field === D.k) d[D.k] = Math.floor(width / 2);
    else d[field] = d[field] - Math.ceil(width / 2);
    predicted = model(d, elementLens, kinds.map((c) => c.name), abort);
  }

  // --- buffers and arguments -------------------------------------------------------------------
  const bytes = dt === 0 || dt === 2 ? 4 : 8;
  const ops = lens.map((l) => new Guarded(l * bytes));
  for (const o of ops) o.fillWith(Ctor, () => r.next() * 2 - 1);
  if (r.chance(0.05) && lens[0] === lens[1]) ops[1] = ops[0];
  const desc = Float64Array.from(d);
  const word = new Int32Array(new SharedArrayBuffer(4));
  if (abort === 'raised') word[0] = r.pick([1, 2, -1]);
  const argv = [desc, ...ops.map((o, i) => o.view(kinds[i]))];
  if (abort !== 'none') argv.push(abort === 'bad' ? r.pick([new Int32Array(0), new Uint32Array(1), new Float64Array(1), 0, null, {}]) : word);
  // Dynamic-chunk arguments (counter, axis, size) now and then: valid ones change nothing the
  // model predicts (one call with a fresh counter claims every chunk), malformed ones are refused.
  let badChunk = false;
  if (r.chance(0.08)) {
    if (argv.length === 4) argv.push(undefined);
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const chunk = [counter, r.int(0, 1), r.int(1, 50)];
    if (r.chance(0.3)) {
      badChunk = true;
      const at = r.int(0, 2);
      chunk[at] = r.pick(at === 0 ? [new Int32Array(0), new Uint32Array(1), new Float64Array(1), 0, null, {}] : at === 1 ? [2, -1, 0.5, NaN, '0'] : [0, -1, 1.5, NaN, 2 ** 31, Infinity, '4']);
      if (r.chance(0.2)) chunk.length = r.int(1, 2);
    }
    argv.push(...chunk);
  }
  let expect = predicted.status;
  if (r.chance(0.02)) {
    // Arguments of the wrong kind: the descriptor and the abort word are checked before the
    // descriptor is parsed, the operands after it (so a parse refusal comes first).
    const slot = r.int(0, 3);
    const replacement = r.pick([undefined, null, 7, [1, 2], new Float32Array(H), new Float64Array(H), new Int8Array(8), new Uint16Array(4), {}]);
    argv[slot] = replacement;
    if (r.chance(0.3)) argv.length = r.int(0, 3);
    if (argv.length < 4) expect = S.BadArguments;
    else if (slot === 0) {
      // A Float64Array is a descriptor too (all zeros: an empty f32 GEMM).
      expect = replacement instanceof Float64Array ? model(Array.from(replacement), elementLens, kinds.map((c) => c.name), abort).status : S.BadArguments;
    } else {
      // An operand replaced by a typed array of the right type is just a different operand.
      const names = kinds.map((c) => c.name);
      const lengths = [...elementLens];
      names[slot - 1] = ArrayBuffer.isView(replacement) ? replacement.constructor.name : 'other';
      lengths[slot - 1] = ArrayBuffer.isView(replacement) ? replacement.length : 0;
      expect = model(d, lengths, names, abort).status;
      if (expect === S.Ok && model(d, lengths, names, abort).work > MAX_WORK) argv[slot] = null, (expect = S.BadArguments);
    }
  }
  // Chunk arguments are checked after the descriptor's and the abort word's types, before the
  // descriptor is parsed.
  if (badChunk && argv.length >= 4 && ArrayBuffer.isView(argv[0]) && argv[0] instanceof Float64Array && abort !== 'bad') expect = S.BadArguments;
  return {
    describe: { desc: d.map(num), lens: elementLens, kinds: kinds.map((c) => c.name), abort, args: argv.length, chunk: badChunk ? 'bad' : argv.length > 5 ? 'ok' : 'none', expect },
    operands: [...new Set(ops)],
    call: () => binding.gemm(...argv),
    expect,
  };
}

runFuzz({ name: `tenferro_faer.gemm (isa ${supported.join(',')})`, seed: args.seed, count: args.count, trace: args.trace, makeCase, documented: DOCUMENTED });
