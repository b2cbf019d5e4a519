// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "x::abi";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "OutOfBounds"];
    readonly Desc: readonly ["m0", "m1", "n", "k", "offA", "rsA", "csA", "offB", "rsB", "csB", "offC", "rsC", "csC", "alpha", "beta"];
  };
};
