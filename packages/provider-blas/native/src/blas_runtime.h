// @tenferro/provider-blas: the CBLAS this addon is linked against and what runtime.cc found out
// about the library behind it (dlsym/dladdr, once per process), shared by runtime.cc and gemm.cc.
#pragma once

#include <stdint.h>

#include <string>

#ifdef TENFERRO_BLAS_MKL
#include <mkl_cblas.h>
#else
#include <cblas.h>
#endif

namespace blas {

// CblasConjNoTrans: an OpenBLAS extension of the CBLAS transpose codes (not in every cblas.h).
constexpr int kCblasConjNoTrans = 114;

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
  bool blis_thread_local = false;
  bool blis_set_effective = false;
  const char* vendor = "reference";
};

/** The runtime of this process, identified on first use (thread-safe). */
const Runtime& runtime();

/** The file of the shared object holding `address` (dladdr), or "". */
std::string library_of(const void* address);

// Thread control around one call: sets the runtime's thread count to `threads` (> 0; 0 leaves it
// alone) and, where that setting is per call (MKL's local threads), restores it on destruction.
struct ThreadScope {
  int mkl_previous = -1;
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
};

}  // namespace blas
