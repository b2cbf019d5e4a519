// tenferro_blas.node: the system CBLAS behind tenferro's 'blas' kind.
//
// Exports (see src/native/binding.ts for the typed view):
//   gemm(desc: Float64Array, a: Uint8Array, b: Uint8Array, c: Uint8Array) -> status
//       One (strided-batched) column-major ?gemm, all batches in one call. `desc` layout is
//       below (kDesc*). The typed arrays may view SharedArrayBuffers (napi_get_typedarray_info
//       returns their data pointer); element offsets are in elements of the dtype (a complex
//       element is one element). Every reachable element is bounds-checked before BLAS runs.
//   info() -> { vendor, version, config, coreName, parallel, threads, ... }
//       The runtime's identity, found with dlsym(RTLD_DEFAULT, ...) and dladdr.
//   setThreads(n) -> status, getThreads() -> number
//
// Nothing here throws: failures are status codes (kStatus*), turned into errors in TypeScript.
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <string>

#ifdef TENFERRO_BLAS_MKL
#include <mkl_cblas.h>
#else
#include <cblas.h>
#endif

#include <napi.h>

namespace {

// ---------------------------------------------------------------------------------------------
// Status codes (mirrored in src/native/binding.ts).
enum Status : int32_t {
  kStatusOk = 0,
  kStatusBadArguments = 1,
  kStatusBadDescriptor = 2,
  kStatusOutOfBoundsA = 3,
  kStatusOutOfBoundsB = 4,
  kStatusOutOfBoundsC = 5,
  kStatusTooLarge = 6,
  kStatusBadDType = 7,
  kStatusBadTranspose = 8,
};

// Descriptor layout (Float64Array), mirrored in src/native/binding.ts.
enum Desc : int {
  kDescDType = 0,    // 0 s, 1 d, 2 c, 3 z
  kDescTransA = 1,   // CBLAS codes: 111 NoTrans, 112 Trans, 113 ConjTrans, 114 ConjNoTrans
  kDescTransB = 2,
  kDescM = 3,
  kDescN = 4,
  kDescK = 5,
  kDescLda = 6,
  kDescLdb = 7,
  kDescLdc = 8,
  kDescOffA = 9,
  kDescOffB = 10,
  kDescOffC = 11,
  kDescAlphaRe = 12,
  kDescAlphaIm = 13,
  kDescBetaRe = 14,
  kDescBetaIm = 15,
  kDescThreads = 16,  // 0: leave the runtime's thread count alone
  kDescBatchRank = 17,
  kDescHeader = 18,   // then rank extents, rank A strides, rank B strides, rank C strides
};

constexpr int kMaxBatchRank = 32;

// ---------------------------------------------------------------------------------------------
// The runtime, identified once per process by dlsym (all pointers null under reference BLAS).
struct Runtime {
  // OpenBLAS
  char* (*openblas_get_config)() = nullptr;
  char* (*openblas_get_corename)() = nullptr;
  int (*openblas_get_parallel)() = nullptr;
  int (*openblas_get_num_threads)() = nullptr;
  void (*openblas_set_num_threads)(int) = nullptr;
  // MKL
  void (*mkl_get_version_string)(char*, int) = nullptr;
  int (*mkl_set_num_threads_local)(int) = nullptr;
  int (*mkl_get_max_threads)() = nullptr;
  // BLIS (dim_t / gint_t are 64-bit in default BLIS builds)
  const char* (*bli_info_get_version_str)() = nullptr;
  int64_t (*bli_info_get_enable_threading)() = nullptr;
  int64_t (*bli_info_get_enable_openmp)() = nullptr;
  int64_t (*bli_info_get_enable_pthreads)() = nullptr;
  int64_t (*bli_thread_get_num_threads)() = nullptr;
  void (*bli_thread_set_num_threads)(int64_t) = nullptr;
  // BLIS: does bli_thread_set_num_threads affect only the calling thread? (probed, not assumed)
  bool blisThreadLocal = false;
  bool blisSetEffective = false;
  const char* vendor = "reference";
};

Runtime g_rt;
std::once_flag g_rtOnce;

template <typename F>
void Sym(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

void* BlisProbeThread(void* arg) {
  int64_t* seen = static_cast<int64_t*>(arg);
  g_rt.bli_thread_set_num_threads(seen[0]);
  seen[1] = g_rt.bli_thread_get_num_threads();
  return nullptr;
}

// MKL's CPU dispatcher dlopen()s its kernel libraries (libmkl_def.so, libmkl_avx512.so ...),
// which resolve symbols of libmkl_core and the threading layer from the GLOBAL scope. Node loads
// addons with RTLD_LOCAL, so those libraries (dependencies of this addon) are not global and MKL
// stops with "undefined symbol ... Cannot load libmkl_def.so". Re-opening the already-loaded MKL
// libraries with RTLD_NOLOAD | RTLD_GLOBAL promotes them without loading anything new.
void PromoteMklToGlobalScope() {
  static const char* const kNames[] = {
      "libmkl_rt.so", "libmkl_core.so", "libmkl_intel_lp64.so", "libmkl_gf_lp64.so", "libmkl_sequential.so",
      "libmkl_gnu_thread.so", "libmkl_intel_thread.so", "libmkl_tbb_thread.so",
  };
  for (const char* name : kNames) dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  const void* symbols[] = {reinterpret_cast<const void*>(g_rt.mkl_get_version_string), reinterpret_cast<const void*>(&cblas_dgemm)};
  for (const void* symbol : symbols) {
    Dl_info info;
    if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  }
}

void InitRuntime() {
  Runtime& r = g_rt;
  Sym(r.openblas_get_config, "openblas_get_config");
  Sym(r.openblas_get_corename, "openblas_get_corename");
  Sym(r.openblas_get_parallel, "openblas_get_parallel");
  Sym(r.openblas_get_num_threads, "openblas_get_num_threads");
  Sym(r.openblas_set_num_threads, "openblas_set_num_threads");
  Sym(r.mkl_get_version_string, "mkl_get_version_string");
  Sym(r.mkl_set_num_threads_local, "mkl_set_num_threads_local");
  Sym(r.mkl_get_max_threads, "mkl_get_max_threads");
  Sym(r.bli_info_get_version_str, "bli_info_get_version_str");
  Sym(r.bli_info_get_enable_threading, "bli_info_get_enable_threading");
  Sym(r.bli_info_get_enable_openmp, "bli_info_get_enable_openmp");
  Sym(r.bli_info_get_enable_pthreads, "bli_info_get_enable_pthreads");
  Sym(r.bli_thread_get_num_threads, "bli_thread_get_num_threads");
  Sym(r.bli_thread_set_num_threads, "bli_thread_set_num_threads");

  if (r.mkl_get_version_string != nullptr) {
    r.vendor = "mkl";
    PromoteMklToGlobalScope();
  } else if (r.openblas_get_config != nullptr) {
    r.vendor = "openblas";
  } else if (r.bli_info_get_version_str != nullptr) {
    r.vendor = "blis";
  }

  // BLIS: probe whether the "global" thread setting is per application thread (BLIS >= 0.9
  // keeps it in thread-local storage unless built with --disable-tls) and whether it takes
  // effect at all (a build without threading ignores it).
  if (r.bli_thread_get_num_threads != nullptr && r.bli_thread_set_num_threads != nullptr) {
    const int64_t before = r.bli_thread_get_num_threads();
    int64_t seen[2] = {before > 1 ? before - 1 : before + 1, 0};
    pthread_t thread;
    if (pthread_create(&thread, nullptr, BlisProbeThread, seen) == 0) {
      pthread_join(thread, nullptr);
      const int64_t after = r.bli_thread_get_num_threads();
      r.blisSetEffective = seen[1] == seen[0];
      r.blisThreadLocal = r.blisSetEffective && after == before;
      if (after != before) r.bli_thread_set_num_threads(before);
    }
  }
}

const Runtime& Rt() {
  std::call_once(g_rtOnce, InitRuntime);
  return g_rt;
}

std::string LibraryOf(const void* address) {
  Dl_info info;
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "";
}

// ---------------------------------------------------------------------------------------------
// Thread control around one call.
struct ThreadScope {
  int mklPrevious = -1;
  explicit ThreadScope(int threads) {
    if (threads <= 0) return;
    const Runtime& r = Rt();
    if (r.mkl_set_num_threads_local != nullptr) {
      // Per call and per calling thread; restored in the destructor.
      mklPrevious = r.mkl_set_num_threads_local(threads);
    } else if (r.openblas_set_num_threads != nullptr) {
      // Process-global: the provider-exclusive permit is what makes this safe.
      if (r.openblas_get_num_threads == nullptr || r.openblas_get_num_threads() != threads) r.openblas_set_num_threads(threads);
    } else if (r.bli_thread_set_num_threads != nullptr && r.blisSetEffective) {
      if (r.bli_thread_get_num_threads() != threads) r.bli_thread_set_num_threads(threads);
    }
  }
  ~ThreadScope() {
    if (mklPrevious >= 0) Rt().mkl_set_num_threads_local(mklPrevious);
  }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
};

// ---------------------------------------------------------------------------------------------
// GEMM.
struct Bytes {
  uint8_t* data = nullptr;
  size_t length = 0;
};

bool GetBytes(const Napi::Value& value, Bytes* out) {
  if (!value.IsTypedArray()) return false;
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_value arraybuffer;
  size_t byteOffset = 0;
  if (napi_get_typedarray_info(value.Env(), value, &type, &length, &data, &arraybuffer, &byteOffset) != napi_ok) return false;
  if (type != napi_uint8_array) return false;
  out->data = static_cast<uint8_t*>(data);
  out->length = length;
  return true;
}

// The farthest element index (inclusive) reached by a column-major rows x cols matrix with leading
// dimension ld at `offset`, over every batch; -1 when it reaches nothing.
__int128 Reach(int64_t offset, int64_t rows, int64_t cols, int64_t ld, int rank, const double* extents, const double* strides) {
  if (rows <= 0 || cols <= 0) return -1;
  __int128 last = static_cast<__int128>(offset) + (rows - 1) + static_cast<__int128>(cols - 1) * ld;
  for (int t = 0; t < rank; t++) {
    const int64_t e = static_cast<int64_t>(extents[t]);
    if (e <= 0) return -1;
    last += static_cast<__int128>(e - 1) * static_cast<int64_t>(strides[t]);
  }
  return last;
}

bool Fits(__int128 last, size_t elementBytes, size_t length) {
  if (last < 0) return true;
  return (last + 1) * static_cast<__int128>(elementBytes) <= static_cast<__int128>(length);
}

bool ValidTrans(int t) { return t == CblasNoTrans || t == CblasTrans || t == CblasConjTrans || t == 114; }

// C = beta * C (k = 0: BLAS is not called, so nothing reads A or B). beta = 0 writes zeros.
template <typename T>
void ScaleReal(T* c, int64_t m, int64_t n, int64_t ldc, T beta) {
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
void ScaleComplex(T* c, int64_t m, int64_t n, int64_t ldc, T br, T bi) {
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

int32_t RunGemm(const double* d, size_t dlen, const Bytes& A, const Bytes& B, const Bytes& C) {
  if (dlen < kDescHeader) return kStatusBadDescriptor;
  const int dtype = static_cast<int>(d[kDescDType]);
  if (dtype < 0 || dtype > 3) return kStatusBadDType;
  const int ta = static_cast<int>(d[kDescTransA]);
  const int tb = static_cast<int>(d[kDescTransB]);
  if (!ValidTrans(ta) || !ValidTrans(tb)) return kStatusBadTranspose;
  const int64_t m = static_cast<int64_t>(d[kDescM]);
  const int64_t n = static_cast<int64_t>(d[kDescN]);
  const int64_t k = static_cast<int64_t>(d[kDescK]);
  const int64_t lda = static_cast<int64_t>(d[kDescLda]);
  const int64_t ldb = static_cast<int64_t>(d[kDescLdb]);
  const int64_t ldc = static_cast<int64_t>(d[kDescLdc]);
  const int64_t offA = static_cast<int64_t>(d[kDescOffA]);
  const int64_t offB = static_cast<int64_t>(d[kDescOffB]);
  const int64_t offC = static_cast<int64_t>(d[kDescOffC]);
  const int threads = static_cast<int>(d[kDescThreads]);
  const int rank = static_cast<int>(d[kDescBatchRank]);
  if (m < 0 || n < 0 || k < 0 || offA < 0 || offB < 0 || offC < 0) return kStatusBadDescriptor;
  if (rank < 0 || rank > kMaxBatchRank || dlen < static_cast<size_t>(kDescHeader + 4 * rank)) return kStatusBadDescriptor;
  const int64_t intMax = 0x7fffffff;
  if (m > intMax || n > intMax || k > intMax || lda > intMax || ldb > intMax || ldc > intMax) return kStatusTooLarge;
  // The leading-dimension rules of ?gemm (column major), so BLAS never reports a parameter error.
  const bool aNo = ta == CblasNoTrans || ta == 114;
  const bool bNo = tb == CblasNoTrans || tb == 114;
  const int64_t aRows = aNo ? m : k, aCols = aNo ? k : m;
  const int64_t bRows = bNo ? k : n, bCols = bNo ? n : k;
  if (lda < (aRows > 1 ? aRows : 1) || ldb < (bRows > 1 ? bRows : 1) || ldc < (m > 1 ? m : 1)) return kStatusBadDescriptor;

  const double* extents = d + kDescHeader;
  const double* sa = extents + rank;
  const double* sb = sa + rank;
  const double* sc = sb + rank;
  int64_t batches = 1;
  for (int t = 0; t < rank; t++) {
    const int64_t e = static_cast<int64_t>(extents[t]);
    if (e < 0 || sa[t] < 0 || sb[t] < 0 || sc[t] < 0) return kStatusBadDescriptor;
    batches *= e;
  }
  if (m == 0 || n == 0 || batches == 0) return kStatusOk;

  const size_t elementBytes = dtype == 0 ? 4 : dtype == 1 ? 8 : dtype == 2 ? 8 : 16;
  if (k > 0) {
    if (!Fits(Reach(offA, aRows, aCols, lda, rank, extents, sa), elementBytes, A.length)) return kStatusOutOfBoundsA;
    if (!Fits(Reach(offB, bRows, bCols, ldb, rank, extents, sb), elementBytes, B.length)) return kStatusOutOfBoundsB;
  }
  if (!Fits(Reach(offC, m, n, ldc, rank, extents, sc), elementBytes, C.length)) return kStatusOutOfBoundsC;

  const double ar = d[kDescAlphaRe], ai = d[kDescAlphaIm], br = d[kDescBetaRe], bi = d[kDescBetaIm];
  const float alphaF[2] = {static_cast<float>(ar), static_cast<float>(ai)};
  const float betaF[2] = {static_cast<float>(br), static_cast<float>(bi)};
  const double alphaD[2] = {ar, ai};
  const double betaD[2] = {br, bi};
  const CBLAS_TRANSPOSE TA = static_cast<CBLAS_TRANSPOSE>(ta);
  const CBLAS_TRANSPOSE TB = static_cast<CBLAS_TRANSPOSE>(tb);
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb), LDC = static_cast<int>(ldc);

  ThreadScope scope(k > 0 ? threads : 0);
  int64_t index[kMaxBatchRank] = {0};
  int64_t oa = offA, ob = offB, oc = offC;
  for (int64_t b = 0; b < batches; b++) {
    uint8_t* pa = A.data + static_cast<size_t>(oa) * elementBytes;
    uint8_t* pb = B.data + static_cast<size_t>(ob) * elementBytes;
    uint8_t* pc = C.data + static_cast<size_t>(oc) * elementBytes;
    if (k == 0) {
      switch (dtype) {
        case 0: ScaleReal(reinterpret_cast<float*>(pc), m, n, ldc, betaF[0]); break;
        case 1: ScaleReal(reinterpret_cast<double*>(pc), m, n, ldc, br); break;
        case 2: ScaleComplex(reinterpret_cast<float*>(pc), m, n, ldc, betaF[0], betaF[1]); break;
        default: ScaleComplex(reinterpret_cast<double*>(pc), m, n, ldc, br, bi); break;
      }
    } else {
      switch (dtype) {
        case 0:
          cblas_sgemm(CblasColMajor, TA, TB, M, N, K, alphaF[0], reinterpret_cast<const float*>(pa), LDA,
                      reinterpret_cast<const float*>(pb), LDB, betaF[0], reinterpret_cast<float*>(pc), LDC);
          break;
        case 1:
          cblas_dgemm(CblasColMajor, TA, TB, M, N, K, ar, reinterpret_cast<const double*>(pa), LDA,
                      reinterpret_cast<const double*>(pb), LDB, br, reinterpret_cast<double*>(pc), LDC);
          break;
        case 2:
          cblas_cgemm(CblasColMajor, TA, TB, M, N, K, alphaF, pa, LDA, pb, LDB, betaF, pc, LDC);
          break;
        default:
          cblas_zgemm(CblasColMajor, TA, TB, M, N, K, alphaD, pa, LDA, pb, LDB, betaD, pc, LDC);
          break;
      }
    }
    // Next batch index (odometer over the extents, last axis fastest).
    for (int t = rank - 1; t >= 0; t--) {
      const int64_t e = static_cast<int64_t>(extents[t]);
      const int64_t da = static_cast<int64_t>(sa[t]), db = static_cast<int64_t>(sb[t]), dc = static_cast<int64_t>(sc[t]);
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

Napi::Value Gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsTypedArray()) return Napi::Number::New(env, kStatusBadArguments);
  Napi::TypedArray descArray = info[0].As<Napi::TypedArray>();
  if (descArray.TypedArrayType() != napi_float64_array) return Napi::Number::New(env, kStatusBadArguments);
  Napi::Float64Array desc = info[0].As<Napi::Float64Array>();
  Bytes a, b, c;
  if (!GetBytes(info[1], &a) || !GetBytes(info[2], &b) || !GetBytes(info[3], &c)) return Napi::Number::New(env, kStatusBadArguments);
  return Napi::Number::New(env, RunGemm(desc.Data(), desc.ElementLength(), a, b, c));
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Runtime& r = Rt();
  Napi::Object o = Napi::Object::New(env);
  o.Set("vendor", r.vendor);
  o.Set("libraryPath", LibraryOf(reinterpret_cast<const void*>(&cblas_dgemm)));
  std::string version, config, core, runtimePath;
  int parallel = -1, threads = -1;
  if (r.mkl_get_version_string != nullptr) {
    char buffer[256] = {0};
    r.mkl_get_version_string(buffer, sizeof(buffer) - 1);
    version = buffer;
    runtimePath = LibraryOf(reinterpret_cast<const void*>(r.mkl_get_version_string));
    if (r.mkl_get_max_threads != nullptr) threads = r.mkl_get_max_threads();
  } else if (r.openblas_get_config != nullptr) {
    const char* cfg = r.openblas_get_config();
    config = cfg != nullptr ? cfg : "";
    const char* cn = r.openblas_get_corename != nullptr ? r.openblas_get_corename() : nullptr;
    core = cn != nullptr ? cn : "";
    if (r.openblas_get_parallel != nullptr) parallel = r.openblas_get_parallel();
    if (r.openblas_get_num_threads != nullptr) threads = r.openblas_get_num_threads();
    runtimePath = LibraryOf(reinterpret_cast<const void*>(r.openblas_get_config));
  } else if (r.bli_info_get_version_str != nullptr) {
    const char* v = r.bli_info_get_version_str();
    version = v != nullptr ? v : "";
    if (r.bli_info_get_enable_threading != nullptr) {
      const bool on = r.bli_info_get_enable_threading() != 0;
      const bool omp = r.bli_info_get_enable_openmp != nullptr && r.bli_info_get_enable_openmp() != 0;
      const bool pth = r.bli_info_get_enable_pthreads != nullptr && r.bli_info_get_enable_pthreads() != 0;
      parallel = !on ? 0 : omp ? 2 : pth ? 1 : 3;
    }
    if (r.bli_thread_get_num_threads != nullptr) threads = static_cast<int>(r.bli_thread_get_num_threads());
    runtimePath = LibraryOf(reinterpret_cast<const void*>(r.bli_info_get_version_str));
  }
  o.Set("version", version);
  o.Set("config", config);
  o.Set("coreName", core);
  o.Set("parallel", parallel);
  o.Set("threads", threads);
  o.Set("runtimePath", runtimePath);
  o.Set("mklLocalThreads", r.mkl_set_num_threads_local != nullptr);
  o.Set("openblasSetThreads", r.openblas_set_num_threads != nullptr);
  o.Set("blisSetEffective", r.blisSetEffective);
  o.Set("blisThreadLocal", r.blisThreadLocal);
  return o;
}

Napi::Value GetThreads(const Napi::CallbackInfo& info) {
  const Runtime& r = Rt();
  int threads = -1;
  if (r.mkl_get_max_threads != nullptr) threads = r.mkl_get_max_threads();
  else if (r.openblas_get_num_threads != nullptr) threads = r.openblas_get_num_threads();
  else if (r.bli_thread_get_num_threads != nullptr) threads = static_cast<int>(r.bli_thread_get_num_threads());
  return Napi::Number::New(info.Env(), threads);
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return Napi::Number::New(env, kStatusBadArguments);
  const int threads = info[0].As<Napi::Number>().Int32Value();
  if (threads < 1) return Napi::Number::New(env, kStatusBadArguments);
  const Runtime& r = Rt();
  if (r.openblas_set_num_threads != nullptr) r.openblas_set_num_threads(threads);
  else if (r.bli_thread_set_num_threads != nullptr) r.bli_thread_set_num_threads(threads);
  return Napi::Number::New(env, kStatusOk);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Rt();
  exports.Set("gemm", Napi::Function::New(env, Gemm, "gemm"));
  exports.Set("info", Napi::Function::New(env, Info, "info"));
  exports.Set("getThreads", Napi::Function::New(env, GetThreads, "getThreads"));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("conjNoTrans", Napi::Number::New(env, 114));
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_blas, Init)
