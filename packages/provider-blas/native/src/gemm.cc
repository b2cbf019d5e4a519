// gemm(desc: Float64Array, a: Uint8Array, b: Uint8Array, c: Uint8Array) -> status: the native
// side of the kernel src/kernels/gemm.ts.
//
// One (strided-batched) column-major ?gemm, all batches in one call. `desc` layout is below
// (kDesc*). The typed arrays may view SharedArrayBuffers (napi_get_typedarray_info returns their
// data pointer); element offsets are in elements of the dtype (a complex element is one
// element). Every reachable element is bounds-checked before BLAS runs, in arithmetic that
// cannot overflow: the descriptor is first copied (a Float64Array over a SharedArrayBuffer could
// change while it is read: each entry is read once, from the copy), each entry is checked to be
// an integer in its range before it is converted (NaN, infinities, fractions and negatives are
// refused; indices, strides and extents in [0, 2^53]; BLAS extents and leading dimensions below
// 2^31; threads at most 2^20), the batch count is bounded by 2^53, and reaches are summed in
// __int128 (every term is non-negative and below 2^106, so a sum of 32 of them stays below 2^112
// and can never wrap around into "reaches nothing"). An operand that is used must also be
// aligned to its element's component (Misaligned): a Uint8Array may start anywhere.
//
// Nothing here throws: failures are status codes (kStatus*, blas_addon.h), turned into errors in TypeScript.
// The CBLAS functions are the ones runtime.cc resolved with dlsym in the library it dlopen()ed;
// before that, a call that would reach BLAS is NotLoaded.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <cstring>

#include <napi.h>

#include "blas_addon.h"
#include "blas_runtime.h"
#include "tenferro/napi_args.h"

namespace blas {
namespace {

// The descriptor's fields (kDescDType ...), kMaxBatchRank and the CBLAS codes: native/src/abi.mjs,
// shared with src/native/binding.ts (#40).
static_assert(kTransNo == kCblasNoTrans && kTransT == kCblasTrans && kTransConjT == kCblasConjTrans && kTransConjNo == kCblasConjNoTrans,
              "the ABI table's transpose codes are CBLAS's");

constexpr size_t kDescMax = kDescCount + 4 * kMaxBatchRank;  // the longest descriptor read
constexpr double kMaxThreads = 1048576.0;                      // 2^20, the CPU-id cap of @tenferro/os
constexpr int64_t kIntMax = 0x7fffffff;          // the 32-bit BLAS integer

using tenferro::napi_args::TypedView;
using tenferro::napi_args::as_index;
using tenferro::napi_args::fits;
using tenferro::napi_args::kMaxSafeIndex;
using tenferro::napi_args::last_index;
using tenferro::napi_args::typed_view;

// The farthest element index (inclusive) reached by a column-major rows x cols matrix with leading
// dimension ld at `offset`, over every batch; -1 when it reaches nothing. With every input in
// [0, 2^53] the sum stays below 2^112.
__int128 reach(int64_t offset, int64_t rows, int64_t cols, int64_t ld, int rank, const int64_t* extents, const int64_t* strides) {
  if (rows <= 0 || cols <= 0) return -1;
  const __int128 batches = last_index(0, rank, extents, strides);  // tenferro/napi_args.h
  if (batches < 0) return -1;
  return static_cast<__int128>(offset) + (rows - 1) + static_cast<__int128>(cols - 1) * ld + batches;
}

// CblasConjNoTrans is an OpenBLAS extension: any other CBLAS (the reference one, BLIS, MKL) answers
// it through cblas_xerbla, which in the reference CBLAS prints and EXITS the process. So 114 is
// accepted only when the runtime is OpenBLAS (src/runtime.ts offers it only then, after a probe).
bool valid_trans(double t) {
  if (t == kCblasNoTrans || t == kCblasTrans || t == kCblasConjTrans) return true;
  return t == kCblasConjNoTrans && runtime_loaded() && std::strcmp(runtime().vendor, "openblas") == 0;
}

// C = beta * C (k = 0: BLAS is not called, so nothing reads A or B). beta = 0 writes zeros.
template <typename T>
void scale_real(T* c, int64_t m, int64_t n, int64_t ldc, T beta) {
  for (int64_t j = 0; j < n; j++) {
    T* col = c + j * ldc;
    if (beta == T(0)) {
      for (int64_t i = 0; i < m; i++) col[i] = T(0);
    } else {
      for (int64_t i = 0; i < m; i++) col[i] = beta * col[i];
    }
  }
}

template <typename T>
void scale_complex(T* c, int64_t m, int64_t n, int64_t ldc, T br, T bi) {
  for (int64_t j = 0; j < n; j++) {
    T* col = c + 2 * j * ldc;
    for (int64_t i = 0; i < m; i++) {
      if (br == T(0) && bi == T(0)) {
        col[2 * i] = T(0);
        col[2 * i + 1] = T(0);
      } else {
        const T re = col[2 * i], im = col[2 * i + 1];
        col[2 * i] = br * re - bi * im;
        col[2 * i + 1] = br * im + bi * re;
      }
    }
  }
}

int32_t run_gemm(const double* d, size_t dlen, const TypedView& a, const TypedView& b, const TypedView& c) {
  if (dlen < kDescCount) return kStatusBadDescriptor;
  const double dt = d[kDescDType];
  if (!(dt == 0 || dt == 1 || dt == 2 || dt == 3)) return kStatusBadDType;
  const int dtype = static_cast<int>(dt);
  if (!valid_trans(d[kDescTransA]) || !valid_trans(d[kDescTransB])) return kStatusBadTranspose;
  const int ta = static_cast<int>(d[kDescTransA]);
  const int tb = static_cast<int>(d[kDescTransB]);
  // BLAS extents and leading dimensions: integers >= 0 (else BadDescriptor), below 2^31 (else TooLarge).
  const int blas_ints[] = {kDescM, kDescN, kDescK, kDescLda, kDescLdb, kDescLdc};
  int64_t v[kDescCount] = {};
  for (int f : blas_ints) {
    if (!(d[f] >= 0) || std::floor(d[f]) != d[f]) return kStatusBadDescriptor;
  }
  for (int f : blas_ints) {
    if (d[f] > kIntMax) return kStatusTooLarge;
    v[f] = static_cast<int64_t>(d[f]);
  }
  const int64_t m = v[kDescM], n = v[kDescN], k = v[kDescK];
  const int64_t lda = v[kDescLda], ldb = v[kDescLdb], ldc = v[kDescLdc];
  int64_t off_a = 0, off_b = 0, off_c = 0, rank64 = 0;
  if (!as_index(d[kDescOffA], &off_a) || !as_index(d[kDescOffB], &off_b) || !as_index(d[kDescOffC], &off_c)) return kStatusBadDescriptor;
  const double threads_value = d[kDescThreads];
  if (!tenferro::napi_args::is_int(threads_value, 0, kMaxThreads)) return kStatusBadDescriptor;
  const int threads = static_cast<int>(threads_value);
  if (!as_index(d[kDescBatchRank], &rank64) || rank64 > kMaxBatchRank || dlen < static_cast<size_t>(kDescCount + 4 * rank64)) {
    return kStatusBadDescriptor;
  }
  const int rank = static_cast<int>(rank64);
  // The leading-dimension rules of ?gemm (column major), so BLAS never reports a parameter error.
  const bool a_no = ta == kCblasNoTrans || ta == kCblasConjNoTrans;
  const bool b_no = tb == kCblasNoTrans || tb == kCblasConjNoTrans;
  const int64_t a_rows = a_no ? m : k, a_cols = a_no ? k : m;
  const int64_t b_rows = b_no ? k : n, b_cols = b_no ? n : k;
  if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1)) return kStatusBadDescriptor;

  // Batch extents and per-operand batch strides: indices in [0, 2^53]; at most 2^53 batches.
  int64_t extents[kMaxBatchRank], sa[kMaxBatchRank], sb[kMaxBatchRank], sc[kMaxBatchRank];
  const double* batch_desc = d + kDescCount;
  __int128 batches = 1;  // saturates: multiplied only while <= 2^53, so it stays below 2^106
  bool empty = false;
  for (int t = 0; t < rank; t++) {
    if (!as_index(batch_desc[t], &extents[t]) || !as_index(batch_desc[rank + t], &sa[t]) || !as_index(batch_desc[2 * rank + t], &sb[t]) ||
        !as_index(batch_desc[3 * rank + t], &sc[t])) {
      return kStatusBadDescriptor;
    }
    if (extents[t] == 0) empty = true;
    if (batches <= static_cast<__int128>(kMaxSafeIndex)) batches *= extents[t];
  }
  if (m == 0 || n == 0 || empty) return kStatusOk;
  if (batches > static_cast<__int128>(kMaxSafeIndex)) return kStatusBadDescriptor;
  const int64_t batch_count = static_cast<int64_t>(batches);

  const size_t element_bytes = dtype == 0 ? 4 : dtype == 1 ? 8 : dtype == 2 ? 8 : 16;
  // Offsets and strides are in elements, so the base pointers decide the alignment.
  const uintptr_t align = dtype == 0 || dtype == 2 ? 4 : 8;
  if (reinterpret_cast<uintptr_t>(c.data) % align != 0 ||
      (k > 0 && (reinterpret_cast<uintptr_t>(a.data) % align != 0 || reinterpret_cast<uintptr_t>(b.data) % align != 0))) {
    return kStatusMisaligned;
  }
  if (k > 0) {
    if (!fits(reach(off_a, a_rows, a_cols, lda, rank, extents, sa), element_bytes, a.bytes)) return kStatusOutOfBoundsA;
    if (!fits(reach(off_b, b_rows, b_cols, ldb, rank, extents, sb), element_bytes, b.bytes)) return kStatusOutOfBoundsB;
  }
  if (!fits(reach(off_c, m, n, ldc, rank, extents, sc), element_bytes, c.bytes)) return kStatusOutOfBoundsC;

  const double ar = d[kDescAlphaRe], ai = d[kDescAlphaIm], br = d[kDescBetaRe], bi = d[kDescBetaIm];
  const float alpha_f[2] = {static_cast<float>(ar), static_cast<float>(ai)};
  const float beta_f[2] = {static_cast<float>(br), static_cast<float>(bi)};
  const double alpha_d[2] = {ar, ai};
  const double beta_d[2] = {br, bi};
  // BLAS itself is needed only when k > 0 (k = 0 scales C here): the runtime must be loaded then.
  if (k > 0 && !runtime_loaded()) return kStatusNotLoaded;
  const Runtime& rt = runtime();
  const int trans_a = ta;
  const int trans_b = tb;
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), k32 = static_cast<int>(k);
  const int lda32 = static_cast<int>(lda), ldb32 = static_cast<int>(ldb), ldc32 = static_cast<int>(ldc);

  ThreadScope scope(k > 0 ? threads : 0);
  // Element offsets of this batch's matrices; A's and B's are only followed when k > 0 (k = 0
  // reads neither, and their reach was not checked).
  int64_t index[kMaxBatchRank] = {0};
  int64_t oa = off_a, ob = off_b, oc = off_c;
  const int64_t track_ab = k > 0 ? 1 : 0;
  for (int64_t batch = 0; batch < batch_count; batch++) {
    uint8_t* pc = static_cast<uint8_t*>(c.data) + static_cast<size_t>(oc) * element_bytes;
    if (k == 0) {
      switch (dtype) {
        case 0: scale_real(reinterpret_cast<float*>(pc), m, n, ldc, beta_f[0]); break;
        case 1: scale_real(reinterpret_cast<double*>(pc), m, n, ldc, br); break;
        case 2: scale_complex(reinterpret_cast<float*>(pc), m, n, ldc, beta_f[0], beta_f[1]); break;
        default: scale_complex(reinterpret_cast<double*>(pc), m, n, ldc, br, bi); break;
      }
    } else {
      uint8_t* pa = static_cast<uint8_t*>(a.data) + static_cast<size_t>(oa) * element_bytes;
      uint8_t* pb = static_cast<uint8_t*>(b.data) + static_cast<size_t>(ob) * element_bytes;
      switch (dtype) {
        case 0:
          rt.sgemm(kCblasColMajor, trans_a, trans_b, m32, n32, k32, alpha_f[0], reinterpret_cast<const float*>(pa), lda32,
                      reinterpret_cast<const float*>(pb), ldb32, beta_f[0], reinterpret_cast<float*>(pc), ldc32);
          break;
        case 1:
          rt.dgemm(kCblasColMajor, trans_a, trans_b, m32, n32, k32, ar, reinterpret_cast<const double*>(pa), lda32,
                      reinterpret_cast<const double*>(pb), ldb32, br, reinterpret_cast<double*>(pc), ldc32);
          break;
        case 2: rt.cgemm(kCblasColMajor, trans_a, trans_b, m32, n32, k32, alpha_f, pa, lda32, pb, ldb32, beta_f, pc, ldc32); break;
        default: rt.zgemm(kCblasColMajor, trans_a, trans_b, m32, n32, k32, alpha_d, pa, lda32, pb, ldb32, beta_d, pc, ldc32); break;
      }
    }
    // Next batch index (odometer over the extents, last axis fastest); every offset stays within
    // the reach checked above.
    for (int t = rank - 1; t >= 0; t--) {
      const int64_t e = extents[t];
      const int64_t da = sa[t] * track_ab, db = sb[t] * track_ab, dc = sc[t];
      if (++index[t] < e) {
        oa += da;
        ob += db;
        oc += dc;
        break;
      }
      index[t] = 0;
      oa -= da * (e - 1);
      ob -= db * (e - 1);
      oc -= dc * (e - 1);
    }
  }
  return kStatusOk;
}

}  // namespace

namespace js {

Napi::Value gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4) return Napi::Number::New(env, kStatusBadArguments);
  const TypedView desc = typed_view(info[0]), a = typed_view(info[1]), b = typed_view(info[2]), c = typed_view(info[3]);
  if (!desc.ok || desc.type != napi_float64_array) return Napi::Number::New(env, kStatusBadArguments);
  if (!a.ok || a.type != napi_uint8_array || !b.ok || b.type != napi_uint8_array || !c.ok || c.type != napi_uint8_array) return Napi::Number::New(env, kStatusBadArguments);
  // Read the descriptor once, into a copy that nothing else can change (see the top of the file).
  double local[kDescMax] = {};
  const size_t dlen = desc.length < kDescMax ? desc.length : kDescMax;
  if (dlen > 0) std::memcpy(local, desc.data, dlen * sizeof(double));
  return Napi::Number::New(env, run_gemm(local, dlen, a, b, c));
}

}  // namespace js
}  // namespace blas
