// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_TPRIMS_H_
#define TENFERRO_ABI_TPRIMS_H_

namespace tprims {

constexpr char kAbiHash[] = "aa68bf358451c575";

enum Status : int {
  kOk = 0,
  kBadArguments = 1,
  kOutOfBounds = 2,
  kIsaUnavailable = 3,
  kBadDtype = 4,
  kNoMemory = 5,
  kAborted = 6,
};
constexpr int kStatusCount = 7;

enum Kind : int {
  kUnary = 0,
  kBinary = 1,
  kReduce = 2,
};
constexpr int kKindCount = 3;

enum Dtype : int {
  kF32 = 0,
  kF64 = 1,
  kC64 = 2,
  kC128 = 3,
  kI32 = 4,
  kI64 = 5,
  kBool = 6,
};
constexpr int kDtypeCount = 7;

enum Unary : int {
  kCopy = 0,
  kCopyConj = 1,
  kNeg = 2,
  kAbs = 3,
  kExp = 4,
  kLog = 5,
  kSqrt = 6,
  kSin = 7,
  kCos = 8,
  kTanh = 9,
  kConj = 10,
  kReal = 11,
  kImag = 12,
  kScale = 13,
  kCast = 14,
};
constexpr int kUnaryCount = 15;

enum Binary : int {
  kAdd = 0,
  kSub = 1,
  kMul = 2,
  kDiv = 3,
  kMaximum = 4,
  kMinimum = 5,
  kPow = 6,
  kEq = 7,
  kLt = 8,
  kLe = 9,
  kGt = 10,
  kGe = 11,
};
constexpr int kBinaryCount = 12;

enum Reduce : int {
  kSum = 0,
  kMean = 1,
  kMax = 2,
  kMin = 3,
  kProd = 4,
  kArgmax = 5,
  kArgmin = 6,
  kNorm = 7,
};
constexpr int kReduceCount = 8;

enum IsaId : int {
  kPortable = 0,
  kAvx2 = 1,
  kAvx512f = 2,
};
constexpr int kIsaIdCount = 3;

enum Desc : int {
  kKind = 0,
  kOp = 1,
  kDin = 2,
  kDout = 3,
  kRank = 4,
  kAlphaRe = 5,
  kAlphaIm = 6,
  kIsa = 7,
  kOffOut = 8,
  kOffA = 9,
  kOffB = 10,
};
constexpr int kDescCount = 11;

constexpr int kMaxRank = 32;

}  // namespace tprims

#endif  // TENFERRO_ABI_TPRIMS_H_
