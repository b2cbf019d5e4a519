import { invalidArgument } from '../errors/tenferro-error.js';

/** Default retention cap of a backend's buffer pools: 100 MiB (R113). */
export const DEFAULT_RETAINED_BYTES = 100 * 1024 * 1024;

/** The environment variable that overrides the retention cap (R113). */
export const RETAINED_BYTES_ENV = 'TENFERRO_BUFFER_POOL_MAX_RETAINED_BYTES';

/**
 * The retention cap from `TENFERRO_BUFFER_POOL_MAX_RETAINED_BYTES` (R113): a non-negative
 * integer string (surrounding whitespace allowed); unset, empty or invalid → the default;
 * `0` disables retention.
 */
export function retainedBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[RETAINED_BYTES_ENV];
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return DEFAULT_RETAINED_BYTES;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : DEFAULT_RETAINED_BYTES;
}

/** Something that trims its retained storage when the shared cap changes. */
export interface PoolLimitListener {
  /** Evict retained storage until it fits the limit's current cap. */
  trimToLimit(): void;
}

function validateBytes(bytes: unknown, op: string, param: string): number {
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw invalidArgument(op, param, 'a non-negative safe integer byte count', bytes);
  }
  return bytes;
}

/**
 * The retention cap (bytes of retained capacity) shared by every engine pool of one backend
 * coordinator (R114): a change applies to every registered pool at once and to pools that
 * register later.
 */
export class PoolLimit {
  #bytes: number;
  readonly #pools = new Set<PoolLimitListener>();

  constructor(bytes: number = DEFAULT_RETAINED_BYTES) {
    this.#bytes = validateBytes(bytes, 'PoolLimit', 'bytes');
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Change the cap; every registered pool evicts down to it (R113, R114). */
  set(bytes: number, op: string): void {
    this.#bytes = validateBytes(bytes, op, 'bytes');
    for (const pool of [...this.#pools]) pool.trimToLimit();
  }

  register(pool: PoolLimitListener): void {
    this.#pools.add(pool);
  }

  unregister(pool: PoolLimitListener): void {
    this.#pools.delete(pool);
  }

  /** Number of registered pools (for diagnostics and tests). */
  get pools(): number {
    return this.#pools.size;
  }
}
