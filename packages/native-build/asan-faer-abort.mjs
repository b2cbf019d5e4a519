// Part of `npm run test:asan` (asan.mjs): provider-faer's abort path under the sanitizers, with
// the ASan build of the addon given as argv[2]: a word raised before the call, and a word raised
// by the main thread while a worker runs a GEMM of K = 2^40 (broadcast operands).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const addon = process.argv[2];
const b = createRequire(import.meta.url)(addon);
const HEADER = b.descHeader;
function desc(k) {
  const d = new Float64Array(HEADER);
  // dtype f64, m n k, offA rsA csA, offB rsB csB, offC rsC csC, alpha/beta, conj, isa, m0 m1 n0 n1 b0 b1, rank
  d.set([1, 64, 64, k, 0, 0, 0, 0, 0, 0, 0, 1, 64, 1, 0, 0, 0, 0, 0, -1, 0, 64, 0, 64, 0, 1, 0]);
  return d;
}
const one = new Float64Array(new SharedArrayBuffer(8)).fill(1);
const word = new Int32Array(new SharedArrayBuffer(4));
const c = new Float64Array(new SharedArrayBuffer(8 * 64 * 64)).fill(Number.NaN);
word[0] = 1;
if (b.gemm(desc(2 ** 40), one, one, c, word) !== 6) throw new Error('a raised word did not abort');
word[0] = 0;
if (b.gemm(desc(64), one, one, c, word) !== 0 || c[0] !== 64) throw new Error('a small GEMM did not run');
c.fill(Number.NaN);
const worker = new Worker(
  `const { parentPort, workerData: w } = require('node:worker_threads');
   const b = require(w.addon);
   parentPort.postMessage(b.gemm(new Float64Array(w.desc), new Float64Array(w.one), new Float64Array(w.one), new Float64Array(w.c), new Int32Array(w.word)));`,
  { eval: true, execArgv: [], workerData: { addon, desc: [...desc(2 ** 40)], one: one.buffer, c: c.buffer, word: word.buffer } },
);
const status = new Promise((resolve, reject) => {
  worker.once('message', resolve);
  worker.once('error', reject);
});
while (Number.isNaN(c[0])) await new Promise((resolve) => setImmediate(resolve)); // the kernel is writing C
Atomics.store(word, 0, 2);
const got = await status;
await worker.terminate();
if (got !== 6) throw new Error(`a word raised during the GEMM gave status ${got}, not Aborted (6)`);
console.log('faer abort under ASan: ok');
