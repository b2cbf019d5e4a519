// tenferro_tprims.node: registers the exports (contract: src/native/binding.ts). Registration only:
//   run(desc, out, a, b?): number         -- entry.cc, the native side of src/kernels/tprims.ts
//   supports(kind, op, din, dout): bool   -- entry.cc
//   info(isa?)                            -- info.cc
//   abiHash: string -- the hash of native/src/abi.mjs (defineAddon compares it, #40)
//   descHeader, maxRank: number
#include <napi.h>

#include "tprims.h"
#include "tprims_addon.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("run", Napi::Function::New(env, tprims::js::run, "run"));
  exports.Set("supports", Napi::Function::New(env, tprims::js::supports, "supports"));
  exports.Set("info", Napi::Function::New(env, tprims::js::info, "info"));
  exports.Set("descHeader", Napi::Number::New(env, tprims::kDescCount));
  exports.Set("abiHash", Napi::String::New(env, tprims::kAbiHash));
  exports.Set("maxRank", Napi::Number::New(env, tprims::kMaxRank));
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_tprims, init)
