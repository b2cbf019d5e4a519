#!/usr/bin/env node
// The empty execution (`backend.install((ctx) => ctx.run(noop))`, faer kind, 1 thread) of a built
// checkout, measured on request: hot-path.bench.mjs `--base <checkout>` runs this in a child
// process for the base and for this tree alike (two copies of @tenferro/os in one process would
// share, or refuse, one arbiter) and asks for one sample per round, so the base's figure comes from
// the same interleaved run (#38 item 7: the goal's empty execution is the one measured at 9ce24f7).
//
//   node bench/empty-execution-child.mjs <checkout>   then, per line on stdin: <calls> → one JSON line { micros, meanMicros }
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { perCallStats } from './measure.mjs';

const checkout = resolve(process.argv[2] ?? '.');
const at = (p) => pathToFileURL(`${checkout}/${p}`).href;
const { CpuBackend, defineKernel } = await import(at('packages/core/dist/index.js'));
const { createFaerProvider } = await import(at('packages/provider-faer/dist/index.js'));
const backend = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [createFaerProvider()] });
const noop = defineKernel(new URL('./noop-kernel.mjs', import.meta.url), 'noop');
const fn = () => backend.install((ctx) => ctx.run(noop));

process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const calls = Number(line);
  if (!Number.isInteger(calls) || calls <= 0) break;
  const { median, mean } = await perCallStats(fn, calls, 200);
  process.stdout.write(`${JSON.stringify({ micros: median, meanMicros: mean })}\n`);
}
await backend.close();
