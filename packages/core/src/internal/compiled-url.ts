/**
 * The URL of a compiled module for worker threads. Beside `from` when `from` is compiled
 * JavaScript; when `from` is TypeScript run by vitest from `src/`, the same path under `dist/`
 * (a worker isolate cannot load TypeScript; `turbo run test` builds first).
 */
export function compiledModuleUrl(relative: string, from: string): URL {
  const url = new URL(relative, from);
  if (!from.endsWith('.ts')) return url;
  return new URL(url.href.replace('/src/', '/dist/').replace(/\.ts$/, '.js'));
}
