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
#if defined(TFL_HAVE_X86_ISAS)
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
bool cpu_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}
#endif

Isa detect() {
  Isa best = kIsaGeneric;
#if defined(TFL_HAVE_X86_ISAS)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#if defined(TFL_HAVE_AVX512)
  const bool avx512 = cpu_avx512();
#else
  const bool avx512 = false;  // not built (TENFERRO_NATIVE_ISA=host on a CPU without it)
#endif
  best = avx512 ? kIsaAvx512 : avx2 ? kIsaAvx2 : kIsaGeneric;
#endif
  const char* want = std::getenv("TENFERRO_LINALG_ISA");
  if (want != nullptr) {
    if (std::strcmp(want, "generic") == 0) best = kIsaGeneric;
    else if (std::strcmp(want, "avx2") == 0 && best > kIsaAvx2) best = kIsaAvx2;
  }
  return best;
}

using Runner = int (*)(const Job&);
// [isa][dtype]
#if defined(TFL_HAVE_X86_ISAS)
const Runner kRunners[kIsaCount][4] = {
    {generic::run_f32, generic::run_f64, generic::run_c64, generic::run_c128},
    {avx2::run_f32, avx2::run_f64, generic::run_c64, generic::run_c128},
#if defined(TFL_HAVE_AVX512)
    {avx512::run_f32, avx512::run_f64, generic::run_c64, generic::run_c128},
#else
    {avx2::run_f32, avx2::run_f64, generic::run_c64, generic::run_c128},  // never chosen: detect() does not pick it
#endif
};
#else
const Runner kRunners[1][4] = {{generic::run_f32, generic::run_f64, generic::run_c64, generic::run_c128}};
#endif

}  // namespace

Isa isa() {
  static const Isa chosen = detect();  // thread-safe static initialisation
  return chosen;
}

const char* not_built() {
#if defined(__x86_64__) && !defined(TFL_HAVE_X86_ISAS)
  return "avx2, avx512";  // a sanitizer build: the baseline only
#elif defined(__x86_64__) && !defined(TFL_HAVE_AVX512)
  return "avx512";  // TENFERRO_NATIVE_ISA=host on a CPU without AVX-512
#else
  return "";
#endif
}

bool not_built_runs_here() {
#if defined(__x86_64__) && !defined(TFL_HAVE_AVX512)
#if defined(TFL_HAVE_X86_ISAS)
  return cpu_avx512();
#else
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#else
  return false;
#endif
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
