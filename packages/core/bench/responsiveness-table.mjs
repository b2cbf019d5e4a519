// Prints the table of `responsiveness.bench.mjs --json` output files: node bench/responsiveness-table.mjs <file.json>...
import { readFileSync } from 'node:fs';

const pct = (x) => `${(x * 100).toFixed(0)} %`;
for (const file of process.argv.slice(2)) {
  const { cpu, load, rows } = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1));
  console.log(`${file}: ${cpu}; load average after: ${load}`);
  console.log('| tree | stream | calls | gap p99 | longest gap (run-queue ms, gc) | gaps > 5 ms | GC max | main | tf helpers | workers | other new threads | node's own | calls (B) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.tree} | ${r.kind} ${r.dtype} n = ${r.n}, ${r.threads}t | ${r.calls} | ${r.p99.toFixed(2)} ms | ${r.longest.toFixed(1)} ms (${r.longestRunQueue.toFixed(1)}${r.longestGc ? ', gc' : ''}) | ${r.over5} | ${r.gcMax.toFixed(1)} ms | ${pct(r.cpu.main)} | ${pct(r.cpu.helpers)} | ${pct(r.cpu.workers)} | ${pct(r.cpu.others)} | ${r.cpu.node === undefined ? '–' : pct(r.cpu.node)} | ${r.callsB} |`,
    );
  }
}
