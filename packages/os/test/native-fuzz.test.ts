// The native fuzz of tenferro_os.node in a child process (test/fuzz/native-fuzz-child.mjs):
// 20,000 seeded, mutated argument lists straight into setThreadAffinity and typedArrayRange, and
// 2,000 more under `taskset -c <one cpu>` (where almost every CPU is outside the process mask).
// A crash is the child dying of a signal, reported with the case it was running.
// TENFERRO_FUZZ_SEED replays another seed; the sabotaged runs show each check can fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnFuzz } from '@tenferro/native-build/fuzz';
import { afterAll, describe, expect, it } from 'vitest';
import { getProcessAffinity } from '../src/index.js';

const CHILD = fileURLToPath(new URL('./fuzz/native-fuzz-child.mjs', import.meta.url));
const SEED = Number(process.env.TENFERRO_FUZZ_SEED ?? 0x5eed0500);
const dir = mkdtempSync(join(tmpdir(), 'tenferro-os-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function report(r: ReturnType<typeof spawnFuzz>): string {
  return `exit ${r.status}, signal ${r.signal}\n${r.stderr}\nlast case (the one running when it stopped): ${r.lastCase}`;
}

describe('tenferro_os under fuzzing (child process)', () => {
  it(`20,000 mutated calls (seed ${SEED}): no crash, no guard byte touched, every answer the model's, never a widening`, () => {
    const r = spawnFuzz({ script: CHILD, seed: SEED, count: 20_000, trace: join(dir, 'trace.json'), timeoutMs: 120_000 });
    expect(r.error, report(r)).toBeUndefined();
    expect({ status: r.status, signal: r.signal }, report(r)).toEqual({ status: 0, signal: null });
    for (const answer of [0, 22]) expect(r.summary.statuses[answer] ?? 0, `answer ${answer}`).toBeGreaterThan(0);
    console.log(`os fuzz: ${r.summary.count} cases in ${r.summary.ms} ms (child wall ${r.ms} ms)`, r.summary.statuses);
  });

  it('2,000 more under taskset -c <one cpu>: CPUs outside the mask answer outsideAllowedSet (-1)', () => {
    const allowed = getProcessAffinity();
    const one = String(allowed[allowed.length - 1]);
    const r = spawnFuzz({ script: CHILD, seed: SEED + 1, count: 2_000, trace: join(dir, 'taskset.json'), wrapper: ['taskset', '-c', one], timeoutMs: 60_000 });
    expect({ status: r.status, signal: r.signal }, report(r)).toEqual({ status: 0, signal: null });
    expect(r.summary.name).toBe(`tenferro_os (allowed ${one})`);
    expect(r.summary.statuses[-1] ?? 0).toBeGreaterThan(0);
  });

  it('the checks fail when they should: a crash is reported with its case, a touched guard fails the run', () => {
    const crash = spawnFuzz({ script: CHILD, seed: SEED, count: 10, trace: join(dir, 'crash.json'), env: { TENFERRO_FUZZ_SABOTAGE: 'crash' } });
    expect(crash.signal).toBe('SIGSEGV');
    expect(JSON.parse(crash.lastCase)).toMatchObject({ seed: SEED, index: 3 });
    // Find a seed whose case 3 has a buffer (a typedArrayRange case), so the guard sabotage applies.
    let guard: ReturnType<typeof spawnFuzz> | undefined;
    for (let s = SEED; s < SEED + 50 && guard?.status !== 1; s++) {
      guard = spawnFuzz({ script: CHILD, seed: s, count: 5, trace: join(dir, 'guard.json'), env: { TENFERRO_FUZZ_SABOTAGE: 'guard' } });
    }
    expect(guard?.status).toBe(1);
    expect(guard?.stderr).toContain('guard byte 0 of operand 0 was written');
  });
});
