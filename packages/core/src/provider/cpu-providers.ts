import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { DType } from '../tensor/dtype.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import type { CpuProviderExecutionCapabilities } from './execution-capabilities.js';
import type { CpuGemmRequest, Scalar } from './gemm-request.js';
import type { CpuGroupedGemmRequest } from './grouped-gemm-request.js';
import type { CpuLayoutRequest } from './layout-request.js';
import type { CpuProviderOutcome } from './provider-outcome.js';

/**
 * What a provider says it supports, for conformance tests to choose their cases from
 * (declared capabilities, not names). Declaring too much fails conformance.
 */
export interface DeclaredSupport {
  readonly dtypes: readonly DType[];
  /** Arbitrary strides on lhs and rhs (false: only layouts a BLAS can express; others report layout). */
  readonly stridedOperands: boolean;
  /** Conjugation of lhs/rhs (false: reports `conjugation`). */
  readonly conjugation: boolean;
  /**
   * With `beta = 0` the provider writes every element of the output view and never reads it
   * (R108's full-overwrite contract): fresh outputs may then come from the buffer pool without
   * being zeroed first. Checked by the conformance kit.
   */
  readonly overwritesOutput?: boolean;
  /**
   * Every `Unsupported` outcome is returned before the output is touched (the provider contract,
   * R106). A provider that declares it is trusted on caller-owned outputs; for any other, core
   * checks the output around each call that declines and reports a write as
   * `ProviderContractViolation` instead of retrying on a modified output.
   */
  readonly declinesBeforeWriting?: boolean;
  /**
   * The GEMM provider runs requests with summed axes (`CpuGemmRequest.summed`): dot-general then
   * sums over contracting axes that do not fuse into one K instead of copying an operand
   * (R105's summed plan). Without it, core never sends `summed`. Checked by the conformance kit.
   */
  readonly summedAxes?: boolean;
  /**
   * `'blas'` when the provider runs a BLAS library, whose threads and their placement belong to
   * that library: such a provider is refused on caller-managed domains (R47), whatever the
   * bundle's kind.
   */
  readonly family?: 'blas';
}

/** What every slot's provider has: a diagnostic name, its execution capabilities and, optionally, its declared support. */
export interface ProviderBase {
  /** Diagnostic name, for logs only (never a dispatch key). */
  readonly name: string;
  /** Thread and placement behaviour, validated against each domain before anything runs (R55–R60). */
  executionCapabilities(): CpuProviderExecutionCapabilities;
  /** What it supports, for conformance tests to draw cases from (declaring too much fails them). */
  declaredSupport?(): DeclaredSupport;
}

/** The GEMM slot. Runs inside an entered context: kernel tasks through `ctx.run`, fan-out only through `ctx.workerPool()`. */
export interface CpuGemmProvider extends ProviderBase {
  /**
   * Run one (possibly batched or grouped) GEMM described by `request` inside the entered `ctx`:
   * resolve to `EXECUTED`, or to an `Unsupported` outcome before writing anything; failures throw.
   */
  gemm(ctx: CpuExecutionContext, request: CpuGemmRequest): Promise<CpuProviderOutcome>;
  /**
   * Optional: every job of a grouped GEMM in one call, each recorded once in `request.ledger`
   * (R110's provider-owned path). Without it, core runs the jobs one after another through
   * {@link CpuGemmProvider.gemm} on the same context, each job its own provider call (a decline
   * after earlier jobs wrote is `PartialGroupedGemm`, #35).
   */
  groupedGemm?(ctx: CpuExecutionContext, request: CpuGroupedGemmRequest): Promise<CpuProviderOutcome>;
}

/** The layout-transform slot: materialises views (canonical operands of the dot-general retry). */
export interface CpuLayoutTransformProvider extends ProviderBase {
  /** Copy (and conjugate when asked) the source view of `request` into its destination view: `EXECUTED` or `Unsupported` before writing. */
  materialize(ctx: CpuExecutionContext, request: CpuLayoutRequest): Promise<CpuProviderOutcome>;
}

/** A whole dot-general in one call (optional slot, R104 step 1). */
export interface CpuDotGeneralRequest {
  readonly lhs: TensorDescriptor;
  readonly rhs: TensorDescriptor;
  readonly out: TensorDescriptor;
  readonly contracting: readonly [readonly number[], readonly number[]];
  readonly batch: readonly [readonly number[], readonly number[]];
  readonly conjLhs: boolean;
  readonly conjRhs: boolean;
  readonly alpha: Scalar;
  readonly beta: Scalar;
}

/** The optional general-contraction slot: a whole dot-general in one call, tried before the GEMM path (R104). */
export interface CpuGeneralContractionProvider extends ProviderBase {
  /** Run the whole dot-general of `request` inside `ctx`: `EXECUTED`, or `Unsupported` before writing. */
  dotGeneral(ctx: CpuExecutionContext, request: CpuDotGeneralRequest): Promise<CpuProviderOutcome>;
}

/** The slots of a {@link CpuProviderBundle}, as `capabilities(slot)` and `populatedSlots()` name them. */
export type ProviderSlot = 'gemm' | 'layoutTransform' | 'generalContraction' | 'tensorPrimitives';
