import type { KernelRef } from '../../contract/kernel.js';
import { TenferroError } from '../../errors/tenferro-error.js';

/** A kernel's error as it crosses from a worker to the main isolate (structured-cloneable). */
export interface KernelErrorInfo {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  /** The error's `code` (a native kernel's status name, e.g. `InvalidDescriptor`), if it had one. */
  readonly code: string | undefined;
}

/** Serialise whatever a kernel threw, on the worker side. Never throws. */
export function kernelErrorInfo(e: unknown): KernelErrorInfo {
  const err = e as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown } | null | undefined;
  return {
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : String(e),
    stack: typeof err?.stack === 'string' ? err.stack : undefined,
    code: typeof err?.code === 'string' ? err.code : undefined,
  };
}

/**
 * The `KernelFailed` error the caller sees, on the main side: the kernel's error rebuilt as its
 * `cause` (same name, message, stack and code) and its code in `detail.kernelCode`.
 */
export function kernelFailed(info: KernelErrorInfo, kernel: Pick<KernelRef, 'module' | 'exportName'>, op: string, detail: Readonly<Record<string, unknown>> = {}): TenferroError {
  const cause = Object.assign(new Error(info.message), { name: info.name, stack: info.stack, code: info.code });
  return new TenferroError('KernelFailed', `kernel ${kernel.exportName} of ${kernel.module} failed: ${info.message}`, {
    op,
    cause,
    detail: { ...detail, kernelCode: info.code },
  });
}
