// @tenferro/core/internal — for tenferro's own packages, benchmarks and tests. Not a stable API.
export { CpuEngine } from './backend/cpu-engine.js';
export { CpuOperationEntry } from './execution/operation-entry.js';
export { runInFrame, currentFrame } from './execution/execution-frame.js';
export { EngineWorkerPool, DEFAULT_SPIN_MICROS } from './executor/engine-worker-pool.js';
export { workerEntryUrl } from './executor/worker-url.js';
export { PoolLimit } from './buffer/pool-limit.js';
export { compiledModuleUrl } from './internal/compiled-url.js';
