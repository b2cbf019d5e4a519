import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_SCHEMA, type BenchReport, benchSvg, formatBench } from '../src/index.js';
import { tenferro } from './spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tenferro-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A checker for well-formed XML as `benchSvg` writes it: one root, every tag closed in order,
 * quoted attributes, no stray `<` or `&` in text.
 */
function checkWellFormed(xml: string): void {
  const stack: string[] = [];
  let roots = 0;
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt === -1 ? xml.length : lt);
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(text)) throw new Error(`bad entity in text ${JSON.stringify(text)}`);
    if (text.trim() !== '' && stack.length === 0) throw new Error(`text outside the root: ${JSON.stringify(text)}`);
    if (lt === -1) break;
    const gt = xml.indexOf('>', lt);
    if (gt === -1) throw new Error('unterminated tag');
    const tag = xml.slice(lt + 1, gt);
    if (tag.includes('<')) throw new Error(`'<' inside tag ${tag}`);
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      if (stack.pop() !== name) throw new Error(`</${name}> closes nothing open`);
    } else {
      const m = /^([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)$/.exec(tag);
      if (m === null) throw new Error(`malformed tag <${tag}>`);
      for (const [, value] of m[2]!.matchAll(/="([^"]*)"/g)) if (/&(?!(amp|lt|gt|quot|apos);)/.test(value!)) throw new Error(`bad entity in ${value}`);
      if (stack.length === 0) roots++;
      if (m[3] !== '/') stack.push(m[1]!);
    }
    i = gt + 1;
  }
  expect(stack, 'unclosed elements').toEqual([]);
  expect(roots, 'root elements').toBe(1);
}

describe('tenferro bench', () => {
  const svgPath = join(dir, 'chart.svg');
  const run = tenferro(['bench', '--sizes', '8,16', '--threads', '1', '--json', '--svg', svgPath]);

  it('--json prints one report of schema tenferro.bench/1 with every series', () => {
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as BenchReport;
    expect(report.schema).toBe(BENCH_SCHEMA);
    expect(BENCH_SCHEMA).toBe('tenferro.bench/1');
    expect(report.op).toBe('matmul');
    expect(report.threads).toBe(1);
    expect(report.sizes).toEqual([8, 16]);
    expect(report.dtypes).toEqual(['f64', 'f32']);
    expect(report.series.map((s) => s.id)).toEqual(['faer', 'blas', 'anchor', 'onnxruntime']);
    for (const s of report.series) {
      expect(typeof s.label).toBe('string');
      expect(Array.isArray(s.warnings)).toBe(true);
      if (s.available) {
        expect(s.reason).toBeNull();
        expect(typeof s.description).toBe('string');
        expect(s.results.map((r) => `${r.dtype}/${r.n}`)).toEqual(['f64/8', 'f64/16', 'f32/8', 'f32/16']);
        for (const r of s.results) {
          expect(r.gflops).toBeGreaterThan(0);
          expect(r.gflops).toBeCloseTo((2 * r.n ** 3) / r.medianSeconds / 1e9, 6);
          expect(Number.isInteger(r.reps) && r.reps >= 3).toBe(true);
        }
      } else {
        // Not measured is said, never faked.
        expect(s.reason).toMatch(/\S/);
        expect(s.description).toBeNull();
        expect(s.results).toEqual([]);
      }
    }
    // Both providers are built in this workspace.
    expect(report.series.find((s) => s.id === 'faer')!.available).toBe(true);
    expect(report.series.find((s) => s.id === 'blas')!.available).toBe(true);
  });

  it('writes a well-formed SVG chart with a line per measured provider and element type', () => {
    const svg = readFileSync(svgPath, 'utf8');
    checkWellFormed(svg);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const report = JSON.parse(run.stdout) as BenchReport;
    const lines = report.series.filter((s) => s.available).length * report.dtypes.length;
    expect(svg.match(/<polyline /g)?.length).toBe(lines);
    for (const s of report.series) expect(svg).toContain(s.available ? `${s.label} f64` : `${s.label}: not measured`);
  });

  it('--kind faer measures faer only; a provider that cannot load is reported with its reason, not replaced', () => {
    const r = tenferro(['bench', '--kind', 'faer', '--sizes', '4', '--json'], { TENFERRO_FAER_DISABLE: '1' });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as BenchReport;
    expect(report.series.map((s) => s.id)).toEqual(['faer', 'anchor', 'onnxruntime']);
    const faer = report.series[0]!;
    expect(faer.available).toBe(false);
    expect(faer.reason).toContain('TENFERRO_FAER_DISABLE=1');
    expect(faer.results).toEqual([]);
  });

  it('the human table names each series, and says why one was not measured', () => {
    const r = tenferro(['bench', '--kind', 'blas', '--sizes', '4'], { NO_COLOR: '1' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^tenferro bench — matmul/);
    expect(r.stdout).toMatch(/^tenferro blas\s+f64\s+\S+$/m);
    expect(r.stdout).toMatch(/^tenferro blas\s+f32\s+\S+$/m);
    expect(r.stdout).not.toMatch(/^tenferro faer/m);
    const report = JSON.parse(tenferro(['bench', '--kind', 'blas', '--sizes', '4', '--json']).stdout) as BenchReport;
    for (const s of report.series.filter((x) => !x.available)) expect(r.stdout).toContain(`${s.label}: not measured — ${s.reason}`);
  });
});

describe('benchSvg and formatBench on a made-up report', () => {
  const report: BenchReport = {
    schema: BENCH_SCHEMA,
    op: 'matmul',
    threads: 2,
    sizes: [64, 256],
    dtypes: ['f64', 'f32'],
    series: [
      {
        id: 'faer',
        label: 'tenferro <faer> & co',
        available: true,
        description: 'x',
        reason: null,
        warnings: ['w'],
        results: [
          { dtype: 'f64', n: 64, gflops: 10, medianSeconds: (2 * 64 ** 3) / 10e9, reps: 3 },
          { dtype: 'f64', n: 256, gflops: 50, medianSeconds: (2 * 256 ** 3) / 50e9, reps: 3 },
          { dtype: 'f32', n: 64, gflops: 20, medianSeconds: (2 * 64 ** 3) / 20e9, reps: 3 },
          { dtype: 'f32', n: 256, gflops: 90, medianSeconds: (2 * 256 ** 3) / 90e9, reps: 3 },
        ],
      },
      { id: 'anchor', label: 'C (cblas)', available: false, description: null, reason: 'no C compiler "cc" <here>', warnings: [], results: [] },
    ],
  };

  it('escapes labels and stays well-formed', () => {
    const svg = benchSvg(report);
    checkWellFormed(svg);
    expect(svg).toContain('tenferro &lt;faer&gt; &amp; co f64');
    expect(svg.match(/<polyline /g)?.length).toBe(2);
    expect(svg).toContain('stroke-dasharray');
  });

  it('a single size is still a well-formed chart', () => {
    checkWellFormed(benchSvg({ ...report, sizes: [64], series: [{ ...report.series[0]!, results: report.series[0]!.results.filter((r) => r.n === 64) }] }));
  });

  it('the table has one row per provider and element type, and the reason for what was not measured', () => {
    const text = formatBench(report);
    expect(text).toMatch(/^tenferro <faer> & co\s+f64\s+10\.0\s+50\.0$/m);
    expect(text).toMatch(/^tenferro <faer> & co\s+f32\s+20\.0\s+90\.0$/m);
    expect(text).toContain('C (cblas): not measured — no C compiler "cc" <here>');
    expect(text).toContain('WARNING w');
  });
});
