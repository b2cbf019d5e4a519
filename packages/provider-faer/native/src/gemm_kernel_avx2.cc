// AVX2 + FMA path: 256-bit vectors, 16 registers. Compiled for AVX2/FMA by the target pragma
// (not -march); dispatch.cc calls it only when the CPU has avx2 and fma.
//
// Micro-kernel: MV = 2 vectors along M by NR = 6 columns (f64: 8 x 6, f32: 16 x 6):
// 12 accumulators + 2 A vectors + 1 broadcast = 15 of 16 ymm.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "faer_gemm.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")

namespace faer {
namespace isa_avx2 {
#define FAER_ENGINE_NS isa_avx2

template <class T>
struct Vec;
template <>
struct Vec<double> {
  using R = __m256d;
  static constexpr int W = 4;
  static inline __attribute__((always_inline)) R zero() { return _mm256_setzero_pd(); }
  static inline __attribute__((always_inline)) R load(const double* p) { return _mm256_loadu_pd(p); }
  static inline __attribute__((always_inline)) void store(double* p, R v) { _mm256_storeu_pd(p, v); }
  static inline __attribute__((always_inline)) R set1(double x) { return _mm256_set1_pd(x); }
  static inline __attribute__((always_inline)) R fma(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }
  static inline __attribute__((always_inline)) R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  // The first `n` lanes (1 <= n <= W); masked-off lanes are neither read nor written (vmaskmov).
  using M = __m256i;
  static inline __attribute__((always_inline)) M mask(int n) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3)); }
  static inline __attribute__((always_inline)) R load_m(const double* p, M m) { return _mm256_maskload_pd(p, m); }
  static inline __attribute__((always_inline)) void store_m(double* p, R v, M m) { _mm256_maskstore_pd(p, m, v); }
  // (x0, x1, x2, x3) -> (x1, x0, x3, x2): re and im of each interleaved complex swapped.
  static inline __attribute__((always_inline)) R swap_pairs(R x) { return _mm256_permute_pd(x, 0x5); }
};
template <>
struct Vec<float> {
  using R = __m256;
  static constexpr int W = 8;
  static inline __attribute__((always_inline)) R zero() { return _mm256_setzero_ps(); }
  static inline __attribute__((always_inline)) R load(const float* p) { return _mm256_loadu_ps(p); }
  static inline __attribute__((always_inline)) void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static inline __attribute__((always_inline)) R set1(float x) { return _mm256_set1_ps(x); }
  static inline __attribute__((always_inline)) R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static inline __attribute__((always_inline)) R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  using M = __m256i;
  static inline __attribute__((always_inline)) M mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
  static inline __attribute__((always_inline)) R load_m(const float* p, M m) { return _mm256_maskload_ps(p, m); }
  static inline __attribute__((always_inline)) void store_m(float* p, R v, M m) { _mm256_maskstore_ps(p, m, v); }
  static inline __attribute__((always_inline)) R swap_pairs(R x) { return _mm256_permute_ps(x, 0xB1); }
};

template <class T>
struct Shape {
  static constexpr int MV = 2;
  static constexpr int NR = 6;
};

#include "gemm_engine.h"

static double fma_peak(double seconds) { return fma_peak_impl<double>(seconds); }

}  // namespace isa_avx2

const IsaEngine kEngineAvx2 = {
    "avx2+fma",
    {isa_avx2::Cfg<float>::MR, isa_avx2::Cfg<float>::NR},
    {isa_avx2::Cfg<double>::MR, isa_avx2::Cfg<double>::NR},
    isa_avx2::gemm_f32,
    isa_avx2::gemm_f64,
    isa_avx2::gemm_c64,
    isa_avx2::gemm_c128,
    isa_avx2::batch_f32,
    isa_avx2::batch_f64,
    isa_avx2::batch_c64,
    isa_avx2::batch_c128,
    isa_avx2::gather_f32,
    isa_avx2::gather_f64,
    isa_avx2::fma_peak,
};

}  // namespace faer

#pragma GCC pop_options
