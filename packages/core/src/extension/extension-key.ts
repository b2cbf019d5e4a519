import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';

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

const keys = new Map<string, ExtensionKey<unknown>>();

/** Define the key `name` (e.g. `'tenferro.linalg.kernels'`). A name can be defined once: a second definition is `DuplicateExtensionKey`. */
export function defineExtensionKey<T>(name: string): ExtensionKey<T> {
  const op = 'defineExtensionKey';
  if (typeof name !== 'string' || name.trim() === '') throw invalidArgument(op, 'name', 'a non-empty key name', name);
  if (keys.has(name)) {
    throw new TenferroError('DuplicateExtensionKey', `an extension key named ${JSON.stringify(name)} is already defined; import the owning package's key instead`, {
      op,
      detail: { name },
    });
  }
  const key: ExtensionKey<T> = Object.freeze({ name });
  keys.set(name, key);
  return key;
}
