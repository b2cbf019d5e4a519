// The ABI of tenferro_faer.node (#40): the one table that src/native/binding.ts (TypeScript) and
// gemm.cc (through the generated abi.generated.h) share. After editing it, regenerate the header
// and the declaration: node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs
// (test/abi.test.ts fails while they are stale; the addon exports the table's hash as abiHash).
export const ABI = {
  namespace: 'faer::abi',
  enums: {
    // gemm()'s status codes.
    Status: ['Ok', 'BadArguments', 'OutOfBounds', 'IsaUnavailable', 'BadDtype', 'BadRange', 'Aborted', 'NoMemory'],
    // The Float64Array descriptor of one GEMM task, then (from DescCount on) the batch and summed axes.
    Desc: ['dtype', 'm', 'n', 'k', 'offA', 'rsA', 'csA', 'offB', 'rsB', 'csB', 'offC', 'rsC', 'csC', 'alphaRe', 'alphaIm', 'betaRe', 'betaIm', 'conjA', 'conjB', 'isa', 'm0', 'm1', 'n0', 'n1', 'b0', 'b1', 'rank'],
    Dtype: ['f32', 'f64', 'c64', 'c128'],
    // ISA path ids (tenferro/isa.h's order; -1 in a descriptor: the process's best path).
    IsaId: ['portable', 'avx2', 'avx512f'],
  },
  constants: {
    // Batch axes (and summed axes) a request may have.
    MaxBatchRank: 32,
  },
};
