import { AsyncLocalStorage } from 'node:async_hooks';
import { IdleStorage } from '../util/idle-storage.js';

/** Something a tidy scope can dispose. */
export interface Disposable {
  dispose(): void;
}

/** The tensors created in one `tidy` (its own, not its nested scopes'). */
export interface TidyScope {
  readonly tracked: Set<Disposable>;
  readonly parent: TidyScope | undefined;
}

const scopes = new AsyncLocalStorage<TidyScope>();
/** Tensors kept with `keep`: never disposed by a scope. */
const kept = new WeakSet<Disposable>();

/** Record `t` in the innermost open tidy scope, if any. */
export function track(t: Disposable): void {
  scopes.getStore()?.tracked.add(t);
}

export function keepTracked(t: Disposable): void {
  kept.add(t);
  for (let s = scopes.getStore(); s !== undefined; s = s.parent) s.tracked.delete(t);
}

export function isKept(t: Disposable): boolean {
  return kept.has(t);
}

export function currentScope(): TidyScope | undefined {
  return scopes.getStore();
}

/** Scopes open now (nested ones included). */
let open = 0;
/** Off again when no scope has been open for a while: the application's promises then pay no hooks. */
const idle = new IdleStorage(scopes, () => open === 0);

/** Run `fn` inside `scope`; the scope counts as open until `fn` settles. */
export async function runInScope<R>(scope: TidyScope, fn: () => R | Promise<R>): Promise<R> {
  open++;
  try {
    return await scopes.run(scope, fn);
  } finally {
    if (--open === 0) idle.closed();
  }
}
