// The native fuzz of tenferro_tprims.run in a child process (test/fuzz/native-fuzz-child.mjs):
// 20,000 seeded, mutated descriptors straight into the addon, every buffer between guard bands.
// A crash is the child dying of a signal, reported with the descriptor it was running.
// TENFERRO_FUZZ_SEED replays another seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnFuzz } from '@tenferro/native-build/fuzz';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTprims } from '../src/native/load.js';

const CHILD = fileURLToPath(new URL('./fuzz/native-fuzz-child.mjs', import.meta.url));
const SEED = Number(process.env.TENFERRO_FUZZ_SEED ?? 0x7e9a1f5);
const dir = mkdtempSync(join(tmpdir(), 'tenferro-tprims-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function report(r: ReturnType<typeof spawnFuzz>): string {
  return `exit ${r.status}, signal ${r.signal}\n${r.stderr}\nlast case (the one running when it stopped): ${r.lastCase}`;
}

const s = loadTprims();

describe.runIf(s.available)('tenferro_tprims.run under fuzzing (child process)', () => {
  it(`20,000 mutated descriptors (seed ${SEED}): no crash, no guard byte touched, every status the documented one`, () => {
    const r = spawnFuzz({ script: CHILD, seed: SEED, count: 20_000, trace: join(dir, 'trace.json'), timeoutMs: 120_000 });
    expect(r.error, report(r)).toBeUndefined();
    expect({ status: r.status, signal: r.signal }, report(r)).toEqual({ status: 0, signal: null });
    expect(r.summary.count).toBe(20_000);
    // The run covered acceptance and every refusal the addon documents (IsaUnavailable only where some ISA path cannot run).
    const binding = s.available ? s.binding : undefined;
    const expected = [0, 1, 2, 4, ...([0, 1, 2].some((isa) => binding!.info(isa) === null) ? [3] : [])];
    for (const status of expected) expect(r.summary.statuses[status] ?? 0, `status ${status}`).toBeGreaterThan(0);
  });

  it('the checks fail when they should: a touched guard or a refusal that wrote fails the run', () => {
    const guard = spawnFuzz({ script: CHILD, seed: SEED, count: 10, trace: join(dir, 'guard.json'), env: { TENFERRO_FUZZ_SABOTAGE: 'guard' } });
    expect(guard.status).toBe(1);
    expect(guard.stderr).toContain('guard byte 0 of operand 0 was written');
    const write = spawnFuzz({ script: CHILD, seed: SEED, count: 200, trace: join(dir, 'write.json'), env: { TENFERRO_FUZZ_SABOTAGE: 'write' } });
    expect(write.status).toBe(1);
    expect(write.stderr).toMatch(/status \d+ \(a refusal\), but operand 0 was written/);
  });
});
