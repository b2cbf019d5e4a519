// #36: the default kind follows what is installed. An application folder in os.tmpdir() whose
// node_modules holds only @tenferro/provider-blas and what it needs (@tenferro/core, @tenferro/os),
// linked to this workspace's built packages, runs a child `node` script that creates backends the
// way an application does (`import … from '@tenferro/core'`, the current directory = the app) and
// prints the warnings it gets and the kind it got. Node resolves the links to their real paths,
// so core's discovery looks from packages/core (whose node_modules holds only @tenferro/os, as an
// installed core's dependencies do) and from the app: the child checks that neither place
// resolves @tenferro/provider-faer or @tenferro/provider-tprims before anything else.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { blasProviderStatus } from '../src/index.js';

const packages = fileURLToPath(new URL('../../', import.meta.url));
const apps: string[] = [];
afterAll(() => {
  for (const dir of apps) rmSync(dir, { recursive: true, force: true });
});

/** A temporary application folder whose node_modules/@tenferro holds exactly `installed` (links to the workspace packages). */
function app(installed: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-default-kind-'));
  apps.push(dir);
  mkdirSync(join(dir, 'node_modules', '@tenferro'), { recursive: true });
  for (const name of installed) symlinkSync(join(packages, name), join(dir, 'node_modules', '@tenferro', name), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  return dir;
}

interface Run {
  readonly warnings: { code: string; message: string }[];
  readonly resolvable: Record<string, boolean>;
  readonly [key: string]: unknown;
}

/** Run `body` as an application module in `dir` (warnings collected first, then `out` printed as JSON). */
function run(dir: string, body: string, env: Record<string, string> = {}): Run {
  writeFileSync(
    join(dir, 'main.mjs'),
    `import { createRequire } from 'node:module';
     import * as core from '@tenferro/core';
     const warnings = [];
     process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
     // What core's discovery can resolve: from core's real location, and from the app (the current directory).
     const coreUrl = import.meta.resolve('@tenferro/core');
     const resolvable = {};
     for (const name of ['@tenferro/provider-faer', '@tenferro/provider-blas', '@tenferro/provider-tprims']) {
       resolvable[name] = [coreUrl, import.meta.url].some((base) => { try { createRequire(base).resolve(name); return true; } catch { return false; } });
     }
     const out = {};
     ${body}
     await new Promise((r) => setImmediate(r));
     console.log(JSON.stringify({ ...out, warnings, resolvable }));`,
  );
  const clean: Record<string, string | undefined> = { ...process.env, NODE_PATH: '', ...env };
  for (const key of ['TENFERRO_DISCOVER_PROVIDERS', 'TENFERRO_NO_REFERENCE_FALLBACK', 'TENFERRO_OS_DISABLE', 'TENFERRO_IGNORE_SYSTEM_BLAS']) {
    if (!(key in env)) delete clean[key];
  }
  const r = spawnSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8', env: clean });
  if (r.status !== 0) throw new Error(`the app failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Run;
}

const codes = (r: Run) => r.warnings.map((w) => w.code);
const blasAvailable = blasProviderStatus().available;

describe('CpuBackend.create() without kind in an app where only @tenferro/provider-blas is installed (#36)', () => {
  const onlyBlas = app(['core', 'os', 'provider-blas']);

  it.skipIf(!blasAvailable)('picks blas, says once why not faer, never the reference fallback; executionInfo() reports blas (needs a system BLAS)', () => {
    const r = run(
      onlyBlas,
      `const b = await core.CpuBackend.create();
       const again = await core.CpuBackend.create({ threads: 1 });
       const c = await b.matmul(core.Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), core.Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
       out.kind = b.kind(); out.info = b.executionInfo().backendKind; out.mode = b.executionInfo().executionMode;
       out.fallback = b.executionInfo().fallback ?? null; out.product = c.toArray(); out.againKind = again.kind();
       await b.close(); await again.close();`,
    );
    expect(r.resolvable).toEqual({ '@tenferro/provider-faer': false, '@tenferro/provider-blas': true, '@tenferro/provider-tprims': false });
    expect(r).toMatchObject({ kind: 'blas', info: 'blas', againKind: 'blas', mode: 'providerDefaultExclusive', fallback: null, product: [1, 2, 3, 4] });
    // ONE warning for two backends, naming faer's failure and its fix, and how to choose explicitly.
    expect(codes(r)).toEqual(['TENFERRO_DEFAULT_KIND_BLAS']);
    const message = r.warnings[0]!.message;
    expect(message).toContain('@tenferro/provider-faer is not installed');
    expect(message).toContain('npm install @tenferro/provider-faer');
    expect(message).toContain("kind: 'blas'");
  });

  it.skipIf(!blasAvailable)('an explicit kind, providers, TENFERRO_DISCOVER_PROVIDERS=0 or a placement blas cannot take keep faer — and its fallback names kind: \'blas\' (needs a system BLAS)', () => {
    const r = run(
      onlyBlas,
      `const faer = await core.CpuBackend.create({ kind: 'faer', threads: 1 });
       const explicit = await core.CpuBackend.create({ threads: 1, providers: [] });
       out.kinds = [faer.kind(), explicit.kind()];
       out.solutions = faer.executionInfo().fallback.possibleSolutions;
       await faer.close(); await explicit.close();`,
    );
    expect(r.kinds).toEqual(['faer', 'faer']);
    expect(codes(r)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    expect(r.warnings[0]!.message).toContain("or pass kind: 'blas' (@tenferro/provider-blas is installed");
    expect(r.solutions).toContain('install it: npm install @tenferro/provider-faer');

    const off = run(onlyBlas, `const b = await core.CpuBackend.create({ threads: 1 }); out.kind = b.kind(); await b.close();`, { TENFERRO_DISCOVER_PROVIDERS: '0' });
    expect(off.kind).toBe('faer');
    expect(codes(off)).toEqual([]);

    const placed = run(onlyBlas, `const b = await core.CpuBackend.create({ threads: 1, placement: 'allAllowed' }); out.kind = b.kind(); await b.close();`);
    expect(placed.kind).toBe('faer');
    expect(codes(placed)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    expect(placed.warnings[0]!.message).toContain("or pass kind: 'blas' (@tenferro/provider-blas is installed and available, but the blas kind takes placement 'auto' only)");
  });

  it('provider-blas installed but unavailable (TENFERRO_IGNORE_SYSTEM_BLAS=1): faer on the reference kernels, and the warning says why blas is not used and every fix', () => {
    const r = run(
      onlyBlas,
      `const b = await core.CpuBackend.create({ threads: 1 });
       out.kind = b.executionInfo().backendKind; out.fallback = b.executionInfo().fallback;
       await b.close();`,
      { TENFERRO_IGNORE_SYSTEM_BLAS: '1' },
    );
    expect(r.kind).toBe('faer');
    expect(codes(r)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    const message = r.warnings[0]!.message;
    expect(message).toContain('@tenferro/provider-faer is not installed');
    expect(message).toContain('npm install @tenferro/provider-faer');
    expect(message).toContain('@tenferro/provider-blas usable — it is installed but unavailable: disabled by TENFERRO_IGNORE_SYSTEM_BLAS=1');
    expect(message).toContain("(or pass kind: 'blas')");
    expect(message).toContain('providers: []');
    expect((r.fallback as { reason: string }).reason).toContain('@tenferro/provider-faer is not installed');
  });

  it.skipIf(!blasAvailable)('fromExternalDomains() without kind keeps faer; its fallback names kind: \'blas\' with a supplied bundle, and that alternative runs (needs a system BLAS)', () => {
    const r = run(
      onlyBlas,
      `const { createBlasProvider } = await import('@tenferro/provider-blas');
       const topology = core.discoverCpuTopology();
       const executor = await core.WorkerThreadsDomainExecutor.create({ workers: 1 });
       const domain = () => core.ExternalCpuDomain.cooperative(1, { allAllowed: true, cpus: topology.allowedCpus }, executor, 1);
       const b = await core.CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [domain()] });
       out.kind = b.executionInfo().backendKind;
       // The alternative the warning names: kind 'blas', the package in providers, a bundle built from it.
       const blas = createBlasProvider();
       const bundle = core.CpuProviderBundle.builder('blas').capabilityPolicy('providerDefaultCompatibility').gemmProvider(blas.gemm).build();
       const alt = await core.CpuBackend.fromExternalDomains({ kind: 'blas', providers: [blas], bundle, defaultDomain: 1, domains: [domain()] });
       out.altKind = alt.executionInfo().backendKind;
       out.product = (await alt.matmul(core.Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), core.Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]))).toArray();
       await b.close(); await alt.close(); await executor.close();`,
    );
    expect(r.kind).toBe('faer');
    expect(r.altKind).toBe('blas');
    expect(r.product).toEqual([1, 2, 3, 4]);
    expect(codes(r)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    const message = r.warnings[0]!.message;
    expect(message).toContain("pass kind: 'blas' with providers: [createBlasProvider()] from @tenferro/provider-blas and a bundle you build from it");
    expect(message).toContain('R54');
    expect(message).toContain('npm install @tenferro/provider-faer');
  });
});

describe('CpuBackend.create() without kind where neither faer nor blas can run (#36)', () => {
  it('faer on the reference kernels; the warning names installing faer and installing blas', () => {
    const r = run(app(['core', 'os']), `const b = await core.CpuBackend.create({ threads: 1 }); out.kind = b.kind(); await b.close();`);
    expect(r.resolvable).toEqual({ '@tenferro/provider-faer': false, '@tenferro/provider-blas': false, '@tenferro/provider-tprims': false });
    expect(r.kind).toBe('faer');
    expect(codes(r)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    expect(r.warnings[0]!.message).toContain('npm install @tenferro/provider-faer');
    expect(r.warnings[0]!.message).toContain('or install @tenferro/provider-blas (with a system BLAS): npm install @tenferro/provider-blas — then CpuBackend.create() picks the blas kind');
  });
});
