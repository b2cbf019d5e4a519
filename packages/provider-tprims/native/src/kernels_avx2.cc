// The avx2+fma path of the engine (include/tprims_engine.h).
// Compiled for it by the target pragma (never -march); dispatch.cc runs it only when the CPU has it.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <limits>
#include <type_traits>
#include <utility>

#include "tprims.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")
#endif

namespace tprims {
namespace isa_avx2 {
#define TPRIMS_ENGINE_NS isa_avx2
#if defined(__x86_64__)
#define TPRIMS_ISA_AVX2 1
#endif
#include "tprims_engine.h"
#undef TPRIMS_ISA_AVX2
#undef TPRIMS_ENGINE_NS
}  // namespace isa_avx2

const Engine kEngineAvx2 = {"avx2+fma", isa_avx2::run, isa_avx2::supports};

}  // namespace tprims

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC pop_options
#endif
