// #36: CpuBackend.create() without kind follows what is installed — decided by core's discovery,
// shown here with stand-in provider packages in a temporary app folder (the current directory of
// a child process), so that faer "installed and loads", "installed but cannot load" and blas
// "installed and available" can each be set up. The real provider-blas in an app where only it is
// installed: packages/provider-blas/test/default-kind.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCoreChild } from './helpers.js';

const coreDist = JSON.stringify(new URL('../dist/index.js', import.meta.url).href);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Fake = 'loads' | 'cannotLoad';

/** An app folder with stand-in `@tenferro/provider-faer` / `@tenferro/provider-blas` packages. */
function app(packages: { faer?: Fake; blas?: Fake }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-default-kind-core-'));
  dirs.push(dir);
  for (const [kind, how] of Object.entries(packages)) {
    const name = `provider-${kind}`;
    const factory = kind === 'faer' ? 'createFaerProvider' : 'createBlasProvider';
    const pkgDir = join(dir, 'node_modules', '@tenferro', name);
    mkdirSync(pkgDir, { recursive: true });
    writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: `@tenferro/${name}`, version: '0.0.0', type: 'module', main: 'index.js' }));
    writeFileSync(
      join(pkgDir, 'index.js'),
      how === 'loads'
        ? `import { referenceGemmProvider } from ${coreDist};
           export function ${factory}() { return { kind: '${kind}', name: 'stand-in ${kind}', gemm: referenceGemmProvider }; }`
        : `import { TenferroError } from ${coreDist};
           export function ${factory}() { throw new TenferroError('ProviderUnavailable', 'cannot load the native addon of the stand-in ${kind}', { op: '${factory}' }); }`,
    );
  }
  return dir;
}

function run(dir: string, body: string) {
  return runCoreChild(body, { cwd: dir, env: { NODE_PATH: '', TENFERRO_DISCOVER_PROVIDERS: undefined, TENFERRO_NO_REFERENCE_FALLBACK: undefined } });
}

const createTwo = `
  const b = await core.CpuBackend.create({ threads: 1 });
  const again = await core.CpuBackend.create({ threads: 1 });
  out.kind = b.executionInfo().backendKind; out.provider = b.executionInfo().providerDiagnostic; out.fallback = b.executionInfo().fallback ?? null;
  await b.close(); await again.close();`;

describe('the default kind follows what is installed (R40, #36)', () => {
  it('faer installed and loading wins over an available blas, silently', () => {
    const r = run(app({ faer: 'loads', blas: 'loads' }), createTwo);
    expect(r.kind).toBe('faer');
    expect(r.provider).toContain('stand-in faer');
    expect(r.warnings).toEqual([]);
  });

  it('faer installed but unable to load, blas available: blas, with ONE TENFERRO_DEFAULT_KIND_BLAS naming faer\'s failure and its fixes', () => {
    const r = run(app({ faer: 'cannotLoad', blas: 'loads' }), createTwo);
    expect(r.kind).toBe('blas');
    expect(r.provider).toContain('stand-in blas');
    expect(r.fallback).toBeNull();
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_DEFAULT_KIND_BLAS']);
    const message = r.warnings[0]!.message;
    expect(message).toContain('@tenferro/provider-faer is installed but unavailable: createFaerProvider: cannot load the native addon of the stand-in faer');
    expect(message).toContain('npm rebuild @tenferro/provider-faer');
    expect(message).toContain("pass kind: 'blas' to choose blas explicitly");
  });

  it('an explicit kind is never overridden: kind: \'faer\' stays on the reference kernels, kind: \'blas\' warns nothing', () => {
    const r = run(
      app({ faer: 'cannotLoad', blas: 'loads' }),
      `const blas = await core.CpuBackend.create({ kind: 'blas', threads: 1 });
       const faer = await core.CpuBackend.create({ kind: 'faer', threads: 1 });
       out.kinds = [blas.kind(), faer.kind()];
       await blas.close(); await faer.close();`,
    );
    expect(r.kinds).toEqual(['blas', 'faer']);
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    expect(r.warnings[0]!.message).toContain("or pass kind: 'blas' (@tenferro/provider-blas is installed");
  });

  it('blas installed but unavailable: faer on the reference kernels, the warning says why blas is not used', () => {
    const r = run(app({ blas: 'cannotLoad' }), createTwo);
    expect(r.kind).toBe('faer');
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    const message = r.warnings[0]!.message;
    expect(message).toContain('@tenferro/provider-faer is not installed');
    expect(message).toContain('make @tenferro/provider-blas usable — it is installed but unavailable: createBlasProvider: cannot load the native addon of the stand-in blas');
    expect(message).toContain("(or pass kind: 'blas')");
  });

  it('fromExternalDomains() without kind keeps faer whatever is installed; its fallback names kind: \'blas\' with a bundle', () => {
    const r = run(
      app({ blas: 'loads' }),
      `const executor = await core.WorkerThreadsDomainExecutor.create({ workers: 1 });
       const b = await core.CpuBackend.fromExternalDomains({ defaultDomain: 7, domains: [core.ExternalCpuDomain.callerManaged(7, executor, 1)] });
       out.kind = b.executionInfo().backendKind; out.solutions = b.executionInfo().fallback.possibleSolutions;
       await b.close(); await executor.close();`,
    );
    expect(r.kind).toBe('faer');
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_REFERENCE_FALLBACK']);
    expect(r.warnings[0]!.message).toContain("on domains that are not caller-managed (R47), pass kind: 'blas' with providers: [createBlasProvider()]");
    expect(r.solutions).toContain('install it: npm install @tenferro/provider-faer');
  });
});
