// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "faer::abi";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "OutOfBounds", "IsaUnavailable", "BadDtype", "BadRange", "Aborted", "NoMemory"];
    readonly Desc: readonly ["dtype", "m", "n", "k", "offA", "rsA", "csA", "offB", "rsB", "csB", "offC", "rsC", "csC", "alphaRe", "alphaIm", "betaRe", "betaIm", "conjA", "conjB", "isa", "m0", "m1", "n0", "n1", "b0", "b1", "rank"];
    readonly Dtype: readonly ["f32", "f64", "c64", "c128"];
    readonly IsaId: readonly ["portable", "avx2", "avx512f"];
  };
  readonly constants: {
    readonly MaxBatchRank: 32;
  };
};
