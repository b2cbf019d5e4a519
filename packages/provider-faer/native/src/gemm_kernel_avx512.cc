// AVX-512F path: 512-bit vectors, 32 registers. Compiled for AVX-512 by the target pragma
// below (not by -march), so the rest of the addon stays portable; dispatch.cc only calls it
// when __builtin_cpu_supports("avx512f") (which also checks OS support of the ZMM state).
//
// Micro-kernel: MV = 4 vectors along M by NR = 6 columns (f64: 32 x 6, f32: 64 x 6):
// 24 accumulators + 4 A vectors + 1 broadcast = 29 of 32 zmm; per k step 4 vector loads and
// 6 broadcasts feed 24 FMAs.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "faer_gemm.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2")

namespace faer {
namespace isa_avx512 {
#define FAER_ENGINE_NS isa_avx512

template <class T>
struct Vec;
template <>
struct Vec<double> {
  using R = __m512d;
  static constexpr int W = 8;
  static inline __attribute__((always_inline)) R zero() { return _mm512_setzero_pd(); }
  static inline __attribute__((always_inline)) R load(const double* p) { return _mm512_loadu_pd(p); }
  static inline __attribute__((always_inline)) void store(double* p, R v) { _mm512_storeu_pd(p, v); }
  static inline __attribute__((always_inline)) R set1(double x) { return _mm512_set1_pd(x); }
  static inline __attribute__((always_inline)) R fma(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
  static inline __attribute__((always_inline)) R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  // The first `n` lanes (1 <= n <= W); masked-off lanes are neither read nor written.
  using M = __mmask8;
  static inline __attribute__((always_inline)) M mask(int n) { return static_cast<M>((1u << n) - 1u); }
  static inline __attribute__((always_inline)) R load_m(const double* p, M m) { return _mm512_maskz_loadu_pd(m, p); }
  static inline __attribute__((always_inline)) void store_m(double* p, R v, M m) { _mm512_mask_storeu_pd(p, m, v); }
  // (x0, x1, x2, x3, ...) -> (x1, x0, x3, x2, ...): re and im of each interleaved complex swapped.
  static inline __attribute__((always_inline)) R swap_pairs(R x) { return _mm512_shuffle_pd(x, x, 0x55); }
};
template <>
struct Vec<float> {
  using R = __m512;
  static constexpr int W = 16;
  static inline __attribute__((always_inline)) R zero() { return _mm512_setzero_ps(); }
  static inline __attribute__((always_inline)) R load(const float* p) { return _mm512_loadu_ps(p); }
  static inline __attribute__((always_inline)) void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static inline __attribute__((always_inline)) R set1(float x) { return _mm512_set1_ps(x); }
  static inline __attribute__((always_inline)) R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static inline __attribute__((always_inline)) R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  using M = __mmask16;
  static inline __attribute__((always_inline)) M mask(int n) { return static_cast<M>((1u << n) - 1u); }
  static inline __attribute__((always_inline)) R load_m(const float* p, M m) { return _mm512_maskz_loadu_ps(m, p); }
  static inline __attribute__((always_inline)) void store_m(float* p, R v, M m) { _mm512_mask_storeu_ps(p, m, v); }
  static inline __attribute__((always_inline)) R swap_pairs(R x) { return _mm512_shuffle_ps(x, x, 0xB1); }
};

#ifndef FAER_AVX512_MV
#define FAER_AVX512_MV 4
#endif
#ifndef FAER_AVX512_NR
#define FAER_AVX512_NR 6
#endif
template <class T>
struct Shape {
  static constexpr int MV = FAER_AVX512_MV;
  static constexpr int NR = FAER_AVX512_NR;
};

#include "gemm_engine.h"

static double fma_peak(double seconds) { return fma_peak_impl<double>(seconds); }

}  // namespace isa_avx512

const IsaEngine kEngineAvx512 = {
    "avx512f",
    {isa_avx512::Cfg<float>::MR, isa_avx512::Cfg<float>::NR},
    {isa_avx512::Cfg<double>::MR, isa_avx512::Cfg<double>::NR},
    isa_avx512::gemm_f32,
    isa_avx512::gemm_f64,
    isa_avx512::gemm_c64,
    isa_avx512::gemm_c128,
    isa_avx512::batch_f32,
    isa_avx512::batch_f64,
    isa_avx512::batch_c64,
    isa_avx512::batch_c128,
    isa_avx512::gather_f32,
    isa_avx512::gather_f64,
    isa_avx512::fma_peak,
};

}  // namespace faer

#pragma GCC pop_options
