import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { CpuGemmProvider } from '../provider/cpu-providers.js';
import type { CpuGemmRequest } from '../provider/gemm-request.js';
import { watchedContext } from './watched-context.js';

/** What {@link forgingGemmProvider} observed since the last `forge()`. */
export interface ForgedCallObservation {
  /** What the wrapped provider threw, if it threw. */
  readonly error: unknown;
  /** Whether it started a kernel task (`ctx.run` or the worker pool). */
  readonly ranKernel: boolean;
}

/** What {@link forgingGemmProvider} returns: the wrapping provider, the way to forge requests, and what the last call did. */
export interface ForgingGemmProvider {
  /** Put this in a bundle in place of the wrapped provider; it declares exactly what the wrapped one does. */
  readonly provider: CpuGemmProvider;
  /**
   * From now on hand the wrapped provider `f(request)` instead of the request core built (and reset `seen`).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, referenceGemmProvider } from '@tenferro/core';
   * import { forgingGemmProvider } from '@tenferro/core/testing';
   *
   * const forging = forgingGemmProvider(referenceGemmProvider);
   * const base = await CpuBackend.create({ threads: 1 });
   * const backend = base.withProviderBundle(base.providerBundle().toBuilder().gemmProvider(forging.provider).build());
   * forging.forge((r) => ({ ...r, alpha: 2 })); // every request from now on doubles the product
   * const a = Tensor.fromArray('f64', [1, 1], [3]);
   * console.log((await backend.matmul(a, a)).toArray(), forging.seen.error); // prints: [ 18 ] undefined
   * await base.close();
   * ```
   */
  forge(f: (request: CpuGemmRequest) => CpuGemmRequest): void;
  /** What the wrapped provider did with the last forged request: threw (what), started a kernel task. */
  readonly seen: ForgedCallObservation;
}

/**
 * A GEMM provider that hands `gemm` requests core would never build — the inputs of a crash
 * report, a forged stride — through a real entered context, recording whether it threw and
 * whether it started any kernel task. A provider must refuse a malformed request with a typed
 * error (`validateGemmRequest`) before any kernel task; this is how its tests show it.
 *
 * @example
 * ```ts
 * import { CpuBackend, type CpuGemmProvider, Tensor, TenferroError, referenceGemmProvider, validateGemmRequest } from '@tenferro/core';
 * import { forgingGemmProvider } from '@tenferro/core/testing';
 *
 * // The provider under test guards its entry with validateGemmRequest.
 * const guarded: CpuGemmProvider = {
 *   name: 'guarded reference',
 *   executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
 *   gemm: (ctx, request) => (validateGemmRequest('guarded.gemm', request), referenceGemmProvider.gemm(ctx, request)),
 * };
 * const forging = forgingGemmProvider(guarded);
 * const base = await CpuBackend.create({ threads: 1 });
 * const backend = base.withProviderBundle(base.providerBundle().toBuilder().gemmProvider(forging.provider).build());
 * forging.forge((r) => ({ ...r, out: { ...r.out, offset: 1e6 } })); // an output far past its buffer
 * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
 * await backend.matmul(a, a).catch(() => {});
 * console.log(TenferroError.is(forging.seen.error, 'ViewOutOfBounds'), forging.seen.ranKernel); // prints: true false
 * await base.close();
 * ```
 */
export function forgingGemmProvider(gemm: CpuGemmProvider): ForgingGemmProvider {
  let forge: (request: CpuGemmRequest) => CpuGemmRequest = (r) => r;
  let seen = { error: undefined as unknown, ranKernel: false };
  const started = () => {
    seen.ranKernel = true;
  };
  const provider: CpuGemmProvider = Object.freeze({
    name: `forging wrapper of ${gemm.name}`,
    executionCapabilities: () => gemm.executionCapabilities(),
    ...(gemm.declaredSupport === undefined ? {} : { declaredSupport: () => gemm.declaredSupport!() }),
    async gemm(ctx: CpuExecutionContext, request: CpuGemmRequest) {
      try {
        return await gemm.gemm(watchedContext(ctx, started), forge(request));
      } catch (error) {
        seen.error = error;
        throw error;
      }
    },
  });
  return {
    provider,
    forge(f) {
      forge = f;
      seen = { error: undefined, ranKernel: false };
    },
    get seen() {
      return seen;
    },
  };
}
