// @tenferro/provider-tprims: the N-API callbacks addon.cc registers, each defined in the file
// named after what it serves. None throws.
#pragma once

#include <napi.h>

namespace tprims {


namespace js {

/** `run(desc, out, a, b?)`: a status code (entry.cc). */
Napi::Value run(const Napi::CallbackInfo& info);
/** `supports(kind, op, din, dout, isa?)`: whether a kernel exists (entry.cc). */
Napi::Value supports(const Napi::CallbackInfo& info);
/** `info(isa?)`: the ISA path's description, or null (info.cc). */
Napi::Value info(const Napi::CallbackInfo& info);

}  // namespace js
}  // namespace tprims
