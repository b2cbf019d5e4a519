// @tenferro/provider-blas: the BLAS runtime behind this addon. Nothing is linked at build time:
// load() (runtime.cc) dlopen()s the first usable candidate library at run time — on the engine
// worker that runs the first GEMM, so a threaded runtime's threads inherit that worker's mask —
// and resolves cblas_?gemm and the runtime's identity symbols with dlsym. One runtime per
// process (every JavaScript realm that loads this addon shares it).
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "fork_guard.h"

namespace blas {

// The CBLAS ABI this addon calls (the values every cblas.h uses; enums are passed as int).
enum CblasCode : int {
  kCblasColMajor = 102,
  kCblasNoTrans = 111,
  kCblasTrans = 112,
  kCblasConjTrans = 113,
  // CblasConjNoTrans: an OpenBLAS extension of the CBLAS transpose codes (not in every cblas.h).
  kCblasConjNoTrans = 114,
};

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
using CgemmFn = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);

// The runtime: null pointers until load() succeeds (identity symbols stay null under reference BLAS).
struct Runtime {
  bool loaded = false;
  void* handle = nullptr;
  std::string library;  // the candidate that loaded (as given: soname or path)
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  CgemmFn cgemm = nullptr;
  CgemmFn zgemm = nullptr;
  // OpenBLAS
  char* (*openblas_get_config)() = nullptr;
  char* (*openblas_get_corename)() = nullptr;
  int (*openblas_get_parallel)() = nullptr;
  int (*openblas_get_num_threads)() = nullptr;
  void (*openblas_set_num_threads)(int) = nullptr;
  // MKL: the C names of mkl_service.h only (#42). The lower-case names (mkl_set_num_threads_local,
  // mkl_get_version_string ...) are the Fortran-ABI entry points: they take their arguments by
  // address, and calling one with an int made MKL read the count as a pointer (a fault at 0x1).
  void (*mkl_get_version_string)(char*, int) = nullptr;  // MKL_Get_Version_String
  int (*mkl_set_num_threads_local)(int) = nullptr;        // MKL_Set_Num_Threads_Local: the previous local count (0: none)
  int (*mkl_get_max_threads)() = nullptr;                 // MKL_Get_Max_Threads
  int (*mkl_set_threading_layer)(int) = nullptr;          // MKL_Set_Threading_Layer: the layer in effect
  int (*mkl_set_interface_layer)(int) = nullptr;          // MKL_Set_Interface_Layer: the layer in effect
  // The threading layer load() selected (mkl_threading_layer_name), "" when not MKL; every isolate
  // reads it from here (a worker_threads isolate has no /proc/self/maps probe of its own, #42).
  std::string mkl_layer;
  // How the layer was chosen: "environment" (MKL_THREADING_LAYER), "tenferro" (the runtime present).
  std::string mkl_layer_source;
  // The OpenMP runtime load() made global for that layer ("" for sequential).
  std::string mkl_openmp_runtime;
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
  const char* vendor = "none";
};

/** What load() was asked to do. */
struct LoadRequest {
  std::vector<std::string> candidates;
  // OPENBLAS_CORETYPE to put in the process environment (setenv) before dlopen; "" = none.
  std::string coretype;
  // Replace a value already in the environment (an explicit option) or only fill an empty one.
  bool coretype_overwrite = false;
};

/** What load() did (also kept for info()). */
struct LoadOutcome {
  bool loaded = false;
  std::vector<std::string> errors;           // one line per candidate that failed
  std::string coretype_before;               // getenv("OPENBLAS_CORETYPE") before, "" when unset
  bool coretype_was_set = false;             // whether it was set before
  bool coretype_applied = false;             // whether load() called setenv
  int loader_tid = 0;                        // the thread that ran dlopen
  std::string loader_cpus;                   // its affinity mask (cpulist) at that moment
  // A candidate refused on purpose (not a dlopen failure): e.g. "ILP64" when MKL was asked for its
  // 64-bit-integer interface, which this addon's 32-bit calls would crash (#42). "" when none.
  std::string refused;
};

/** The runtime of this process (thread-safe read after load). */
const Runtime& runtime();

/** Whether load() succeeded (acquire: every pointer of runtime() is then visible). */
bool runtime_loaded();

/** dlopen the first usable candidate (once per process; later calls report the first outcome). */
const LoadOutcome& load(const LoadRequest& request);

/** The outcome of the load so far (loaded = false and no errors: never attempted). */
const LoadOutcome& load_outcome();

/** The file of the shared object holding `address` (dladdr), or "". */
std::string library_of(const void* address);

/** A thread count for the runtime: `threads` clamped to [1, the CPUs configured] (at most 4096). */
int clamp_threads(int64_t threads);

/** Threads the runtime started during calls (MKL's OpenMP team), found by ThreadScope; every isolate reads them. */
std::vector<int> runtime_call_threads();

// Thread control around one call: sets the runtime's thread count to `threads` (> 0; 0 leaves it
// alone) and, where that setting is per call (MKL's local threads), restores it on destruction.
// Also holds the fork guard (fork_guard.h) for the call.
// MKL's thread count is set with MKL_Set_Num_Threads_Local (C ABI, clamped) and restored after.
// The first call of a calling thread with more threads than it has used so far lists
// /proc/self/task before and after: the threads that appeared (an OpenMP team) are recorded for
// the thread census (runtime_call_threads).
struct ThreadScope {
  CallGuard fork_guard;
  int mkl_previous = -1;
  bool census = false;
  std::vector<int> tasks_before;
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
};

}  // namespace blas
