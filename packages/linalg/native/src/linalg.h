// The job a linalg kernel task describes (parsed and checked in addon.cc), and the op runners
// (ops.h, instantiated per scalar type in ops_real.cc / ops_complex.cc).
#pragma once
#include <cstddef>
#include <cstdint>

// The status codes, op and dtype codes, task words (kWordOp ...), flags (kFlagUpper ...) and the
// team tasks' op codes: abi.mjs, shared with src/native/binding.ts (#40).
#include "abi.generated.h"

namespace tfl {

// A blocked, right-looking factorisation of one square n×n matrix in place in out[0], shared by the
// lanes of the context's worker pool (src/builtin.ts runs one identical "team" task per lane): the
// matrix is cut into P = ⌈n/nb⌉ blocks of nb columns, and the work into a fixed sequence of tasks —
//   G(j)    gather block j of A into out[0] (Cholesky: zeros above the diagonal), j = 0..P−1;
//   F(0);   then for p = 0..P−2: U(p, p+1), F(p+1), U(p, p+2), …, U(p, P−1)   (look-ahead: panel p+1
//           is factored while panel p updates the blocks right of it);
//   FIN(j)  LU: block j takes the row swaps of every panel right of it (j < P−1); Cholesky with
//           flag upper: U = Lᴴ on block j's columns;
// where F(j) factors panel j (LU: getrf of its rows j·nb..n, pivots to out[1] as global 1-based
// rows, the first zero pivot to info[0]; Cholesky: potrf of its diagonal block and the solve below
// it, the order of a non-positive minor to info[0], which stops the team) and U(p, j) applies
// panel p to block j (LU: its swaps, U12 = L11⁻¹A12, A22 −= L21·U12; Cholesky: the lower part of
// A22 −= L21·L21ᴴ). Each lane takes the next task with an atomic ticket and waits (spin, then
// futex) until the task's inputs are done — G(j) or U(p−1, j) for block j, F(p) for panel p — as
// the per-block progress words in out[2] say. A task only ever waits for tasks with smaller
// tickets, all taken by running lanes, so the team cannot deadlock; a lane that starts late (or
// never) only means the others take more tickets. Sync words (out[2], int32, zeroed by the
// caller; words other than zeros make the lanes wait until the execution's abort word is raised):
// [0] next ticket, [1] stop (a failed or aborted lane sets it), [2] wake generation, [3] sleepers,
// diagnostics (src/builtin.ts logs them under NODE_DEBUG=tenferro): [4] lanes arrived, [5] and [6]
// the first and second lane's start (CLOCK_MONOTONIC µs, mod 2³²), [7] tasks the second lane ran;
// then progress[j] = 1 (gathered) + the panels applied + 1 once factored.
// Words of a team task (addon.cc checks them): 0 op, 1 dtype, 2 n, 3 n, 4 nb, 5 flags, 6..8 0,
// 9 abort offset, 10..12 A's offset and strides, 13..15 0, 16..18 the offsets of out[0..2] (the
// sync words' in int32), 19 info's. P ≤ kMaxPanels.
enum StepOp : int { kLuStep = kStepLuFactor, kCholStep = kStepCholesky, kStepOpEnd = kStepCholesky + 1 };
constexpr int kSyncHeader = 8;
constexpr int64_t kMaxPanels = 4096;
static_assert(kStepLuFactor >= kOpCount && kStepCholesky == kStepLuFactor + 1, "the team tasks' op codes follow the ops'");

// Words 0..19 (src/native/binding.ts W): 0 op, 1 dtype, 2 m, 3 n, 4 k, 5 flags, 6 b0, 7 b1, 8 batch
// axes, 9 abort offset, 10..12 A's offset and strides, 13..15 B's, 16..18 each output's offset in
// elements of its type (-1: none; outputs are dense and batch-contiguous from there: #35), 19 the
// info words' offset in int32; then the batch extents, A's and B's batch strides.
constexpr int kHeader = kWordCount;
constexpr int kOffOut = kWordOffOut0;
constexpr int kOffInfo = kWordOffInfo;

struct Operand {
  const void* data = nullptr;  // input: base pointer of the buffer
  int64_t off = 0, rs = 0, cs = 0;
  int64_t bs[kMaxBatchAxes] = {};
};

struct Job {
  int op = 0, dtype = 0, flags = 0;
  int64_t m = 0, n = 0, k = 0;  // op-specific; see ops.h
  int64_t b0 = 0, b1 = 0;
  int nb = 0;
  int64_t ext[kMaxBatchAxes] = {};
  Operand a, b;
  void* out[3] = {nullptr, nullptr, nullptr};  // dense column-major, batch-contiguous; at the output's offset
  int32_t* info = nullptr;                      // one per batch; at info's offset
  const int32_t* abort = nullptr;
  // Team tasks (kLuStep, kCholStep; k is the block width nb): the sync words are out[2].
};

// Element offset of batch `flat` of `o` (batch axes column-major: first axis fastest).
inline int64_t batch_offset(const Job& j, const Operand& o, int64_t flat) {
  int64_t off = o.off;
  for (int t = 0; t < j.nb; t++) {
    int64_t e = j.ext[t];
    off += (flat % e) * o.bs[t];
    flat /= e;
  }
  return off;
}

inline bool aborted(const int32_t* w) { return w != nullptr && __atomic_load_n(w, __ATOMIC_RELAXED) != 0; }

// Runs a checked job on the kernels of the instruction set dispatch.cc chose for this process.
int run(const Job& j);

// The instruction sets the kernels are compiled for (binding.gyp); kIsaCount on other targets.
enum Isa : int { kIsaGeneric = 0, kIsaAvx2 = 1, kIsaAvx512 = 2, kIsaCount = 3 };
// The set this process uses: the best the CPU (and OS) supports among those compiled in, lowered by
// TENFERRO_LINALG_ISA=generic|avx2 (tests; an unknown or unsupported value changes nothing). Decided once.
Isa isa();
const char* isa_name(Isa i);
/** The instruction-set paths left out of this build ("" when none; "avx512" for TENFERRO_NATIVE_ISA=host on a CPU without it; "generic f32/f64, avx512" for best on an AVX2 CPU). */
const char* not_built();
/** Whether this CPU could run a path left out of this build (or, with the baseline reals left out, runs no built vector path). */
bool not_built_runs_here();

// The dtypes this process has no kernels for, comma-separated ("f32,c64,c128" in a
// tenferro_linalg_f64_only=1 build, the sanitizer build; "f32,f64" in a tenferro_portable=0 build —
// TENFERRO_NATIVE_ISA=best on an AVX2/AVX-512 CPU — on a CPU or under a TENFERRO_LINALG_ISA that uses
// the baseline, #39), nullptr when every dtype is built: run() refuses their jobs with kBadDtype;
// info() reports them as dtypesNotBuilt.
const char* dtypes_not_built();

// Sizes (in elements of each output's type) one batch of output `which` needs; -1: unused.
int64_t out_elems(const Job& j, int which);
// Whether output `which` holds real values of the dtype's real type (S, eigenvalues of eigh),
// int32 (pivots), or the dtype's complex type (eig of a real matrix).
enum OutKind { kSame = 0, kReal = 1, kInt32 = 2, kComplex = 3 };
OutKind out_kind(const Job& j, int which);

// The compiler of each dtype's kernels on this process's path, e.g. "f32 clang 14.0.6, f64 gcc
// 12.2.0, c64 clang 14.0.6, c128 clang 14.0.6" (native/cxx-select.cjs; dtypes not built are left out).
const char* compilers();

// "3.4.0": the Eigen the kernels were compiled with.
const char* eigen_version();

}  // namespace tfl
