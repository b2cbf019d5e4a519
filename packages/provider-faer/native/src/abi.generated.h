// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_FAER_ABI_H_
#define TENFERRO_ABI_FAER_ABI_H_

namespace faer::abi {

constexpr char kAbiHash[] = "6c6df2a9a9beea92";

enum Status : int {
  kOk = 0,
  kBadArguments = 1,
  kOutOfBounds = 2,
  kIsaUnavailable = 3,
  kBadDtype = 4,
  kBadRange = 5,
  kAborted = 6,
  kNoMemory = 7,
};
constexpr int kStatusCount = 8;

enum Desc : int {
  kDtype = 0,
  kM = 1,
  kN = 2,
  kK = 3,
  kOffA = 4,
  kRsA = 5,
  kCsA = 6,
  kOffB = 7,
  kRsB = 8,
  kCsB = 9,
  kOffC = 10,
  kRsC = 11,
  kCsC = 12,
  kAlphaRe = 13,
  kAlphaIm = 14,
  kBetaRe = 15,
  kBetaIm = 16,
  kConjA = 17,
  kConjB = 18,
  kIsa = 19,
  kM0 = 20,
  kM1 = 21,
  kN0 = 22,
  kN1 = 23,
  kB0 = 24,
  kB1 = 25,
  kRank = 26,
};
constexpr int kDescCount = 27;

enum Dtype : int {
  kF32 = 0,
  kF64 = 1,
  kC64 = 2,
  kC128 = 3,
};
constexpr int kDtypeCount = 4;

enum IsaId : int {
  kPortable = 0,
  kAvx2 = 1,
  kAvx512f = 2,
};
constexpr int kIsaIdCount = 3;

constexpr int kMaxBatchRank = 32;

}  // namespace faer::abi

#endif  // TENFERRO_ABI_FAER_ABI_H_
