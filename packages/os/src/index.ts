/**
 * `@tenferro/os`: per-thread CPU affinity for Linux through a small N-API addon.
 *
 * Importing this module loads nothing; the addon is loaded on first use (`loadOs()`).
 * `defineAddon` (over `loadAddon`) is the native addon loader every tenferro package with an addon uses.
 */
export { OS_ERROR_CODES, OsError, describeValue, osErrorKind } from './os-error.js';
export type { OsErrorCode, OsErrorKind, OsErrorOptions } from './os-error.js';
export { loadOs } from './load.js';
export type { OsStatus } from './load.js';
export { loadAddon } from './load-addon.js';
export type { AddonAdvice, AddonAvailable, AddonFailure, AddonLoad, AddonUnavailable, LoadAddonOptions } from './load-addon.js';
export { abiCodes, abiHash, defineAddon } from './define-addon.js';
export type {
  AddonDescription,
  AddonIsaInfo,
  AddonPackageStatus,
  DefineAddonOptions,
  DefinedAddon,
  DefinedAddonAvailable,
  DefinedAddonLoad,
  DefinedAddonUnavailable,
} from './define-addon.js';
export { ARBITER_FLAGS } from './binding.js';
export type { ArbiterClient, ArbiterInfo, MachineCensus, MachineJoinAnswer, OsBinding, RawAffinity } from './binding.js';
export { deathTokens } from './death-tokens.js';
export type { DeathTokenFactory } from './death-tokens.js';
export { adjustExternalMemory, rangesOverlap, sharedMemoryRange } from './memory.js';
export type { SharedMemoryRange } from './memory.js';
export { HUGE_PAGE_BYTES, THP_SYSFS, adviseHugePages, transparentHugePages } from './huge-pages.js';
export type { TransparentHugePages } from './huge-pages.js';
export {
  MAX_CPUS,
  getProcessAffinity,
  getThreadAffinity,
  gettid,
  yieldThread,
  currentCpu,
  setThreadAffinity,
  validateCpuList,
} from './thread-affinity.js';
