#!/usr/bin/env node
// Fresh memory (#38): does code that never calls dispose() run as fast as code that does?
//
//   node bench/fresh-memory.bench.mjs [--base <other built checkout>] [--rounds 9] [--quick]
//                                     [--only touch|triple|rss|prefault] [--kinds faer,blas] [--threads 1,2]
//                                     [--dtypes f64,f32] [--n 1024] [--json]
//
// 1. touch: the first-touch cost of 8 MiB of fresh memory on this machine — a new
//    SharedArrayBuffer written once per 4 KiB page, in a child process per sample set (memory new
//    to the process) — with 4 KiB pages and on a 2 MiB-aligned range advised MADV_HUGEPAGE.
// 2. triple: n = 1024 matmul per kind (faer, blas), threads (1, 2) and dtype (f64, f32) in three
//    loop styles — `drop` (the output is never disposed: it comes back by collection), `dispose`,
//    and `dotGeneralInto` a warm output — as GFLOP/s (each loop timed whole: its collections
//    included) and as ratios of `into`, the median of `--rounds` interleaved rounds. Each round runs in a child process per tree (this one, and
//    `--base` when given: base, this, this, base, …), so load drift hits both trees alike. Beside
//    it: the drop loop's pool hit rate after 10 warm-up calls (`tenferro:pool` hits / (hits +
//    misses) of the output's size, no `gc()` in the loop), and the OpenBLAS core type.
// 3. rss: peak RSS (`process.resourceUsage().maxRSS`) of a child that runs 60 drop-loop calls of
//    a 1024² f64 faer matmul on 2 threads, with huge pages and pre-faulting on (the default), each
//    off (TENFERRO_HUGE_PAGES=0, TENFERRO_PREFAULT=0) and both off; and in the base tree.
// 4. prefault: is pre-faulting cheaper than faulting inside the kernel? A loop whose every output
//    is fresh storage (the pool's cap 0, outputs disposed; glibc's mmap threshold fixed at 1 MiB,
//    so that each is memory new to the process), n = 1024, 2 threads, faer and blas,
//    f64 and f32: ms per call with pre-faulting on and off (TENFERRO_PREFAULT=0), and with huge
//    pages off as well — child processes, interleaved rounds.
//
// OpenBLAS's core type: `--coretype X` when given, else SkylakeX on an AVX-512 CPU (as
// hot-path.bench.mjs), else the environment's; printed with the CPU model and the THP mode.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const thisTree = resolve(dirname(self), '../../..');
const args = process.argv.slice(2);
const arg = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const avx512 = /\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
const coretype = arg('--coretype') ?? (avx512 ? 'SkylakeX' : process.env.OPENBLAS_CORETYPE);
if (coretype !== undefined) process.env.OPENBLAS_CORETYPE = coretype;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---- child: one round in one tree ---------------------------------------------------------------
const childArg = arg('--child');
if (childArg !== undefined) {
  const job = JSON.parse(childArg);
  const out = job.section === 'triple' ? await tripleRound(job) : job.section === 'touch' ? await touchRun(job) : job.section === 'fresh' ? await freshRun(job) : await rssRun(job);
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

async function imports(tree) {
  const core = await import(pathToFileURL(`${tree}/packages/core/dist/index.js`).href);
  const faerDist = `${tree}/packages/provider-faer/dist/index.js`;
  const blasDist = `${tree}/packages/provider-blas/dist/index.js`;
  return {
    core,
    faer: existsSync(faerDist) ? await import(pathToFileURL(faerDist).href) : undefined,
    blas: existsSync(blasDist) ? await import(pathToFileURL(blasDist).href) : undefined,
  };
}

function operands(Tensor, dtype, shape, seed) {
  const size = shape.reduce((a, b) => a * b, 1);
  return Tensor.fromArray(dtype, shape, Array.from({ length: size }, (_, i) => (((i * 2654435761 + seed) >>> 0) % 16) / 4 - 2));
}

async function minorCollection() {
  globalThis.gc?.({ type: 'minor' });
  for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
}

/** One round of the triple in this process's tree: per config, each style once (rotated by `round`). */
async function tripleRound({ tree, round, kinds, threads, dtypes, calls, n }) {
  const { core, faer, blas } = await imports(tree);
  const { CpuBackend, Tensor } = core;
  const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
  const rows = [];
  for (const t of threads) {
    for (const kind of kinds) {
      const provider = kind === 'faer' ? faer?.createFaerProvider() : blas?.createBlasProvider();
      if (provider === undefined) continue;
      const b = await CpuBackend.create({ kind, threads: t, providers: [provider] }).catch(() => undefined);
      if (b === undefined) continue;
      for (const dtype of dtypes) {
        const x = operands(Tensor, dtype, [n, n], 1);
        const y = operands(Tensor, dtype, [n, n], 2);
        const warmOut = Tensor.zeros(dtype, [n, n]);
        const dims = { contracting: [[1], [0]] };
        const styles = {
          into: () => b.dotGeneralInto(warmOut, x, y, dims),
          dispose: async () => (await b.matmul(x, y)).dispose(),
          drop: () => b.matmul(x, y),
        };
        const outBytes = n * n * (dtype === 'f64' ? 8 : 4);
        const row = { kind, threads: t, dtype, n };
        const names = Object.keys(styles);
        for (let i = 0; i < names.length; i++) {
          const name = names[(i + round) % names.length];
          const fn = styles[name];
          b.resetBufferPool();
          await minorCollection();
          // 10 warm-up calls (the drop loop's first outputs are fresh storage by necessity).
          for (let w = 0; w < 10; w++) await fn();
          let hits = 0;
          let misses = 0;
          const onPool = (e) => {
            if (e.dtype !== dtype || e.bytes < outBytes) return;
            if (e.kind === 'hit') hits++;
            else if (e.kind === 'miss') misses++;
          };
          subscribe('tenferro:pool', onPool);
          let ms;
          try {
            const t0 = process.hrtime.bigint();
            for (let c = 0; c < calls; c++) await fn();
            ms = Number(process.hrtime.bigint() - t0) / 1e6;
          } finally {
            unsubscribe('tenferro:pool', onPool);
          }
          // ms per call: the loop's time over its calls, so that a collection the loop causes is
          // paid where it happens (a per-call median would leave out the calls it lands in).
          row[name] = ms / calls;
          if (name === 'drop') row.hitRate = hits + misses === 0 ? NaN : hits / (hits + misses);
        }
        rows.push(row);
      }
      await b.close();
    }
  }
  return { rows };
}

/** Peak RSS of 60 drop-loop calls (f64 n = 1024, faer, 2 threads) in this process's tree and environment. */
async function rssRun({ tree, n, calls }) {
  const { core, faer } = await imports(tree);
  const { CpuBackend, Tensor } = core;
  if (faer === undefined) return { maxRssKiB: NaN };
  const b = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [faer.createFaerProvider()] });
  const x = operands(Tensor, 'f64', [n, n], 1);
  const y = operands(Tensor, 'f64', [n, n], 2);
  const t0 = process.hrtime.bigint();
  for (let c = 0; c < calls; c++) await b.matmul(x, y);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / calls;
  const stats = b.bufferPoolStats();
  await b.close();
  return { maxRssKiB: process.resourceUsage().maxRSS, msPerCall: ms, hits: stats.hits, misses: stats.misses };
}

/** ms per call of a loop whose every output is fresh (cap 0), per kind and dtype, 2 threads. */
async function freshRun({ tree, n, calls, kinds, dtypes }) {
  const { core, faer, blas } = await imports(tree);
  const { CpuBackend, Tensor } = core;
  const rows = [];
  for (const kind of kinds) {
    const provider = kind === 'faer' ? faer?.createFaerProvider() : blas?.createBlasProvider();
    if (provider === undefined) continue;
    const b = await CpuBackend.create({ kind, threads: 2, providers: [provider] });
    b.setBufferPoolLimitBytes(0);
    for (const dtype of dtypes) {
      const x = operands(Tensor, dtype, [n, n], 1);
      const y = operands(Tensor, dtype, [n, n], 2);
      for (let w = 0; w < 3; w++) (await b.matmul(x, y)).dispose();
      const times = [];
      for (let c = 0; c < calls; c++) {
        const t0 = process.hrtime.bigint();
        (await b.matmul(x, y)).dispose();
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      rows.push({ kind, dtype, ms: median(times), misses: b.bufferPoolStats().misses });
    }
    await b.close();
  }
  return { rows };
}

// ---- parent ----------------------------------------------------------------------------------------
const json = args.includes('--json');
const quick = args.includes('--quick');
const only = arg('--only');
const base = arg('--base') === undefined ? undefined : resolve(arg('--base'));
const rounds = Number(arg('--rounds') ?? (quick ? 3 : 9));
const list = (name, fallback) => (arg(name) ?? fallback).split(',').filter(Boolean);
const log = (...xs) => {
  if (!json) console.log(...xs);
};
const results = { machine: {}, touch: undefined, triple: [], rss: [] };

function child(tree, job, env = {}) {
  const r = spawnSync(process.execPath, ['--expose-gc', self, '--child', JSON.stringify({ ...job, tree })], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`child in ${tree} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

/** What the machine is: CPU model, THP mode and defrag, whether core applies advice, OpenBLAS's core type. */
async function machine() {
  const os = await import(pathToFileURL(`${thisTree}/packages/os/dist/index.js`).href);
  const core = await import(pathToFileURL(`${thisTree}/packages/core/dist/index.js`).href);
  const thp = os.transparentHugePages();
  const policy = typeof core.hugePagePolicy === 'function' ? core.hugePagePolicy() : undefined;
  let openblasCore = '—';
  try {
    const { buildAnchor } = await import(pathToFileURL(`${thisTree}/bench/anchor/build-anchor.mjs`).href);
    const { execFileSync } = await import('node:child_process');
    openblasCore = JSON.parse(execFileSync(buildAnchor(), ['d', '64', '1', '3', '1'], { encoding: 'utf8' })).core;
  } catch (e) {
    openblasCore = `anchor unavailable (${e.message})`;
  }
  results.machine = {
    cpu: /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1],
    openblasCoretype: process.env.OPENBLAS_CORETYPE ?? '(auto)',
    openblasCore,
    thp: thp.enabled,
    defrag: thp.defrag,
    hugePageAdvice: policy?.advice ?? false,
    hugePagePlacement: policy?.placement ?? false,
    prefault: policy?.prefault ?? false,
  };
  const m = results.machine;
  log(`machine: ${m.cpu}; OPENBLAS_CORETYPE=${m.openblasCoretype} (anchor reports ${m.openblasCore}); THP ${m.thp}, defrag ${m.defrag}; core: huge-page placement ${m.hugePagePlacement}, advice ${m.hugePageAdvice}, pre-faulting ${m.prefault}`);
}

/**
 * First-touch cost of 8 MiB (median ms): each sample in a child process of its own — memory new
 * to the process (glibc maps a fresh region for each of its 8 buffers, all held) — alternating
 * 4 KiB pages and a 2 MiB-aligned range advised MADV_HUGEPAGE. Whether the guest kernel has huge
 * pages free, or must compact (or the host must back them), changes the second a lot: both are
 * real, so the spread is printed too.
 */
async function touch() {
  const count = quick ? 4 : 9;
  const samples = { small: [], huge: [] };
  for (let r = 0; r < count; r++) {
    for (const huge of r % 2 ? [true, false] : [false, true]) samples[huge ? 'huge' : 'small'].push(...child(thisTree, { section: 'touch', huge }).ms);
  }
  const spread = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  results.touch = { pages4k: median(samples.small), hugePages: median(samples.huge), spread4k: spread(samples.small), spreadHuge: spread(samples.huge) };
  const t = results.touch;
  log(`\n1. First touch of 8 MiB of memory new to the process (median ms of ${samples.small.length}): 4 KiB pages ${t.pages4k.toFixed(2)} (${t.spread4k}), huge pages ${t.hugePages.toFixed(2)} (${t.spreadHuge})`);
}

/** One touch sample set (in a child): 8 buffers of 8 MiB, each new memory, written once per 4 KiB page. */
async function touchRun({ tree, huge }) {
  const os = await import(pathToFileURL(`${tree}/packages/os/dist/index.js`).href);
  const MiB = 1 << 20;
  const bytes = 8 * MiB;
  const keep = [];
  const ms = [];
  for (let i = 0; i < 8; i++) {
    const buf = new SharedArrayBuffer(bytes + (huge ? 2 * MiB : 0));
    let off = 0;
    if (huge) {
      const address = Number(os.sharedMemoryRange(buf).address);
      off = (2 * MiB - (address % (2 * MiB))) % (2 * MiB);
      os.adviseHugePages(buf, off, bytes);
    }
    keep.push(buf);
    const view = new Uint8Array(buf, off, bytes);
    const t0 = process.hrtime.bigint();
    for (let j = 0; j < bytes; j += 4096) view[j] = 1;
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { ms };
}

async function triple() {
  const job = {
    section: 'triple',
    n: Number(arg('--n') ?? 1024),
    kinds: list('--kinds', 'faer,blas'),
    threads: list('--threads', '1,2').map(Number),
    dtypes: list('--dtypes', 'f64,f32'),
    calls: quick ? 8 : 16,
  };
  const trees = base === undefined ? ['this'] : ['base', 'this'];
  const runs = { base: [], this: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? trees : [...trees].reverse();
    for (const which of order) {
      runs[which].push(child(which === 'base' ? base : thisTree, { ...job, round: r }).rows);
      process.stderr.write(`triple round ${r + 1}/${rounds}: ${which} done\n`);
    }
  }
  const flops = (n) => 2 * n ** 3;
  log(`\n2. n = ${job.n} matmul, median of ${rounds} interleaved rounds: GFLOP/s per loop style, ratios of into; drop-loop pool hit rate after 10 warm-up calls`);
  log(`${'tree'.padEnd(6)}${'kind'.padEnd(6)}${'t'.padEnd(3)}${'dtype'.padEnd(6)}${'into'.padStart(8)}${'dispose'.padStart(9)}${'drop'.padStart(8)}${'dispose/into'.padStart(14)}${'drop/into'.padStart(11)}${'hits'.padStart(8)}`);
  for (const which of trees) {
    const all = runs[which];
    if (all.length === 0) continue;
    for (const [i, first] of all[0].entries()) {
      const per = (k) => median(all.map((rows) => rows[i]?.[k]).filter((v) => typeof v === 'number' && !Number.isNaN(v)));
      const ratio = (k) => median(all.map((rows) => rows[i]?.into / rows[i]?.[k]).filter((v) => Number.isFinite(v)));
      const row = {
        tree: which,
        kind: first.kind,
        threads: first.threads,
        dtype: first.dtype,
        n: first.n,
        intoGflops: flops(first.n) / per('into') / 1e6,
        disposeGflops: flops(first.n) / per('dispose') / 1e6,
        dropGflops: flops(first.n) / per('drop') / 1e6,
        disposeRatio: ratio('dispose'),
        dropRatio: ratio('drop'),
        hitRate: per('hitRate'),
      };
      results.triple.push(row);
      log(
        `${which.padEnd(6)}${row.kind.padEnd(6)}${String(row.threads).padEnd(3)}${row.dtype.padEnd(6)}${row.intoGflops.toFixed(1).padStart(8)}${row.disposeGflops.toFixed(1).padStart(9)}${row.dropGflops.toFixed(1).padStart(8)}${row.disposeRatio.toFixed(2).padStart(14)}${row.dropRatio.toFixed(2).padStart(11)}${`${(100 * row.hitRate).toFixed(0)} %`.padStart(8)}`,
      );
    }
  }
  if (results.touch !== undefined) log(`(8 MiB first touch on this machine: ${results.touch.pages4k.toFixed(2)} ms with 4 KiB pages, ${results.touch.hugePages.toFixed(2)} ms with huge pages)`);
}

async function rss() {
  const job = { section: 'rss', n: Number(arg('--n') ?? 1024), calls: 60 };
  const variants = [
    ['this', 'advice + pre-faulting on', {}],
    ['this', 'TENFERRO_HUGE_PAGES=0', { TENFERRO_HUGE_PAGES: '0' }],
    ['this', 'TENFERRO_PREFAULT=0', { TENFERRO_PREFAULT: '0' }],
    ['this', 'both off', { TENFERRO_HUGE_PAGES: '0', TENFERRO_PREFAULT: '0' }],
    ...(base === undefined ? [] : [['base', 'base tree', {}]]),
  ];
  const samples = variants.map(() => []);
  const reps = quick ? 1 : 3;
  for (let r = 0; r < reps; r++) {
    for (const [i, [which, , env]] of variants.entries()) samples[i].push(child(which === 'base' ? base : thisTree, job, env));
  }
  log(`\n3. Peak RSS, 60 calls of a drop loop, f64 n = ${job.n}, faer, 2 threads (median of ${reps})`);
  for (const [i, [which, label]] of variants.entries()) {
    const row = { tree: which, variant: label, maxRssMiB: median(samples[i].map((s) => s.maxRssKiB)) / 1024, msPerCall: median(samples[i].map((s) => s.msPerCall)), misses: median(samples[i].map((s) => s.misses)) };
    results.rss.push(row);
    log(`${label.padEnd(28)} peak RSS ${row.maxRssMiB.toFixed(0).padStart(5)} MiB, ${row.msPerCall.toFixed(2)} ms per call, ${row.misses} pool misses`);
  }
}

async function prefaultSection() {
  const job = { section: 'fresh', n: Number(arg('--n') ?? 1024), calls: quick ? 8 : 16, kinds: list('--kinds', 'faer,blas'), dtypes: list('--dtypes', 'f64,f32') };
  // glibc's mmap threshold fixed at 1 MiB: each output is a fresh mapping, unmapped when disposed
  // (by default the threshold grows to the largest size freed, and glibc then recycles the memory).
  const fresh = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1048576' };
  const variants = [
    ['pre-faulting on', fresh],
    ['TENFERRO_PREFAULT=0', { ...fresh, TENFERRO_PREFAULT: '0' }],
    ['both off', { ...fresh, TENFERRO_PREFAULT: '0', TENFERRO_HUGE_PAGES: '0' }],
  ];
  const runs = variants.map(() => []);
  const count = quick ? 3 : 7;
  for (let r = 0; r < count; r++) {
    for (let i = 0; i < variants.length; i++) {
      const k = (i + r) % variants.length;
      runs[k].push(child(thisTree, job, variants[k][1]).rows);
    }
  }
  log(`\n4. Every output fresh (cap 0, disposed), n = ${job.n}, 2 threads: median ms per call of ${count} interleaved rounds`);
  log(`${'kind'.padEnd(6)}${'dtype'.padEnd(6)}${variants.map(([label]) => label.padStart(22)).join('')}`);
  results.prefault = [];
  for (const [i, first] of runs[0][0].entries()) {
    const cells = runs.map((rs) => median(rs.map((rows) => rows[i].ms)));
    results.prefault.push({ kind: first.kind, dtype: first.dtype, ...Object.fromEntries(variants.map(([label], k) => [label, cells[k]])) });
    log(`${first.kind.padEnd(6)}${first.dtype.padEnd(6)}${cells.map((c) => c.toFixed(2).padStart(22)).join('')}`);
  }
}

await machine();
if (only === undefined || only === 'touch') await touch();
if (only === undefined || only === 'triple') await triple();
if (only === undefined || only === 'rss') await rss();
if (only === undefined || only === 'prefault') await prefaultSection();
if (json) console.log(JSON.stringify(results));
