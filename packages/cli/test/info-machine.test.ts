// #41: `tenferro info` (and --json) has a "machine arbiter" section: the name joined and the joined
// processes that hold or wait for permits. A child process joins a fresh name and holds a permit.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../dist/bin.js');
const coreDist = new URL('../../core/dist/index.js', import.meta.url).href;
const name = `t41-info-${process.pid}`;
afterAll(() => rmSync(`/dev/shm/tenferro-${name}`, { force: true }));

function info(args: string[], env: Record<string, string | undefined>) {
  const e: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete e[k];
  const r = spawnSync(process.execPath, [bin, 'info', ...args], { encoding: 'utf8', env: e });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tenferro info: the machine arbiter section (#41)', () => {
  it('lists the joined process holding a permit (pid, CPUs, since when); unjoined says not joined', async () => {
    const holder = spawn(
      process.execPath,
      ['--input-type=module', '-e', `const core = await import(${JSON.stringify(coreDist)}); const m = core.joinMachineArbiter(${JSON.stringify(name)}); await m.acquire({ cpus: core.CpuSet.of([0]) }); console.log('held'); setInterval(() => {}, 1 << 30);`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      const json = info(['--json'], { TENFERRO_MACHINE_ARBITER: name });
      expect(json.code).toBe(0);
      const report = JSON.parse(json.stdout);
      expect(report.backend.arbiter).toBe('machine');
      expect(report.machineArbiter.name).toBe(name);
      expect(report.machineArbiter.joined).toBe(2); // the holder and tenferro info itself
      const held = report.machineArbiter.processes.find((p: { pid: number }) => p.pid === holder.pid);
      expect(held.holds).toEqual([{ cpus: [0], exclusive: false, since: expect.any(Number) }]);
      expect(held.waits).toEqual([]);
      const text = info([], { TENFERRO_MACHINE_ARBITER: name });
      expect(text.stdout).toContain('machine arbiter');
      expect(text.stdout).toContain(`pid ${holder.pid}`);
      expect(text.stdout).toMatch(/holds CPUs 0 since \d{4}-/);
    } finally {
      holder.kill('SIGKILL');
    }
    const unjoined = JSON.parse(info(['--json'], { TENFERRO_MACHINE_ARBITER: undefined }).stdout);
    expect(unjoined.machineArbiter).toBeNull();
    expect(unjoined.backend.arbiter).toBe('process');
  });
});
