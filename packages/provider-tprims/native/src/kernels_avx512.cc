// The avx512f path of the engine (include/tprims_engine.h).
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
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2")
#endif

namespace tprims {
namespace isa_avx512 {
#define TPRIMS_ENGINE_NS isa_avx512
#if defined(__x86_64__)
#define TPRIMS_ISA_AVX512 1
#endif
#include "tprims_engine.h"
#undef TPRIMS_ISA_AVX512
#undef TPRIMS_ENGINE_NS
}  // namespace isa_avx512

const Engine kEngineAvx512 = {"avx512f", isa_avx512::run, isa_avx512::supports};

}  // namespace tprims

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC pop_options
#endif
