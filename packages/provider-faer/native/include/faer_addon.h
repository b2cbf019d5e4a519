// @tenferro/provider-faer: the N-API callbacks that addon.cc registers, one per export, each
// defined in the file named after what it serves. None throws.
#pragma once

#include <napi.h>

namespace faer {


namespace js {

/** `gemm(desc, a, b, c)`: a status code (gemm.cc). */
Napi::Value gemm(const Napi::CallbackInfo& info);
/** `info(isa?)`: the ISA path's description, or null (info.cc). */
Napi::Value info(const Napi::CallbackInfo& info);
/** `fmaPeak(seconds, isa?)`: GFLOP/s, or 0 (info.cc). */
Napi::Value fma_peak(const Napi::CallbackInfo& info);

}  // namespace js
}  // namespace faer
