// The ABI of tenferro_tprims.node (#40): the one table that src/native/binding.ts (TypeScript) and
// the addon (through the generated abi.generated.h, included by include/tprims.h) share. After
// editing it, regenerate the header and the declaration:
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs
// (test/abi.test.ts fails while they are stale; the addon exports the table's hash as abiHash).
export const ABI = {
  namespace: 'tprims',
  enums: {
    // run()'s status codes.
    Status: ['Ok', 'BadArguments', 'OutOfBounds', 'IsaUnavailable', 'BadDtype', 'NoMemory', 'Aborted'],
    // Task kinds, dtype codes and the op codes of each kind (copy / copyConj serve the layout-transform slot).
    Kind: ['unary', 'binary', 'reduce'],
    Dtype: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool'],
    Unary: ['copy', 'copyConj', 'neg', 'abs', 'exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'conj', 'real', 'imag', 'scale', 'cast'],
    Binary: ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'eq', 'lt', 'le', 'gt', 'ge'],
    Reduce: ['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm'],
    // ISA path ids (tenferro/isa.h's order; -1 in a descriptor: the process's best path).
    IsaId: ['portable', 'avx2', 'avx512f'],
    // The Float64Array descriptor of one task; from DescCount on: rank extents, output strides,
    // strides of a, then strides of b (binary) or reduced-axis flags 0/1 (reduce).
    Desc: ['kind', 'op', 'din', 'dout', 'rank', 'alphaRe', 'alphaIm', 'isa', 'offOut', 'offA', 'offB'],
  },
  constants: {
    // Axes a task may have (longer descriptors are refused: BadArguments).
    MaxRank: 32,
  },
};
