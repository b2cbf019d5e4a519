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
  /** From now on hand the wrapped provider `f(request)` instead of the request core built (and reset `seen`). */
  forge(f: (request: CpuGemmRequest) => CpuGemmRequest): void;
  /** What the wrapped provider did with the last forged request: threw (what), started a kernel task. */
  readonly seen: ForgedCallObservation;
}

/**
 * A GEMM provider that hands `gemm` requests core would never build — the inputs of a crash
 * report, a forged stride — through a real entered context, recording whether it threw and
 * whether it started any kernel task. A provider must refuse a malformed request with a typed
 * error (`validateGemmRequest`) before any kernel task; this is how its tests show it.
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
