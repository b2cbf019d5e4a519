// @tenferro/core/kernel — the worker side of the provider contract: what a kernel module (the code
// engine workers import through a KernelRef) and the native binding it loads need. A lane's first
// task imports its kernel module, and that import is part of the first call's latency: through this
// entry a worker loads a few small modules, through core's index over a hundred (docs/performance.md:
// "A lane's first task imported all of core"). Everything here is also exported by `@tenferro/core`.
export { KERNEL_ARGS_MAX_BUFFERS, KERNEL_ARGS_MAX_WORDS, type KernelArgs, kernelArgs, kernelWords, isKernelArgs } from '../contract/kernel-args.js';
export type { KernelFunction, KernelTaskInfo } from '../contract/kernel.js';
export { ABORT_CLOSED, ABORT_SIGNALLED } from '../contract/execution-context.js';
export { abiCodes, abiHash, defineAddon, loadAddon } from '@tenferro/os';
export type { AddonAdvice, AddonAvailable, AddonFailure, AddonLoad, AddonUnavailable, LoadAddonOptions } from '@tenferro/os';
export type { AddonDescription, AddonIsaInfo, DefineAddonOptions, DefinedAddon, DefinedAddonAvailable, DefinedAddonLoad, DefinedAddonUnavailable } from '@tenferro/os';
