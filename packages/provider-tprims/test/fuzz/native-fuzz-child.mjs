// The native fuzz driver of tenferro_tprims.node (run as a child process by
// test/native-fuzz.test.ts, and by `npm run test:asan` against the sanitizer build): seeded,
// mutated descriptors straight into `run(desc, out, a, b?)`, every buffer between guard bands
// (sometimes misaligned). For each case the status must be exactly the one `model()` — a
// JavaScript transcription of the checks in native/src/entry.cc — predicts, no guard byte may
// change, and a refusal must leave the operands untouched. Work per case is clamped to 2^18 elements.
//
//   node native-fuzz-child.mjs [--addon path] --seed S --count N --trace file
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Guarded, NASTY, fuzzArgs, num, runFuzz } from '@tenferro/native-build/fuzz';

const args = fuzzArgs(process.argv.slice(2), {
  addon: fileURLToPath(new URL('../../native/build/Release/tenferro_tprims.node', import.meta.url)),
  seed: 1,
  count: 1000,
  trace: '/dev/null',
});
const binding = createRequire(import.meta.url)(args.addon);
const supported = [0, 1, 2].filter((isa) => binding.info(isa) !== null);

// Status codes (native/include/tprims.h) and descriptor layout (src/native/binding.ts DESC).
const S = { Ok: 0, BadArguments: 1, OutOfBounds: 2, IsaUnavailable: 3, BadDtype: 4, NoMemory: 5 };
const DOCUMENTED = Object.values(S);
const D = { kind: 0, op: 1, din: 2, dout: 3, rank: 4, alphaRe: 5, alphaIm: 6, isa: 7, offOut: 8, offA: 9, offB: 10 };
const H = 11;
const MAX_SAFE = 2 ** 53;
const MAX_WORK = 2 ** 18;
const OPS = [15, 12, 8];
const BYTES = [4, 8, 8, 16, 4, 8, 1];
const ALIGN = [4, 8, 4, 8, 4, 8, 1];

const asIndex = (v) => v >= 0 && v <= MAX_SAFE && Math.floor(v) === v;
const isInt = (v, lo, hi) => v >= lo && v < hi && Math.floor(v) === v;

/** The status native/src/entry.cc returns, and the elements it visits. `ops` are { kind, length (bytes), start (byte offset in its buffer) }. */
function model(d, ops, nargs) {
  if (nargs < 3 || !(d instanceof Float64Array)) return { status: S.BadArguments };
  const len = Math.min(d.length, H + 4 * 32);
  if (len < H) return { status: S.BadArguments };
  const kind = d[D.kind];
  if (!(kind === 0 || kind === 1 || kind === 2)) return { status: S.BadArguments };
  if (!isInt(d[D.op], 0, OPS[kind])) return { status: S.BadArguments };
  if (!isInt(d[D.din], 0, 7) || !isInt(d[D.dout], 0, 7)) return { status: S.BadDtype };
  const rank = d[D.rank];
  if (!asIndex(rank) || rank > 32 || len < H + 4 * rank) return { status: S.BadArguments };
  if (![D.offOut, D.offA, D.offB].every((f) => asIndex(d[f]))) return { status: S.BadArguments };
  let total = 1n;
  for (let i = 0; i < rank; i++) {
    if (!asIndex(d[H + i]) || !asIndex(d[H + rank + i]) || !asIndex(d[H + 2 * rank + i])) return { status: S.BadArguments };
    const extra = d[H + 3 * rank + i];
    if (kind === 1 && !asIndex(extra)) return { status: S.BadArguments };
    if (kind === 2 && !(extra === 0 || extra === 1)) return { status: S.BadArguments };
    total *= BigInt(d[H + i]);
    if (total > BigInt(MAX_SAFE)) return { status: S.BadArguments };
  }
  const isa = d[D.isa];
  if (isa === 0 || isa === 1 || isa === 2) {
    if (!supported.includes(isa)) return { status: S.IsaUnavailable };
  } else if (isa !== -1) return { status: S.BadArguments };
  if (!binding.supports(kind, d[D.op], d[D.din], d[D.dout])) return { status: S.BadDtype };
  const binary = kind === 1;
  if (ops[0]?.kind !== 'Uint8Array' || ops[1]?.kind !== 'Uint8Array') return { status: S.BadArguments };
  if (binary && (nargs < 4 || ops[2]?.kind !== 'Uint8Array')) return { status: S.BadArguments };
  const din = d[D.din], dout = d[D.dout];
  if (ops[0].start % ALIGN[dout] !== 0 || ops[1].start % ALIGN[din] !== 0 || (binary && ops[2].start % ALIGN[din] !== 0)) return { status: S.BadArguments };
  const shape = Array.from({ length: rank }, (_, i) => d[H + i]);
  const reduced = Array.from({ length: rank }, (_, i) => kind === 2 && d[H + 3 * rank + i] === 1);
  const reach = (off, n, strideAt, bytes) => {
    let hi = BigInt(off);
    for (let i = 0; i < rank; i++) {
      if (n[i] === 0) return 0n;
      hi += BigInt(n[i] - 1) * BigInt(d[H + strideAt * rank + i]);
    }
    return (hi + 1n) * BigInt(bytes);
  };
  const ro = reach(d[D.offOut], shape.map((e, i) => (reduced[i] ? 1 : e)), 1, BYTES[dout]);
  const ra = reach(d[D.offA], shape, 2, BYTES[din]);
  const rb = binary ? reach(d[D.offB], shape, 3, BYTES[din]) : 0n;
  if (ro > BigInt(ops[0].length) || ra > BigInt(ops[1].length) || (binary && rb > BigInt(ops[2].length))) return { status: S.OutOfBounds };
  return { status: S.Ok, work: ro === 0n ? 0 : Number(total) };
}

function makeCase(r) {
  // --- a valid descriptor -------------------------------------------------------------------
  // One case in six is a transpose the engine walks in line blocks (an 8x8 register-block kernel
  // for 8-byte copies): a unary task of rank 2-3, extents 8-40, the output dense with axis 0
  // fastest, the source with axis 1 fastest; mostly `copy` of f64/c64/i64.
  const plain = r.chance(1 / 6);
  const kind = plain ? 0 : r.int(0, 2);
  const op = plain && r.chance(0.7) ? 0 : r.int(0, OPS[kind] - 1);
  let din = plain && r.chance(0.8) ? r.pick([1, 2, 5]) : r.int(0, 6);
  let dout = plain || r.chance(0.7) ? din : r.int(0, 6);
  if (kind === 1 && op >= 7) dout = 6;
  if (kind === 2 && (op === 5 || op === 6)) dout = 5;
  const rank = plain ? r.int(2, 3) : r.chance(0.1) ? 0 : r.int(1, r.chance(0.1) ? 8 : 4);
  const shape = Array.from({ length: rank }, () => (plain ? r.int(8, 40) : r.chance(0.05) ? 0 : r.int(1, r.chance(0.1) ? 40 : 6)));
  const reduced = shape.map(() => r.chance(0.4));
  let transposeOrder = plain ? [0, 1, 2].slice(0, rank) : undefined;
  const layout = (n, bcast) => {
    const order = transposeOrder ?? n.map((_, i) => i).sort(() => r.next() - 0.5);
    const s = new Array(rank).fill(0);
    let step = r.int(1, 2);
    for (const a of order) {
      if (bcast && r.chance(0.2)) continue;
      s[a] = step;
      step *= Math.max(1, n[a]) + (r.chance(0.2) ? 1 : 0);
    }
    return s;
  };
  const outShape = shape.map((e, i) => (kind === 2 && reduced[i] ? 1 : e));
  const so = layout(outShape, false);
  if (transposeOrder !== undefined) transposeOrder = rank === 2 ? [1, 0] : r.pick([[1, 0, 2], [1, 2, 0]]);
  const sa = layout(shape, !plain), sb = layout(shape, true);
  const offs = [r.int(0, 4), r.int(0, 4), r.int(0, 4)];
  const d = new Array(H + 4 * rank).fill(0);
  Object.assign(d, { [D.kind]: kind, [D.op]: op, [D.din]: din, [D.dout]: dout, [D.rank]: rank, [D.alphaRe]: r.next() * 4 - 2, [D.alphaIm]: r.next() - 0.5 });
  Object.assign(d, { [D.isa]: r.pick([-1, -1, 0, 1, 2]), [D.offOut]: offs[0], [D.offA]: offs[1], [D.offB]: offs[2] });
  for (let i = 0; i < rank; i++) {
    d[H + i] = shape[i];
    d[H + rank + i] = so[i];
    d[H + 2 * rank + i] = sa[i];
    d[H + 3 * rank + i] = kind === 1 ? sb[i] : kind === 2 ? (reduced[i] ? 1 : 0) : r.int(0, 3);
  }

  // --- mutations ---------------------------------------------------------------------------
  const mutations = r.chance(0.5) ? r.int(1, 3) : 0;
  for (let i = 0; i < mutations; i++) {
    const at = r.int(0, d.length - 1);
    d[at] = r.chance(0.6) ? r.pick(NASTY) : r.chance(0.5) ? d[at] + r.pick([-1, 1, 2 ** 20, -(2 ** 20)]) : r.int(-3, 2 ** 20);
  }
  if (r.chance(0.03)) d.length = r.int(0, d.length);
  if (r.chance(0.03)) for (let i = r.int(1, 8); i > 0; i--) d.push(r.pick(NASTY));
  din = d[D.din];
  dout = d[D.dout];

  // --- buffers ---------------------------------------------------------------------------------
  const need = (off, n, s, bytes) => {
    if (n.some((e) => e === 0)) return 0;
    let hi = off;
    for (let i = 0; i < n.length; i++) hi += (n[i] - 1) * s[i];
    return (hi + 1) * bytes;
  };
  const bytesOf = (code) => (Number.isInteger(code) && code >= 0 && code < 7 ? BYTES[code] : 8);
  const size = (bytes) => Math.max(0, Math.min(2 ** 22, bytes + (r.chance(0.1) ? -r.int(1, 8) : r.chance(0.5) ? 0 : r.int(0, 32))));
  const lens = [size(need(offs[0], outShape, so, bytesOf(dout))), size(need(offs[1], shape, sa, bytesOf(din))), size(need(offs[2], shape, sb, bytesOf(din)))];
  const shift = () => (r.chance(0.05) ? r.int(1, 7) : 0);
  const ops = lens.map((l) => new Guarded(l, shift()));
  for (const o of ops) o.fillWith(Uint8Array, () => r.int(0, 255));
  const kinds = [Uint8Array, Uint8Array, Uint8Array].map((c) => (r.chance(0.02) ? r.pick([Float32Array, Float64Array, Int32Array, Int8Array]) : c));
  const desc = Float64Array.from(d);
  const argv = [desc, ...ops.map((o, i) => (o.start % kinds[i].BYTES_PER_ELEMENT === 0 ? o.view(kinds[i]) : o.view(Uint8Array)))];
  const opsModel = () => argv.slice(1).map((v, i) => (ArrayBuffer.isView(v) ? { kind: v.constructor.name, length: v.byteLength, start: ops[i].start } : { kind: 'other', length: 0, start: 0 }));
  if (r.chance(0.1)) argv.length = r.int(1, 3);
  let predicted = model(argv[0], opsModel(), argv.length);
  // Bounded work: a valid case visiting too many elements (stride-0 outputs can make that cheap to reach) is replaced by a refusal.
  if (predicted.status === S.Ok && predicted.work > MAX_WORK) {
    argv.length = 2;
    predicted = model(argv[0], opsModel(), argv.length);
  }
  return {
    describe: { desc: d.map(num), lens, kinds: kinds.map((c) => c.name), args: argv.length, expect: predicted.status },
    operands: ops,
    call: () => binding.run(...argv),
    expect: predicted.status,
  };
}

runFuzz({ name: `tenferro_tprims.run (isa ${supported.join(',')})`, seed: args.seed, count: args.count, trace: args.trace, makeCase, documented: DOCUMENTED });
