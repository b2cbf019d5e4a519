// Portable path: plain C++ scalars (the compiler may use the baseline SSE2 of x86-64, or
// whatever the target's baseline is). Micro-kernel 4 x 4 in scalar registers.
#include <cstddef>
#include <cstdint>

#include "faer_gemm.h"

namespace faer {
namespace isa_scalar {
#define FAER_ENGINE_NS isa_scalar

template <class T>
struct Vec {
  using R = T;
  static constexpr int W = 1;
  static inline R zero() { return T(0); }
  static inline R load(const T* p) { return *p; }
  static inline void store(T* p, R v) { *p = v; }
  static inline R set1(T x) { return x; }
  static inline R fma(R a, R b, R c) { return a * b + c; }
  static inline R mul(R a, R b) { return a * b; }
  // One lane: a mask of n >= 1 lanes is the whole register.
  using M = int;
  static inline M mask(int n) { return n; }
  static inline R load_m(const T* p, M) { return *p; }
  static inline void store_m(T* p, R v, M) { *p = v; }
  // A complex needs two lanes: the engine never takes its vector complex path with W = 1.
  static inline R swap_pairs(R x) { return x; }
};

template <class T>
struct Shape {
  static constexpr int MV = 4;
  static constexpr int NR = 4;
};

#include "gemm_engine.h"

static double fma_peak(double seconds) { return fma_peak_impl<double>(seconds); }

}  // namespace isa_scalar

const IsaEngine kEngineScalar = {
    "portable",
    {isa_scalar::Cfg<float>::MR, isa_scalar::Cfg<float>::NR},
    {isa_scalar::Cfg<double>::MR, isa_scalar::Cfg<double>::NR},
    isa_scalar::gemm_f32,
    isa_scalar::gemm_f64,
    isa_scalar::gemm_c64,
    isa_scalar::gemm_c128,
    isa_scalar::batch_f32,
    isa_scalar::batch_f64,
    isa_scalar::batch_c64,
    isa_scalar::batch_c128,
    isa_scalar::gather_f32,
    isa_scalar::gather_f64,
    isa_scalar::fma_peak,
};

}  // namespace faer
