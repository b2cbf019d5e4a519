// The names every entry point of @tenferro/core exports, pinned: adding or removing one is a
// deliberate change to this file (and a changeset), never an accident of a refactor.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as Core from '../src/index.js';
import type * as Kernel from '../src/kernel/index.js';
import type * as Piscina from '../src/piscina/index.js';
import type * as Testing from '../src/testing/index.js';

const CORE_VALUES = [
  'ABORT_CLOSED', 'ABORT_SIGNALLED', 'CONTRACTION_DTYPES', 'CpuBackend', 'CpuExecSession', 'CpuProviderBundle', 'CpuProviderBundleBuilder', 'CpuSet',
  'DEFAULT_EXECUTION_CAPABILITIES', 'DIAGNOSTICS_CHANNELS', 'DTYPES', 'DTYPE_INFO', 'ERROR_CODES', 'EXECUTED', 'ExternalCpuDomain', 'GemmAnalysisCache',
  'KERNEL_ARGS_MAX_BUFFERS', 'KERNEL_ARGS_MAX_WORDS', 'MAX_CPUS', 'Permit', 'ProcessArbiter', 'ResourceArbiter', 'TENFERRO_ERROR_BRAND', 'TenferroError', 'Tensor',
  'Unsupported', 'WorkerThreadsDomainExecutor', 'acceptsMode', 'defineExtensionKey', 'defineKernel', 'denseStrides',
  'describeUnsupported', 'discoverCpuTopology', 'enforcedThreadLimit', 'forwardDiagnostics', 'hugePagePolicy', 'isDType', 'isErrorCode', 'isKernelArgs', 'isRetryable', 'keep', 'kernelArgs', 'kernelWords', 'kindOf', 'loadAddon', 'abiCodes', 'abiHash', 'defineAddon',
  'layoutIsInjective', 'newExecutionOwner', 'processArbiter', 'MACHINE_ARBITER_ENV', 'MachineArbiter', 'joinMachineArbiter', 'machineArbiter', 'reachableSpan', 'referenceGemmProvider',
  'referenceLayoutProvider', 'referenceTensorPrimitivesProvider', 'ops', 'requestsConflict', 'runExtension', 'tidy', 'validateGemmRequest', 'validateLayout',
] as const;

const CORE_TYPES = [
  'AcquireOptions', 'AdmissionEvent', 'CensusThread', 'CensusThreadOwner', 'DiagnosticsChannelName', 'DiagnosticsPort', 'DiagnosticsRequest', 'DiagnosticsSink', 'ExecutionEvent', 'ForwardDiagnosticsOptions', 'ForwardedDiagnosticsEvent', 'PoolEvent', 'ProviderDeclineReason', 'ProviderEvent', 'TaskEvent', 'ProviderThread', 'ThreadCensus', 'AddonAdvice', 'BinaryOp', 'CpuBinaryRequest', 'CpuReduceRequest', 'CpuTensorPrimitivesProvider', 'CpuUnaryRequest', 'ReduceOp', 'UnaryOp', 'ContiguousOptions', 'CopyIntoOptions', 'PrimitiveOptions', 'RealDType', 'ReduceOptions', 'TensorOps', 'AddonAvailable', 'AddonFailure', 'AddonLoad', 'AddonUnavailable', 'Arbiter', 'ArbiterKind', 'ArbiterStats', 'ProcessArbiterOptions', 'ProcessArbiterStats', 'JoinMachineArbiterOptions', 'MachineArbiterCensus', 'MachineArbiterOptions', 'MachineArbiterProcess', 'BufferPoolStats', 'CapabilityPolicy', 'CapacityLimit', 'CpuAdmissionMode',
  'CpuBackendKind', 'CpuBackendOptions', 'CpuDomainExecutor', 'CpuDomainExecutorCapabilities', 'CpuDomainId',
  'CpuDomainOwnership', 'CpuDotGeneralRequest', 'CpuExecutionContext', 'CpuExecutionInfo', 'CpuExecutionMode',
  'CpuGemmProvider', 'CpuGemmRequest', 'CpuGeneralContractionProvider', 'CpuLayoutRequest', 'CpuLayoutTransformProvider',
  'CpuNode', 'CpuPlacement', 'CpuPlacementControl', 'CpuProviderExecutionCapabilities', 'CpuProviderOutcome',
  'CpuProviderPackage', 'CpuProviderUnsupported', 'CpuRuntimeIdentity', 'CpuThreadCountControl', 'CpuTopology', 'DType',
  'DTypeInfo', 'DeclaredSupport', 'ElementOf', 'DiscoverTopologyOptions', 'DotGeneralDims', 'DotGeneralIntoOptions', 'DotGeneralOptions',
  'EffectiveCapacity', 'ErrorCode', 'ErrorKind', 'ExecutionOwner', 'ExtensionKey', 'ExternalBackendOptions',
  'ExternalPlacement', 'GemmAnalysisCacheStats', 'GemmOperand', 'GemmSummedAxes', 'GeneralContractionPolicy', 'GroupedGemmScheduling',
  'KernelArgs', 'KernelFunction', 'KernelRef', 'KernelRunOptions', 'KernelTask', 'KernelTaskInfo', 'LoadAddonOptions', 'ParallelMode', 'PlacementCheck',
  'ProviderPackageAvailable', 'ProviderPackageStatus', 'ProviderPackageUnavailable', 'ProviderParallelMode', 'ProviderSlot',
  'ReferenceFallback', 'ResolvedCpuPlacement', 'ResourceRequest', 'RunOptions', 'Scalar', 'ScopedCpuJobs', 'SliceRange', 'TenferroErrorOptions',
  'TensorDescriptor', 'TensorFromOptions', 'TensorOrderOptions', 'TensorPlacement', 'TensorSource', 'TopologySource', 'TypedArrayOf', 'WorkerBufferTableStats', 'WorkerInfo', 'WorkerPool',
  'WorkerThreadsExecutorOptions', 'CpuGroupedGemmRequest', 'CpuIndexedPlans', 'GemmGroupedOptions', 'GemmJob', 'IndexedPlanCacheLimits', 'IndexedPlanCacheStats',
  'SessionOptions', 'SharedTensorAllocationDomain', 'HugePagePolicy',
  'AddonDescription', 'AddonIsaInfo', 'DefineAddonOptions', 'DefinedAddon', 'DefinedAddonAvailable', 'DefinedAddonLoad', 'DefinedAddonUnavailable',
  'CpuExtensionProvider', 'ExtensionBuiltin', 'ExtensionKernelCall', 'ExtensionKernelFacts', 'ExtensionKernelRan', 'ExtensionOperation', 'ExtensionProviderEvent', 'ExtensionRequest', 'ExtensionResult',
] as const;

const TESTING_VALUES = [
  'forgingGemmProvider', 'int', 'naiveDotGeneral', 'peakThreadsDuring', 'primitiveTolerance', 'providerConformanceCases', 'randomElementValues', 'randomOperand', 'randomView', 'randomValues', 'relativeError', 'runProviderConformance',
  'runTensorPrimitivesConformance', 'seededRandom', 'taskEventsDuring', 'tensorPrimitivesConformanceCases', 'threadCensus', 'toleranceFor',
] as const;
const TESTING_TYPES = ['ForgedCallObservation', 'ForgingGemmProvider', 'ProviderConformanceCase', 'ProviderConformanceOptions', 'RandomViewOptions', 'TensorPrimitivesConformanceOptions'] as const;
const PISCINA_VALUES = ['PiscinaDomainExecutor'] as const;
const KERNEL_VALUES = [
  'ABORT_CLOSED', 'ABORT_SIGNALLED', 'KERNEL_ARGS_MAX_BUFFERS', 'KERNEL_ARGS_MAX_WORDS', 'abiCodes', 'abiHash', 'defineAddon', 'isKernelArgs', 'kernelArgs', 'kernelWords', 'loadAddon',
] as const;
const KERNEL_TYPES = [
  'AddonAdvice', 'AddonAvailable', 'AddonDescription', 'AddonFailure', 'AddonIsaInfo', 'AddonLoad', 'AddonUnavailable', 'DefineAddonOptions', 'DefinedAddon', 'DefinedAddonAvailable',
  'DefinedAddonLoad', 'DefinedAddonUnavailable', 'KernelArgs', 'KernelFunction', 'KernelTaskInfo', 'LoadAddonOptions',
] as const;
const PISCINA_TYPES = ['PiscinaPoolLike'] as const;

/** The names an entry file exports, split by `export { … }` and `export type { … }` (as written, `as` renames honoured). */
function declaredExports(file: string): { values: string[]; types: string[] } {
  const text = readFileSync(new URL(file, import.meta.url), 'utf8');
  const values: string[] = [];
  const types: string[] = [];
  for (const m of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of m[2]!.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const isType = m[1] !== undefined || item.startsWith('type ');
      const name = item.replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
      (isType ? types : values).push(name);
    }
  }
  return { values: values.sort(), types: types.sort() };
}

const sorted = (xs: readonly string[]) => [...xs].sort();

describe('public API of @tenferro/core', () => {
  it.each([
    ['../src/index.ts', CORE_VALUES, CORE_TYPES],
    ['../src/testing/index.ts', TESTING_VALUES, TESTING_TYPES],
    ['../src/piscina/index.ts', PISCINA_VALUES, PISCINA_TYPES],
    ['../src/kernel/index.ts', KERNEL_VALUES, KERNEL_TYPES],
  ] as const)('%s exports exactly the pinned names', (file, values, types) => {
    const declared = declaredExports(file);
    expect(declared.values).toEqual(sorted(values));
    expect(declared.types).toEqual(sorted(types));
  });

  it('the runtime modules carry exactly the pinned values', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual(sorted(CORE_VALUES));
    expect(Object.keys(await import('../src/testing/index.js')).sort()).toEqual(sorted(TESTING_VALUES));
    expect(Object.keys(await import('../src/piscina/index.js')).sort()).toEqual(sorted(PISCINA_VALUES));
    expect(Object.keys(await import('../src/kernel/index.js')).sort()).toEqual(sorted(KERNEL_VALUES));
  });

  it('@tenferro/core/kernel is a part of @tenferro/core: the same values, the same types', async () => {
    const core = (await import('../src/index.js')) as Record<string, unknown>;
    const kernel = (await import('../src/kernel/index.js')) as Record<string, unknown>;
    for (const name of KERNEL_VALUES) expect(kernel[name], name).toBe(core[name]);
    expect(CORE_TYPES).toEqual(expect.arrayContaining([...KERNEL_TYPES]));
  });

  it('the type checker agrees on the value exports', () => {
    // expectTypeOf is checked by the type checker, not at run time: this file must be in what
    // `tsc -p tsconfig.test.json` (the typecheck npm test runs first) compiles (#39: a test with
    // no run-time assertion fails, so the test says what makes its type assertions real).
    const tsconfig = JSON.parse(readFileSync(new URL('../tsconfig.test.json', import.meta.url), 'utf8')) as { include: string[]; exclude?: string[] };
    expect(tsconfig.include).toContain('test');
    expect(tsconfig.exclude ?? []).not.toContain('test/public-api.test.ts');
    expectTypeOf<keyof typeof Core>().toEqualTypeOf<(typeof CORE_VALUES)[number]>();
    expectTypeOf<keyof typeof Testing>().toEqualTypeOf<(typeof TESTING_VALUES)[number]>();
    expectTypeOf<keyof typeof Piscina>().toEqualTypeOf<(typeof PISCINA_VALUES)[number]>();
    expectTypeOf<keyof typeof Kernel>().toEqualTypeOf<(typeof KERNEL_VALUES)[number]>();
  });

  it('CpuExecSession has exactly the pinned methods', async () => {
    const { CpuExecSession } = await import('../src/index.js');
    const own = Object.getOwnPropertyNames(CpuExecSession.prototype).filter((n) => n !== 'constructor').sort();
    expect(own).toEqual(sorted(['context', 'domainId', 'dotGeneral', 'dotGeneralInto', 'end', 'gemmGrouped', 'kind', 'run', 'sharedAllocationDomain', 'withMaterializedTensorRead']));
  });

  it('core names no operation family: no linalg entry on CpuBackend or CpuExecSession (#35, families use runExtension)', async () => {
    const { CpuBackend, CpuExecSession } = await import('../src/index.js');
    const names = [...Object.getOwnPropertyNames(CpuBackend.prototype), ...Object.getOwnPropertyNames(CpuExecSession.prototype)];
    expect(names.filter((n) => /linalg|freshTensor|providerExtension/i.test(n))).toEqual([]);
  });

  it('no runtime internals are reachable through the package exports map', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './kernel', './package.json', './piscina', './testing']);
  });
});
