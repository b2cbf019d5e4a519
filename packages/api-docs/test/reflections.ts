// Reading typedoc's JSON output: which public functions and methods there are, whether each has
// an @example, and the code of every @example block (with the symbol it documents).

/** The reflection kinds used here (typedoc's `ReflectionKind`). */
const KIND = {
  Project: 1,
  Module: 2,
  Variable: 32,
  Function: 64,
  Class: 128,
  Interface: 256,
  Constructor: 512,
  Property: 1024,
  Method: 2048,
  Accessor: 262144,
} as const;

interface CommentPart {
  readonly kind: string;
  readonly text: string;
}

interface Comment {
  readonly summary?: readonly CommentPart[];
  readonly blockTags?: readonly { readonly tag: string; readonly content: readonly CommentPart[] }[];
}

/** The subset of typedoc's JSON reflection read here. */
export interface Reflection {
  readonly name: string;
  readonly kind: number;
  readonly comment?: Comment;
  readonly signatures?: readonly Reflection[];
  readonly getSignature?: Reflection;
  readonly setSignature?: Reflection;
  readonly children?: readonly Reflection[];
  readonly type?: { readonly type: string; readonly declaration?: Reflection };
  readonly flags?: { readonly isExternal?: boolean };
  readonly inheritedFrom?: { readonly name: string };
}

/** A public function or method, named `package[/module] Owner.member`. */
export interface Callable {
  readonly id: string;
  /** Where it lives: `function`, `class method` or `interface method`. */
  readonly where: 'function' | 'class method' | 'interface method';
  /** The interface or class that declares it (`undefined` for functions). */
  readonly owner: string | undefined;
  readonly hasExample: boolean;
}

/** One @example code block. */
export interface Example {
  readonly id: string;
  readonly index: number;
  readonly code: string;
}

function commentsOf(r: Reflection): Comment[] {
  const out: Comment[] = [];
  if (r.comment) out.push(r.comment);
  for (const s of r.signatures ?? []) if (s.comment) out.push(s.comment);
  if (r.getSignature?.comment) out.push(r.getSignature.comment);
  if (r.setSignature?.comment) out.push(r.setSignature.comment);
  return out;
}

function exampleBlocks(c: Comment): string[] {
  const blocks: string[] = [];
  for (const tag of c.blockTags ?? []) {
    if (tag.tag !== '@example') continue;
    for (const part of tag.content) {
      if (part.kind !== 'code') continue;
      const m = /^```(\w*)\n([\s\S]*?)\n?```$/.exec(part.text.trim());
      if (m !== null) blocks.push(m[2]!);
    }
  }
  return blocks;
}

/** `@tenferro/core` for a package's only module, `@tenferro/core/testing` for its `testing` module. */
function moduleName(pkg: string, mod: string | undefined): string {
  return mod === undefined || mod === 'index' ? pkg : `${pkg}/${mod}`;
}

/**
 * Every function and method of the documented API (functions, methods of classes and of
 * interfaces, properties and variables whose type is a function) and every @example block.
 */
export function readApi(project: Reflection): { callables: Callable[]; examples: Example[] } {
  const callables: Callable[] = [];
  const examples: Example[] = [];
  const visit = (r: Reflection, module: string, owner: Reflection | undefined): void => {
    // Members inherited from the platform (`Error.captureStackTrace`) are not tenferro's API.
    if (r.flags?.isExternal === true || /^(Error|ErrorConstructor)\./.test(r.inheritedFrom?.name ?? '')) return;
    const id = `${module} ${owner === undefined ? '' : `${owner.name}.`}${r.name}`;
    const blocks = commentsOf(r).flatMap(exampleBlocks);
    blocks.forEach((code, index) => examples.push({ id, index, code }));
    const callableProperty = (r.kind === KIND.Property || r.kind === KIND.Variable) && r.type?.type === 'reflection' && (r.type.declaration?.signatures?.length ?? 0) > 0;
    // Interface properties typed with a (private) function alias: `readonly add: Binary`.
    const aliasProperty = r.kind === KIND.Property && owner?.kind === KIND.Interface && r.type?.type === 'reference' && /^[A-Z]\w*$/.test((r.type as { name?: string }).name ?? '') && blocks.length > 0;
    if (r.kind === KIND.Function || r.kind === KIND.Method || callableProperty || aliasProperty) {
      const where = owner === undefined ? 'function' : owner.kind === KIND.Class ? 'class method' : 'interface method';
      callables.push({ id, where, owner: owner?.name, hasExample: blocks.length > 0 });
    }
    if (r.kind === KIND.Class || r.kind === KIND.Interface) for (const c of r.children ?? []) visit(c, module, r);
  };
  for (const pkg of project.children ?? []) {
    // One entry point: the package's children are its exports; several: one Module per entry point.
    const modules = (pkg.children ?? []).every((c) => c.kind === KIND.Module) && (pkg.children ?? []).length > 0 ? pkg.children! : [{ ...pkg, name: 'index' }];
    for (const mod of modules) for (const r of mod.children ?? []) visit(r, moduleName(pkg.name, mod.name), undefined);
  }
  return { callables, examples };
}
