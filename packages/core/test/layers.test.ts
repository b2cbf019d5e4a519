// The import rule of core's layers (docs/contributing/architecture.md), enforced over the real
// source, and shown to fail on planted violations.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}
interface LayersModule {
  checkLayers(o: { srcDir: string }): { files: number; violations: Violation[]; cycles: string[][] };
  checkProviderImports(o: { packagesDir: string }): Violation[];
  checkDownstreamNames(o: { srcDir: string }): Violation[];
  edgeViolation(from: string, to: string): string | undefined;
}

const layers = (await import(new URL('../../../scripts/checks/layers.mjs', import.meta.url).href)) as LayersModule;
const path = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

describe('core layers', () => {
  it('core/src has no upward import and no import cycle; providers import only public entry points', () => {
    const core = layers.checkLayers({ srcDir: path('../src') });
    expect(core.files).toBeGreaterThan(50);
    expect(core.violations).toEqual([]);
    expect(core.cycles).toEqual([]);
    expect(layers.checkProviderImports({ packagesDir: path('../../') })).toEqual([]);
    expect(layers.checkDownstreamNames({ srcDir: path('../src') })).toEqual([]);
  });

  it('reports a core file naming a downstream package or an operation family outside comments (#35)', () => {
    const v = layers.checkDownstreamNames({ srcDir: path('./fixtures/layers/packages/core/src') });
    expect(v.map((x) => `${x.from} → ${x.to}`)).toEqual(['backend/family.ts:5 → @tenferro/linalg', 'backend/family.ts:6 → Linalg', 'backend/family.ts:7 → @tenferro/provider-blas']);
  });

  it('reports a planted upward import and a planted type-only cycle', () => {
    const r = layers.checkLayers({ srcDir: path('./fixtures/layers/packages/core/src') });
    expect(r.violations.map((v) => `${v.from} → ${v.to}`)).toEqual(['runtime/engine/engine.ts → ops/op.ts']);
    expect(r.cycles).toEqual([['contract/a.ts', 'contract/b.ts']]);
  });

  it('reports a provider importing a private subpath', () => {
    const v = layers.checkProviderImports({ packagesDir: path('./fixtures/layers/packages') });
    expect(v.map((x) => `${x.from} → ${x.to}`)).toEqual(['provider-bad/src/index.ts → @tenferro/core/internal']);
  });

  it.each([
    ['backend/cpu-backend.ts', 'ops/dot-general.ts', true],
    ['ops/dot-general.ts', 'runtime/execution/admission.ts', true],
    ['runtime/engine/cpu-engine.ts', 'contraction/gemm-analysis-cache.ts', true],
    ['runtime/execution/admission.ts', 'runtime/engine/coordinator.ts', true],
    ['runtime/workers/engine-worker.ts', 'runtime/executors/pool-executor.ts', false],
    ['runtime/engine/coordinator.ts', 'provider/provider-bundle.ts', false],
    ['contraction/gemm-plan.ts', 'provider/gemm-request.ts', false],
    ['provider/provider-bundle.ts', 'contraction/gemm-plan.ts', false],
    ['contract/cpu-domain.ts', 'runtime/placement.ts', false],
    ['tensor/tensor.ts', 'contract/kernel.ts', false],
    ['ops/reshape.ts', 'backend/cpu-backend.ts', false],
    ['backend/cpu-backend.ts', 'index.ts', false],
  ] as const)('%s → %s allowed: %s', (from, to, allowed) => {
    expect(layers.edgeViolation(from, to) === undefined).toBe(allowed);
  });
});
