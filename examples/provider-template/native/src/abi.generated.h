// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_X_ABI_H_
#define TENFERRO_ABI_X_ABI_H_

namespace x::abi {

constexpr char kAbiHash[] = "eed57667465662f0";

enum Status : int {
  kOk = 0,
  kBadArguments = 1,
  kOutOfBounds = 2,
};
constexpr int kStatusCount = 3;

enum Desc : int {
  kM0 = 0,
  kM1 = 1,
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
  kAlpha = 13,
  kBeta = 14,
};
constexpr int kDescCount = 15;

}  // namespace x::abi

#endif  // TENFERRO_ABI_X_ABI_H_
