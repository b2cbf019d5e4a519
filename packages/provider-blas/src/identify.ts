/**
 * What BLAS runtime this process WOULD load, found without loading it here: a short-lived child
 * process (the same Node.js, the same environment) loads the addon and the runtime, probes it
 * and reports (`src/probe-child.ts`). That decides, before anything is loaded in this process,
 * the capabilities the provider declares (R52: sampled when a bundle is built) and the core type
 * OpenBLAS picks by itself on this CPU (src/coretype.ts). About 50–100 ms, once per process.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LIBRARY_ENV } from './native/candidates.js';
import type { LoadReport } from './native/probe.js';

export type Identification = { readonly ok: true; readonly report: LoadReport } | { readonly ok: false; readonly reasons: readonly string[]; readonly possibleSolutions: readonly string[] };

/** The compiled child script (when running from `src/` under a TypeScript runner, the one in `dist/`). */
function childScript(): string {
  const here = fileURLToPath(new URL('./probe-child.js', import.meta.url));
  if (existsSync(here)) return here;
  return here.replace(/([/\\])src([/\\])probe-child\.js$/, '$1dist$2probe-child.js');
}

/** `candidates`: the libraries to try (the `library` option's; the child reads them from `TENFERRO_BLAS_LIBRARY`), else the environment's choice. */
export function identifyInChild(candidates?: readonly string[]): Identification {
  const script = childScript();
  const env = candidates === undefined ? process.env : { ...process.env, [LIBRARY_ENV]: candidates.join(':') };
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env, timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = (r.stdout ?? '').trim().split('\n');
  let parsed: { report?: LoadReport; error?: string } | undefined;
  try {
    parsed = JSON.parse(lines[lines.length - 1] ?? '');
  } catch {
    parsed = undefined;
  }
  if (parsed?.report !== undefined) return { ok: true, report: parsed.report };
  const why = parsed?.error ?? (r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : `exit ${r.status}`);
  // A runtime that gives up prints its reason on either stream (MKL: "Intel MKL FATAL ERROR" on stdout).
  const printed = [...lines.filter((l) => l.trim() !== '' && !l.startsWith('{')), ...(r.stderr ?? '').trim().split('\n')].filter((l) => l.trim() !== '');
  const stderr = printed.slice(-3).join(' | ');
  return {
    ok: false,
    reasons: [`probing the BLAS runtime in a child process (${script}) failed: ${why}${stderr !== '' ? `: ${stderr}` : ''}`],
    possibleSolutions: ['run the same with NODE_DEBUG=tenferro to see what the child process did', 'reinstall the package: npm rebuild @tenferro/provider-blas'],
  };
}
