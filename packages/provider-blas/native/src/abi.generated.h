// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_BLAS_H_
#define TENFERRO_ABI_BLAS_H_

namespace blas {

constexpr char kAbiHash[] = "f57304345ca24adc";

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

enum LapackOp : int {
  kLapackOpCholesky = 0,
  kLapackOpSolveTriangular = 1,
  kLapackOpLuFactor = 2,
  kLapackOpLu = 3,
  kLapackOpSolve = 4,
  kLapackOpQr = 5,
  kLapackOpSvd = 6,
  kLapackOpEigh = 7,
  kLapackOpEig = 8,
  kLapackOpLuFullPivot = 9,
};
constexpr int kLapackOpCount = 10;

enum LapackWord : int {
  kLapackWordOp = 0,
  kLapackWordDtype = 1,
  kLapackWordM = 2,
  kLapackWordN = 3,
  kLapackWordFlags = 4,
  kLapackWordThreads = 5,
  kLapackWordNb = 6,
  kLapackWordOffA = 7,
  kLapackWordRsA = 8,
  kLapackWordCsA = 9,
  kLapackWordOffB = 10,
  kLapackWordRsB = 11,
  kLapackWordCsB = 12,
  kLapackWordOffInfo = 13,
  kLapackWordZero14 = 14,
  kLapackWordZero15 = 15,
  kLapackWordOut0Offset = 16,
  kLapackWordOut0Rows = 17,
  kLapackWordOut0Cols = 18,
  kLapackWordOut1Offset = 19,
  kLapackWordOut1Rows = 20,
  kLapackWordOut1Cols = 21,
  kLapackWordOut2Offset = 22,
  kLapackWordOut2Rows = 23,
  kLapackWordOut2Cols = 24,
};
constexpr int kLapackWordCount = 25;

constexpr int kMaxBatchRank = 32;
constexpr int kTransNo = 111;
constexpr int kTransT = 112;
constexpr int kTransConjT = 113;
constexpr int kTransConjNo = 114;
constexpr int kLapackMaxAxes = 16;
constexpr int kFlagUpper = 1;
constexpr int kFlagLeft = 2;
constexpr int kFlagUnit = 4;
constexpr int kFlagFull = 8;
constexpr int kFlagVectors = 16;
constexpr int kFlagROnly = 32;

}  // namespace blas

#endif  // TENFERRO_ABI_BLAS_H_
