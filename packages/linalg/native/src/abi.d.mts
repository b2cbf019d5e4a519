// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "tfl";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "OutOfBounds", "BadDtype", "BadRange", "Aborted", "BadOp"];
    readonly Op: readonly ["cholesky", "solveTriangular", "luFactor", "lu", "solve", "qr", "svd", "eigh", "eig", "luFullPivot"];
    readonly Dtype: readonly ["f32", "f64", "c64", "c128"];
    readonly Word: readonly ["op", "dtype", "m", "n", "k", "flags", "b0", "b1", "nb", "abortAt", "offA", "rsA", "csA", "offB", "rsB", "csB", "offOut0", "offOut1", "offOut2", "offInfo"];
  };
  readonly constants: {
    readonly MaxBatchAxes: 16;
    readonly FlagUpper: 1;
    readonly FlagLeft: 2;
    readonly FlagUnit: 4;
    readonly FlagFull: 8;
    readonly FlagVectors: 16;
    readonly FlagROnly: 32;
    readonly StepLuFactor: 10;
    readonly StepCholesky: 11;
  };
  readonly prefixed: readonly ["Word"];
};
