// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "tprims";
  readonly enums: {
    readonly Status: readonly ["Ok", "BadArguments", "OutOfBounds", "IsaUnavailable", "BadDtype", "NoMemory", "Aborted"];
    readonly Kind: readonly ["unary", "binary", "reduce"];
    readonly Dtype: readonly ["f32", "f64", "c64", "c128", "i32", "i64", "bool"];
    readonly Unary: readonly ["copy", "copyConj", "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "conj", "real", "imag", "scale", "cast"];
    readonly Binary: readonly ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "lt", "le", "gt", "ge"];
    readonly Reduce: readonly ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "norm"];
    readonly IsaId: readonly ["portable", "avx2", "avx512f"];
    readonly Desc: readonly ["kind", "op", "din", "dout", "rank", "alphaRe", "alphaIm", "isa", "offOut", "offA", "offB"];
  };
  readonly constants: {
    readonly MaxRank: 32;
  };
};
