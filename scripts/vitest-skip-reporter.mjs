// A vitest reporter (#39) that records every skipped test with its reason, one JSON line each, in
// $TENFERRO_SKIPS_FILE (default test-results/skips.jsonl in the package): scripts/test-all.mjs
// prints the count per reason. The reason is the note of `context.skip(note)`, else the title's
// `(skipped: …)` / `(needs …)` part (a `describe.skipIf`/`it.skipIf` title names its condition),
// else "no reason given" — which test-all prints as such, so a silent skip shows.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export function skipReason(fullName, note) {
  if (typeof note === 'string' && note !== '') return note;
  // "(needs 2 CPUs)", "(control; needs a system BLAS)", "(skipped: one allowed CPU)", "(OpenBLAS only; …)"
  for (const [, inside] of fullName.matchAll(/\(([^()]*)\)/g)) {
    for (const part of inside.split(';').map((p) => p.trim())) {
      if (/^(needs |skipped: )/i.test(part) || /\bonly$/i.test(part)) return part;
    }
  }
  return 'no reason given';
}

export default class SkipReporter {
  onInit(ctx) {
    this.root = ctx.config.root;
    this.file = process.env.TENFERRO_SKIPS_FILE ?? join(this.root, 'test-results', 'skips.jsonl');
  }

  onTestCaseResult(testCase) {
    const result = testCase.result();
    if (result.state !== 'skipped') return;
    const line = {
      file: relative(this.root, testCase.module.moduleId),
      name: testCase.fullName,
      reason: skipReason(testCase.fullName, result.note),
      project: testCase.project.name,
    };
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }
}
