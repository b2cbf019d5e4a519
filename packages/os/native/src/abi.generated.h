// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
// The addon exports kAbiHash as `abiHash`; defineAddon (@tenferro/os) compares it with the
// hash of the table this package's TypeScript imports.
#ifndef TENFERRO_ABI_OS_ARBITER_H_
#define TENFERRO_ABI_OS_ARBITER_H_

namespace os::arbiter {

constexpr char kAbiHash[] = "4028a706fde24192";

constexpr int kAdmitted = 1;
constexpr int kReentrant = 2;
constexpr int kGrantsPending = 4;
constexpr int kRemoved = 8;
constexpr int kInvalid = -1;

}  // namespace os::arbiter

#endif  // TENFERRO_ABI_OS_ARBITER_H_
