// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "blas";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "BadDescriptor", "OutOfBoundsA", "OutOfBoundsB", "OutOfBoundsC", "TooLarge", "BadDType", "BadTranspose", "Misaligned", "NotLoaded"];
    readonly Desc: readonly ["DType", "TransA", "TransB", "M", "N", "K", "Lda", "Ldb", "Ldc", "OffA", "OffB", "OffC", "AlphaRe", "AlphaIm", "BetaRe", "BetaIm", "Threads", "BatchRank"];
    readonly LapackOp: readonly ["cholesky", "solveTriangular", "luFactor", "lu", "solve", "qr", "svd", "eigh", "eig", "luFullPivot"];
    readonly LapackWord: readonly ["op", "dtype", "m", "n", "flags", "threads", "nb", "offA", "rsA", "csA", "offB", "rsB", "csB", "offInfo", "zero14", "zero15", "out0Offset", "out0Rows", "out0Cols", "out1Offset", "out1Rows", "out1Cols", "out2Offset", "out2Rows", "out2Cols"];
  };
  readonly constants: {
    readonly MaxBatchRank: 32;
    readonly TransNo: 111;
    readonly TransT: 112;
    readonly TransConjT: 113;
    readonly TransConjNo: 114;
    readonly LapackMaxAxes: 16;
    readonly FlagUpper: 1;
    readonly FlagLeft: 2;
    readonly FlagUnit: 4;
    readonly FlagFull: 8;
    readonly FlagVectors: 16;
    readonly FlagROnly: 32;
  };
  readonly prefixed: readonly ["Status", "Desc", "LapackOp", "LapackWord"];
};
