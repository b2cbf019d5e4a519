import { invalidArgument } from '../errors/tenferro-error.js';
import { compiledModuleUrl } from '../util/compiled-url.js';

/**
 * A handle on a kernel function that engine workers run: a module (absolute `file:` URL or a
 * bare specifier resolvable from the worker) and an export name. Workers import the module
 * lazily, the first time they run one of its kernels, and cache it.
 */
export interface KernelRef<P = unknown, R = unknown> {
  readonly id: number;
  /** The module workers import: the compiled JavaScript the definition names (see {@link defineKernel}). */
  readonly module: string;
  readonly exportName: string;
  /** Phantom fields carrying the payload and result types. */
  readonly __payload?: P;
  readonly __result?: R;
}

const registry = new Map<string, KernelRef>();
let lastId = 0;

/**
 * The kernel `exportName` of `module`; the same pair always gives the same ref.
 *
 * Write the module as its compiled path beside the caller, `new URL('../executor/kernels/gemm.js',
 * import.meta.url)`. When the caller itself runs as TypeScript from a package's `src/` (a test
 * runner, `tsx`), that file does not exist there; a worker isolate cannot load TypeScript either,
 * so the ref then names the same path under the package's `dist/`. The file system is looked at
 * once, on the first dispatch of the kernel, never at definition.
 *
 * @example
 * ```ts
 * import { CpuBackend, defineKernel } from '@tenferro/core';
 *
 * // A package names its compiled module: defineKernel(new URL('./kernels.js', import.meta.url), 'double').
 * // A data: URL keeps this example self-contained.
 * const double = defineKernel<number, number>('data:text/javascript,export const double = (x) => 2 * x;', 'double');
 * console.log(double === defineKernel('data:text/javascript,export const double = (x) => 2 * x;', 'double')); // prints: true
 * const backend = await CpuBackend.create({ threads: 1 });
 * console.log(await backend.install((ctx) => ctx.run(double, 21))); // prints: 42
 * await backend.close();
 * ```
 */
export function defineKernel<P = unknown, R = unknown>(module: string | URL, exportName: string): KernelRef<P, R> {
  const op = 'defineKernel';
  const specifier = module instanceof URL ? module.href : module;
  if (typeof specifier !== 'string' || specifier === '') throw invalidArgument(op, 'module', 'a module URL or specifier', module);
  if (typeof exportName !== 'string' || exportName === '') throw invalidArgument(op, 'exportName', 'an export name', exportName);
  const key = `${specifier}#${exportName}`;
  let ref = registry.get(key);
  if (ref === undefined) {
    let resolved: string | undefined;
    ref = Object.freeze({
      id: ++lastId,
      get module(): string {
        resolved ??= compiledModuleUrl(specifier);
        return resolved;
      },
      exportName,
    });
    registry.set(key, ref);
  }
  return ref as KernelRef<P, R>;
}

/** What a kernel function receives besides its payload. */
export interface KernelTaskInfo {
  readonly workerIndex: number;
  readonly tid: number;
}

/** A kernel: exported by a module that workers import lazily. */
export type KernelFunction<P = unknown, R = unknown> = (payload: P, info: KernelTaskInfo) => R | Promise<R>;
