// tenferro_faer.node: registers the exports (contract: src/native/binding.ts). Registration only:
//   gemm(desc, a, b, c): number          -- gemm.cc, the native side of src/kernels/gemm.ts
//   info(isa?), fmaPeak(seconds, isa?)   -- info.cc
//   descHeader: number                   -- entries of gemm's descriptor before its batch arrays
//   descSummed: true                     -- gemm's descriptor may end with summed axes (gemm.cc)
//   abiHash: string                      -- the hash of native/src/abi.mjs (defineAddon compares it, #40)
#include <napi.h>

#include "abi.generated.h"
#include "faer_addon.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("gemm", Napi::Function::New(env, faer::js::gemm, "gemm"));
  exports.Set("info", Napi::Function::New(env, faer::js::info, "info"));
  exports.Set("fmaPeak", Napi::Function::New(env, faer::js::fma_peak, "fmaPeak"));
  exports.Set("descHeader", Napi::Number::New(env, faer::abi::kDescCount));
  exports.Set("descSummed", Napi::Boolean::New(env, true));
  exports.Set("abiHash", Napi::String::New(env, faer::abi::kAbiHash));
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_faer, init)
