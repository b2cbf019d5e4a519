import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The module a worker isolate should import for `url`: `url` itself, unless it is a `file:` URL
 * inside a package's `src/` that names no JavaScript file there (a `.ts` source, or a `.js`
 * path that only exists compiled) — then the same path under `dist/`, as `.js`. Code running as
 * TypeScript from `src/` (a test runner) thereby hands workers the compiled module, which a
 * worker can load. Looks at the file system only for `.js` paths under `src/`.
 */
export function compiledModuleUrl(url: string | URL): string {
  const href = url instanceof URL ? url.href : url;
  if (!href.startsWith('file:')) return href;
  const at = href.lastIndexOf('/src/');
  if (at < 0) return href;
  if (href.endsWith('.js') || href.endsWith('.mjs')) {
    if (existsSync(fileURLToPath(href))) return href;
  } else if (!href.endsWith('.ts')) {
    return href;
  }
  const compiled = `${href.slice(0, at)}/dist/${href.slice(at + 5)}`;
  return compiled.endsWith('.ts') ? `${compiled.slice(0, -3)}.js` : compiled;
}
