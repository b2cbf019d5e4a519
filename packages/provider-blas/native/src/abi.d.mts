// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "blas";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "BadDescriptor", "OutOfBoundsA", "OutOfBoundsB", "OutOfBoundsC", "TooLarge", "BadDType", "BadTranspose", "Misaligned", "NotLoaded"];
    readonly Desc: readonly ["DType", "TransA", "TransB", "M", "N", "K", "Lda", "Ldb", "Ldc", "OffA", "OffB", "OffC", "AlphaRe", "AlphaIm", "BetaRe", "BetaIm", "Threads", "BatchRank"];
  };
  readonly constants: {
    readonly MaxBatchRank: 32;
    readonly TransNo: 111;
    readonly TransT: 112;
    readonly TransConjT: 113;
    readonly TransConjNo: 114;
  };
  readonly prefixed: readonly ["Status", "Desc"];
};
