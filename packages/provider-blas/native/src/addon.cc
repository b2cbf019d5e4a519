// tenferro_blas.node: the system CBLAS behind tenferro's 'blas' kind. Registration only
// (typed view: src/native/binding.ts):
//   gemm(desc, a, b, c) -> status              -- gemm.cc, the native side of src/kernels/gemm.ts
//   load(request), info(), getThreads(), setThreads(n), callThreads()  -- runtime.cc: the BLAS runtime, dlopen()ed
//                                              at run time; what src/runtime.ts reads
//   lapackSymbols(), lapack(words, a, b, out0, out1, out2, info) -> status  -- lapack.cc
//   conjNoTrans: number                        -- the CBLAS code of "conjugate, no transpose"
//   abiHash: string                            -- the hash of native/src/abi.mjs (defineAddon compares it, #40)
#include <napi.h>

#include "blas_addon.h"
#include "blas_runtime.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiHash", Napi::String::New(env, blas::kAbiHash));
  exports.Set("gemm", Napi::Function::New(env, blas::js::gemm, "gemm"));
  exports.Set("load", Napi::Function::New(env, blas::js::load, "load"));
  exports.Set("info", Napi::Function::New(env, blas::js::info, "info"));
  exports.Set("getThreads", Napi::Function::New(env, blas::js::get_threads, "getThreads"));
  exports.Set("setThreads", Napi::Function::New(env, blas::js::set_threads, "setThreads"));
  exports.Set("callThreads", Napi::Function::New(env, blas::js::call_threads, "callThreads"));
  exports.Set("lapackSymbols", Napi::Function::New(env, blas::js::lapack_symbols, "lapackSymbols"));
  exports.Set("lapack", Napi::Function::New(env, blas::js::lapack_run, "lapack"));
  exports.Set("conjNoTrans", Napi::Number::New(env, blas::kCblasConjNoTrans));
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_blas, init)
