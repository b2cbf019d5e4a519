/** Register the ABI-table suite (see abi-suite.mjs) for the package whose `native/` folder is `nativeDir`. */
export function describeAbiTable<T>(options: {
  readonly nativeDir: URL;
  readonly abi: T;
  readonly load: () => { readonly available: boolean; readonly reasons?: readonly string[]; readonly binding?: { readonly abiHash?: unknown } };
  readonly abiHash: (table: T) => string;
  readonly generator: { readonly generateAbi: (table: string, options: { check: boolean }) => Promise<unknown>; readonly abiHash: (table: T) => string };
}): void;
