// @tenferro/core public surface. Importing this module does no work: no topology read,
// no worker start, no native load.
export { ERROR_CODES, isErrorCode, kindOf } from './errors/codes.js';
export type { ErrorCode, ErrorKind } from './errors/codes.js';
export { TenferroError, TENFERRO_ERROR_BRAND } from './errors/tenferro-error.js';
export type { TenferroErrorOptions } from './errors/tenferro-error.js';

export { CpuSet } from './topology/cpu-set.js';
export { MAX_CPUS } from './topology/cpu-list.js';
export { discoverCpuTopology } from './topology/discover-topology.js';
export type {
  CapacityLimit,
  CpuNode,
  CpuTopology,
  DiscoverTopologyOptions,
  EffectiveCapacity,
  TopologySource,
} from './topology/topology-types.js';
