// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_TFL_H_
#define TENFERRO_ABI_TFL_H_

namespace tfl {

constexpr char kAbiHash[] = "84a4c065bf4c2113";

enum Status : int {
  kOk = 0,
  kBadArguments = 1,
  kOutOfBounds = 2,
  kBadDtype = 3,
  kBadRange = 4,
  kAborted = 5,
  kBadOp = 6,
};
constexpr int kStatusCount = 7;

enum Op : int {
  kCholesky = 0,
  kSolveTriangular = 1,
  kLuFactor = 2,
  kLu = 3,
  kSolve = 4,
  kQr = 5,
  kSvd = 6,
  kEigh = 7,
  kEig = 8,
  kLuFullPivot = 9,
};
constexpr int kOpCount = 10;

enum Dtype : int {
  kF32 = 0,
  kF64 = 1,
  kC64 = 2,
  kC128 = 3,
};
constexpr int kDtypeCount = 4;

enum Word : int {
  kWordOp = 0,
  kWordDtype = 1,
  kWordM = 2,
  kWordN = 3,
  kWordK = 4,
  kWordFlags = 5,
  kWordB0 = 6,
  kWordB1 = 7,
  kWordNb = 8,
  kWordAbortAt = 9,
  kWordOffA = 10,
  kWordRsA = 11,
  kWordCsA = 12,
  kWordOffB = 13,
  kWordRsB = 14,
  kWordCsB = 15,
  kWordOffOut0 = 16,
  kWordOffOut1 = 17,
  kWordOffOut2 = 18,
  kWordOffInfo = 19,
};
constexpr int kWordCount = 20;

constexpr int kMaxBatchAxes = 16;
constexpr int kFlagUpper = 1;
constexpr int kFlagLeft = 2;
constexpr int kFlagUnit = 4;
constexpr int kFlagFull = 8;
constexpr int kFlagVectors = 16;
constexpr int kFlagROnly = 32;
constexpr int kStepLuFactor = 10;
constexpr int kStepCholesky = 11;

}  // namespace tfl

#endif  // TENFERRO_ABI_TFL_H_
