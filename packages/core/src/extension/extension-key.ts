import { invalidArgument } from '../errors/tenferro-error.js';

/**
 * A typed key for a bundle extension: the slot an operation family (e.g. `@tenferro/linalg`)
 * owns in provider bundles. The key object carries the value type; core stores values by key
 * and never interprets or validates them (R53).
 */
export interface ExtensionKey<T> {
  readonly name: string;
  /** Phantom: the type of the value stored under this key. */
  readonly __type?: T;
}

/**
 * The process-wide table of keys, shared by every copy of `@tenferro/core` loaded in this realm
 * (a global symbol, so two copies of core — and two copies of a package defining a key — agree).
 * It is created on the first definition, never at import.
 */
const REGISTRY = Symbol.for('tenferro.extensionKeys.v1');

function registry(): Map<string, ExtensionKey<unknown>> {
  const holder = globalThis as { [REGISTRY]?: Map<string, ExtensionKey<unknown>> };
  let keys = holder[REGISTRY];
  if (!(keys instanceof Map)) {
    keys = new Map();
    Object.defineProperty(holder, REGISTRY, { value: keys, enumerable: false, configurable: false, writable: false });
  }
  return keys;
}

/**
 * The key named `name` (e.g. `'tenferro.linalg.kernels'`). Keys are identity-by-name: every call
 * with the same name — from any module, any copy of the defining package or of core — returns the
 * same frozen object, so a family's `contract` entry can define its key lazily on first use and two
 * copies of that package still read and write the same bundle slot.
 *
 * @example
 * ```ts
 * import { defineExtensionKey } from '@tenferro/core';
 *
 * interface Greeter {
 *   hello(): string;
 * }
 * const key = defineExtensionKey<Greeter>('example.greeter');
 * console.log(key.name, key === defineExtensionKey<Greeter>('example.greeter')); // prints: example.greeter true
 * ```
 */
export function defineExtensionKey<T>(name: string): ExtensionKey<T> {
  const op = 'defineExtensionKey';
  if (typeof name !== 'string' || name.trim() === '') throw invalidArgument(op, 'name', 'a non-empty key name', name);
  const keys = registry();
  const existing = keys.get(name);
  if (existing !== undefined) return existing as ExtensionKey<T>;
  const key: ExtensionKey<T> = Object.freeze({ name });
  keys.set(name, key);
  return key;
}
