// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_BLAS_H_
#define TENFERRO_ABI_BLAS_H_

namespace blas {

constexpr char kAbiHash[] = "80948f14ecd492c8";

enum Status : int {
  kStatusOk = 0,
  kStatusBadArguments = 1,
  kStatusBadDescriptor = 2,
  kStatusOutOfBoundsA = 3,
  kStatusOutOfBoundsB = 4,
  kStatusOutOfBoundsC = 5,
  kStatusTooLarge = 6,
  kStatusBadDType = 7,
  kStatusBadTranspose = 8,
  kStatusMisaligned = 9,
  kStatusNotLoaded = 10,
};
constexpr int kStatusCount = 11;

enum Desc : int {
  kDescDType = 0,
  kDescTransA = 1,
  kDescTransB = 2,
  kDescM = 3,
  kDescN = 4,
  kDescK = 5,
  kDescLda = 6,
  kDescLdb = 7,
  kDescLdc = 8,
  kDescOffA = 9,
  kDescOffB = 10,
  kDescOffC = 11,
  kDescAlphaRe = 12,
  kDescAlphaIm = 13,
  kDescBetaRe = 14,
  kDescBetaIm = 15,
  kDescThreads = 16,
  kDescBatchRank = 17,
};
constexpr int kDescCount = 18;

constexpr int kMaxBatchRank = 32;
constexpr int kTransNo = 111;
constexpr int kTransT = 112;
constexpr int kTransConjT = 113;
constexpr int kTransConjNo = 114;

}  // namespace blas

#endif  // TENFERRO_ABI_BLAS_H_
