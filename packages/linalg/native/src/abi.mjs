// The ABI of tenferro_linalg.node (#40): the one table that src/native/binding.ts (TypeScript) and
// the addon (through the generated abi.generated.h, included by linalg.h) share. After editing
// it, regenerate the header and the declaration:
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs
// (test/abi.test.ts fails while they are stale; the addon exports the table's hash as abiHash).
export const ABI = {
  namespace: 'tfl',
  enums: {
    // run()'s status codes.
    Status: ['Ok', 'BadArguments', 'OutOfBounds', 'BadDtype', 'BadRange', 'Aborted', 'BadOp'],
    // Op codes (word op) and dtype codes (word dtype).
    Op: ['cholesky', 'solveTriangular', 'luFactor', 'lu', 'solve', 'qr', 'svd', 'eigh', 'eig', 'luFullPivot'],
    Dtype: ['f32', 'f64', 'c64', 'c128'],
    // The task words (C++: kWordOp ...): offOut0..2, each output's offset in elements of its type
    // (-1: none; outputs are dense and batch-contiguous from there: #35); offInfo, the info words'
    // offset in int32; from WordCount on: the batch extents, A's and B's batch strides.
    Word: ['op', 'dtype', 'm', 'n', 'k', 'flags', 'b0', 'b1', 'nb', 'abortAt', 'offA', 'rsA', 'csA', 'offB', 'rsB', 'csB', 'offOut0', 'offOut1', 'offOut2', 'offInfo'],
  },
  prefixed: ['Word'],
  constants: {
    MaxBatchAxes: 16,
    // Flags (word flags): cholesky: return U = L^H, trsm: A upper, eigh: read the upper triangle;
    // trsm: A X = B (else X A = B); trsm: unit diagonal; svd: full U/V, qr: complete; svd: compute
    // U/Vh, eigh/eig: eigenvectors; qr: R only.
    FlagUpper: 1,
    FlagLeft: 2,
    FlagUnit: 4,
    FlagFull: 8,
    FlagVectors: 16,
    FlagROnly: 32,
    // The team tasks of a blocked factorisation (linalg.h): op codes.
    StepLuFactor: 10,
    StepCholesky: 11,
  },
};
