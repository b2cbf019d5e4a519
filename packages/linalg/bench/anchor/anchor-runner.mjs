// Runs the C LAPACK anchor for a bench from a small helper process started once, before the bench
// allocates anything large: spawning a child forks the spawning process, and a fork write-protects
// every page the parent has, so the bench's next write to each of its warm pages (pooled outputs,
// LAPACK workspaces, OpenBLAS buffers, the JS heap) takes a fault — ~15 µs per 4 KiB page on this
// VM, 8 MiB → ~30 ms. Spawned from the bench itself before every la round, the anchor made the la
// side pay those faults in whichever call first wrote each page (measured: la.eigh n = 2048 after
// la.qr, 8,266 faults and +170 ms in the timed call — the 32 MiB output buffer it got had only had
// 16 KiB written since the fork). The helper forks instead; the bench process never forks again.
//
//   const runner = startAnchorRunner(anchorPath);
//   const out = await runner.run(['getrf', '1024', '1', '3']);   // the anchor's JSON line, parsed
//   runner.close();
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const HELPER = `
const { execFileSync } = require('node:child_process');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const { path, args } = JSON.parse(line);
  let reply;
  try {
    reply = { ok: true, out: execFileSync(path, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }) };
  } catch (e) {
    reply = { ok: false, error: String(e && e.message) };
  }
  process.stdout.write(JSON.stringify(reply) + '\\n');
});
`;

export function startAnchorRunner(anchorPath) {
  const child = spawn(process.execPath, ['-e', HELPER], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => waiting.shift()?.(JSON.parse(line)));
  return {
    run(args) {
      return new Promise((resolve, reject) => {
        waiting.push((reply) => (reply.ok ? resolve(JSON.parse(reply.out)) : reject(new Error(`lapack-anchor ${args.join(' ')}: ${reply.error}`))));
        child.stdin.write(`${JSON.stringify({ path: anchorPath, args })}\n`);
      });
    },
    close() {
      child.stdin.end();
    },
  };
}
