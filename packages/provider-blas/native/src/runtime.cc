// The BLAS runtime behind tenferro_blas.node (what src/runtime.ts describes):
//   load({ candidates, coretype, coretypeOverwrite }) -> outcome
//       OPENBLAS_CORETYPE into the real process environment (setenv: a worker's process.env is a
//       copy), then dlopen() of the first candidate that exports cblas_{s,d,c,z}gemm, and the
//       runtime's identity symbols found with dlsym in it (and its dependencies). Once per process.
//   info() -> { loaded, vendor, version, config, coreName, parallel, threads, ... }
//   setThreads(n) -> status, getThreads() -> number
// and ThreadScope, which gemm.cc puts around each call. Nothing here throws.
#include "blas_runtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <iterator>
#include <mutex>
#include <string>

#include <napi.h>

#include "blas_addon.h"

namespace blas {
namespace {

Runtime g_runtime;
LoadOutcome g_outcome;
std::mutex g_mutex;
bool g_attempted = false;
std::atomic<bool> g_loaded{false};

// The libraries tried when load() is given no candidates (src/native/candidates.ts gives the
// same list; TENFERRO_BLAS_LIBRARY or the `library` option replace it): the system's libblas.so.3
// (Debian's update-alternatives choice: OpenBLAS, BLIS, reference or MKL, CBLAS inside), OpenBLAS
// and BLIS by name, then a separate reference CBLAS. MKL is not in the list: installing it does
// not switch the provider to it; it is used when it is the system's libblas.so.3 or asked for (#42).
const char* const kDefaultCandidates[] = {
    "libblas.so.3", "libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libblis.so", "libcblas.so.3", "libblas.so",
};

// mkl_service.h: MKL_THREADING_INTEL 0, _SEQUENTIAL 1, _PGI 2, _GNU 3, _TBB 4; MKL_INTERFACE_LP64 0,
// _ILP64 1, _GNU 2 (a flag added to either).
constexpr int kMklThreadingIntel = 0;
constexpr int kMklThreadingSequential = 1;
constexpr int kMklThreadingGnu = 3;
constexpr int kMklThreadingTbb = 4;
constexpr int kMklInterfaceIlp64 = 1;
constexpr int kMklInterfaceGnu = 2;

struct MklLayer {
  int code;
  const char* env;   // the MKL_THREADING_LAYER value
  const char* name;  // src/runtime.ts BlasThreadingLayer
  // The runtime the layer's library needs in the global scope (libmkl_*_thread.so lists none of
  // them as NEEDED), tried in order; none for sequential.
  const char* runtimes[4];
  const char* package;  // the Debian package that provides it
  // MKL's own library for the layer, which libmkl_rt loads on its first call (from its own
  // directory, else by name) — and exits the process when it cannot (#42).
  const char* library;
  const char* library_package;  // where it comes from (Debian 12 ships no libmkl_tbb_thread)
};

const MklLayer kMklLayers[] = {
    {kMklThreadingSequential, "SEQUENTIAL", "sequential", {nullptr}, "", "libmkl_sequential.so", "libmkl-sequential"},
    {kMklThreadingGnu, "GNU", "gnu-openmp", {"libgomp.so.1", nullptr}, "libgomp1", "libmkl_gnu_thread.so", "libmkl-gnu-thread"},
    // Intel's OpenMP runtime, or LLVM's libomp, which implements the same ABI (Debian: libomp5-14).
    {kMklThreadingIntel, "INTEL", "intel-openmp", {"libiomp5.so", "libomp.so.5", "libomp.so", nullptr}, "libomp5-14 (LLVM's libomp.so.5, Intel-compatible)",
     "libmkl_intel_thread.so", "libmkl-intel-thread"},
    {kMklThreadingTbb, "TBB", "tbb", {"libtbb.so.12", "libtbb.so.2", "libtbb.so", nullptr}, "libtbb12", "libmkl_tbb_thread.so",
     "Intel's oneMKL distribution (Debian 12 has no MKL TBB layer package)"},
};

template <typename F>
void bind_symbol(void* handle, F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
}

void* blis_probe_thread(void* arg) {
  int64_t* seen = static_cast<int64_t*>(arg);
  g_runtime.bli_thread_set_num_threads(seen[0]);
  seen[1] = g_runtime.bli_thread_get_num_threads();
  return nullptr;
}

// MKL's CPU dispatcher dlopen()s its kernel libraries (libmkl_def.so, libmkl_avx512.so ...),
// which resolve symbols of libmkl_core and the threading layer from the GLOBAL scope. A library
// opened RTLD_LOCAL is not global and MKL stops with "undefined symbol ... Cannot load
// libmkl_def.so". Re-opening the already-loaded MKL libraries with RTLD_NOLOAD | RTLD_GLOBAL
// promotes them without loading anything new.
void promote_mkl_to_global_scope() {
  static const char* const kNames[] = {
      "libmkl_rt.so",         "libmkl_rt.so.2",       "libmkl_core.so",         "libmkl_intel_lp64.so", "libmkl_gf_lp64.so",
      "libmkl_sequential.so", "libmkl_gnu_thread.so", "libmkl_intel_thread.so", "libmkl_tbb_thread.so",
  };
  for (const char* name : kNames) dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  const void* symbols[] = {reinterpret_cast<const void*>(g_runtime.mkl_get_version_string), reinterpret_cast<const void*>(g_runtime.dgemm)};
  for (const void* symbol : symbols) {
    Dl_info info;
    if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  }
}

// Where libmkl_rt will look for `library` when MKL initialises: its own directory first, then the
// dynamic loader's search (LD_LIBRARY_PATH, or a library already mapped). MKL answers a missing
// one with "Intel MKL FATAL ERROR" and exit(), so it is looked for before MKL is asked anything.
bool mkl_library_present(void* h, const char* library) {
  void* symbol = dlsym(h, "MKL_Get_Version_String");
  Dl_info info;
  if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    std::string dir = info.dli_fname;
    const size_t slash = dir.rfind('/');
    if (slash != std::string::npos && access((dir.substr(0, slash + 1) + library).c_str(), R_OK) == 0) return true;
  }
  if (void* mapped = dlopen(library, RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(mapped);  // only the reference RTLD_NOLOAD took
    return true;
  }
  const char* path = getenv("LD_LIBRARY_PATH");
  if (path == nullptr) return false;
  std::string rest = path;
  for (size_t guard = 0; !rest.empty() && guard < 256; guard++) {
    const size_t colon = rest.find(':');
    const std::string dir = rest.substr(0, colon);
    if (!dir.empty() && access((dir + "/" + library).c_str(), R_OK) == 0) return true;
    if (colon == std::string::npos) break;
    rest = rest.substr(colon + 1);
  }
  return false;
}

std::string upper(const char* v) {
  std::string out;
  for (const char* p = v; *p != '\0' && out.size() < 64; p++) out += (*p >= 'a' && *p <= 'z') ? static_cast<char>(*p - 32) : *p;
  return out;
}

// Before MKL computes anything: refuse the ILP64 interface, and select the threading layer
// explicitly (MKL_THREADING_LAYER when set, else GNU OpenMP when libgomp loads, else sequential),
// with its OpenMP runtime made global first. False (and a line in errors) when MKL cannot be used
// as asked. MKL reads both settings once, on its first call: nothing here has called it yet.
bool setup_mkl(void* h, const std::string& name) {
  Runtime& r = g_runtime;
  bind_symbol(h, r.mkl_set_threading_layer, "MKL_Set_Threading_Layer");
  bind_symbol(h, r.mkl_set_interface_layer, "MKL_Set_Interface_Layer");
  if (r.mkl_set_threading_layer == nullptr || r.mkl_set_interface_layer == nullptr) {
    g_outcome.errors.push_back(name + ": MKL without MKL_Set_Threading_Layer/MKL_Set_Interface_Layer (not the single dynamic library libmkl_rt): its threading and integer layers cannot be chosen");
    return false;
  }
  // The interface: LP64 (32-bit integers) is what every call of this addon passes.
  const char* iface_env = getenv("MKL_INTERFACE_LAYER");
  const std::string iface = iface_env != nullptr ? upper(iface_env) : "";
  if (iface.find("ILP64") != std::string::npos) {
    g_outcome.refused = "ILP64";
    g_outcome.errors.push_back(name + ": refused: MKL_INTERFACE_LAYER=" + iface +
                               " selects MKL's ILP64 interface (64-bit integers); tenferro calls BLAS and LAPACK with 32-bit integers, which ILP64 would misread. Unset MKL_INTERFACE_LAYER or set it to LP64");
    return false;
  }
  const int wanted = iface.find("GNU") != std::string::npos ? kMklInterfaceGnu : 0;
  const int in_effect = r.mkl_set_interface_layer(wanted);
  if (in_effect >= 0 && (in_effect & kMklInterfaceIlp64) != 0) {
    g_outcome.refused = "ILP64";
    g_outcome.errors.push_back(name + ": refused: MKL runs its ILP64 interface (64-bit integers; MKL_Set_Interface_Layer answered " + std::to_string(in_effect) +
                               "); tenferro calls BLAS and LAPACK with 32-bit integers");
    return false;
  }
  // MKL's core and the LP64 interface library it will load for that choice.
  for (const char* library : {"libmkl_core.so", wanted == kMklInterfaceGnu ? "libmkl_gf_lp64.so" : "libmkl_intel_lp64.so"}) {
    if (!mkl_library_present(h, library)) {
      g_outcome.errors.push_back(name + ": MKL's " + library + " is not installed beside it (MKL would stop the process when it looks for it): install MKL completely (Debian: libmkl-rt)");
      return false;
    }
  }
  // The threading layer.
  const char* layer_env = getenv("MKL_THREADING_LAYER");
  const MklLayer* layer = nullptr;
  std::string source = "tenferro";
  if (layer_env != nullptr && layer_env[0] != '\0') {
    source = "environment";
    const std::string v = upper(layer_env);
    for (const MklLayer& l : kMklLayers) {
      if (v == l.env) layer = &l;
    }
    if (layer == nullptr) {
      g_outcome.errors.push_back(name + ": MKL_THREADING_LAYER=" + v + " is not a layer tenferro can load (SEQUENTIAL, GNU, INTEL, TBB)");
      return false;
    }
  }
  std::string runtime_loaded;
  auto load_runtime = [&](const MklLayer& l) {
    if (l.runtimes[0] == nullptr) return true;
    std::string tried;
    for (const char* const* lib = l.runtimes; *lib != nullptr; lib++) {
      dlerror();
      if (dlopen(*lib, RTLD_NOW | RTLD_GLOBAL) != nullptr) {
        runtime_loaded = *lib;
        return true;
      }
      const char* e = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e != nullptr ? e : *lib);
    }
    if (layer != nullptr) {
      g_outcome.errors.push_back(name + ": MKL_THREADING_LAYER=" + l.env + " needs its runtime, which does not load (" + tried + "): install " + l.package +
                                 ", or choose MKL_THREADING_LAYER=GNU (libgomp1) or SEQUENTIAL");
    }
    return false;
  };
  auto layer_missing = [&](const MklLayer& l) {
    const std::string who = source == "environment" ? std::string("MKL_THREADING_LAYER=") + l.env : std::string("MKL's ") + l.env + " layer (chosen by tenferro)";
    return name + ": " + who + " needs MKL's " + l.library + ", which is not installed beside it (" + l.library_package +
           "); MKL would stop the process when it looks for it. Choose MKL_THREADING_LAYER=GNU or SEQUENTIAL";
  };
  if (layer != nullptr) {
    if (!mkl_library_present(h, layer->library)) {
      g_outcome.errors.push_back(layer_missing(*layer));
      return false;
    }
    if (!load_runtime(*layer)) return false;
  } else {
    // GNU OpenMP when libgomp and MKL's GNU layer are there, else sequential; Intel's layer only
    // when asked for.
    layer = &kMklLayers[1];
    if (!mkl_library_present(h, layer->library) || !load_runtime(*layer)) layer = &kMklLayers[0];
    if (!mkl_library_present(h, layer->library)) {
      g_outcome.errors.push_back(layer_missing(*layer));
      return false;
    }
  }
  const int set = r.mkl_set_threading_layer(layer->code);
  if (set != layer->code) {
    g_outcome.errors.push_back(name + ": MKL_Set_Threading_Layer(" + layer->env + ") answered " + std::to_string(set) + ": MKL did not take the layer");
    return false;
  }
  r.mkl_layer = layer->name;
  r.mkl_layer_source = source;
  r.mkl_openmp_runtime = runtime_loaded;
  return true;
}

void bind_identity(void* h) {
  Runtime& r = g_runtime;
  bind_symbol(h, r.openblas_get_config, "openblas_get_config");
  bind_symbol(h, r.openblas_get_corename, "openblas_get_corename");
  bind_symbol(h, r.openblas_get_parallel, "openblas_get_parallel");
  bind_symbol(h, r.openblas_get_num_threads, "openblas_get_num_threads");
  bind_symbol(h, r.openblas_set_num_threads, "openblas_set_num_threads");
  // MKL: the C names (#42; see blas_runtime.h).
  bind_symbol(h, r.mkl_get_version_string, "MKL_Get_Version_String");
  bind_symbol(h, r.mkl_set_num_threads_local, "MKL_Set_Num_Threads_Local");
  bind_symbol(h, r.mkl_get_max_threads, "MKL_Get_Max_Threads");
  bind_symbol(h, r.bli_info_get_version_str, "bli_info_get_version_str");
  bind_symbol(h, r.bli_info_get_enable_threading, "bli_info_get_enable_threading");
  bind_symbol(h, r.bli_info_get_enable_openmp, "bli_info_get_enable_openmp");
  bind_symbol(h, r.bli_info_get_enable_pthreads, "bli_info_get_enable_pthreads");
  bind_symbol(h, r.bli_thread_get_num_threads, "bli_thread_get_num_threads");
  bind_symbol(h, r.bli_thread_set_num_threads, "bli_thread_set_num_threads");

  r.vendor = "reference";
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

// The calling thread's affinity as a Linux cpulist ("0-3,8"), "" when it cannot be read.
std::string own_cpulist() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "";
  std::string out;
  int start = -1;
  for (int cpu = 0; cpu <= CPU_SETSIZE; cpu++) {
    const bool in = cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
    if (in && start < 0) start = cpu;
    if (!in && start >= 0) {
      if (!out.empty()) out += ",";
      out += std::to_string(start);
      if (cpu - 1 > start) out += "-" + std::to_string(cpu - 1);
      start = -1;
    }
  }
  return out;
}

bool try_candidate(const std::string& name) {
  if (name.empty() || name.size() > 4096) {
    g_outcome.errors.push_back("(an empty or overlong library name)");
    return false;
  }
  dlerror();
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    g_outcome.errors.push_back(name + ": " + (e != nullptr ? e : "dlopen failed"));
    return false;
  }
  Runtime& r = g_runtime;
  bind_symbol(h, r.sgemm, "cblas_sgemm");
  bind_symbol(h, r.dgemm, "cblas_dgemm");
  bind_symbol(h, r.cgemm, "cblas_cgemm");
  bind_symbol(h, r.zgemm, "cblas_zgemm");
  if (r.sgemm == nullptr || r.dgemm == nullptr || r.cgemm == nullptr || r.zgemm == nullptr) {
    g_outcome.errors.push_back(name + ": loaded, but it does not export cblas_sgemm, cblas_dgemm, cblas_cgemm and cblas_zgemm (a Fortran-only BLAS?)");
    r.sgemm = nullptr;
    r.dgemm = nullptr;
    r.cgemm = nullptr;
    r.zgemm = nullptr;
    dlclose(h);
    return false;
  }
  if (dlsym(h, "MKL_Get_Version_String") != nullptr && !setup_mkl(h, name)) {
    // Not dlclose()d: MKL may have started initialising; its symbols stay local to this handle.
    r.sgemm = nullptr;
    r.dgemm = nullptr;
    r.cgemm = nullptr;
    r.zgemm = nullptr;
    r.mkl_set_threading_layer = nullptr;
    r.mkl_set_interface_layer = nullptr;
    return false;
  }
  r.handle = h;
  r.library = name;
  bind_identity(h);
  return true;
}

}  // namespace

const Runtime& runtime() {
  // Readers that saw loaded = true see every pointer written before it (release/acquire).
  (void)g_loaded.load(std::memory_order_acquire);
  return g_runtime;
}

bool runtime_loaded() {
  return g_loaded.load(std::memory_order_acquire);
}

const LoadOutcome& load(const LoadRequest& request) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_attempted) return g_outcome;
  g_attempted = true;
  g_outcome.loader_tid = static_cast<int>(syscall(SYS_gettid));
  g_outcome.loader_cpus = own_cpulist();
  const char* before = getenv("OPENBLAS_CORETYPE");
  g_outcome.coretype_was_set = before != nullptr && before[0] != '\0';
  g_outcome.coretype_before = g_outcome.coretype_was_set ? before : "";
  if (!request.coretype.empty() && (request.coretype_overwrite || !g_outcome.coretype_was_set)) {
    // OpenBLAS reads OPENBLAS_CORETYPE in its constructor, i.e. during the dlopen below.
    g_outcome.coretype_applied = setenv("OPENBLAS_CORETYPE", request.coretype.c_str(), 1) == 0;
  }
  bool ok = false;
  if (request.candidates.empty()) {
    for (const char* name : kDefaultCandidates) {
      if ((ok = try_candidate(name))) break;
    }
  } else {
    for (const std::string& name : request.candidates) {
      if ((ok = try_candidate(name))) break;
    }
  }
  // OpenBLAS's own fork handler hangs a call in flight on another thread: ours waits for it (fork_guard.cc).
  if (ok && std::string(g_runtime.vendor) == "openblas") install_fork_guard();
  g_outcome.loaded = ok;
  g_runtime.loaded = ok;
  g_loaded.store(ok, std::memory_order_release);
  return g_outcome;
}

const LoadOutcome& load_outcome() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_outcome;
}

std::string library_of(const void* address) {
  Dl_info info;
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "";
}

int clamp_threads(int64_t threads) {
  static const int64_t cpus = [] {
    const long n = sysconf(_SC_NPROCESSORS_CONF);
    return static_cast<int64_t>(n < 1 ? 1 : n > 4096 ? 4096 : n);
  }();
  return static_cast<int>(threads < 1 ? 1 : threads > cpus ? cpus : threads);
}

namespace {

std::mutex g_call_threads_mutex;
std::vector<int> g_call_threads;
// Per calling thread: the most threads a census probe has seen started, and the probes that found none.
thread_local int t_census_threads = 1;
thread_local int t_census_misses = 0;
constexpr int kCensusMaxMisses = 64;

std::vector<int> list_tasks() {
  std::vector<int> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.push_back(atoi(e->d_name));
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<int> runtime_call_threads() {
  std::lock_guard<std::mutex> lock(g_call_threads_mutex);
  return g_call_threads;
}

ThreadScope::ThreadScope(int requested) {
  if (requested <= 0 || !runtime_loaded()) return;
  const int threads = clamp_threads(requested);
  const Runtime& r = runtime();
  if (r.mkl_set_num_threads_local != nullptr) {
    // Per call and per calling thread (C ABI, a clamped count); restored in the destructor.
    if (r.mkl_layer != "sequential" && threads > t_census_threads && t_census_misses < kCensusMaxMisses) {
      census = true;
      tasks_before = list_tasks();
    }
    const int previous = r.mkl_set_num_threads_local(threads);
    mkl_previous = previous < 0 ? 0 : previous;
  } else if (r.openblas_set_num_threads != nullptr) {
    // Process-global: the provider-exclusive permit is what makes this safe.
    if (r.openblas_get_num_threads == nullptr || r.openblas_get_num_threads() != threads) r.openblas_set_num_threads(threads);
  } else if (r.bli_thread_set_num_threads != nullptr && r.blis_set_effective) {
    if (r.bli_thread_get_num_threads() != threads) r.bli_thread_set_num_threads(threads);
  }
}

ThreadScope::~ThreadScope() {
  if (mkl_previous < 0) return;
  const Runtime& r = runtime();
  // 0 gives the calling thread back to MKL's global setting; a count is clamped like any other.
  r.mkl_set_num_threads_local(mkl_previous == 0 ? 0 : clamp_threads(mkl_previous));
  if (!census) return;
  const std::vector<int> after = list_tasks();
  std::vector<int> started;
  std::set_difference(after.begin(), after.end(), tasks_before.begin(), tasks_before.end(), std::back_inserter(started));
  if (started.empty()) {
    t_census_misses++;
    return;
  }
  t_census_threads = static_cast<int>(started.size()) + 1;
  std::lock_guard<std::mutex> lock(g_call_threads_mutex);
  for (int tid : started) {
    if (std::find(g_call_threads.begin(), g_call_threads.end(), tid) == g_call_threads.end() && g_call_threads.size() < 4096) g_call_threads.push_back(tid);
  }
}

namespace js {

namespace {

Napi::Object outcome_object(Napi::Env env, const LoadOutcome& o) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("loaded", o.loaded);
  Napi::Array errors = Napi::Array::New(env, o.errors.size());
  for (size_t i = 0; i < o.errors.size(); i++) errors.Set(static_cast<uint32_t>(i), o.errors[i]);
  out.Set("errors", errors);
  out.Set("library", g_runtime.library);
  out.Set("coretypeBefore", o.coretype_was_set ? Napi::Value(Napi::String::New(env, o.coretype_before)) : env.Null());
  out.Set("coretypeApplied", o.coretype_applied);
  out.Set("loaderTid", o.loader_tid);
  out.Set("loaderCpus", o.loader_cpus);
  out.Set("refused", o.refused);
  return out;
}

}  // namespace

Napi::Value load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadRequest request;
  if (info.Length() >= 1 && info[0].IsObject()) {
    Napi::Object o = info[0].As<Napi::Object>();
    Napi::Value candidates = o.Get("candidates");
    if (candidates.IsArray()) {
      Napi::Array list = candidates.As<Napi::Array>();
      const uint32_t n = list.Length() < 64 ? list.Length() : 64;
      for (uint32_t i = 0; i < n; i++) {
        Napi::Value v = list.Get(i);
        if (v.IsString()) request.candidates.push_back(v.As<Napi::String>().Utf8Value());
      }
    }
    Napi::Value coretype = o.Get("coretype");
    if (coretype.IsString()) {
      std::string c = coretype.As<Napi::String>().Utf8Value();
      // A core name: letters, digits and '_' only, at most 32 (what src/options.ts accepts).
      bool ok = !c.empty() && c.size() <= 32;
      for (char ch : c) ok = ok && ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_');
      if (ok) request.coretype = c;
    }
    Napi::Value overwrite = o.Get("coretypeOverwrite");
    request.coretype_overwrite = overwrite.IsBoolean() && overwrite.As<Napi::Boolean>().Value();
  }
  const LoadOutcome& o = blas::load(request);
  return outcome_object(env, o);
}

Napi::Value info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  const bool loaded = runtime_loaded();
  const Runtime& r = runtime();
  o.Set("loaded", loaded);
  o.Set("load", outcome_object(env, load_outcome()));
  o.Set("vendor", loaded ? r.vendor : "none");
  o.Set("libraryPath", loaded ? library_of(reinterpret_cast<const void*>(r.dgemm)) : "");
  std::string version, config, core, runtime_path;
  int parallel = -1, threads = -1;
  if (!loaded) {
    // nothing to read
  } else if (r.mkl_get_version_string != nullptr) {
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
  o.Set("mklLocalThreads", loaded && r.mkl_set_num_threads_local != nullptr);
  o.Set("mklLayer", loaded ? r.mkl_layer : "");
  o.Set("mklLayerSource", loaded ? r.mkl_layer_source : "");
  o.Set("mklOpenmpRuntime", loaded ? r.mkl_openmp_runtime : "");
  // What the environment asked of the runtime's threads (the provider overrides it per call).
  const std::string vendor = loaded ? r.vendor : "none";
  const char* env_name = vendor == "mkl" ? "MKL_NUM_THREADS" : vendor == "openblas" ? "OPENBLAS_NUM_THREADS" : vendor == "blis" ? "BLIS_NUM_THREADS" : nullptr;
  const char* env_threads = env_name != nullptr ? getenv(env_name) : nullptr;
  o.Set("envThreads", env_threads != nullptr ? Napi::Value(Napi::String::New(env, std::string(env_threads).substr(0, 64))) : env.Null());
  o.Set("maxThreads", clamp_threads(1 << 20));
  o.Set("openblasSetThreads", loaded && r.openblas_set_num_threads != nullptr);
  o.Set("blisSetEffective", loaded && r.blis_set_effective);
  o.Set("blisThreadLocal", loaded && r.blis_thread_local);
  return o;
}

Napi::Value get_threads(const Napi::CallbackInfo& info) {
  int threads = -1;
  if (runtime_loaded()) {
    const Runtime& r = runtime();
    if (r.mkl_get_max_threads != nullptr) threads = r.mkl_get_max_threads();
    else if (r.openblas_get_num_threads != nullptr) threads = r.openblas_get_num_threads();
    else if (r.bli_thread_get_num_threads != nullptr) threads = static_cast<int>(r.bli_thread_get_num_threads());
  }
  return Napi::Number::New(info.Env(), threads);
}

Napi::Value call_threads(const Napi::CallbackInfo& info) {
  const std::vector<int> tids = runtime_call_threads();
  Napi::Array out = Napi::Array::New(info.Env(), tids.size());
  for (size_t i = 0; i < tids.size(); i++) out.Set(static_cast<uint32_t>(i), tids[i]);
  return out;
}

Napi::Value set_threads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return Napi::Number::New(env, kStatusBadArguments);
  const double value = info[0].As<Napi::Number>().DoubleValue();
  if (!(value >= 1 && value <= 1048576)) return Napi::Number::New(env, kStatusBadArguments);
  const int threads = clamp_threads(static_cast<int64_t>(value));
  if (!runtime_loaded()) return Napi::Number::New(env, kStatusNotLoaded);
  const Runtime& r = runtime();
  CallGuard guard;  // OpenBLAS may start its threads here: not while a fork stops them
  if (r.openblas_set_num_threads != nullptr) r.openblas_set_num_threads(threads);
  else if (r.bli_thread_set_num_threads != nullptr) r.bli_thread_set_num_threads(threads);
  return Napi::Number::New(env, kStatusOk);
}

}  // namespace js
}  // namespace blas
