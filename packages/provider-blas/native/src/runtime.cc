// The BLAS runtime behind tenferro_blas.node (what src/runtime.ts describes):
//   info() -> { vendor, version, config, coreName, parallel, threads, ... }
//       The runtime's identity, found with dlsym(RTLD_DEFAULT, ...) and dladdr.
//   setThreads(n) -> status, getThreads() -> number
// and ThreadScope, which gemm.cc puts around each call. Nothing here throws.
#include "blas_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include <mutex>
#include <string>

#include <napi.h>

#include "blas_addon.h"

namespace blas {
namespace {

Runtime g_runtime;
std::once_flag g_runtime_once;

template <typename F>
void bind_symbol(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

void* blis_probe_thread(void* arg) {
  int64_t* seen = static_cast<int64_t*>(arg);
  g_runtime.bli_thread_set_num_threads(seen[0]);
  seen[1] = g_runtime.bli_thread_get_num_threads();
  return nullptr;
}

// MKL's CPU dispatcher dlopen()s its kernel libraries (libmkl_def.so, libmkl_avx512.so ...),
// which resolve symbols of libmkl_core and the threading layer from the GLOBAL scope. Node loads
// addons with RTLD_LOCAL, so those libraries (dependencies of this addon) are not global and MKL
// stops with "undefined symbol ... Cannot load libmkl_def.so". Re-opening the already-loaded MKL
// libraries with RTLD_NOLOAD | RTLD_GLOBAL promotes them without loading anything new.
void promote_mkl_to_global_scope() {
  static const char* const kNames[] = {
      "libmkl_rt.so",         "libmkl_core.so",       "libmkl_intel_lp64.so",   "libmkl_gf_lp64.so",
      "libmkl_sequential.so", "libmkl_gnu_thread.so", "libmkl_intel_thread.so", "libmkl_tbb_thread.so",
  };
  for (const char* name : kNames) dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  const void* symbols[] = {reinterpret_cast<const void*>(g_runtime.mkl_get_version_string), reinterpret_cast<const void*>(&cblas_dgemm)};
  for (const void* symbol : symbols) {
    Dl_info info;
    if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  }
}

void init_runtime() {
  Runtime& r = g_runtime;
  bind_symbol(r.openblas_get_config, "openblas_get_config");
  bind_symbol(r.openblas_get_corename, "openblas_get_corename");
  bind_symbol(r.openblas_get_parallel, "openblas_get_parallel");
  bind_symbol(r.openblas_get_num_threads, "openblas_get_num_threads");
  bind_symbol(r.openblas_set_num_threads, "openblas_set_num_threads");
  bind_symbol(r.mkl_get_version_string, "mkl_get_version_string");
  bind_symbol(r.mkl_set_num_threads_local, "mkl_set_num_threads_local");
  bind_symbol(r.mkl_get_max_threads, "mkl_get_max_threads");
  bind_symbol(r.bli_info_get_version_str, "bli_info_get_version_str");
  bind_symbol(r.bli_info_get_enable_threading, "bli_info_get_enable_threading");
  bind_symbol(r.bli_info_get_enable_openmp, "bli_info_get_enable_openmp");
  bind_symbol(r.bli_info_get_enable_pthreads, "bli_info_get_enable_pthreads");
  bind_symbol(r.bli_thread_get_num_threads, "bli_thread_get_num_threads");
  bind_symbol(r.bli_thread_set_num_threads, "bli_thread_set_num_threads");

  if (r.mkl_get_version_string != nullptr) {
    r.vendor = "mkl";
    promote_mkl_to_global_scope();
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
    if (pthread_create(&thread, nullptr, blis_probe_thread, seen) == 0) {
      pthread_join(thread, nullptr);
      const int64_t after = r.bli_thread_get_num_threads();
      r.blis_set_effective = seen[1] == seen[0];
      r.blis_thread_local = r.blis_set_effective && after == before;
      if (after != before) r.bli_thread_set_num_threads(before);
    }
  }
}

}  // namespace

const Runtime& runtime() {
  std::call_once(g_runtime_once, init_runtime);
  return g_runtime;
}

std::string library_of(const void* address) {
  Dl_info info;
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "";
}

ThreadScope::ThreadScope(int threads) {
  if (threads <= 0) return;
  const Runtime& r = runtime();
  if (r.mkl_set_num_threads_local != nullptr) {
    // Per call and per calling thread; restored in the destructor.
    mkl_previous = r.mkl_set_num_threads_local(threads);
  } else if (r.openblas_set_num_threads != nullptr) {
    // Process-global: the provider-exclusive permit is what makes this safe.
    if (r.openblas_get_num_threads == nullptr || r.openblas_get_num_threads() != threads) r.openblas_set_num_threads(threads);
  } else if (r.bli_thread_set_num_threads != nullptr && r.blis_set_effective) {
    if (r.bli_thread_get_num_threads() != threads) r.bli_thread_set_num_threads(threads);
  }
}

ThreadScope::~ThreadScope() {
  if (mkl_previous >= 0) runtime().mkl_set_num_threads_local(mkl_previous);
}

namespace js {

Napi::Value info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Runtime& r = runtime();
  Napi::Object o = Napi::Object::New(env);
  o.Set("vendor", r.vendor);
  o.Set("libraryPath", library_of(reinterpret_cast<const void*>(&cblas_dgemm)));
  std::string version, config, core, runtime_path;
  int parallel = -1, threads = -1;
  if (r.mkl_get_version_string != nullptr) {
    char buffer[256] = {0};
    r.mkl_get_version_string(buffer, sizeof(buffer) - 1);
    version = buffer;
    runtime_path = library_of(reinterpret_cast<const void*>(r.mkl_get_version_string));
    if (r.mkl_get_max_threads != nullptr) threads = r.mkl_get_max_threads();
  } else if (r.openblas_get_config != nullptr) {
    const char* cfg = r.openblas_get_config();
    config = cfg != nullptr ? cfg : "";
    const char* cn = r.openblas_get_corename != nullptr ? r.openblas_get_corename() : nullptr;
    core = cn != nullptr ? cn : "";
    if (r.openblas_get_parallel != nullptr) parallel = r.openblas_get_parallel();
    if (r.openblas_get_num_threads != nullptr) threads = r.openblas_get_num_threads();
    runtime_path = library_of(reinterpret_cast<const void*>(r.openblas_get_config));
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
    runtime_path = library_of(reinterpret_cast<const void*>(r.bli_info_get_version_str));
  }
  o.Set("version", version);
  o.Set("config", config);
  o.Set("coreName", core);
  o.Set("parallel", parallel);
  o.Set("threads", threads);
  o.Set("runtimePath", runtime_path);
  o.Set("mklLocalThreads", r.mkl_set_num_threads_local != nullptr);
  o.Set("openblasSetThreads", r.openblas_set_num_threads != nullptr);
  o.Set("blisSetEffective", r.blis_set_effective);
  o.Set("blisThreadLocal", r.blis_thread_local);
  return o;
}

Napi::Value get_threads(const Napi::CallbackInfo& info) {
  const Runtime& r = runtime();
  int threads = -1;
  if (r.mkl_get_max_threads != nullptr) threads = r.mkl_get_max_threads();
  else if (r.openblas_get_num_threads != nullptr) threads = r.openblas_get_num_threads();
  else if (r.bli_thread_get_num_threads != nullptr) threads = static_cast<int>(r.bli_thread_get_num_threads());
  return Napi::Number::New(info.Env(), threads);
}

Napi::Value set_threads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return Napi::Number::New(env, kStatusBadArguments);
  const int threads = info[0].As<Napi::Number>().Int32Value();
  if (threads < 1) return Napi::Number::New(env, kStatusBadArguments);
  const Runtime& r = runtime();
  if (r.openblas_set_num_threads != nullptr) r.openblas_set_num_threads(threads);
  else if (r.bli_thread_set_num_threads != nullptr) r.bli_thread_set_num_threads(threads);
  return Napi::Number::New(env, kStatusOk);
}

}  // namespace js
}  // namespace blas
