// The job a linalg kernel task describes (parsed and checked in addon.cc), and the op runners
// (ops.h, instantiated per scalar type in ops_real.cc / ops_complex.cc).
#pragma once
#include <cstddef>
#include <cstdint>

namespace tfl {

enum Op : int { kCholesky = 0, kTrsm = 1, kLuFactor = 2, kLu = 3, kSolve = 4, kQr = 5, kSvd = 6, kEigh = 7, kEig = 8, kLuFullPivot = 9, kOpCount = 10 };

// The steps of a blocked, right-looking factorisation of one square n×n matrix in place in out[0]
// (src/builtin.ts runs them over the lanes of the context's worker pool): each task works on the
// columns [c0, c1) of that matrix, and does, in this order, what its step bits say —
//   gather: copy columns [c0, c1) of A into out[0];
//   update: apply the factored panel of columns [j0, j0 + min(nb, n − j0)) to columns [c0, c1)
//           (LU: its row swaps, U12 = L11⁻¹ A12, A22 −= L21 U12; Cholesky: A22 −= L21 L21ᴴ, lower part);
//   factor: factor the panel of columns [c0, c0 + min(nb, n − c0)) (LU: getrf of its rows c0..n, pivots
//           to out[1][c0..] as global 1-based rows, the first zero pivot to info[0]; Cholesky: potrf of its
//           diagonal block and the solve below it, the order of a non-positive minor to info[0]);
//   rest:   factor all the columns [c0, n) at once, sequentially (c1 = n): the trailing matrix once
//           it is too small to split (LU: getrf of rows c0..n, its pivots and swaps as a panel's);
//   finish: LU: apply to each column below j0 (the first column the rest step factored, or n) the
//           row swaps of every panel right of the one holding it; Cholesky (flag upper): U = Lᴴ.
// Cholesky's gather zeroes the strict upper triangle and its update writes only the lower part.
// Words of a step task (addon.cc checks them): 0 op, 1 dtype, 2 n, 3 n, 4 nb, 5 flags, 6 c0, 7 c1,
// 8 batch axes (0), 9 abort offset, 10..12 A's offset and strides, 13 j0, 14 step bits, 15 unused.
enum StepOp : int { kLuStep = 10, kCholStep = 11, kStepOpEnd = 12 };
constexpr int kStepGather = 1, kStepUpdate = 2, kStepFactor = 4, kStepFinish = 8, kStepRest = 16;
enum Dtype : int { kF32 = 0, kF64 = 1, kC64 = 2, kC128 = 3 };

enum Status : int {
  kOk = 0,
  kBadArguments = 1,
  kOutOfBounds = 2,
  kBadDtype = 3,
  kBadRange = 4,
  kAborted = 5,
  kBadOp = 6,
};

// Flags (word 5).
constexpr int kFlagUpper = 1;        // cholesky: return U = L^H; trsm: A upper; eigh: read the upper triangle
constexpr int kFlagLeft = 2;         // trsm: A X = B (else X A = B)
constexpr int kFlagUnit = 4;         // trsm: unit diagonal
constexpr int kFlagFull = 8;         // svd: full U/V; qr: complete
constexpr int kFlagVectors = 16;     // svd: compute U/Vh; eigh/eig: eigenvectors
constexpr int kFlagROnly = 32;       // qr: R only

constexpr int kMaxBatchAxes = 16;
constexpr int kHeader = 16;

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
  void* out[3] = {nullptr, nullptr, nullptr};  // dense column-major, batch-contiguous
  int32_t* info = nullptr;                      // one per batch
  const int32_t* abort = nullptr;
  // Step tasks (kLuStep, kCholStep; k is the block width nb): the columns, the panel, the bits.
  int64_t c0 = 0, c1 = 0, j0 = 0;
  int bits = 0;
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

// Sizes (in elements of each output's type) one batch of output `which` needs; -1: unused.
int64_t out_elems(const Job& j, int which);
// Whether output `which` holds real values of the dtype's real type (S, eigenvalues of eigh),
// int32 (pivots), or the dtype's complex type (eig of a real matrix).
enum OutKind { kSame = 0, kReal = 1, kInt32 = 2, kComplex = 3 };
OutKind out_kind(const Job& j, int which);

// "3.4.0": the Eigen the kernels were compiled with.
const char* eigen_version();

}  // namespace tfl
