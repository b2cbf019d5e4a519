// @tenferro/core public surface. Importing this module does no work: no topology read, no worker
// start, no native load. Three audiences, three sections: applications, provider authors, and
// those who bring their own executors and domains. Everything else in src/ is private (R67: only
// tenferro's operation entry may enter an executor).

// ── Applications ────────────────────────────────────────────────────────────────────────────
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

export { ResourceArbiter } from './arbiter/resource-arbiter.js';
export { ProcessArbiter } from './arbiter/process-arbiter.js';
export type { ProcessArbiterOptions, ProcessArbiterStats } from './arbiter/process-arbiter.js';
export { processArbiter } from './arbiter/process-wide-arbiter.js';
export { MACHINE_ARBITER_ENV, MachineArbiter, joinMachineArbiter, machineArbiter } from './arbiter/machine-arbiter.js';
export type { JoinMachineArbiterOptions, MachineArbiterCensus, MachineArbiterOptions, MachineArbiterProcess } from './arbiter/machine-arbiter.js';
export { Permit } from './arbiter/permit.js';
export { newExecutionOwner } from './arbiter/execution-owner.js';
export type { AcquireOptions, Arbiter, ArbiterKind, ArbiterStats } from './arbiter/arbiter.js';
export type { ExecutionOwner } from './arbiter/execution-owner.js';
export { requestsConflict } from './arbiter/resource-request.js';
export type { ResourceRequest } from './arbiter/resource-request.js';

export { CpuBackend } from './backend/cpu-backend.js';
export type { CpuRuntimeIdentity } from './backend/cpu-backend.js';
export type { CpuBackendOptions, ExternalBackendOptions, RunOptions } from './backend/backend-options.js';
export { CpuExecSession } from './backend/backend-session.js';
export { ops } from './backend/ops-facade.js';
export type { RealDType, TensorOps } from './backend/ops-facade.js';
export type { PrimitiveOptions } from './ops/primitive-arguments.js';
export type { ReduceOptions } from './ops/reduction.js';
export type { ContiguousOptions, CopyIntoOptions } from './ops/layout-transforms.js';
export type { CpuExecutionInfo, PlacementCheck, WorkerBufferTableStats, WorkerInfo } from './backend/execution-info.js';
export type { CensusThread, CensusThreadOwner, ThreadCensus } from './backend/thread-census.js';
export { DIAGNOSTICS_CHANNELS } from './diagnostics/channels.js';
export type { AdmissionEvent, DiagnosticsRequest, ExecutionEvent, PoolEvent, ProviderDeclineReason, ProviderEvent, TaskEvent } from './diagnostics/channels.js';
export { forwardDiagnostics } from './diagnostics/forward-diagnostics.js';
export type { DiagnosticsChannelName, DiagnosticsPort, DiagnosticsSink, ForwardDiagnosticsOptions, ForwardedDiagnosticsEvent } from './diagnostics/forward-diagnostics.js';
export type { ReferenceFallback } from './backend/provider-discovery.js';
export type { CpuBackendKind, CpuExecutionMode, CpuPlacement, ResolvedCpuPlacement } from './contract/backend-kind.js';

export { keep, Tensor } from './tensor/tensor.js';
export type { ElementOf, SliceRange, TensorFromOptions, TensorOrderOptions, TensorPlacement, TensorSource, TypedArrayOf } from './tensor/tensor.js';
export { tidy } from './tensor/tidy.js';
export { CONTRACTION_DTYPES, DTYPES, DTYPE_INFO, isDType } from './tensor/dtype.js';
export type { DType, DTypeInfo, Scalar } from './tensor/dtype.js';
export type { TensorDescriptor } from './tensor/tensor-descriptor.js';
export { denseStrides, layoutIsInjective, reachableSpan, validateLayout } from './tensor/layout.js';
export type { BufferPoolStats } from './buffer/buffer-pool.js';
export { hugePagePolicy } from './buffer/huge-pages.js';
export type { HugePagePolicy } from './buffer/huge-pages.js';
export type { DotGeneralDims, DotGeneralIntoOptions, DotGeneralOptions } from './contraction/validate-dot-general.js';
export { GemmAnalysisCache } from './contraction/gemm-analysis-cache.js';
export type { GemmAnalysisCacheStats } from './contraction/gemm-analysis-cache.js';
export type { GemmGroupedOptions, GemmJob } from './contraction/validate-grouped-gemm.js';
export type { SessionOptions } from './backend/session-options.js';
export type { SharedTensorAllocationDomain } from './buffer/allocation-domain.js';
export type { CpuIndexedPlans, IndexedPlanCacheLimits, IndexedPlanCacheStats } from './util/indexed-plan-cache.js';

// ── Provider authors ────────────────────────────────────────────────────────────────────────
export type { CpuProviderPackage, ProviderThread } from './provider/provider-package.js';
export type { ProviderPackageAvailable, ProviderPackageStatus, ProviderPackageUnavailable } from './provider/provider-package-status.js';
export { abiCodes, abiHash, defineAddon, loadAddon } from '@tenferro/os';
export type { AddonAdvice, AddonAvailable, AddonFailure, AddonLoad, AddonUnavailable, LoadAddonOptions } from '@tenferro/os';
export type { AddonDescription, AddonIsaInfo, DefineAddonOptions, DefinedAddon, DefinedAddonAvailable, DefinedAddonLoad, DefinedAddonUnavailable } from '@tenferro/os';
export { ABORT_CLOSED, ABORT_SIGNALLED } from './contract/execution-context.js';
export type { CpuExecutionContext, KernelRunOptions } from './contract/execution-context.js';
export type { CpuAdmissionMode, CpuDomainId, CpuDomainOwnership } from './contract/cpu-domain.js';
export type { ParallelMode, ProviderParallelMode } from './contract/parallel-mode.js';
export { defineKernel } from './contract/kernel.js';
export { KERNEL_ARGS_MAX_BUFFERS, KERNEL_ARGS_MAX_WORDS, type KernelArgs, kernelArgs, kernelWords, isKernelArgs } from './contract/kernel-args.js';
export type { KernelFunction, KernelRef, KernelTaskInfo } from './contract/kernel.js';
export type { WorkerPool } from './contract/worker-pool.js';
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
export type { CpuGemmRequest, GemmOperand, GemmSummedAxes } from './provider/gemm-request.js';
export type { CpuGroupedGemmRequest } from './provider/grouped-gemm-request.js';
export { validateGemmRequest } from './provider/validate-gemm-request.js';
export type { CpuLayoutRequest } from './provider/layout-request.js';
export { EXECUTED, Unsupported, describeUnsupported, isRetryable } from './provider/provider-outcome.js';
export type { CpuProviderOutcome, CpuProviderUnsupported } from './provider/provider-outcome.js';
export { referenceGemmProvider, referenceLayoutProvider } from './provider/reference/reference-providers.js';
export { referenceTensorPrimitivesProvider } from './provider/reference/reference-tensor-primitives.js';
export type {
  BinaryOp,
  CpuBinaryRequest,
  CpuReduceRequest,
  CpuTensorPrimitivesProvider,
  CpuUnaryRequest,
  ReduceOp,
  UnaryOp,
} from './provider/tensor-primitives.js';
export { defineExtensionKey } from './extension/extension-key.js';
export type { ExtensionKey } from './extension/extension-key.js';
export { runExtension } from './backend/extension-entry.js';
export type {
  CpuExtensionProvider,
  ExtensionBuiltin,
  ExtensionKernelCall,
  ExtensionKernelFacts,
  ExtensionKernelRan,
  ExtensionOperation,
  ExtensionProviderEvent,
  ExtensionRequest,
  ExtensionResult,
} from './ops/run-extension.js';

// ── Executors and external domains ──────────────────────────────────────────────────────────
export { ExternalCpuDomain } from './contract/external-cpu-domain.js';
export type { ExternalPlacement } from './contract/external-cpu-domain.js';
export type { CpuDomainExecutor, CpuDomainExecutorCapabilities, KernelTask, ScopedCpuJobs } from './contract/executor.js';
export { WorkerThreadsDomainExecutor } from './runtime/executors/worker-threads-domain-executor.js';
export type { WorkerThreadsExecutorOptions } from './runtime/executors/worker-threads-domain-executor.js';
