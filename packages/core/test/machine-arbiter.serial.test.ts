// #41: one arbiter for every process of the machine that joins it. Child processes
// (fixtures/machine-arbiter/child.mjs) join a machine arbiter named for this run through
// TENFERRO_MACHINE_ARBITER (or not), record when their executions hold their permits, meet inside
// executions through files, or hold a permit and get killed. Serial tier: several processes.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverCpuTopology } from '../src/index.js';
import { runCoreChild } from './helpers.js';

const coreDist = new URL('../dist/index.js', import.meta.url).href;
const childScript = new URL('./fixtures/machine-arbiter/child.mjs', import.meta.url).pathname;

const names: string[] = [];
const dirs: string[] = [];
let counter = 0;
function freshName(): string {
  const name = `t41-${process.pid}-${counter++}`;
  names.push(name);
  return name;
}
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-machine-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const n of names) rmSync(`/dev/shm/tenferro-${n}`, { force: true });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Child {
  readonly proc: ChildProcess;
  readonly done: Promise<Record<string, unknown>>;
}

function startChild(job: Record<string, unknown>, machine: string | undefined): Child {
  const env: Record<string, string | undefined> = { ...process.env, TENFERRO_DISCOVER_PROVIDERS: '0' };
  if (machine === undefined) delete env.TENFERRO_MACHINE_ARBITER;
  else env.TENFERRO_MACHINE_ARBITER = machine;
  const proc = spawn(process.execPath, [childScript, JSON.stringify({ core: coreDist, ...job })], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': 'exit' may come before the child's last stdout chunk is read (under load
  // the result line was missing, JSON.parse threw in the handler and the test hung to its timeout).
  const done = new Promise<Record<string, unknown>>((resolve, reject) => {
    proc.once('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`child ${String(job.id)} failed (${code ?? signal}): ${stderr}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop()!));
      } catch (e) {
        reject(new Error(`child ${String(job.id)} printed no result (${String(e)}): stdout ${JSON.stringify(stdout)}, stderr ${stderr}`));
      }
    });
  });
  return { proc, done };
}

async function appears(path: string): Promise<void> {
  // A child writes the file; the parent only waits for it (the children's own latches are files).
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 2));
}

type Interval = [number, number];

/** Pairs of intervals of different processes that overlap in time (CLOCK_MONOTONIC, ms), and by how much each. */
function overlaps(perProcess: readonly (readonly Interval[])[]): string[] {
  const found: string[] = [];
  for (let p = 0; p < perProcess.length; p++) {
    for (let q = p + 1; q < perProcess.length; q++) {
      for (const [a0, a1] of perProcess[p]!) {
        for (const [b0, b1] of perProcess[q]!) if (a0 < b1 && b0 < a1) found.push(`processes ${p} and ${q}: [${a0.toFixed(3)}, ${a1.toFixed(3)}] and [${b0.toFixed(3)}, ${b1.toFixed(3)}] share ${(Math.min(a1, b1) - Math.max(a0, b0)).toFixed(3)} ms`);
      }
    }
  }
  return found;
}

async function threeProcesses(machine: string | undefined): Promise<{ results: Record<string, unknown>[]; pairs: string[] }> {
  const dir = freshDir();
  const children = ['a', 'b', 'c'].map((id) => startChild({ dir, id, mode: 'intervals', runs: 12, holdMs: 15 }, machine));
  for (const id of ['a', 'b', 'c']) await appears(join(dir, `ready-${id}`));
  writeFileSync(join(dir, 'go'), '');
  const results = await Promise.all(children.map((c) => c.done));
  return { results, pairs: overlaps(results.map((r) => r.intervals as Interval[])) };
}

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;

describe('one machine arbiter for the processes that join it (#41)', () => {
  it('three joined processes on the same CPUs: zero overlapping pairs of executions', async () => {
    const name = freshName();
    const { results, pairs } = await threeProcesses(name);
    for (const r of results) {
      expect(r.arbiter).toBe('machine');
      expect(r.machineArbiter).toBe(name);
      expect((r.intervals as Interval[]).length).toBe(12);
    }
    expect(pairs, pairs.join('\n')).toEqual([]);
    // The segment is the documented one, for this user only.
    expect(statSync(`/dev/shm/tenferro-${name}`).mode & 0o777).toBe(0o600);
  });

  it('three unjoined processes are unaffected: their executions overlap (the control)', async () => {
    const { results, pairs } = await threeProcesses(undefined);
    for (const r of results) expect(r.arbiter).toBe('process');
    expect(pairs.length).toBeGreaterThan(0);
  });

  it.skipIf(!twoCpus)('joined processes on disjoint CPUs (fake topologies) run at the same time: they meet inside their executions', async () => {
    const name = freshName();
    const dir = freshDir();
    const a = startChild({ dir, id: 'a', peer: 'b', mode: 'rendezvous', cpus: '0', threads: 1 }, name);
    const b = startChild({ dir, id: 'b', peer: 'a', mode: 'rendezvous', cpus: '1', threads: 1 }, name);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect([ra.arbiter, rb.arbiter]).toEqual(['machine', 'machine']);
    expect([ra.met, rb.met]).toEqual([true, true]);
  });

  it('a process that did not join runs beside a joined one on the same CPUs: they meet inside their executions', async () => {
    const name = freshName();
    const dir = freshDir();
    const a = startChild({ dir, id: 'a', peer: 'b', mode: 'rendezvous' }, name);
    const b = startChild({ dir, id: 'b', peer: 'a', mode: 'rendezvous' }, undefined);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect([ra.arbiter, rb.arbiter]).toEqual(['machine', 'process']);
    expect([ra.met, rb.met]).toEqual([true, true]);
  });

  it('a holder killed with SIGKILL gives its permit up: the waiter in another process runs within 1 s', async () => {
    const name = freshName();
    const dir = freshDir();
    const holder = startChild({ dir, id: 'h', mode: 'hold' }, name);
    holder.done.catch(() => {}); // it is killed
    await appears(join(dir, 'held-h'));
    const waiter = startChild({ dir, id: 'w', mode: 'wait' }, name);
    await appears(join(dir, 'waiting-w'));
    const killedAt = Date.now();
    holder.proc.kill('SIGKILL');
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the waiter was not admitted within 1 s of the kill')), 1000));
    const r = await Promise.race([waiter.done, deadline]);
    expect(r.queued).toBe(1);
    expect(r.admittedAt as number).toBeGreaterThanOrEqual(killedAt);
  });

  it('a process out of file descriptors never reaps a live holder (its /proc entry unreadable is not its death)', async () => {
    const name = freshName();
    const dir = freshDir();
    const holder = startChild({ dir, id: 'h', mode: 'hold' }, name);
    holder.done.catch(() => {}); // it is killed
    try {
      await appears(join(dir, 'held-h'));
      const r = await startChild({ dir, id: 's', mode: 'starved' }, name).done;
      type Census = { joined: number; processes: { pid: number }[] };
      expect(r.openError).toBe('EMFILE');
      for (const c of [r.starved, r.after] as Census[]) {
        expect(c.joined).toBe(2);
        expect(c.processes.map((p) => p.pid)).toEqual([holder.proc.pid]);
      }
    } finally {
      holder.proc.kill('SIGKILL');
    }
  });

  it("a process killed while it holds the segment's lock (EOWNERDEAD): the next process to lock repairs the state and the arbiter goes on", { timeout: 60_000 }, async () => {
    // A churning process spends much of its time inside the lock: kill churners until a kill lands
    // there (the observer then reports a repair), at most 40 times.
    const name = freshName();
    const dir = freshDir();
    type Census = { joined: number; processes: unknown[]; lockRepairs: number };
    let census: Census | undefined;
    const killed: number[] = [];
    for (let attempt = 0; attempt < 40 && (census?.lockRepairs ?? 0) === 0; attempt++) {
      const churner = startChild({ dir, id: `c${attempt}`, mode: 'churn' }, name);
      const exited = new Promise<void>((resolve) => churner.proc.once('exit', () => resolve()));
      churner.done.catch(() => {}); // it is killed
      await appears(join(dir, `churning-c${attempt}`));
      churner.proc.kill('SIGKILL');
      killed.push(churner.proc.pid!);
      await exited;
      const observer = startChild({ dir, id: `o${attempt}`, mode: 'observe' }, name);
      census = (await observer.done).census as Census;
      // Every round: the observer took and gave back a permit on every CPU twice after the kill,
      // and the dead churner left no permit, waiter or process behind.
      expect(census.processes).toEqual([]);
    }
    expect(census!.lockRepairs, `no kill of ${killed.length} landed inside the lock`).toBe(1);
  });
});

describe('joining is explicit, typed and refused when it cannot hold (#41)', () => {
  const run = (body: string, env: Record<string, string | undefined> = {}) =>
    runCoreChild(body, { env: { TENFERRO_DISCOVER_PROVIDERS: '0', TENFERRO_MACHINE_ARBITER: undefined, ...env } });
  const codeOf = `async (f) => { try { await f(); return 'ok'; } catch (e) { return e.code + ':' + e.kind; } }`;

  it('joinMachineArbiter before the first backend: executionInfo says machine with the name; again with the same name is the same arbiter', () => {
    const name = freshName();
    const r = run(`
      const a = core.joinMachineArbiter(${JSON.stringify(name)});
      out.same = core.joinMachineArbiter(${JSON.stringify(name)}) === a && core.machineArbiter() === a && core.processArbiter() === a;
      const b = await core.CpuBackend.create({ threads: 1, providers: [] });
      out.info = [b.executionInfo().arbiter, b.executionInfo().machineArbiter];
      await b.close();`);
    expect(r.same).toBe(true);
    expect(r.info).toEqual(['machine', name]);
  });

  it('after a backend exists, with another name, a bad name, or contradicting the variable: InvalidArgument; machineArbiter() unjoined: MachineArbiterUnavailable', () => {
    const name = freshName();
    const r = run(`
      const code = ${codeOf};
      out.badName = await code(() => core.joinMachineArbiter('no/slash'));
      out.tooLong = await code(() => core.joinMachineArbiter('x'.repeat(65)));
      out.unjoined = await code(() => core.machineArbiter());
      const b = await core.CpuBackend.create({ threads: 1, providers: [] });
      out.info = [b.executionInfo().arbiter, b.executionInfo().machineArbiter ?? null];
      out.late = await code(() => core.joinMachineArbiter(${JSON.stringify(name)}));
      await b.close();`);
    expect(r).toMatchObject({ badName: 'InvalidArgument:Validation', tooLong: 'InvalidArgument:Validation', unjoined: 'MachineArbiterUnavailable:Unsupported', info: ['process', null], late: 'InvalidArgument:Validation' });
    const other = run(`
      const code = ${codeOf};
      core.joinMachineArbiter(${JSON.stringify(name)});
      out.other = await code(() => core.joinMachineArbiter(${JSON.stringify(freshName())}));`);
    expect(other.other).toBe('InvalidArgument:Validation');
    const contradicts = run(`out.env = await (${codeOf})(() => core.joinMachineArbiter('another-name'));`, { TENFERRO_MACHINE_ARBITER: name });
    expect(contradicts.env).toBe('InvalidArgument:Validation');
  });

  it('the variable set without the os binding, or naming a bad name: a typed error at the first backend, never an unjoined run', () => {
    const name = freshName();
    const noOs = run(`out.r = await (${codeOf})(() => core.CpuBackend.create({ threads: 1, providers: [] }));`, { TENFERRO_MACHINE_ARBITER: name, TENFERRO_OS_DISABLE: '1' });
    expect(noOs.r).toBe('MachineArbiterUnavailable:Unsupported');
    const bad = run(`out.r = await (${codeOf})(() => core.CpuBackend.create({ threads: 1, providers: [] }));`, { TENFERRO_MACHINE_ARBITER: '../etc' });
    expect(bad.r).toBe('InvalidArgument:Validation');
  });

  it('a segment of another layout (another tenferro version) is refused with ArbiterVersionConflict', () => {
    const name = freshName();
    run(`core.joinMachineArbiter(${JSON.stringify(name)});`);
    const r = run(`out.r = await (${codeOf})(() => core.CpuBackend.create({ threads: 1, providers: [] }));`, { TENFERRO_MACHINE_ARBITER: name, TENFERRO_OS_MACHINE_ABI_CLAIM: '99' });
    expect(r.r).toBe('ArbiterVersionConflict:RuntimeState');
  });

  it('a segment created in another PID namespace is refused (pid liveness does not cross namespaces)', () => {
    const name = freshName();
    run(`core.joinMachineArbiter(${JSON.stringify(name)});`);
    // Rewrite the creator's namespace inode (bytes 16..31 of the header: dev, ino) as another container's would be.
    const path = `/dev/shm/tenferro-${name}`;
    const r0 = run(`
      const { openSync, writeSync, closeSync } = await import('node:fs');
      const fd = openSync(${JSON.stringify(path)}, 'r+');
      writeSync(fd, new Uint8Array(new BigUint64Array([1n, 2n]).buffer), 0, 16, 16);
      closeSync(fd);`);
    expect(r0.warnings).toEqual([]);
    const r = run(`out.r = await (${codeOf})(() => core.joinMachineArbiter(${JSON.stringify(name)})); out.m = (await (${codeOf})(() => core.machineArbiter()));`);
    expect(r.r).toBe('MachineArbiterUnavailable:Unsupported');
  });

  it('a joined process that is idle exits normally (nothing keeps it alive), and leaves the census', () => {
    const name = freshName();
    const r = run(`
      const m = core.joinMachineArbiter(${JSON.stringify(name)});
      const p = await m.acquire({ cpus: core.CpuSet.of([0]) });
      out.during = m.census().processes.map((x) => [x.pid === process.pid, x.holds.length, x.waits.length]);
      p.release();
      out.after = m.census().processes.length;`);
    expect(r.during).toEqual([[true, 1, 0]]);
    expect(r.after).toBe(0);
    // The child exited (runCoreChild returned); a later census no longer counts it.
    const later = run(`out.joined = core.joinMachineArbiter(${JSON.stringify(name)}).census().joined;`);
    expect(later.joined).toBe(1);
  });
});
