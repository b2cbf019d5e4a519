#!/usr/bin/env node
// Every place where tenferro departs from the numbered reading of the contract is marked in the
// rulebook (docs/contracts/execution-contract.md) and says who sanctioned it (#36):
//
// - a paragraph headed `**Amendment (Node, <sources>)…**` under the rule it amends (or, in the
//   "Amendments and deviations" section, for a departure that belongs to no numbered rule);
// - its sources are issues (`#36`) and/or `measured`; a `measured` amendment states the
//   measurement ("Measured …" with figures) in its text (up to the next amendment or heading);
// - the section's table has one row per amended rule, whose "Sanctioned by" cell cites the same
//   kind of source, and no row without a paragraph.
//
// `checkAmendments(text)` returns what it found and every problem; run as a script it checks the
// repository's rulebook and exits 1 on a problem.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain } from './is-main.mjs';

const SECTION = '## Amendments and deviations';
const SOURCE = /^(#\d+|measured)$/;

/**
 * @param {string} text the rulebook's Markdown
 * @returns {{ rows: { rule: string, sources: string[] }[], amendments: { rule: string, sources: string[], line: number }[], problems: string[] }}
 */
export function checkAmendments(text) {
  const lines = text.split('\n');
  const problems = [];
  const start = lines.findIndex((l) => l.trim() === SECTION);
  if (start < 0) return { rows: [], amendments: [], problems: [`no "${SECTION}" section`] };

  const rows = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    const cells = tableCells(lines[i]);
    if (cells === undefined || cells[0] === 'Rule' || /^-+$/.test(cells[0])) continue;
    if (cells.length !== 3) {
      problems.push(`line ${i + 1}: a table row needs three cells (rule, what differs, sanctioned by)`);
      continue;
    }
    const sources = splitSources(cells[2]);
    if (sources.length === 0 || sources.some((s) => !SOURCE.test(s))) problems.push(`line ${i + 1}: row ${cells[0]} is sanctioned by "${cells[2]}": cite issues (#N) and/or "measured"`);
    rows.push({ rule: cells[0], sources });
  }

  const amendments = [];
  let rule;
  let inSection = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const heading = /^### (R\d+) — /.exec(line);
    if (heading) rule = heading[1];
    if (line.startsWith('## ')) inSection = line.trim() === SECTION;
    const marker = /^\*\*Amendment \(Node(?:, ([^)]*))?\)(?: — ([^*]+))?[.:]?\*\*/.exec(line);
    if (!marker) {
      if (/^\*\*(On Node\.js \(amendment\)|Amendment\b)/.test(line)) problems.push(`line ${i + 1}: an amendment must be headed "**Amendment (Node, <#N or measured>)…**"`);
      continue;
    }
    const where = inSection ? (marker[2] ?? '').trim().replace(/[.:]$/, '') : rule;
    if (!where) {
      problems.push(`line ${i + 1}: an amendment outside a rule must be titled ("**Amendment (Node, …) — <title>.**")`);
      continue;
    }
    const sources = splitSources(marker[1] ?? '');
    if (sources.length === 0 || sources.some((s) => !SOURCE.test(s))) {
      problems.push(`line ${i + 1}: the amendment of ${where} cites "${marker[1] ?? ''}": cite issues (#N) and/or "measured"`);
    }
    if (sources.includes('measured') && !/Measured\b[^.]*\d/.test(paragraph(lines, i))) {
      problems.push(`line ${i + 1}: the amendment of ${where} says "measured" but states no measurement ("Measured …" with figures)`);
    }
    amendments.push({ rule: where, sources, line: i + 1 });
  }

  const rowRules = new Set(rows.map((r) => r.rule));
  const amendedRules = new Set(amendments.map((a) => a.rule));
  for (const r of amendedRules) if (!rowRules.has(r)) problems.push(`${r} has an amendment paragraph but no row in the table`);
  for (const r of rowRules) if (!amendedRules.has(r)) problems.push(`the table lists ${r}, which has no amendment paragraph`);
  return { rows, amendments, problems };
}

function tableCells(line) {
  if (!line.startsWith('|')) return undefined;
  return line
    .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
    .split('|')
    .map((c) => c.trim());
}

function splitSources(cell) {
  return cell
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The amendment starting at line `i`: up to the next amendment, heading or rule (`---`). */
function paragraph(lines, i) {
  const out = [lines[i]];
  for (let j = i + 1; j < lines.length && !/^(\*\*Amendment\b|#|---)/.test(lines[j]); j++) out.push(lines[j]);
  return out.join(' ');
}

if (isMain(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const r = checkAmendments(readFileSync(join(root, 'docs/contracts/execution-contract.md'), 'utf8'));
  for (const p of r.problems) console.error(`rulebook-amendments: ${p}`);
  console.log(`rulebook-amendments: ${r.amendments.length} amendments of ${new Set(r.amendments.map((a) => a.rule)).size} rules, ${r.rows.length} table rows, ${r.problems.length} problems${r.problems.length ? '' : ' — ok'}`);
  process.exitCode = r.problems.length ? 1 : 0;
}
