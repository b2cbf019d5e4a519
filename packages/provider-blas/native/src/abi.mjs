// The ABI of tenferro_blas.node's gemm (#40): the one table that src/native/binding.ts (TypeScript)
// and the addon (through the generated abi.generated.h) share. After editing it, regenerate the
// header and the declaration:
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs
// (test/abi.test.ts fails while they are stale; the addon exports the table's hash as abiHash).
export const ABI = {
  namespace: 'blas',
  enums: {
    // Status codes of gemm and setThreads (C++: kStatusOk ...).
    Status: ['Ok', 'BadArguments', 'BadDescriptor', 'OutOfBoundsA', 'OutOfBoundsB', 'OutOfBoundsC', 'TooLarge', 'BadDType', 'BadTranspose', 'Misaligned', 'NotLoaded'],
    // The Float64Array gemm descriptor (C++: kDescDType ...); from DescCount on: rank extents, then
    // the batch strides of A, of B and of C (rank each). DType: 0 s, 1 d, 2 c, 3 z; Threads 0: leave
    // the runtime's thread count alone.
    Desc: ['DType', 'TransA', 'TransB', 'M', 'N', 'K', 'Lda', 'Ldb', 'Ldc', 'OffA', 'OffB', 'OffC', 'AlphaRe', 'AlphaIm', 'BetaRe', 'BetaIm', 'Threads', 'BatchRank'],
    // lapack(): @tenferro/linalg's op codes, and the words of a request (C++: kLapackWordOp ...):
    // offInfo, info's offset (int32); zero14, zero15 stay 0; output o's offset (elements of its
    // type; -1: none), rows, cols; from LapackWordCount on: the batch extents, A's and B's batch strides.
    LapackOp: ['cholesky', 'solveTriangular', 'luFactor', 'lu', 'solve', 'qr', 'svd', 'eigh', 'eig', 'luFullPivot'],
    LapackWord: ['op', 'dtype', 'm', 'n', 'flags', 'threads', 'nb', 'offA', 'rsA', 'csA', 'offB', 'rsB', 'csB', 'offInfo', 'zero14', 'zero15',
      'out0Offset', 'out0Rows', 'out0Cols', 'out1Offset', 'out1Rows', 'out1Cols', 'out2Offset', 'out2Rows', 'out2Cols'],
  },
  prefixed: ['Status', 'Desc', 'LapackOp', 'LapackWord'],
  constants: {
    // Batch axes a gemm descriptor may have.
    MaxBatchRank: 32,
    // CBLAS transpose codes (ConjNo is OpenBLAS's extension).
    TransNo: 111,
    TransT: 112,
    TransConjT: 113,
    TransConjNo: 114,
    // lapack(): batch axes, and the flags word (8, full: read from the output descriptors).
    LapackMaxAxes: 16,
    FlagUpper: 1,
    FlagLeft: 2,
    FlagUnit: 4,
    FlagFull: 8,
    FlagVectors: 16,
    FlagROnly: 32,
  },
};
