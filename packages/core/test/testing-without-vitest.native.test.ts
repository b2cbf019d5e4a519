// `@tenferro/core/testing` without vitest (#40): vitest is an optional peer of core, so a provider
// author who runs the kit's plain functions from a script — `providerConformanceCases()`, the
// oracles — must be able to import the entry where vitest is not installed. A child process whose
// module resolution refuses 'vitest' (a loader hook: exactly what a folder without vitest gives)
// imports core's built entry, runs every case against the reference providers, sees a broken
// provider fail with the kit's own assertions, and gets a typed error from the function that
// registers a vitest suite. (In its own tier: it starts a child process.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'tenferro-no-vitest-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const HOOKS = `
export async function resolve(specifier, context, next) {
  if (specifier === 'vitest' || specifier.startsWith('vitest/')) {
    throw Object.assign(new Error("Cannot find package 'vitest' (not installed here)"), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return next(specifier, context);
}
`;

const PROGRAM = `
import { EXECUTED, referenceGemmProvider, referenceLayoutProvider, TenferroError } from ${JSON.stringify(new URL('index.js', dist).href)};
import { naiveDotGeneral, providerConformanceCases, runProviderConformance, runTensorPrimitivesConformance, tensorPrimitivesConformanceCases } from ${JSON.stringify(new URL('testing/index.js', dist).href)};

const report = {};
report.vitest = await import('vitest').then(() => 'imported', (e) => e.code);
report.oracle = naiveDotGeneral.length > 0;

const reference = () => ({ kind: 'faer', name: 'reference', gemm: referenceGemmProvider, layoutTransform: referenceLayoutProvider });
report.cases = [];
for (const c of providerConformanceCases(reference, { budgets: [1], cases: 2 })) {
  const outcome = await c.run().then((o) => (o === undefined ? 'passed' : 'skipped'), (e) => 'failed: ' + e.message);
  report.cases.push([c.name, outcome]);
}
report.primitiveCases = tensorPrimitivesConformanceCases(reference, { budgets: [1] }).length;

// A provider that says it executed and wrote nothing: the kit's assertions (its stand-in for vitest's expect) fail it.
const lazy = { ...referenceGemmProvider, name: 'writes nothing', gemm: async () => EXECUTED };
const oracle = providerConformanceCases(() => ({ kind: 'faer', name: 'writes nothing', gemm: lazy, layoutTransform: referenceLayoutProvider }), { budgets: [1], cases: 2 })
  .find((c) => c.name.startsWith('matches the oracle'));
report.broken = await oracle.run().then(() => 'passed', (e) => e.name + ': ' + e.message);

for (const [name, register] of [['runProviderConformance', runProviderConformance], ['runTensorPrimitivesConformance', runTensorPrimitivesConformance]]) {
  try {
    register(reference, { budgets: [1] });
    report[name] = 'registered';
  } catch (e) {
    report[name] = TenferroError.is(e, 'Unsupported') ? e.message : 'other: ' + e;
  }
}
console.log(JSON.stringify(report));
`;

describe('@tenferro/core/testing where vitest cannot be imported (#40)', () => {
  it('imports; every plain case runs and passes for the reference providers; a broken provider fails; the suite registrars throw Unsupported naming vitest', () => {
    writeFileSync(join(work, 'hooks.mjs'), HOOKS);
    writeFileSync(join(work, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(work, 'hooks.mjs')).href)});\n`);
    writeFileSync(join(work, 'program.mjs'), PROGRAM);
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(join(work, 'register.mjs')).href, join(work, 'program.mjs')], { cwd: work, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    // The hook works: vitest really cannot be imported in the child.
    expect(report.vitest).toBe('ERR_MODULE_NOT_FOUND');
    expect(report.oracle).toBe(true);
    const cases = report.cases as [string, string][];
    expect(cases.length).toBeGreaterThan(5);
    expect(cases.filter(([, outcome]) => outcome.startsWith('failed'))).toEqual([]);
    expect(cases.filter(([, outcome]) => outcome === 'passed').length).toBeGreaterThan(5);
    expect(report.primitiveCases).toBeGreaterThan(0);
    expect(report.broken).toMatch(/^AssertionError: f(32|64) m=\d+ n=\d+ k=\d+ .*expected .* to be less than or equal to/);
    expect(report.runProviderConformance).toMatch(/runProviderConformance registers a vitest suite and needs vitest.*plain …Cases functions/);
    expect(report.runTensorPrimitivesConformance).toMatch(/runTensorPrimitivesConformance registers a vitest suite and needs vitest/);
  }, 180_000);
});
