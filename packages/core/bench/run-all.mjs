// `pnpm bench` for @tenferro/core: every *.bench.mjs in this folder, one after another.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const extra = process.argv.slice(2);
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.bench.mjs')).sort()) {
  console.log(`\n== ${file}`);
  const r = spawnSync(process.execPath, [`${dir}${file}`, ...extra], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
