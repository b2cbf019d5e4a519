/**
 * The CPU capacity a process can really use: affinity ∩ online CPUs ∩ cgroup v2 cpuset, capped by
 * the cgroup v2 CFS bandwidth quota (`cpu.max`). This is the number `os.availableParallelism()`
 * gets wrong inside containers (it ignores cpusets and quotas). Internal to topology discovery.
 */
import { join } from 'node:path';
import { TenferroError } from '../errors/tenferro-error.js';
import { CpuSet } from './cpu-set.js';
import { DISCOVER_OP, parseOsCpuList, readOptionalText } from './sysfs-reader.js';
import type { CapacityLimit, EffectiveCapacity } from './topology-types.js';

/** The default CFS period (µs) when `cpu.max` gives only a quota. */
const DEFAULT_PERIOD_US = 100_000;

/**
 * The process's cgroup v2 path from `<procRoot>/self/cgroup` (the `0::<path>` line), or
 * `undefined` when the file or the line is missing (cgroup v1 only, or not Linux).
 */
export function readCgroupPath(procRoot: string): string | undefined {
  const text = readOptionalText(join(procRoot, 'self', 'cgroup'));
  if (text === undefined) return undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('0::')) continue;
    const path = line.slice(3).trim().replace(/ \(deleted\)$/, '');
    return path.startsWith('/') ? path : undefined;
  }
  return undefined;
}

/**
 * The cgroup directories from the process's cgroup up to the root, leaf first, under
 * `<sysfsRoot>/fs/cgroup`. Empty when the path leaves the visible hierarchy (`..` segments,
 * as seen from inside another cgroup namespace): nothing there can be read.
 */
function cgroupLevels(sysfsRoot: string, cgroupPath: string): { readonly dir: string; readonly path: string }[] {
  const segments = cgroupPath.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return [];
  const mount = join(sysfsRoot, 'fs', 'cgroup');
  const levels: { dir: string; path: string }[] = [];
  for (let n = segments.length; n >= 0; n--) {
    const part = segments.slice(0, n);
    levels.push({ dir: join(mount, ...part), path: `/${part.join('/')}` });
  }
  return levels;
}

interface Quota {
  readonly quotaUs: number;
  readonly periodUs: number;
  readonly cpus: number;
  readonly path: string;
}

/** Parse `cpu.max` (`"max 100000"`, `"150000 100000"`, `"max"`); `undefined` = no quota. */
function parseCpuMax(text: string, file: string, path: string): Quota | undefined {
  const m = /^(max|\d+)(?:\s+(\d+))?$/.exec(text.trim());
  const quota = m?.[1];
  const periodUs = m?.[2] === undefined ? DEFAULT_PERIOD_US : Number(m[2]);
  if (m === null || quota === undefined || periodUs <= 0 || (quota !== 'max' && Number(quota) <= 0)) {
    throw new TenferroError('TopologyDiscovery', `${file}: expected "max <period>" or "<quota> <period>" but received ${JSON.stringify(text.trim())}`, {
      op: DISCOVER_OP,
      detail: { path: file, content: text.trim() },
    });
  }
  if (quota === 'max') return undefined;
  const quotaUs = Number(quota);
  return { quotaUs, periodUs, cpus: quotaUs / periodUs, path };
}

export interface CapacityInputs {
  readonly allowed: CpuSet;
  /** How the affinity set was read, for the `affinity` limit's detail. */
  readonly allowedFrom: string;
  readonly online: CpuSet | undefined;
  readonly sysfsRoot: string;
  readonly cgroupPath: string | undefined;
}

/**
 * Compute the effective capacity. A missing cgroup file imposes no cap. A source whose CPUs do
 * not meet the set so far at all is inconsistent with the running process (it runs somewhere)
 * and is ignored rather than driving the capacity to zero.
 */
export function effectiveCapacity(inputs: CapacityInputs): EffectiveCapacity {
  const limits: CapacityLimit[] = [];
  let cpus: CpuSet = inputs.allowed;
  limits.push(limit('affinity', cpus.size, `${inputs.allowedFrom} ${cpus}`));

  if (inputs.online !== undefined) {
    const next = cpus.intersect(inputs.online);
    if (next !== undefined) {
      cpus = next;
      limits.push(limit('online', cpus.size, `online ${inputs.online}`));
    }
  }

  const levels = inputs.cgroupPath === undefined ? [] : cgroupLevels(inputs.sysfsRoot, inputs.cgroupPath);

  // The nearest cgroup with the cpuset controller governs (descendants without it inherit).
  for (const level of levels) {
    const file = join(level.dir, 'cpuset.cpus.effective');
    const text = readOptionalText(file);
    if (text === undefined) continue;
    const ids = parseOsCpuList(text, file);
    if (ids.length === 0) continue;
    const cpuset = CpuSet.of(ids);
    const next = cpus.intersect(cpuset);
    if (next !== undefined) {
      cpus = next;
      limits.push(limit('cgroupCpuset', cpus.size, `cpuset.cpus.effective ${cpuset} at ${level.path}`));
    }
    break;
  }

  // CFS bandwidth limits nest: the most restrictive cpu.max on the way to the root wins.
  let strictest: Quota | undefined;
  for (const level of levels) {
    const file = join(level.dir, 'cpu.max');
    const text = readOptionalText(file);
    if (text === undefined) continue;
    const quota = parseCpuMax(text, file, level.path);
    if (quota !== undefined && (strictest === undefined || quota.cpus < strictest.cpus)) strictest = quota;
  }

  let count = cpus.size;
  if (strictest !== undefined) {
    count = Math.min(count, Math.max(1, Math.floor(strictest.cpus)));
    limits.push(
      limit('cgroupQuota', count, `cpu.max ${strictest.quotaUs}/${strictest.periodUs} = ${strictest.cpus} CPUs at ${strictest.path}`),
    );
  }

  const result: EffectiveCapacity =
    strictest === undefined
      ? { cpus: count, limits: Object.freeze(limits) }
      : { cpus: count, limits: Object.freeze(limits), quota: strictest.cpus };
  return Object.freeze(result);
}

function limit(source: CapacityLimit['source'], cpus: number, detail: string): CapacityLimit {
  return Object.freeze({ source, cpus, detail });
}
