import { invalidArgument } from '../errors/tenferro-error.js';
import { Tensor } from './tensor.js';
import { currentScope, isKept, runInScope, type TidyScope } from './tidy-scope.js';

/**
 * Run `fn` (sync or async) in a tidy scope: every tensor made while it runs — fresh outputs,
 * `Tensor.fromArray`, views — except those it returns (also inside a returned array or plain
 * object) and those passed to `keep`, is disposed when `fn` settles, on success and on error.
 * Scopes nest; a returned tensor belongs to the enclosing scope. The scope follows `fn`'s async
 * context (`AsyncLocalStorage`), so concurrent tidies do not mix.
 *
 * @example
 * ```ts
 * import { Tensor, tidy } from '@tenferro/core';
 *
 * let scratch: Tensor | undefined;
 * const kept = await tidy(() => {
 *   scratch = Tensor.zeros('f64', [4]); // disposed when the scope settles
 *   return Tensor.fromArray('f64', [1], [42]); // returned: kept
 * });
 * console.log(scratch?.disposed, kept.disposed); // prints: true false
 * ```
 */
export async function tidy<R>(fn: () => R | Promise<R>): Promise<R> {
  if (typeof fn !== 'function') throw invalidArgument('tidy', 'fn', 'a function', fn);
  const parent = currentScope();
  const scope: TidyScope = { tracked: new Set(), parent };
  let result: R;
  try {
    result = await runInScope(scope, fn);
  } catch (e) {
    release(scope, new Set());
    throw e;
  }
  const returned = new Set<Tensor>();
  collectTensors(result, returned, new Set());
  release(scope, returned);
  if (parent !== undefined) for (const t of returned) if (scope.tracked.has(t)) parent.tracked.add(t);
  return result;
}

function release(scope: TidyScope, spared: Set<Tensor>): void {
  for (const t of scope.tracked) if (!spared.has(t as Tensor) && !isKept(t)) t.dispose();
}

/** Tensors in `value`: itself, or nested in arrays, Maps, Sets and plain objects. */
function collectTensors(value: unknown, out: Set<Tensor>, seen: Set<object>): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (Tensor.isTensor(value)) {
    out.add(value);
    return;
  }
  if (Array.isArray(value) || value instanceof Set) {
    for (const v of value) collectTensors(v, out, seen);
    return;
  }
  if (value instanceof Map) {
    for (const v of value.values()) collectTensors(v, out, seen);
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) for (const v of Object.values(value)) collectTensors(v, out, seen);
}
