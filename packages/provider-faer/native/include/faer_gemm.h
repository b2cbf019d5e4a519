// @tenferro/provider-faer: the interface between the N-API side (gemm.cc, info.cc), the ISA
// dispatcher (dispatch.cc) and the per-ISA GEMM engines (gemm_kernel_avx512.cc,
// gemm_kernel_avx2.cc, gemm_kernel_scalar.cc, each compiling gemm_engine.h under its own
// `#pragma GCC target`).
//
// Nothing here throws; the engines trust a request that gemm.cc has already bounds-checked and
// report only whether they finished (EngineResult), and gemm.cc returns status codes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tenferro/isa.h"

namespace faer {

using idx = std::int64_t;

/** What an engine call reports: it finished, it stopped because the abort word was raised, or it had no scratch memory. */
enum EngineResult : int { kEngineDone = 0, kEngineAborted = 1, kEngineNoMemory = 2 };

/**
 * Whether the execution's abort word (core's `ctx.abortWord`, an Int32Array over a
 * SharedArrayBuffer; null when there is none) has been raised. A relaxed atomic load: it orders
 * nothing, it only has to see the store eventually; the engines call it at block boundaries.
 */
inline bool abort_raised(const std::int32_t* word) { return word != nullptr && __atomic_load_n(word, __ATOMIC_RELAXED) != 0; }

/** Cache blocking of one real element type, in real elements (complex GEMM runs as a real GEMM of 2m x 2k x n). */
struct Blocking {
  idx mc = 0;
  idx kc = 0;
  idx nc = 0;
  /** Direct (unpacked) path for real GEMM when m*n*k <= small. */
  double small = 0;
  /** Direct path for complex GEMM when m*n*k <= small_complex (complex elements). */
  double small_complex = 0;
  /**
   * ... and only while the operand it streams once per row panel of C (B: k x n, in the
   * orientation with a column-major A) takes at most this many bytes: a quarter of L2, so that B
   * stays there while A's panels pass through (Zen 3, 512 KiB L2: f64 n = 192 ran 28 vs 32.5 GF/s
   * packed; an L2 of 2 MiB keeps n = 256 unpacked).
   */
  double small_stream_bytes = 0;
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
  const std::int32_t* abort;  // polled at block boundaries; null: never stops early
};

/**
 * One real GEMM whose K index gathers: C = alpha*A*B + beta*C where step p of K reads column p of A
 * at `a + ka[p]` (rows at stride rsa) and row p of B at `b + kb[p]` (columns at stride csb). A
 * contraction with summed axes (CpuGemmRequest.summed) runs as one such GEMM over all its items'
 * K steps (the GETT idea: pack straight from the tensors' strides, no copy and no per-item pass
 * over C). A null table means the affine K stride `csa` (`rsb`) instead. k > 0; gemm.cc has
 * bounds-checked every offset the tables and strides reach.
 */
template <class T>
struct GatherGemm {
  idx m, n, k;
  const T* a;
  idx rsa, csa;
  const idx* ka;
  const T* b;
  idx rsb, csb;
  const idx* kb;
  T* c;
  idx rsc, csc;
  T alpha, beta;
  const std::int32_t* abort;  // polled at block boundaries; null: never stops early
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
  const std::int32_t* abort;  // polled at block boundaries; null: never stops early
};

/** Batch axes a request may have (gemm.cc kMaxRank, MAX_BATCH_RANK in src/gemm-provider.ts). */
constexpr int kMaxBatchRank = 32;

/**
 * The batch items one engine call runs: `count` items from multi-index `index` (last axis
 * fastest) over extents `ext`; sa/sb/sc step A, B and C between items, in elements of the real
 * type (a complex element counts twice). The request's pointers address the first item. gemm.cc
 * has bounds-checked every item's reach; the engine decides the path once for all items (they
 * share shape and strides) and polls the abort word before each.
 */
struct BatchWalk {
  int rank;
  idx count;
  idx ext[kMaxBatchRank];
  idx index[kMaxBatchRank];
  idx sa[kMaxBatchRank], sb[kMaxBatchRank], sc[kMaxBatchRank];
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
  // Each returns an EngineResult; on kEngineAborted, C is partly written.
  int (*gemm_f32)(const RealGemm<float>&, const Blocking&);
  int (*gemm_f64)(const RealGemm<double>&, const Blocking&);
  int (*gemm_c64)(const ComplexGemm<float>&, const Blocking&);
  int (*gemm_c128)(const ComplexGemm<double>&, const Blocking&);
  // The same over the items of a batch (one call per task, no per-item dispatch).
  int (*batch_f32)(const RealGemm<float>&, const BatchWalk&, const Blocking&);
  int (*batch_f64)(const RealGemm<double>&, const BatchWalk&, const Blocking&);
  int (*batch_c64)(const ComplexGemm<float>&, const BatchWalk&, const Blocking&);
  int (*batch_c128)(const ComplexGemm<double>&, const BatchWalk&, const Blocking&);
  // A real GEMM with a gathered K (GatherGemm): summed contractions in one pass.
  int (*gather_f32)(const GatherGemm<float>&, const Blocking&);
  int (*gather_f64)(const GatherGemm<double>&, const Blocking&);
  /** Single-thread FMA throughput over about `seconds` in GFLOP/s (0 if the path has no vector FMA). */
  double (*fma_peak)(double seconds);
};

// The ISA paths are @tenferro/native's (tenferro/isa.h): which this CPU runs, which this build
// compiled in, and the pick (#40).
using Isa = tenferro::isa::Path;
constexpr Isa kIsaScalar = tenferro::isa::kPortable;
constexpr Isa kIsaAvx2 = tenferro::isa::kAvx2;
constexpr Isa kIsaAvx512 = tenferro::isa::kAvx512;
constexpr int kIsaCount = tenferro::isa::kCount;

// Each engine table is defined in its own translation unit.
extern const IsaEngine kEngineScalar;
extern const IsaEngine kEngineAvx2;
extern const IsaEngine kEngineAvx512;

/**
 * Per-thread, 64-byte aligned scratch that grows and is then reused; null when it cannot be
 * allocated. Slots: 0 packed A, 1 packed B (the engines), 2 a summed task's accumulation block,
 * 3 a gathered task's K offset tables (gemm.cc).
 */
constexpr int kScratchSlots = 4;
void* scratch(int slot, std::size_t bytes);

/** Cache sizes (bytes) read from sysfs once, with defaults when absent. */
struct CacheInfo {
  idx l1d, l2, l3;
  bool from_sysfs;
};
const CacheInfo& cache_info();

/** The ISA path to run (tenferro::isa::pick with TENFERRO_FAER_ISA; decided once per process). */
Isa best_isa();
const IsaEngine& engine(Isa isa);
/** Monotonic clock in seconds. */
double now_seconds();
/** The blocking used for `isa` and a real type of `bytes` (4 or 8), computed once. */
const Blocking& blocking(Isa isa, int bytes);

}  // namespace faer
