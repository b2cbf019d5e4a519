/**
 * The child process of src/identify.ts: load the addon and the BLAS runtime HERE (a throwaway
 * process, with the environment the application has), probe it, print one JSON line
 * (`{ report: LoadReport }` or `{ error }`), exit. Never imported by the package itself; imports
 * nothing of core (startup time): the parent has already loaded the same addon with core's loader.
 */
import { createRequire } from 'node:module';
import { addonPath } from './native/addon-path.js';
import type { BlasBinding } from './native/binding.js';
import { blasCandidates } from './native/candidates.js';
import { loadAndProbe } from './native/probe.js';

let line: string;
try {
  const binding = createRequire(import.meta.url)(addonPath()) as BlasBinding;
  line = JSON.stringify({ report: loadAndProbe(binding, { candidates: blasCandidates() }) });
} catch (e) {
  line = JSON.stringify({ error: e instanceof Error ? e.message : String(e) });
}
process.stdout.write(`${line}\n`);
