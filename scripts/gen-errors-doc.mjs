#!/usr/bin/env node
// Writes docs/errors.md from packages/core/src/errors/codes.ts (through the built dist).
// `packages/core/test/errors-doc.test.ts` fails when the two disagree.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { ERROR_CODES } = await import(pathToFileURL(join(root, 'packages/core/dist/errors/codes.js')).href);
const rows = Object.entries(ERROR_CODES).map(([code, info]) => `| \`${code}\` | ${info.kind} | ${info.meaning} |`);
const text = `# Error codes

Every error tenferro raises is a \`TenferroError\` with a stable \`code\`, a coarse \`kind\`
(\`Validation | Unsupported | RuntimeState | BackendFailure | Internal\`), the \`op\` (public API)
that raised it, a structured \`detail\` and, where one exists, a \`cause\`. Test errors with
\`TenferroError.is(error, 'Code')\` (a brand check, so separate copies of the packages agree), never
by message. Renaming or removing a code is a breaking change.

This table is generated from \`packages/core/src/errors/codes.ts\` by
\`node scripts/gen-errors-doc.mjs\`; a test keeps the two equal.

| code | kind | meaning |
|---|---|---|
${rows.join('\n')}
`;
writeFileSync(join(root, 'docs/errors.md'), text);
console.log(`docs/errors.md: ${rows.length} codes`);
