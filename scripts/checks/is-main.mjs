// Whether the module at `moduleUrl` is the script Node was started with (`node scripts/checks/x.mjs`),
// not a module another imports (the tests import the checks): then it runs its command line.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** `isMain(import.meta.url)`: true when that module is `process.argv[1]`. */
export function isMain(moduleUrl) {
  if (process.argv[1] === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
