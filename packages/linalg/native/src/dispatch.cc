// Instruction-set dispatch of the kernels (decided once per process): binding.gyp compiles ops.h
// into tfl::generic (baseline x86-64 — SSE2 — or arm64), and on x86-64 the real types also into
// tfl::avx2 (AVX2 + FMA) and tfl::avx512 (AVX-512 F/DQ/BW/VL); this file, compiled for the baseline, picks
// the best set the CPU supports (__builtin_cpu_supports also checks that the OS saves the YMM/ZMM
// state), so that a prebuilt binary runs on any x86-64 and uses the vector units it finds.
#include <cstdlib>
#include <cstring>

#include "linalg.h"

namespace tfl {

namespace generic {
int run_f32(const Job& j);
int run_f64(const Job& j);
int run_c64(const Job& j);
int run_c128(const Job& j);
}  // namespace generic
// The real types only (binding.gyp): complex kernels run the baseline build on every CPU for now.
// TFL_HAVE_AVX2 / TFL_HAVE_AVX512: the libraries this build links (TENFERRO_NATIVE_ISA=host leaves
// AVX-512 out on a CPU without it, best leaves AVX2 out on one with it; a sanitizer build has neither).
#if defined(TFL_HAVE_AVX2)
namespace avx2 {
int run_f32(const Job& j);
int run_f64(const Job& j);
}  // namespace avx2
#endif
#if defined(TFL_HAVE_AVX512)
namespace avx512 {
int run_f32(const Job& j);
int run_f64(const Job& j);
}  // namespace avx512
#endif

namespace {

#if defined(__x86_64__)
bool cpu_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool cpu_avx512() {
  return cpu_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

#if defined(TFL_HAVE_AVX2)
constexpr bool kBuiltAvx2 = true;
#else
constexpr bool kBuiltAvx2 = false;
#endif
#if defined(TFL_HAVE_AVX512)
constexpr bool kBuiltAvx512 = true;
#else
constexpr bool kBuiltAvx512 = false;
#endif

Isa detect() {
  Isa best = kIsaGeneric;
#if defined(__x86_64__)
  const bool avx2 = kBuiltAvx2 && cpu_avx2();
  const bool avx512 = kBuiltAvx512 && cpu_avx512();
  best = avx512 ? kIsaAvx512 : avx2 ? kIsaAvx2 : kIsaGeneric;
#endif
  const char* want = std::getenv("TENFERRO_LINALG_ISA");
  if (want != nullptr) {
    if (std::strcmp(want, "generic") == 0) best = kIsaGeneric;
    // Lowered to a path this build left out (best on an AVX-512 CPU): the baseline below it.
    else if (std::strcmp(want, "avx2") == 0 && best > kIsaAvx2) best = kBuiltAvx2 ? kIsaAvx2 : kIsaGeneric;
  }
  return best;
}

using Runner = int (*)(const Job&);
// [isa][dtype]; a row whose path is not built is never chosen by detect() and holds the baseline.
const Runner kRunners[kIsaCount][4] = {
    {generic::run_f32, generic::run_f64, generic::run_c64, generic::run_c128},
#if defined(TFL_HAVE_AVX2)
    {avx2::run_f32, avx2::run_f64, generic::run_c64, generic::run_c128},
#else
    {generic::run_f32, generic::run_f64, generic::run_c64, generic::run_c128},
#endif
#if defined(TFL_HAVE_AVX512)
    {avx512::run_f32, avx512::run_f64, generic::run_c64, generic::run_c128},
#else
    {generic::run_f32, generic::run_f64, generic::run_c64, generic::run_c128},
#endif
};

}  // namespace

Isa isa() {
  static const Isa chosen = detect();  // thread-safe static initialisation
  return chosen;
}

const char* not_built() {
#if defined(__x86_64__)
  if (!kBuiltAvx2 && !kBuiltAvx512) return "avx2, avx512";  // a sanitizer build, or best on a CPU without AVX2
  if (!kBuiltAvx512) return "avx512";                       // host (or best) on a CPU without AVX-512
  if (!kBuiltAvx2) return "avx2";                           // best on an AVX-512 CPU
#endif
  return "";
}

// Whether this CPU runs a path this build left out that is faster than every built one it runs.
bool not_built_runs_here() {
#if defined(__x86_64__)
  if (!kBuiltAvx512 && cpu_avx512()) return true;
  if (!kBuiltAvx2 && cpu_avx2() && !(kBuiltAvx512 && cpu_avx512())) return true;
#endif
  return false;
}

const char* isa_name(Isa i) {
  switch (i) {
    case kIsaAvx2: return "avx2";
    case kIsaAvx512: return "avx512";
    default: return "generic";
  }
}

int run(const Job& j) {
  if (j.dtype < kF32 || j.dtype > kC128) return kBadDtype;
  return kRunners[isa()][j.dtype](j);
}

}  // namespace tfl
