/** An ABI table (`native/src/abi.mjs`'s `ABI`): a C++ namespace, enums (names in code order) and integer constants. */
export interface AbiTable {
  readonly namespace: string;
  readonly enums?: Readonly<Record<string, readonly string[]>>;
  readonly constants?: Readonly<Record<string, number>>;
  /** Enums whose C++ names carry the enum's name (`kStatusOk`). */
  readonly prefixed?: readonly string[];
}
/** The table's hash (16 hex digits), as `abiHash` of `@tenferro/os`. */
export function abiHash(table: AbiTable): string;
/** Throws an Error naming what is wrong with the table's shape. */
export function validateAbi(table: AbiTable): void;
/** The generated C++ header. */
export function abiHeader(table: AbiTable, source?: string): string;
/** The generated TypeScript declaration of the table module. */
export function abiDeclaration(table: AbiTable, source?: string): string;
/** The files a table module generates beside it, with their contents. */
export function abiFiles(tablePath: string): Promise<{ path: string; text: string }[]>;
/** Writes the generated files (or, with `check`, only lists the stale ones); returns the stale paths. */
export function generateAbi(tablePath: string, options?: { check?: boolean }): Promise<string[]>;
