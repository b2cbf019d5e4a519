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

Isa best_isa() {
  // TENFERRO_TPRIMS_ISA=portable|avx2|avx512f lowers (never raises) the path, for tests and profiling.
  static const Isa isa = tenferro::isa::pick("TENFERRO_TPRIMS_ISA");
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
