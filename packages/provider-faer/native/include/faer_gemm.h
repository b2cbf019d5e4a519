// @tenferro/provider-faer: the interface between the N-API side (gemm.cc, info.cc), the ISA
// dispatcher (dispatch.cc) and the per-ISA GEMM engines (gemm_kernel_avx512.cc,
// gemm_kernel_avx2.cc, gemm_kernel_scalar.cc, each compiling gemm_engine.h under its own
// `#pragma GCC target`).
//
// Nothing here throws; the engines report nothing (they trust a request that gemm.cc has
// already bounds-checked) and gemm.cc returns status codes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace faer {

using idx = std::int64_t;

/** Cache blocking of one real element type, in real elements (complex GEMM runs as a real GEMM of 2m x 2k x n). */
struct Blocking {
  idx mc = 0;
  idx kc = 0;
  idx nc = 0;
  /** Direct (unpacked) path for real GEMM when m*n*k <= small. */
  double small = 0;
  /** Direct path for complex GEMM when m*n*k <= small_complex (complex elements). */
  double small_complex = 0;
};

/** One real GEMM: C = alpha*A*B + beta*C (beta == 0: C is not read). Strides in elements of T. */
template <class T>
struct RealGemm {
  idx m, n, k;
  const T* a;
  idx rsa, csa;
  const T* b;
  idx rsb, csb;
  T* c;
  idx rsc, csc;
  T alpha, beta;
};

/** One complex GEMM over interleaved (re, im) pairs of T; strides in complex elements. */
template <class T>
struct ComplexGemm {
  idx m, n, k;
  const T* a;
  idx rsa, csa;
  const T* b;
  idx rsb, csb;
  T* c;
  idx rsc, csc;
  T alpha_re, alpha_im, beta_re, beta_im;
  bool conj_a, conj_b;
};

/** The register tile (MR x NR real elements) of one micro-kernel. */
struct KernelShape {
  int mr;
  int nr;
};

/** What one ISA path provides. */
struct IsaEngine {
  const char* name;
  KernelShape f32;
  KernelShape f64;
  void (*gemm_f32)(const RealGemm<float>&, const Blocking&);
  void (*gemm_f64)(const RealGemm<double>&, const Blocking&);
  void (*gemm_c64)(const ComplexGemm<float>&, const Blocking&);
  void (*gemm_c128)(const ComplexGemm<double>&, const Blocking&);
  /** Single-thread FMA throughput over about `seconds` in GFLOP/s (0 if the path has no vector FMA). */
  double (*fma_peak)(double seconds);
};

enum Isa : int { kIsaScalar = 0, kIsaAvx2 = 1, kIsaAvx512 = 2, kIsaCount = 3 };

// Each engine table is defined in its own translation unit.
extern const IsaEngine kEngineScalar;
extern const IsaEngine kEngineAvx2;
extern const IsaEngine kEngineAvx512;

/** Per-thread, 64-byte aligned scratch that grows and is then reused (slot 0: packed A, 1: packed B). */
void* scratch(int slot, std::size_t bytes);

/** Cache sizes (bytes) read from sysfs once, with defaults when absent. */
struct CacheInfo {
  idx l1d, l2, l3;
  bool from_sysfs;
};
const CacheInfo& cache_info();

/** The best ISA this CPU and OS support (cached; decided once per process). */
Isa best_isa();
/** Whether `isa` can run here. */
bool isa_supported(Isa isa);
const IsaEngine& engine(Isa isa);
/** Monotonic clock in seconds. */
double now_seconds();
/** The blocking used for `isa` and a real type of `bytes` (4 or 8), computed once. */
const Blocking& blocking(Isa isa, int bytes);

}  // namespace faer
