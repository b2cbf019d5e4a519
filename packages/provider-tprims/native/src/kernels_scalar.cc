// The portable path of the engine (include/tprims_engine.h).
// Baseline x86-64 (SSE2) or whatever the compiler's default target is: runs everywhere.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include <limits>
#include <type_traits>
#include <utility>

#include "tprims.h"

namespace tprims {
namespace isa_scalar {
#define TPRIMS_ENGINE_NS isa_scalar
#include "tprims_engine.h"
#undef TPRIMS_ENGINE_NS
}  // namespace isa_scalar

const Engine kEngineScalar = {"portable", isa_scalar::run, isa_scalar::supports};

}  // namespace tprims
