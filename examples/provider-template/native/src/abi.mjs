// native/src/abi.mjs — the one table the TypeScript and the C++ share: after editing it, run
// `npm run abi` (it writes abi.generated.h and abi.d.mts beside it; commit and pack both).
export const ABI = {
  namespace: 'x::abi',
  enums: {
    // gemm()'s status codes.
    Status: ['Ok', 'BadArguments', 'OutOfBounds'],
    // The Float64Array descriptor of one task: output rows [m0, m1) of an item, n, k, the three
    // operands' offsets and strides (elements), then alpha and beta.
    Desc: ['m0', 'm1', 'n', 'k', 'offA', 'rsA', 'csA', 'offB', 'rsB', 'csB', 'offC', 'rsC', 'csC', 'alpha', 'beta'],
  },
};
