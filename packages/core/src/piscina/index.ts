// @tenferro/core/piscina — the caller-owned pool adapter. piscina is the application's own
// (optional peer) dependency: this module never imports it.
export { PiscinaDomainExecutor } from '../runtime/executors/piscina-domain-executor.js';
export type { PiscinaPoolLike } from '../runtime/executors/piscina-domain-executor.js';
