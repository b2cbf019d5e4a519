// The native fuzz of tenferro_linalg.run in a child process (test/fuzz/native-fuzz-child.mjs):
// seeded jobs for every op and dtype, mutated words, short buffers and wrong arguments, every
// buffer between guard bands. A crash is the child dying of a signal, reported with its job.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnFuzz } from '@tenferro/native-build/fuzz';
import { afterAll, describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./fuzz/native-fuzz-child.mjs', import.meta.url));
const SEED = Number(process.env.TENFERRO_FUZZ_SEED ?? 0x11a1c);
const dir = mkdtempSync(join(tmpdir(), 'tenferro-linalg-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tenferro_linalg.run under fuzzing (child process)', () => {
  it(`3,000 jobs (seed ${SEED}): no crash, no guard byte touched, well-formed jobs succeed, refusals write nothing`, () => {
    const r = spawnFuzz({ script: CHILD, seed: SEED, count: 3000, trace: join(dir, 'trace.json'), timeoutMs: 120_000 });
    const report = `exit ${r.status}, signal ${r.signal}\n${r.stderr}\nlast case: ${r.lastCase}`;
    expect(r.error, report).toBeUndefined();
    expect({ status: r.status, signal: r.signal }, report).toEqual({ status: 0, signal: null });
    for (const status of [0, 1, 2, 3, 4]) expect(r.summary.statuses[status] ?? 0, `status ${status}`).toBeGreaterThan(0);
  });
});
