// The LAPACK side of tenferro_blas.node (src/lapack-kernels.ts): the Fortran LAPACK routines of
// the BLAS runtime already dlopen()ed by runtime.cc, resolved from the same handle with dlsym on
// first use. OpenBLAS and MKL export them; a runtime without them (reference CBLAS alone, BLIS)
// is reported by lapackSymbols() and the TypeScript side declines before writing.
//   lapackSymbols() -> { spotrf, dpotrf, sgetrf, dgetrf, sgetrs, dgetrs: boolean } | null (not loaded)
//   lapack(words, a, b, out0, out1, info) -> status
// Words (src/lapack-kernels.ts): [op, dtype, m, n, flags, threads, nb, offA, rsA, csA, offB, rsB,
// csB, 0, 0, 0 | ext[nb] | A batch strides[nb] | B batch strides[nb]]; op 0 cholesky (out0 m×m,
// flags 1 = return Lᴴ), 2 luFactor (out0 LU m×n, out1 i32 pivots), 4 solve (out0 X m×n, A m×m).
// Every word is copied and checked (128-bit arithmetic) before anything is read or written.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <vector>

#include <napi.h>

#include "blas_addon.h"
#include "blas_runtime.h"

namespace blas {
namespace {

using i128 = __int128;
using Potrf = void (*)(const char*, const int*, void*, const int*, int*, size_t);
using Getrf = void (*)(const int*, const int*, void*, const int*, int*, int*);
using Getrs = void (*)(const char*, const int*, const int*, const void*, const int*, const int*, void*, const int*, int*, size_t);

struct Lapack {
  Potrf potrf[2] = {nullptr, nullptr};
  Getrf getrf[2] = {nullptr, nullptr};
  Getrs getrs[2] = {nullptr, nullptr};
};

std::once_flag g_once;
Lapack g_lapack;

const Lapack* lapack() {
  if (!runtime_loaded()) return nullptr;
  std::call_once(g_once, [] {
    void* h = runtime().handle;
    if (h == nullptr) return;
    g_lapack.potrf[0] = reinterpret_cast<Potrf>(dlsym(h, "spotrf_"));
    g_lapack.potrf[1] = reinterpret_cast<Potrf>(dlsym(h, "dpotrf_"));
    g_lapack.getrf[0] = reinterpret_cast<Getrf>(dlsym(h, "sgetrf_"));
    g_lapack.getrf[1] = reinterpret_cast<Getrf>(dlsym(h, "dgetrf_"));
    g_lapack.getrs[0] = reinterpret_cast<Getrs>(dlsym(h, "sgetrs_"));
    g_lapack.getrs[1] = reinterpret_cast<Getrs>(dlsym(h, "dgetrs_"));
  });
  return &g_lapack;
}

constexpr int kHeader = 16;
constexpr int kMaxAxes = 16;

struct Bytes {
  uint8_t* data = nullptr;
  size_t len = 0;
  bool ok = false;
};

Bytes bytes_of(const Napi::Value& v) {
  Bytes b;
  if (!v.IsTypedArray()) return b;
  napi_typedarray_type type;
  size_t len = 0;
  void* ptr = nullptr;
  napi_value ab;
  size_t off = 0;
  if (napi_get_typedarray_info(v.Env(), v, &type, &len, &ptr, &ab, &off) != napi_ok) return b;
  if (type != napi_uint8_array && type != napi_int32_array) return b;
  b.data = static_cast<uint8_t*>(ptr);
  b.len = len * (type == napi_int32_array ? 4 : 1);
  b.ok = true;
  return b;
}

bool is_int(double x, double lo, double hi) { return std::isfinite(x) && std::floor(x) == x && x >= lo && x <= hi; }

struct Operand {
  int64_t off = 0, rs = 0, cs = 0, bs[kMaxAxes] = {};
  const uint8_t* data = nullptr;
};

template <typename T>
void gather(const Operand& o, int64_t base, int64_t rows, int64_t cols, T* dst) {
  const T* src = reinterpret_cast<const T*>(o.data) + base;
  for (int64_t c = 0; c < cols; c++)
    for (int64_t r = 0; r < rows; r++) dst[r + c * rows] = src[r * o.rs + c * o.cs];
}

template <typename T>
int run(int op, int idx, const Lapack& L, int64_t m, int64_t n, int flags, int nb, const int64_t* ext, int64_t count, const Operand& A, const Operand& B,
        uint8_t* out0, uint8_t* out1, int32_t* info) {
  const int im = static_cast<int>(m), in = static_cast<int>(n), lda = std::max(1, im);
  std::vector<T> scratch;
  // getrf writes min(rows, cols) pivots: min(m, n) for luFactor, m for the m×m factor of solve.
  std::vector<int> ipiv(static_cast<size_t>(std::max<int64_t>(1, op == 2 ? std::min(m, n) : m)));
  for (int64_t b = 0; b < count; b++) {
    int64_t offA = A.off, offB = B.off, f = b;
    for (int t = 0; t < nb; t++) {
      offA += (f % ext[t]) * A.bs[t];
      offB += (f % ext[t]) * B.bs[t];
      f /= ext[t];
    }
    info[b] = 0;
    int lapackInfo = 0;
    if (op == 0) {
      T* o = reinterpret_cast<T*>(out0) + b * m * m;
      if (m == 0) continue;
      gather<T>(A, offA, m, m, o);
      L.potrf[idx]("L", &im, o, &lda, &lapackInfo, 1);
      if (lapackInfo != 0) {
        info[b] = lapackInfo;
        std::fill(o, o + m * m, T(0));
        continue;
      }
      for (int64_t c = 0; c < m; c++)
        for (int64_t r = 0; r < c; r++) o[r + c * m] = T(0);
      if (flags & 1)
        for (int64_t c = 0; c < m; c++)
          for (int64_t r = c + 1; r < m; r++) std::swap(o[r + c * m], o[c + r * m]);
    } else if (op == 2) {
      T* o = reinterpret_cast<T*>(out0) + b * m * n;
      int32_t* p = reinterpret_cast<int32_t*>(out1) + b * std::min(m, n);
      if (m == 0 || n == 0) continue;
      gather<T>(A, offA, m, n, o);
      L.getrf[idx](&im, &in, o, &lda, ipiv.data(), &lapackInfo);
      if (lapackInfo < 0) return kStatusBadArguments;
      info[b] = lapackInfo;
      for (int64_t i = 0; i < std::min(m, n); i++) p[i] = ipiv[static_cast<size_t>(i)];
    } else {
      T* o = reinterpret_cast<T*>(out0) + b * m * n;
      if (m == 0) continue;
      scratch.resize(static_cast<size_t>(m * m));
      gather<T>(A, offA, m, m, scratch.data());
      L.getrf[idx](&im, &im, scratch.data(), &lda, ipiv.data(), &lapackInfo);
      if (lapackInfo != 0) {
        info[b] = lapackInfo;
        std::fill(o, o + m * n, T(0));
        continue;
      }
      if (n == 0) continue;
      gather<T>(B, offB, m, n, o);
      L.getrs[idx]("N", &im, &in, scratch.data(), &lda, ipiv.data(), o, &lda, &lapackInfo, 1);
      if (lapackInfo < 0) return kStatusBadArguments;
    }
  }
  return kStatusOk;
}

}  // namespace

namespace js {

Napi::Value lapack_symbols(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Lapack* L = lapack();
  if (L == nullptr) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("spotrf", L->potrf[0] != nullptr);
  o.Set("dpotrf", L->potrf[1] != nullptr);
  o.Set("sgetrf", L->getrf[0] != nullptr);
  o.Set("dgetrf", L->getrf[1] != nullptr);
  o.Set("sgetrs", L->getrs[0] != nullptr);
  o.Set("dgetrs", L->getrs[1] != nullptr);
  return o;
}

Napi::Value lapack_run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto status = [&](int s) { return Napi::Number::New(env, s); };
  const Lapack* L = lapack();
  if (L == nullptr) return status(kStatusNotLoaded);
  if (info.Length() < 6 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) return status(kStatusBadArguments);
  Napi::Float64Array w = info[0].As<Napi::Float64Array>();
  const size_t wl = w.ElementLength();
  if (wl < static_cast<size_t>(kHeader) || wl > 256) return status(kStatusBadDescriptor);
  double d[256];
  memcpy(d, w.Data(), wl * sizeof(double));
  const double maxIdx = 9007199254740991.0, maxDim = 2147483647.0;
  if (!(d[0] == 0 || d[0] == 2 || d[0] == 4)) return status(kStatusBadDescriptor);
  if (!(d[1] == 0 || d[1] == 1)) return status(kStatusBadDType);
  if (!is_int(d[2], 0, maxDim) || !is_int(d[3], 0, maxDim) || !is_int(d[4], 0, 1) || !is_int(d[5], 0, 4096) || !is_int(d[6], 0, kMaxAxes)) return status(kStatusBadDescriptor);
  const int op = static_cast<int>(d[0]), dt = static_cast<int>(d[1]), flags = static_cast<int>(d[4]), threads = static_cast<int>(d[5]), nb = static_cast<int>(d[6]);
  const int64_t m = static_cast<int64_t>(d[2]), n = op == 0 ? m : static_cast<int64_t>(d[3]);
  if (wl < static_cast<size_t>(kHeader + 3 * nb)) return status(kStatusBadDescriptor);
  int64_t ext[kMaxAxes] = {};
  i128 count = 1;
  for (int t = 0; t < nb; t++) {
    if (!is_int(d[kHeader + t], 0, maxDim)) return status(kStatusBadDescriptor);
    ext[t] = static_cast<int64_t>(d[kHeader + t]);
    count *= ext[t];
    if (count > (static_cast<i128>(1) << 40)) return status(kStatusTooLarge);
  }
  const int64_t el = dt == 0 ? 4 : 8;
  Operand ops[2];
  for (int o = 0; o < 2; o++) {
    for (int q = 0; q < 3; q++)
      if (!is_int(d[7 + 3 * o + q], 0, maxIdx)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
    ops[o].off = static_cast<int64_t>(d[7 + 3 * o]);
    ops[o].rs = static_cast<int64_t>(d[8 + 3 * o]);
    ops[o].cs = static_cast<int64_t>(d[9 + 3 * o]);
    for (int t = 0; t < nb; t++) {
      double s = d[kHeader + nb * (1 + o) + t];
      if (!is_int(s, 0, maxIdx)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
      ops[o].bs[t] = static_cast<int64_t>(s);
    }
  }
  // Inputs: A is m×m (cholesky, solve) or m×n (luFactor); B (solve) is m×n.
  const int64_t aRows = m, aCols = op == 2 ? n : m;
  for (int o = 0; o < (op == 4 ? 2 : 1); o++) {
    Bytes v = bytes_of(info[1 + o]);
    if (!v.ok) return status(kStatusBadArguments);
    if (reinterpret_cast<uintptr_t>(v.data) % static_cast<uintptr_t>(el) != 0) return status(kStatusMisaligned);
    const int64_t rows = o == 0 ? aRows : m, cols = o == 0 ? aCols : n;
    if (rows > 0 && cols > 0 && count > 0) {
      i128 last = static_cast<i128>(ops[o].off) + static_cast<i128>(rows - 1) * ops[o].rs + static_cast<i128>(cols - 1) * ops[o].cs;
      for (int t = 0; t < nb; t++) last += static_cast<i128>(ext[t] - 1) * ops[o].bs[t];
      if ((last + 1) * el > static_cast<i128>(v.len)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
    }
    ops[o].data = v.data;
  }
  if (op != 4) ops[1] = ops[0];
  Bytes o0 = bytes_of(info[3]), o1 = bytes_of(info[4]), inf = bytes_of(info[5]);
  if (!o0.ok || !o1.ok || !inf.ok) return status(kStatusBadArguments);
  if (reinterpret_cast<uintptr_t>(o0.data) % static_cast<uintptr_t>(el) != 0 || reinterpret_cast<uintptr_t>(o1.data) % 4 != 0 || reinterpret_cast<uintptr_t>(inf.data) % 4 != 0) return status(kStatusMisaligned);
  const i128 per0 = op == 0 ? static_cast<i128>(m) * m : static_cast<i128>(m) * n;
  if (per0 * count * el > static_cast<i128>(o0.len)) return status(kStatusOutOfBoundsC);
  if (op == 2 && static_cast<i128>(std::min(m, n)) * count * 4 > static_cast<i128>(o1.len)) return status(kStatusOutOfBoundsC);
  if (count * 4 > static_cast<i128>(inf.len)) return status(kStatusOutOfBoundsC);
  const int idx = dt;
  if (op == 0 && L->potrf[idx] == nullptr) return status(kStatusNotLoaded);
  if (op != 0 && (L->getrf[idx] == nullptr || (op == 4 && L->getrs[idx] == nullptr))) return status(kStatusNotLoaded);
  ThreadScope scope(threads);
  int32_t* infoOut = reinterpret_cast<int32_t*>(inf.data);
  const int64_t c = static_cast<int64_t>(count);
  int s = dt == 0 ? run<float>(op, 0, *L, m, n, flags, nb, ext, c, ops[0], ops[1], o0.data, o1.data, infoOut)
                  : run<double>(op, 1, *L, m, n, flags, nb, ext, c, ops[0], ops[1], o0.data, o1.data, infoOut);
  return status(s);
}

}  // namespace js
}  // namespace blas
