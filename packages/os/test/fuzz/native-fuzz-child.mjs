// The native fuzz driver of tenferro_os.node (run as a child process by
// test/native-fuzz.test.ts, and by `npm run test:asan` against the sanitizer build): seeded,
// mutated arguments straight into `setThreadAffinity(cpus)` and `typedArrayRange(view)`.
// For each case the answer must be exactly the one `model()` — a JavaScript transcription of
// native/src/affinity.cc and memory.cc — predicts: EINVAL for a malformed list, -1
// (outsideAllowedSet) for a CPU outside the process mask recorded at load, 0 only for a list
// inside it, after which the thread's mask must be exactly that list (the child then restores
// it); never a widening. typedArrayRange must report the view's own bytes, and no guard byte
// around the viewed buffer may change.
//
//   node native-fuzz-child.mjs [--addon path] --seed S --count N --trace file
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Guarded, NASTY, fuzzArgs, num, runFuzz } from '@tenferro/native-build/fuzz';

const args = fuzzArgs(process.argv.slice(2), {
  addon: fileURLToPath(new URL('../../native/build/Release/tenferro_os.node', import.meta.url)),
  seed: 1,
  count: 1000,
  trace: '/dev/null',
});
const binding = createRequire(import.meta.url)(args.addon);
const EINVAL = 22;
const OUTSIDE = binding.outsideAllowedSet;
const allowed = binding.getProcessAffinity().cpus;
const allowedSet = new Set(allowed);
const MAX = 2 ** 20;
const outside = Array.from({ length: 8 }, (_, i) => i).filter((c) => !allowedSet.has(c)).concat([MAX - 1, 4095, 1023]);

// Answers are numbers for setThreadAffinity; the harness compares statuses, so typedArrayRange's
// outcome is folded into 0 (as predicted) or 1 (a mismatch, which the model never predicts).
const DOCUMENTED = [0, EINVAL, OUTSIDE, 1];

/** What set_thread_affinity answers for `list` (the elements as the binding reads them, once each). */
function modelSet(list) {
  if (!Array.isArray(list) || list.length === 0) return EINVAL;
  const ids = [];
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number') return EINVAL;
    if (!(v >= 0) || v >= MAX || Math.trunc(v) !== v) return EINVAL;
    ids.push(v);
  }
  return ids.every((id) => allowedSet.has(id)) ? 0 : OUTSIDE;
}

function element(r) {
  const roll = r.next();
  if (roll < 0.55) return r.pick(allowed);
  if (roll < 0.7) return r.pick(outside);
  if (roll < 0.9) return r.pick(NASTY);
  return r.pick(['1', null, undefined, true, 1n, {}, [0], Symbol.iterator]);
}

function setCase(r) {
  let list;
  const shape = r.next();
  if (shape < 0.05) list = r.pick([undefined, null, 0, '0', { length: 1, 0: 0 }, new Uint32Array([0]), new Float64Array([allowed[0]])]);
  else {
    list = Array.from({ length: r.chance(0.05) ? 0 : r.int(1, r.chance(0.1) ? 64 : 4) }, () => element(r));
    if (r.chance(0.05) && list.length > 1) delete list[r.int(0, list.length - 1)]; // a hole
    if (r.chance(0.03)) list.length += 3; // trailing holes
  }
  const expect = modelSet(list);
  const describe = { fn: 'setThreadAffinity', list: Array.isArray(list) ? Array.from(list, (v) => (typeof v === 'number' ? num(v) : `${typeof v}`)) : `${typeof list}`, expect };
  return {
    describe,
    operands: [],
    call: () => binding.setThreadAffinity(list),
    expect,
    after: (status) => {
      const now = binding.getThreadAffinity();
      if (status === 0) {
        const want = [...new Set(list)].sort((a, b) => a - b).map((v) => (Object.is(v, -0) ? 0 : v));
        if (now.errno !== 0 || JSON.stringify(now.cpus) !== JSON.stringify(want)) {
          process.stderr.write(`setThreadAffinity answered 0 but the mask is ${JSON.stringify(now)}, not ${JSON.stringify(want)}\n${JSON.stringify(describe)}\n`);
          process.exit(1);
        }
        binding.setThreadAffinity(allowed); // restore
      }
      if (!now.cpus.every((c) => allowedSet.has(c))) {
        process.stderr.write(`the thread was widened beyond the process mask: ${JSON.stringify(now.cpus)}\n${JSON.stringify(describe)}\n`);
        process.exit(1);
      }
    },
  };
}

function rangeCase(r) {
  const g = new Guarded(r.int(0, 256));
  g.fillWith(Uint8Array, (i) => i);
  const full = binding.typedArrayRange(g.view(Uint8Array));
  const offset = r.int(0, g.byteLength);
  const length = r.int(0, g.byteLength - offset);
  const kind = r.next();
  let arg;
  let want; // the expected answer: null, or { delta from the full view's address, byteLength }
  if (kind < 0.7) {
    arg = new Uint8Array(g.sab, g.start + offset, length);
    want = { delta: length === 0 ? null : offset, byteLength: length };
  } else if (kind < 0.8) {
    arg = new Uint8Array(new ArrayBuffer(length)); // a plain ArrayBuffer works the same way
    want = { delta: length === 0 ? null : 'any', byteLength: length };
  } else {
    arg = r.pick([undefined, null, 0, 'x', {}, [1], new Int8Array(g.sab, g.start, 0), new Uint16Array(2), new Float64Array(1), new DataView(g.sab)]);
    want = null;
  }
  const describe = { fn: 'typedArrayRange', byteLength: g.byteLength, offset, length, arg: arg === null ? 'null' : (arg?.constructor?.name ?? typeof arg) };
  return {
    describe,
    operands: [g],
    call: () => {
      const got = binding.typedArrayRange(arg);
      if (want === null) return got === null ? 0 : 1;
      if (got === null || typeof got.address !== 'bigint' || got.byteLength !== want.byteLength) return 1;
      if (want.delta === null) return got.address === 0n ? 0 : 1;
      if (want.delta === 'any') return got.address > 0n ? 0 : 1;
      if (full.byteLength > 0 && got.address - full.address !== BigInt(want.delta)) return 1;
      return 0;
    },
    expect: 0,
  };
}

runFuzz({
  name: `tenferro_os (allowed ${allowed.join(',')})`,
  seed: args.seed,
  count: args.count,
  trace: args.trace,
  documented: DOCUMENTED,
  makeCase: (r) => (r.chance(0.7) ? setCase(r) : rangeCase(r)),
});
