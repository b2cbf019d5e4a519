// ISA dispatch (decided once per process) and the per-thread reduction scratch.
#include <cstdlib>
#include <cstring>

#include "tprims.h"

namespace tprims {

namespace {
struct Scratch {
  void* ptr = nullptr;
  std::size_t size = 0;
  ~Scratch() { std::free(ptr); }
};
thread_local Scratch tls_scratch;
}  // namespace

void* scratch(std::size_t bytes) {
  Scratch& s = tls_scratch;
  if (bytes == 0) bytes = 64;
  if (s.size >= bytes) return s.ptr;
  std::free(s.ptr);
  const std::size_t rounded = (bytes + 127) / 64 * 64;
  s.ptr = std::aligned_alloc(64, rounded);
  s.size = s.ptr != nullptr ? rounded : 0;
  return s.ptr;
}

bool isa_runs_here(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("avx512bw");
  switch (isa) {
    case kIsaScalar: return true;
    case kIsaAvx2: return avx2;
    case kIsaAvx512: return avx512;
    default: return false;
  }
#else
  return isa == kIsaScalar;
#endif
}

bool isa_built(Isa isa) {
#if defined(TENFERRO_NO_AVX512)
  if (isa == kIsaAvx512) return false;
#endif
#if defined(TENFERRO_NO_AVX2)
  if (isa == kIsaAvx2) return false;  // TENFERRO_NATIVE_ISA=best on an AVX-512 CPU (#39)
#endif
  return isa == kIsaScalar || isa == kIsaAvx2 || isa == kIsaAvx512;
}

bool isa_supported(Isa isa) { return isa_built(isa) && isa_runs_here(isa); }

namespace {
Isa pick_isa() {
  // TENFERRO_TPRIMS_ISA=portable|avx2|avx512f lowers (never raises) the path, for tests and profiling.
  Isa best = isa_supported(kIsaAvx512) ? kIsaAvx512 : isa_supported(kIsaAvx2) ? kIsaAvx2 : kIsaScalar;
  const char* env = std::getenv("TENFERRO_TPRIMS_ISA");
  if (env != nullptr) {
    Isa want = best;
    if (std::strcmp(env, "portable") == 0 || std::strcmp(env, "scalar") == 0) want = kIsaScalar;
    else if (std::strcmp(env, "avx2") == 0) want = kIsaAvx2;
    else if (std::strcmp(env, "avx512") == 0 || std::strcmp(env, "avx512f") == 0) want = kIsaAvx512;
    if (want < best) best = want;
    // A lowered path this build left out (TENFERRO_NATIVE_ISA=best): the next one below it.
    while (best > kIsaScalar && !isa_supported(best)) best = static_cast<Isa>(best - 1);
  }
  return best;
}
}  // namespace

Isa best_isa() {
  static const Isa isa = pick_isa();
  return isa;
}

const Engine& engine(Isa isa) {
  switch (isa) {
#if !defined(TENFERRO_NO_AVX512)
    case kIsaAvx512: return kEngineAvx512;
#endif
#if !defined(TENFERRO_NO_AVX2)
    case kIsaAvx2: return kEngineAvx2;
#endif
    default: return kEngineScalar;
  }
}

}  // namespace tprims
