/**
 * Death tokens: learning that objects were collected at the first event-loop turn after *any*
 * collection that found them dead, a scavenge included (#38).
 *
 * A `FinalizationRegistry` callback runs only after a full (mark-compact) collection, because V8's
 * scavenger treats weak references as strong. A short-lived object that owns a resource — a
 * tensor over pooled storage that its program dropped — therefore hands the resource back only
 * at the next full collection, which a program making little garbage on the JavaScript heap may
 * not see for thousands of calls. A death token is a one-byte `ArrayBuffer` over external memory:
 * V8 frees such a buffer's backing store in the collection that finds it dead, whichever kind,
 * and Node runs the store's finalizer at the next event-loop turn. Hold a token from every object
 * of a group (a private field) and its death says that the whole group is dead.
 */
import { loadOs } from './load.js';

/** Makes a token whose collection calls the handler given to {@link deathTokens} with `id`. */
export type DeathTokenFactory = (id: number) => ArrayBuffer | undefined;

/**
 * Open a channel of death tokens on this thread and answer its token factory — or `undefined`
 * when the addon (or a binary with death tokens) is not available, or the thread has 1,024
 * channels already. `handler` is called on this thread, at an event-loop turn, once for each
 * collected token of this factory with its id (an integer in [0, 2^32)); other factories' tokens
 * never reach it. A token is never handed to anyone who could view its byte.
 *
 * @example
 * ```ts
 * import { deathTokens } from '@tenferro/os';
 *
 * const dead: number[] = [];
 * const token = deathTokens((id) => dead.push(id));
 * console.log(token === undefined || token(7)?.byteLength === 1); // prints: true
 * ```
 */
export function deathTokens(handler: (id: number) => void): DeathTokenFactory | undefined {
  const status = loadOs();
  if (!status.available) return undefined;
  const { onDeathTokens, deathToken } = status.binding;
  if (onDeathTokens === undefined || deathToken === undefined) return undefined;
  const channel = onDeathTokens(handler);
  if (channel < 0) return undefined;
  return (id) => deathToken(channel, id);
}
