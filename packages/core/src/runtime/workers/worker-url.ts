import { compiledModuleUrl } from '../../util/compiled-url.js';

/** URL of the compiled worker entry (see `compiledModuleUrl`). */
export function workerEntryUrl(): URL {
  return new URL(compiledModuleUrl(new URL('./worker-entry.js', import.meta.url)));
}
