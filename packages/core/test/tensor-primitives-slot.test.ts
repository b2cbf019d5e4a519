// The tensor-primitives slot of the bundle and `kind: 'any'` provider packages (the contract of issue 14).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  CpuBackend,
  type CpuProviderPackage,
  CpuProviderBundle,
  type CpuTensorPrimitivesProvider,
  referenceGemmProvider,
  referenceLayoutProvider,
  referenceTensorPrimitivesProvider,
} from '../src/index.js';
import { discoverableProviderPackages } from '../src/provider/provider-packages.js';
import { expectThrows } from './helpers.js';

const fakePrimitives = (name: string): CpuTensorPrimitivesProvider => ({
  name,
  executionCapabilities: () => referenceTensorPrimitivesProvider.executionCapabilities(),
  binary: (ctx, r) => referenceTensorPrimitivesProvider.binary(ctx, r),
  unary: (ctx, r) => referenceTensorPrimitivesProvider.unary(ctx, r),
  reduce: (ctx, r) => referenceTensorPrimitivesProvider.reduce(ctx, r),
});

describe('the tensorPrimitives slot', () => {
  it('is always set: the reference provider by default, for both kinds and custom bundles', () => {
    expect(CpuProviderBundle.builder('faer').build().tensorPrimitives).toBe(referenceTensorPrimitivesProvider);
    expect(CpuProviderBundle.builder('blas').gemmProvider(referenceGemmProvider).build().tensorPrimitives).toBe(referenceTensorPrimitivesProvider);
    const custom = CpuProviderBundle.customBuilder().gemmProvider(referenceGemmProvider).layoutTransformProvider(referenceLayoutProvider).build();
    expect(custom.tensorPrimitives).toBe(referenceTensorPrimitivesProvider);
    expect(custom.capabilities('tensorPrimitives')).toEqual(referenceTensorPrimitivesProvider.executionCapabilities());
    expect(custom.populatedSlots().map(([s]) => s)).toContain('tensorPrimitives');
    expect(custom.tensorPrimitivesDeclinesBeforeWriting).toBe(true);
  });

  it('the builder sets it, samples its capabilities once, and toBuilder keeps it', () => {
    let sampled = 0;
    const p = { ...fakePrimitives('fake'), executionCapabilities: () => (sampled++, referenceTensorPrimitivesProvider.executionCapabilities()) };
    const bundle = CpuProviderBundle.builder('faer').tensorPrimitivesProvider(p).build();
    expect(bundle.tensorPrimitives).toBe(p);
    expect(sampled).toBe(1);
    expect(bundle.tensorPrimitivesDeclinesBeforeWriting).toBe(false);
    expect(bundle.toBuilder().build().tensorPrimitives).toBe(p);
  });

  it('a provider without binary/unary/reduce is InvalidArgument', () => {
    const { reduce: _r, ...noReduce } = fakePrimitives('x');
    expectThrows(() => CpuProviderBundle.builder('faer').tensorPrimitivesProvider(noReduce as never), 'InvalidArgument');
    expectThrows(() => CpuProviderBundle.builder('faer').tensorPrimitivesProvider({} as never), 'InvalidArgument');
  });

  it('malformed capabilities are InvalidArgument at build, naming the slot', () => {
    const p = { ...fakePrimitives('bad'), executionCapabilities: () => ({ threadCount: 'lots' }) as never };
    const e = expectThrows(() => CpuProviderBundle.builder('faer').tensorPrimitivesProvider(p).build(), 'InvalidArgument');
    expect(e.message).toContain('tensorPrimitives');
  });

  it('an uncontrolled tensorPrimitives provider is refused by strict validation like any slot (IncompatibleDomain)', async () => {
    const p = { ...fakePrimitives('wild'), executionCapabilities: () => ({ ...referenceTensorPrimitivesProvider.executionCapabilities(), threadCount: 'globalOrUncontrolled' as const }) };
    await using backend = await CpuBackend.create({ threads: 1, providers: [] });
    const e = expectThrows(() => backend.withProviderBundle(CpuProviderBundle.builder('faer').tensorPrimitivesProvider(p).build()), 'IncompatibleDomain');
    expect(e.detail).toMatchObject({ slot: 'tensorPrimitives' });
  });
});

describe("provider packages of kind 'any'", () => {
  const pkg = (name: string): CpuProviderPackage => ({ kind: 'any', name, tensorPrimitives: fakePrimitives(name), layoutTransform: { ...referenceLayoutProvider, name: `${name} layout` } });

  it('fill their slots in both standard bundles', async () => {
    await using faer = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [pkg('p')] });
    expect(faer.providerBundle().tensorPrimitives.name).toBe('p');
    expect(faer.providerBundle().layoutTransform.name).toBe('p layout');
    expect(faer.providerBundle().gemm).toBe(referenceGemmProvider);
    expect(faer.executionInfo().providerDiagnostic).toContain('+ p');
  });

  it('tprims is known as an any-kind package with its factory (data in core package.json, #35)', () => {
    expect(discoverableProviderPackages().find((k) => k.name === '@tenferro/provider-tprims')).toEqual({ name: '@tenferro/provider-tprims', kind: 'any', factory: 'createTprimsProvider' });
  });
});

describe('discovery of an installed tprims package', () => {
  const dist = JSON.stringify(new URL('../dist/index.js', import.meta.url).href);
  /** Run `script` in a directory whose node_modules holds a @tenferro/provider-tprims with `body`. */
  function inProject(body: string, script: string): { out: { names: string[]; warnings: string[] }; stderr: string } {
    const dir = mkdtempSync(join(tmpdir(), 'tenferro-tprims-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true })); // #39: no temporary folder left
    const pkgDir = join(dir, 'node_modules', '@tenferro', 'provider-tprims');
    mkdirSync(pkgDir, { recursive: true });
    writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: '@tenferro/provider-tprims', version: '0.0.0', type: 'module', main: 'index.js' }));
    writeFileSync(join(pkgDir, 'index.js'), `import { TenferroError, referenceTensorPrimitivesProvider as r } from ${dist};\n${body}`);
    const env = { ...process.env, NODE_PATH: '' };
    delete (env as Record<string, unknown>).TENFERRO_DISCOVER_PROVIDERS;
    const prelude = `import { CpuBackend } from ${dist};
      const warnings = [];
      process.on('warning', (w) => warnings.push(w.code));
      const names = [];`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `${prelude}\n${script}\nawait new Promise((r) => setImmediate(r)); console.log(JSON.stringify({ names, warnings }));`], { encoding: 'utf8', cwd: dir, env });
    return { out: JSON.parse(r.stdout.trim().split('\n').pop()!), stderr: r.stderr };
  }

  it('is found for both kinds when installed; an explicit providers option still wins', () => {
    const { out, stderr } = inProject(
      `export function createTprimsProvider() { return { kind: 'any', name: 'fake tprims', tensorPrimitives: { ...r, name: 'fake tprims' } }; }`,
      `for (const providers of [undefined, []]) {
         const b = await CpuBackend.create({ threads: 1, ...(providers ? { providers } : {}) });
         names.push(b.providerBundle().tensorPrimitives.name);
         await b.close();
       }`,
    );
    expect(out.names, stderr).toEqual(['fake tprims', r.name]);
  });

  it('one that is installed but cannot run is skipped, and says so once (TENFERRO_PROVIDER_SKIPPED): never silently slow', () => {
    const { out, stderr } = inProject(
      `export function createTprimsProvider() { throw new TenferroError('ProviderUnavailable', 'no addon', { op: 'createTprimsProvider' }); }`,
      `for (let i = 0; i < 2; i++) { const b = await CpuBackend.create({ threads: 1 }); names.push(b.providerBundle().tensorPrimitives.name); await b.close(); }`,
    );
    expect(out.names, stderr).toEqual([r.name, r.name]);
    expect(out.warnings.filter((w) => w !== 'TENFERRO_REFERENCE_FALLBACK')).toEqual(['TENFERRO_PROVIDER_SKIPPED']);
    expect(stderr).toMatch(/@tenferro\/provider-tprims is skipped: it is installed but cannot run here \(.*no addon\).*npm rebuild @tenferro\/provider-tprims/);
  });
});

const r = referenceTensorPrimitivesProvider;
