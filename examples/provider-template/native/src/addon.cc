// native/src/addon.cc — the kernel: C = alpha·A·B + beta·C on output rows [m0, m1) of one item.
// Every argument is checked before anything is read or written; a status code, never a throw.
#include <napi.h>

#include <cstdint>

#include "abi.generated.h"       // x::abi — generated from abi.mjs (npm run abi)
#include "tenferro/napi_args.h"  // @tenferro/native: typed-array views, exact indices, reach checks

namespace {

namespace na = tenferro::napi_args;
using namespace x::abi;

template <typename T>
void gemm_rows(const T* a, const T* b, T* c, const int64_t* d, double alpha, double beta) {
  for (int64_t i = d[kM0]; i < d[kM1]; ++i) {
    for (int64_t j = 0; j < d[kN]; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < d[kK]; ++p) {
        sum += static_cast<double>(a[d[kOffA] + i * d[kRsA] + p * d[kCsA]]) * static_cast<double>(b[d[kOffB] + p * d[kRsB] + j * d[kCsB]]);
      }
      T& out = c[d[kOffC] + i * d[kRsC] + j * d[kCsC]];
      // beta = 0 overwrites without reading (declaredSupport's overwritesOutput).
      out = static_cast<T>(beta == 0 ? alpha * sum : alpha * sum + beta * static_cast<double>(out));
    }
  }
}

// Whether a rows×cols view at `offset` with strides (rs, cs) lies inside `view` (overflow-proof).
bool inside(const na::TypedView& view, int64_t offset, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t extents[2] = {rows, cols};
  const int64_t strides[2] = {rs, cs};
  return na::fits(na::last_index(offset, 2, extents, strides), na::element_bytes(view.type), view.bytes);
}

Napi::Value Gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto status = [&](Status s) { return Napi::Number::New(env, s); };
  if (info.Length() != 4) return status(kBadArguments);
  const na::TypedView a = na::typed_view(info[0]);
  const na::TypedView b = na::typed_view(info[1]);
  const na::TypedView c = na::typed_view(info[2]);
  const na::TypedView desc = na::typed_view(info[3]);
  if (!a.ok || !b.ok || !c.ok || !desc.ok || desc.type != napi_float64_array || desc.length != kDescCount) return status(kBadArguments);
  if (a.type != b.type || a.type != c.type || (a.type != napi_float32_array && a.type != napi_float64_array)) return status(kBadArguments);
  const double* w = static_cast<const double*>(desc.data);
  int64_t d[kDescCount] = {};
  for (int i = 0; i < kAlpha; ++i) {
    if (!na::as_index(w[i], &d[i])) return status(kBadArguments);  // integers in [0, 2^53]
  }
  if (d[kM0] > d[kM1]) return status(kBadArguments);
  // Rows [0, m1) cover the task's rows: every index below is then inside its array (no overflow).
  if (!inside(a, d[kOffA], d[kM1], d[kK], d[kRsA], d[kCsA]) || !inside(b, d[kOffB], d[kK], d[kN], d[kRsB], d[kCsB]) ||
      !inside(c, d[kOffC], d[kM1], d[kN], d[kRsC], d[kCsC])) {
    return status(kOutOfBounds);
  }
  if (a.type == napi_float64_array) {
    gemm_rows(static_cast<const double*>(a.data), static_cast<const double*>(b.data), static_cast<double*>(c.data), d, w[kAlpha], w[kBeta]);
  } else {
    gemm_rows(static_cast<const float*>(a.data), static_cast<const float*>(b.data), static_cast<float*>(c.data), d, w[kAlpha], w[kBeta]);
  }
  return status(kOk);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("gemm", Napi::Function::New(env, Gemm));
  exports.Set("abiHash", Napi::String::New(env, kAbiHash));  // defineAddon compares it with the TypeScript's table
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_x, Init)
