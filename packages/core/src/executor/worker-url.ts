/**
 * URL of the compiled worker entry. From `dist/` it sits beside this module; when this module
 * runs from `src/` (vitest transpiling TypeScript), workers still load the compiled entry,
 * because a worker isolate cannot load TypeScript. `turbo run test` builds first.
 */
export function workerEntryUrl(): URL {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return new URL('../../dist/executor/worker-entry.js', here);
  return new URL('./worker-entry.js', here);
}
