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

export { ResourceArbiter, Permit, newExecutionOwner, processArbiter } from './arbiter/resource-arbiter.js';
export type { AcquireOptions, ArbiterStats, ExecutionOwner } from './arbiter/resource-arbiter.js';
export { requestsConflict } from './arbiter/resource-request.js';
export type { ResourceRequest } from './arbiter/resource-request.js';

export { CpuBackend } from './backend/cpu-backend.js';
export type { CpuRuntimeIdentity, PlacementCheck } from './backend/cpu-backend.js';
export type { CpuBackendOptions, CpuProviderPackage } from './backend/backend-options.js';
export { KNOWN_PROVIDER_PACKAGES } from './backend/provider-discovery.js';
export type { KnownProviderPackage } from './backend/provider-discovery.js';
export type { ProviderPackageAvailable, ProviderPackageStatus, ProviderPackageUnavailable } from './provider/provider-package-status.js';
export { loadAddon, type AddonAdvice, type AddonAvailable, type AddonFailure, type AddonLoad, type AddonUnavailable, type LoadAddonOptions } from '@tenferro/os';
export { CpuExecSession } from './backend/backend-session.js';
export type { CpuDomainId, CpuDomainOwnership } from './backend/cpu-domain.js';
export type { CpuExecutionInfo, WorkerInfo } from './backend/execution-info.js';
export type { CpuBackendKind, CpuExecutionMode, CpuPlacement, ResolvedCpuPlacement } from './backend/placement.js';

export { CpuExecutionContext } from './execution/execution-context.js';
export type { CpuAdmissionMode } from './execution/execution-context.js';
export type { ParallelMode, ProviderParallelMode } from './execution/parallel-mode.js';

export type { CpuDomainExecutor, CpuDomainExecutorCapabilities, ScopedCpuJobs } from './executor/cpu-domain-executor.js';
export { defineKernel } from './executor/kernel-ref.js';
export type { KernelRef } from './executor/kernel-ref.js';
export type { KernelFunction, KernelTaskInfo } from './executor/protocol.js';
export type { WorkerPool } from './executor/worker-pool.js';

export { Tensor } from './tensor/tensor.js';
export type { SliceRange, TensorOrderOptions, TensorPlacement } from './tensor/tensor.js';
export { CONTRACTION_DTYPES, DTYPES, DTYPE_INFO, isDType } from './tensor/dtype.js';
export type { DType, DTypeInfo } from './tensor/dtype.js';
export type { TensorDescriptor } from './tensor/tensor-descriptor.js';
export { denseStrides, layoutIsInjective, reachableSpan, validateLayout } from './tensor/layout.js';

export type { BufferPoolStats } from './buffer/buffer-pool.js';
export type { DotGeneralDims, DotGeneralIntoOptions, DotGeneralOptions } from './contraction/dot-general-dims.js';
export type { GemmAnalysisCacheStats } from './contraction/gemm-analysis-cache.js';

export { CpuProviderBundle, CpuProviderBundleBuilder } from './provider/provider-bundle.js';
export type { CapabilityPolicy, GeneralContractionPolicy, GroupedGemmScheduling } from './provider/provider-bundle.js';
export type {
  CpuDotGeneralRequest,
  CpuGemmProvider,
  CpuGeneralContractionProvider,
  CpuLayoutTransformProvider,
  DeclaredSupport,
  ProviderSlot,
} from './provider/cpu-providers.js';
export { DEFAULT_EXECUTION_CAPABILITIES, acceptsMode, enforcedThreadLimit } from './provider/execution-capabilities.js';
export type { CpuPlacementControl, CpuProviderExecutionCapabilities, CpuThreadCountControl } from './provider/execution-capabilities.js';
export type { CpuGemmRequest, GemmOperand, Scalar } from './provider/gemm-request.js';
export type { CpuLayoutRequest } from './provider/layout-request.js';
export { EXECUTED, Unsupported, describeUnsupported, isRetryable } from './provider/provider-outcome.js';
export type { CpuProviderOutcome, CpuProviderUnsupported } from './provider/provider-outcome.js';
export { referenceGemmProvider, referenceLayoutProvider } from './provider/reference/reference-providers.js';

export { defineExtensionKey } from './extension/extension-key.js';
export type { ExtensionKey } from './extension/extension-key.js';

export { ExternalCpuDomain } from './domain/external-cpu-domain.js';
export type { ExternalPlacement } from './domain/external-cpu-domain.js';
export type { ExternalBackendOptions } from './backend/backend-options.js';
export type { KernelTask } from './executor/cpu-domain-executor.js';
export { WorkerThreadsDomainExecutor } from './executor/worker-threads-domain-executor.js';
export type { WorkerThreadsExecutorOptions } from './executor/worker-threads-domain-executor.js';
