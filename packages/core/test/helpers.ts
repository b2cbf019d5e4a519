import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, expect } from 'vitest';
import { type CpuTopology, DIAGNOSTICS_CHANNELS, defineKernel, discoverCpuTopology, type TaskEvent, TenferroError } from '../src/index.js';

const kernelsUrl = new URL('./fixtures/kernels/test-kernels.mjs', import.meta.url);
export const kernel = <P = unknown, R = unknown>(name: string) => defineKernel<P, R>(kernelsUrl, name);

/** Assert a promise rejects (or a function throws) a TenferroError of `code` (and its kind). */
export async function expectCode(action: Promise<unknown> | (() => unknown), code: string, kind?: string): Promise<TenferroError> {
  let error: unknown;
  try {
    await (typeof action === 'function' ? action() : action);
  } catch (e) {
    error = e;
  }
  expect(error, `expected ${code}`).toBeDefined();
  expect(TenferroError.is(error)).toBe(true);
  expect((error as TenferroError).code).toBe(code);
  if (kind !== undefined) expect((error as TenferroError).kind).toBe(kind);
  return error as TenferroError;
}

/** Assert a synchronous call throws a TenferroError of `code` and `kind`. */
export function expectThrows(fn: () => unknown, code: string, kind = 'Validation'): TenferroError {
  try {
    fn();
  } catch (e) {
    expect(TenferroError.is(e), String(e)).toBe(true);
    expect((e as TenferroError).code).toBe(code);
    expect((e as TenferroError).kind).toBe(kind);
    return e as TenferroError;
  }
  throw new Error(`expected ${code}`);
}

export function cpusAllowedOfTask(tid: number): string {
  return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/self/task/${tid}/status`, 'utf8'))![1]!;
}

export function processAllowed(): string {
  return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
}

/**
 * A topology over this machine's real CPUs (so engines can be pinned and verified on it) with
 * fake NUMA nodes: node `2 * i` holds the CPUs of `nodes[i]` (sparse ids, as the OS may give);
 * an empty list means no NUMA information at all.
 */
export function topologyOverRealCpus(nodes: readonly (readonly number[])[]): CpuTopology {
  return discoverCpuTopology(fakeNumaRoots(nodes));
}

// Removed after the test file's last test (#39: tests leave no temporary folders); its workers may
// read the roots until then. Registered when a test file imports these helpers.
const fakeRoots: string[] = [];
afterAll(() => {
  for (const r of fakeRoots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** The fake sysfs and proc roots behind {@link topologyOverRealCpus} (for a worker isolate to discover the same topology). */
export function fakeNumaRoots(nodes: readonly (readonly number[])[]): { sysfsRoot: string; procRoot: string } {
  const real = discoverCpuTopology();
  const root = mkdtempSync(join(tmpdir(), 'tenferro-topo-'));
  fakeRoots.push(root);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('proc/self/status', `Name:\tnode\nCpus_allowed_list:\t${real.allowedCpus.toString()}\n`);
  write('sys/devices/system/cpu/online', `${real.allowedCpus.toString()}\n`);
  nodes.forEach((cpus, i) => write(`sys/devices/system/node/node${2 * i}/cpulist`, `${cpus.join(',')}\n`));
  return { sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') };
}

/** A topology over this machine's real CPUs, but split into one fake NUMA node per CPU (ids 0, 2, 4 … to stay sparse). */
export function onePerCpuTopology(): CpuTopology {
  return topologyOverRealCpus(discoverCpuTopology().allowedCpus.toArray().map((cpu) => [cpu]));
}

/**
 * Yield to the event loop until `check()` holds — for state the main thread itself changes (an
 * arbiter's queue, a promise's outcome). No timers and no limit of its own: a condition never
 * reached fails the test by its timeout. Wait for a kernel with a latch instead (`gate().whenEntered()`).
 */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

/** Resolves once `flags[index]` reaches `value` — a latch on a word the other side bumps and notifies (`holdUntil` bumps its `enteredIndex`). */
export async function reached(flags: Int32Array, index: number, value = 1): Promise<void> {
  for (let seen = Atomics.load(flags, index); seen < value; seen = Atomics.load(flags, index)) await Atomics.waitAsync(flags, index, seen).value;
}

/**
 * A latch a `holdUntil` kernel waits on: `payload` for the kernel, `entered()` once it runs,
 * `open()` to let it return.
 */
export function gate() {
  const g = new Int32Array(new SharedArrayBuffer(12));
  return {
    payload: { buffer: g.buffer as SharedArrayBuffer, index: 0, enteredIndex: 1, leftIndex: 2, timeoutMs: 20_000 },
    entered: () => Atomics.load(g, 1) >= 1,
    /** Resolves once the kernel runs (a latch: the kernel notifies the word it bumps). */
    whenEntered: (): Promise<void> => reached(g, 1),
    /** Resolves once the kernel is about to return (its worker writes the answer next). */
    whenLeft: (): Promise<void> => reached(g, 2),
    open: () => {
      Atomics.store(g, 0, 1);
      Atomics.notify(g, 0);
    },
  };
}

/** V8's `gc` for this test process (the flag set for an instant, as the workers do). */
export const gc: () => void =
  typeof (globalThis as { gc?: unknown }).gc === 'function'
    ? ((globalThis as { gc?: unknown }).gc as () => void)
    : (() => {
        setFlagsFromString('--expose-gc');
        try {
          return runInNewContext('gc') as () => void;
        } finally {
          setFlagsFromString('--no-expose-gc');
        }
      })();

/** A warning a child process of {@link runCoreChild} saw (`process.on('warning')`). */
export interface ChildWarning {
  readonly code: string;
  readonly message: string;
}

/**
 * Run `body` in a fresh Node process that imports core's built `dist` as `core` (plus `imports`,
 * e.g. `import { Worker } from 'node:worker_threads';`), fills `out` and returns it with the
 * warnings the process emitted. `env` entries set to `undefined` are removed from the child's
 * environment. A child that exits non-zero throws with its stderr.
 */
export function runCoreChild(
  body: string,
  options: { readonly env?: Record<string, string | undefined>; readonly cwd?: string; readonly imports?: string } = {},
): { warnings: ChildWarning[]; [key: string]: unknown } {
  const coreDist = JSON.stringify(new URL('../dist/index.js', import.meta.url).href);
  const script = `
    ${options.imports ?? ''}
    import * as core from ${coreDist};
    const warnings = [];
    process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
    const out = {};
    ${body}
    await new Promise((r) => setImmediate(r));
    console.log(JSON.stringify({ ...out, warnings }));`;
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: options.cwd, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`child failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Whether a GEMM operand is one a BLAS addresses: column- or row-major with a leading dimension covering it. */
export function blasExpressible(rows: number, cols: number, rs: number, cs: number): boolean {
  const colMajor = (r: number, c: number, unit: number, ld: number) => (r <= 1 || unit === 1) && (c <= 1 || ld >= Math.max(1, r));
  return colMajor(rows, cols, rs, cs) || colMajor(cols, rows, cs, rs);
}

/** A few event-loop turns: time for the reactions to an answer already seen. */
export async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Run `body` with a flag that turns true once the main thread has taken lane `lane`'s `holdOrFail` task answer (`tenferro:task`); `reset()` lowers it again. */
export async function watchingLane<T>(lane: number, body: (answered: () => boolean, reset: () => void) => Promise<T>): Promise<T> {
  let seen = false;
  const onTask = (e: unknown) => {
    if ((e as TaskEvent).kernel === 'holdOrFail' && (e as TaskEvent).worker === lane) seen = true;
  };
  subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
  try {
    return await body(
      () => seen,
      () => (seen = false),
    );
  } finally {
    unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
  }
}
