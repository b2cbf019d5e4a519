import type { CpuBackendKind } from '../contract/backend-kind.js';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { ExtensionKey } from '../extension/extension-key.js';
import type { CpuGemmProvider, CpuGeneralContractionProvider, CpuLayoutTransformProvider, ProviderSlot } from './cpu-providers.js';
import { type CpuProviderExecutionCapabilities, snapshotCapabilities } from './execution-capabilities.js';
import { referenceGemmProvider, referenceLayoutProvider } from './reference/reference-providers.js';
import { referenceTensorPrimitivesProvider } from './reference/reference-tensor-primitives.js';
import type { CpuTensorPrimitivesProvider } from './tensor-primitives.js';

/** Who schedules grouped GEMMs: the provider in one call, or the engine over outer lanes (R51, R110). */
export type GroupedGemmScheduling = 'providerOwned' | 'engineOuter';
/** `strict` validates thread and mode control; `providerDefaultCompatibility` is the built-in BLAS bundle's (R54). */
export type CapabilityPolicy = 'strict' | 'providerDefaultCompatibility';
/** How a general-contraction provider is used: `preferred` falls back to the GEMM path when it declines; `required` makes its decline an error. */
export type GeneralContractionPolicy = 'preferred' | 'required';

interface BundleParts {
  readonly kind: CpuBackendKind | undefined;
  readonly gemm: CpuGemmProvider;
  readonly layoutTransform: CpuLayoutTransformProvider;
  readonly generalContraction: CpuGeneralContractionProvider | undefined;
  readonly tensorPrimitives: CpuTensorPrimitivesProvider;
  readonly generalPolicy: GeneralContractionPolicy;
  readonly groupedScheduling: GroupedGemmScheduling;
  readonly capabilityPolicy: CapabilityPolicy;
  readonly extensions: ReadonlyMap<ExtensionKey<unknown>, unknown>;
}

const CONSTRUCT = Symbol('CpuProviderBundle');

/**
 * An immutable set of provider slots — GEMM and layout transform (mandatory), tensor primitives
 * (always set: core's reference provider by default), an optional general-contraction provider,
 * scheduling and capability policy — plus typed extensions.
 * Each populated slot's execution capabilities are sampled exactly once, at `build()` (R52).
 */
export class CpuProviderBundle {
  readonly kind: CpuBackendKind | undefined;
  readonly gemm: CpuGemmProvider;
  readonly layoutTransform: CpuLayoutTransformProvider;
  readonly generalContraction: CpuGeneralContractionProvider | undefined;
  /** Element-wise and reduction kernels (`referenceTensorPrimitivesProvider` unless replaced). */
  readonly tensorPrimitives: CpuTensorPrimitivesProvider;
  readonly generalPolicy: GeneralContractionPolicy;
  readonly groupedScheduling: GroupedGemmScheduling;
  readonly capabilityPolicy: CapabilityPolicy;
  /** Whether fresh outputs may skip zeroing (R108): the GEMM provider declares `overwritesOutput` and no general-contraction provider is installed. Sampled at build. */
  readonly freshOutputsNeedNoZeroing: boolean;
  /** Whether the providers that write outputs all declare they decline before writing (no output guard needed). */
  readonly declinesBeforeWriting: boolean;
  /** Whether the GEMM provider declares `summedAxes` (dot-general's summed plan may be sent to it), sampled at build. */
  readonly gemmSummedAxes: boolean;
  /** The GEMM provider's declared runtime family (R47), sampled at build. */
  readonly gemmFamily: 'blas' | undefined;
  /** Whether the tensor-primitives provider declares it declines before writing (else core guards outputs around its declines). Sampled at build. */
  readonly tensorPrimitivesDeclinesBeforeWriting: boolean;
  readonly #extensions: ReadonlyMap<ExtensionKey<unknown>, unknown>;
  readonly #capabilities: ReadonlyMap<ProviderSlot, CpuProviderExecutionCapabilities>;

  /** @internal use {@link CpuProviderBundle.builder}. */
  constructor(token: typeof CONSTRUCT, parts: BundleParts) {
    if (token !== CONSTRUCT) throw new TypeError('CpuProviderBundle: use CpuProviderBundle.builder()');
    this.kind = parts.kind;
    this.gemm = parts.gemm;
    this.layoutTransform = parts.layoutTransform;
    this.generalContraction = parts.generalContraction;
    this.tensorPrimitives = parts.tensorPrimitives;
    this.generalPolicy = parts.generalPolicy;
    this.groupedScheduling = parts.groupedScheduling;
    this.capabilityPolicy = parts.capabilityPolicy;
    this.#extensions = parts.extensions;
    const caps = new Map<ProviderSlot, CpuProviderExecutionCapabilities>();
    caps.set('gemm', snapshotCapabilities(parts.gemm, 'gemm'));
    caps.set('layoutTransform', snapshotCapabilities(parts.layoutTransform, 'layoutTransform'));
    if (parts.generalContraction !== undefined) caps.set('generalContraction', snapshotCapabilities(parts.generalContraction, 'generalContraction'));
    caps.set('tensorPrimitives', snapshotCapabilities(parts.tensorPrimitives, 'tensorPrimitives'));
    this.#capabilities = caps;
    this.freshOutputsNeedNoZeroing = parts.generalContraction === undefined && declared(parts.gemm, 'overwritesOutput');
    this.declinesBeforeWriting = parts.generalContraction === undefined && declared(parts.gemm, 'declinesBeforeWriting');
    this.gemmFamily = declaredFamily(parts.gemm);
    this.gemmSummedAxes = declared(parts.gemm, 'summedAxes');
    this.tensorPrimitivesDeclinesBeforeWriting = declared(parts.tensorPrimitives, 'declinesBeforeWriting');
    Object.freeze(this);
  }

  /**
   * GEMM and layout built in for `kind` (faer: core's reference providers until a provider package
   * replaces them), `strict` policy, grouped scheduling `engineOuter` for faer and `providerOwned`
   * for blas (R50).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').build();
   * console.log(bundle.gemm.name, bundle.groupedScheduling); // prints: reference GEMM (TypeScript, sequential) engineOuter
   * ```
   */
  static builder(kind: CpuBackendKind): CpuProviderBundleBuilder {
    if (kind !== 'faer' && kind !== 'blas') throw invalidArgument('CpuProviderBundle.builder', 'kind', "'faer' or 'blas'", kind);
    return new CpuProviderBundleBuilder(kind);
  }

  /**
   * Every slot empty, `providerOwned` grouped scheduling (R50): `build()` needs at least a GEMM
   * and a layout-transform provider.
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceGemmProvider, referenceLayoutProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.customBuilder().gemmProvider(referenceGemmProvider).layoutTransformProvider(referenceLayoutProvider).build();
   * console.log(bundle.kind, bundle.groupedScheduling); // prints: undefined providerOwned
   * ```
   */
  static customBuilder(): CpuProviderBundleBuilder {
    return new CpuProviderBundleBuilder(undefined);
  }

  /**
   * The capabilities sampled at build for `slot`; `undefined` when the slot is empty.
   *
   * @example
   * ```ts
   * import { CpuProviderBundle } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').build();
   * console.log(bundle.capabilities('gemm')?.threadCount, bundle.capabilities('generalContraction')); // prints: sequential undefined
   * ```
   */
  capabilities(slot: ProviderSlot): CpuProviderExecutionCapabilities | undefined {
    return this.#capabilities.get(slot);
  }

  /**
   * Every populated slot with the capabilities sampled for it at build.
   *
   * @example
   * ```ts
   * import { CpuProviderBundle } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').build();
   * console.log(bundle.populatedSlots().map(([slot]) => slot)); // prints: [ 'gemm', 'layoutTransform', 'tensorPrimitives' ]
   * ```
   */
  populatedSlots(): [ProviderSlot, CpuProviderExecutionCapabilities][] {
    return [...this.#capabilities.entries()];
  }

  /**
   * The extension stored under `key`, or `undefined` (never validated by core, R53).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, defineExtensionKey } from '@tenferro/core';
   *
   * const answerKey = defineExtensionKey<number>('example.answer');
   * const bundle = CpuProviderBundle.builder('faer').extension(answerKey, 42).build();
   * console.log(bundle.extension(answerKey)); // prints: 42
   * ```
   */
  extension<T>(key: ExtensionKey<T>): T | undefined {
    return this.#extensions.get(key as ExtensionKey<unknown>) as T | undefined;
  }

  /**
   * How many extensions the bundle stores.
   *
   * @example
   * ```ts
   * import { CpuProviderBundle } from '@tenferro/core';
   *
   * console.log(CpuProviderBundle.builder('faer').build().extensionCount); // prints: 0
   * ```
   */
  get extensionCount(): number {
    return this.#extensions.size;
  }

  /**
   * A builder pre-filled with this bundle's slots and extensions.
   *
   * @example
   * ```ts
   * import { CpuProviderBundle } from '@tenferro/core';
   *
   * const strict = CpuProviderBundle.builder('faer').build();
   * const relaxed = strict.toBuilder().capabilityPolicy('providerDefaultCompatibility').build();
   * console.log(strict.capabilityPolicy, relaxed.capabilityPolicy); // prints: strict providerDefaultCompatibility
   * ```
   */
  toBuilder(): CpuProviderBundleBuilder {
    const b = new CpuProviderBundleBuilder(this.kind);
    b.gemmProvider(this.gemm).layoutTransformProvider(this.layoutTransform).tensorPrimitivesProvider(this.tensorPrimitives).capabilityPolicy(this.capabilityPolicy);
    if (this.groupedScheduling === 'engineOuter') b.engineOuterGroupedGemm();
    if (this.generalContraction !== undefined) {
      if (this.generalPolicy === 'required') b.requireGeneralContractionProvider(this.generalContraction);
      else b.preferGeneralContractionProvider(this.generalContraction);
    }
    for (const [key, value] of this.#extensions) b.extension(key, value);
    return b;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CpuProviderBundle(gemm ${this.gemm.name}, layout ${this.layoutTransform.name}, primitives ${this.tensorPrimitives.name}${this.generalContraction ? `, general ${this.generalContraction.name}` : ''}, ${this.#extensions.size} extension(s))`;
  }
}

/**
 * Builds a {@link CpuProviderBundle}: from {@link CpuProviderBundle.builder},
 * {@link CpuProviderBundle.customBuilder} or `bundle.toBuilder()`. Every setter validates its
 * argument's shape and returns the builder.
 *
 * @example
 * ```ts
 * import { CpuProviderBundle, referenceLayoutProvider } from '@tenferro/core';
 *
 * const bundle = CpuProviderBundle.builder('faer').layoutTransformProvider(referenceLayoutProvider).build();
 * console.log(bundle.layoutTransform.name); // prints: reference layout transform (TypeScript, sequential)
 * ```
 */
export class CpuProviderBundleBuilder {
  readonly #kind: CpuBackendKind | undefined;
  #gemm: CpuGemmProvider | undefined;
  #layout: CpuLayoutTransformProvider | undefined;
  #general: CpuGeneralContractionProvider | undefined;
  #primitives: CpuTensorPrimitivesProvider = referenceTensorPrimitivesProvider;
  #generalPolicy: GeneralContractionPolicy = 'preferred';
  #grouped: GroupedGemmScheduling;
  #policy: CapabilityPolicy = 'strict';
  readonly #extensions = new Map<ExtensionKey<unknown>, unknown>();

  /** @internal */
  constructor(kind: CpuBackendKind | undefined) {
    this.#kind = kind;
    this.#grouped = kind === 'faer' ? 'engineOuter' : 'providerOwned';
    if (kind === 'faer') this.#gemm = referenceGemmProvider;
    if (kind !== undefined) this.#layout = referenceLayoutProvider;
  }

  /**
   * Set the GEMM provider; resets grouped scheduling to `providerOwned` (R51).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceGemmProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').gemmProvider(referenceGemmProvider).build();
   * console.log(bundle.groupedScheduling); // prints: providerOwned
   * ```
   */
  gemmProvider(provider: CpuGemmProvider): this {
    assertProvider(provider, 'gemm', 'gemm');
    if ((provider as { groupedGemm?: unknown }).groupedGemm !== undefined && typeof provider.groupedGemm !== 'function') {
      throw invalidArgument('CpuProviderBundleBuilder.gemmProvider', 'provider.groupedGemm', 'a function or undefined', provider.groupedGemm);
    }
    this.#gemm = provider;
    this.#grouped = 'providerOwned';
    return this;
  }

  /**
   * Set the layout-transform provider (it materialises operands for the dot-general retry and
   * runs `contiguous`/`copyInto`).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceGemmProvider, referenceLayoutProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.customBuilder().gemmProvider(referenceGemmProvider).layoutTransformProvider(referenceLayoutProvider).build();
   * console.log(bundle.layoutTransform === referenceLayoutProvider); // prints: true
   * ```
   */
  layoutTransformProvider(provider: CpuLayoutTransformProvider): this {
    assertProvider(provider, 'layoutTransform', 'materialize');
    this.#layout = provider;
    return this;
  }

  /**
   * Set the tensor-primitives provider (element-wise and reductions; core's reference one by
   * default).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceTensorPrimitivesProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').tensorPrimitivesProvider(referenceTensorPrimitivesProvider).build();
   * console.log(bundle.tensorPrimitives === referenceTensorPrimitivesProvider); // prints: true
   * ```
   */
  tensorPrimitivesProvider(provider: CpuTensorPrimitivesProvider): this {
    assertProvider(provider, 'tensorPrimitives', 'binary');
    for (const method of ['unary', 'reduce']) {
      if (typeof (provider as unknown as Record<string, unknown>)[method] !== 'function') {
        throw invalidArgument('CpuProviderBundleBuilder.tensorPrimitivesProvider', 'provider', 'a tensorPrimitives provider with binary(), unary(), reduce() and executionCapabilities()', provider);
      }
    }
    this.#primitives = provider;
    return this;
  }

  /**
   * Opt in to engine-scheduled grouped GEMM (the provider must tolerate concurrent calls and
   * honour Sequential).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceGemmProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('faer').gemmProvider(referenceGemmProvider).engineOuterGroupedGemm().build();
   * console.log(bundle.groupedScheduling); // prints: engineOuter
   * ```
   */
  engineOuterGroupedGemm(): this {
    this.#grouped = 'engineOuter';
    return this;
  }

  /**
   * Install a general-contraction provider tried first for every dot-general; when it declines,
   * the GEMM path runs (policy `preferred`).
   *
   * @example
   * ```ts
   * import { type CpuGeneralContractionProvider, CpuProviderBundle, Unsupported, referenceGemmProvider } from '@tenferro/core';
   *
   * // A general-contraction provider that declines everything (core then runs the GEMM path).
   * const decliner: CpuGeneralContractionProvider = {
   *   name: 'decliner',
   *   executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
   *   dotGeneral: async () => Unsupported.of({ kind: 'rank' }),
   * };
   * const bundle = CpuProviderBundle.builder('faer').preferGeneralContractionProvider(decliner).build();
   * console.log(bundle.generalPolicy); // prints: preferred
   * ```
   */
  preferGeneralContractionProvider(provider: CpuGeneralContractionProvider): this {
    assertProvider(provider, 'generalContraction', 'dotGeneral');
    this.#general = provider;
    this.#generalPolicy = 'preferred';
    return this;
  }

  /**
   * Install a general-contraction provider that must run every dot-general: its decline is an
   * error instead of a fallback to the GEMM path (policy `required`).
   *
   * @example
   * ```ts
   * import { type CpuGeneralContractionProvider, CpuProviderBundle, Unsupported, referenceGemmProvider } from '@tenferro/core';
   *
   * // A general-contraction provider that declines everything (core then runs the GEMM path).
   * const decliner: CpuGeneralContractionProvider = {
   *   name: 'decliner',
   *   executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
   *   dotGeneral: async () => Unsupported.of({ kind: 'rank' }),
   * };
   * const bundle = CpuProviderBundle.builder('faer').requireGeneralContractionProvider(decliner).build();
   * console.log(bundle.generalPolicy); // prints: required
   * ```
   */
  requireGeneralContractionProvider(provider: CpuGeneralContractionProvider): this {
    assertProvider(provider, 'generalContraction', 'dotGeneral');
    this.#general = provider;
    this.#generalPolicy = 'required';
    return this;
  }

  /**
   * `strict` (default) validates every provider's thread and mode control against each domain;
   * `providerDefaultCompatibility` is the built-in BLAS bundle's relaxed policy (R54).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, referenceGemmProvider } from '@tenferro/core';
   *
   * const bundle = CpuProviderBundle.builder('blas').capabilityPolicy('providerDefaultCompatibility').gemmProvider(referenceGemmProvider).build();
   * console.log(bundle.capabilityPolicy); // prints: providerDefaultCompatibility
   * ```
   */
  capabilityPolicy(policy: CapabilityPolicy): this {
    if (policy !== 'strict' && policy !== 'providerDefaultCompatibility') {
      throw invalidArgument('CpuProviderBundleBuilder.capabilityPolicy', 'policy', "'strict' or 'providerDefaultCompatibility'", policy);
    }
    this.#policy = policy;
    return this;
  }

  /**
   * Store `value` under `key`; the last insert of a key wins (R53).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, defineExtensionKey } from '@tenferro/core';
   *
   * const key = defineExtensionKey<string>('example.note');
   * const bundle = CpuProviderBundle.builder('faer').extension(key, 'first').extension(key, 'second').build();
   * console.log(bundle.extension(key)); // prints: second
   * ```
   */
  extension<T>(key: ExtensionKey<T>, value: T): this {
    if (typeof key !== 'object' || key === null || typeof key.name !== 'string') {
      throw invalidArgument('CpuProviderBundleBuilder.extension', 'key', 'an ExtensionKey from defineExtensionKey()', key);
    }
    this.#extensions.set(key as ExtensionKey<unknown>, value);
    return this;
  }

  /**
   * The immutable bundle; every populated slot's capabilities are sampled here, once (R52).
   * Errors: `BundleIncomplete` when GEMM or layout transform is missing (R50).
   *
   * @example
   * ```ts
   * import { CpuProviderBundle, TenferroError } from '@tenferro/core';
   *
   * try {
   *   CpuProviderBundle.customBuilder().build();
   * } catch (e) {
   *   if (TenferroError.is(e)) console.log(e.code); // prints: BundleIncomplete
   * }
   * ```
   */
  build(): CpuProviderBundle {
    if (this.#gemm === undefined || this.#layout === undefined) {
      throw new TenferroError('BundleIncomplete', `a provider bundle needs a GEMM and a layout-transform provider (missing: ${[this.#gemm ? '' : 'gemm', this.#layout ? '' : 'layoutTransform'].filter(Boolean).join(', ')})`, {
        op: 'CpuProviderBundleBuilder.build',
        detail: { gemm: this.#gemm !== undefined, layout: this.#layout !== undefined },
      });
    }
    return new CpuProviderBundle(CONSTRUCT, {
      kind: this.#kind,
      gemm: this.#gemm,
      layoutTransform: this.#layout,
      generalContraction: this.#general,
      tensorPrimitives: this.#primitives,
      generalPolicy: this.#generalPolicy,
      groupedScheduling: this.#grouped,
      capabilityPolicy: this.#policy,
      extensions: new Map(this.#extensions),
    });
  }
}

function assertProvider(provider: unknown, slot: string, method: string): void {
  const p = provider as Record<string, unknown> | null;
  if (typeof p !== 'object' || p === null || typeof p[method] !== 'function' || typeof p.executionCapabilities !== 'function') {
    throw invalidArgument(`CpuProviderBundleBuilder.${slot}Provider`, 'provider', `a ${slot} provider with ${method}() and executionCapabilities()`, provider);
  }
}

/** Whether a GEMM provider declares `flag` (R108's full overwrite, declining before writing); a throwing or malformed declaration counts as no. */
function declared(provider: CpuGemmProvider | CpuTensorPrimitivesProvider, flag: 'overwritesOutput' | 'declinesBeforeWriting' | 'summedAxes'): boolean {
  try {
    return provider.declaredSupport?.()[flag] === true;
  } catch {
    return false;
  }
}

/** The runtime family a GEMM provider declares (R47); a throwing declaration counts as none. */
function declaredFamily(provider: CpuGemmProvider): 'blas' | undefined {
  try {
    return provider.declaredSupport?.().family === 'blas' ? 'blas' : undefined;
  } catch {
    return undefined;
  }
}
