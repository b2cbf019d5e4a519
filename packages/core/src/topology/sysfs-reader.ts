/**
 * Small synchronous readers for sysfs, procfs and cgroupfs text files, shared by topology
 * discovery and the cgroup capacity reader. Internal: not part of the public surface.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { TenferroError } from '../errors/tenferro-error.js';
import { parseCpuList } from './cpu-list.js';

/** The op every topology discovery error carries. */
export const DISCOVER_OP = 'discoverCpuTopology';

/** True for the errno codes that mean "this file or directory is not there". */
function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The text of `path`, or `undefined` when it does not exist. Any other failure (permission,
 * I/O error, a directory) is a `TopologyDiscovery` error naming the path.
 */
export function readOptionalText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw new TenferroError('TopologyDiscovery', `cannot read ${path}: ${(error as Error).message}`, {
      op: DISCOVER_OP,
      cause: error,
      detail: { path },
    });
  }
}

/** The entry names of directory `path`, or `undefined` when it cannot be listed for any reason. */
export function listDirectory(path: string): string[] | undefined {
  try {
    return readdirSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Parse an OS cpulist file's text into sorted unique ids; an empty file (`"\n"`) gives `[]`.
 * Malformed text → `InvalidCpuList` with `detail.path` and `detail.list`.
 */
export function parseOsCpuList(text: string, path: string): number[] {
  if (text.trim() === '') return [];
  try {
    return parseCpuList(text, DISCOVER_OP);
  } catch (error) {
    const inner = error as TenferroError;
    const message = inner.message.startsWith(`${DISCOVER_OP}: `) ? inner.message.slice(DISCOVER_OP.length + 2) : inner.message;
    throw new TenferroError('InvalidCpuList', `${path}: ${message}`, {
      op: DISCOVER_OP,
      cause: error,
      detail: { path, list: text.trim() },
    });
  }
}

/** Read and parse an optional cpulist file: `undefined` when missing, `[]` when empty. */
export function readOptionalCpuList(path: string): number[] | undefined {
  const text = readOptionalText(path);
  return text === undefined ? undefined : parseOsCpuList(text, path);
}
