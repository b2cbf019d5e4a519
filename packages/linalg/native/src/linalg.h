// The job a linalg kernel task describes (parsed and checked in addon.cc), and the op runners
// (ops.h, instantiated per scalar type in ops_real.cc / ops_complex.cc).
#pragma once
#include <cstddef>
#include <cstdint>

namespace tfl {

enum Op : int { kCholesky = 0, kTrsm = 1, kLuFactor = 2, kLu = 3, kSolve = 4, kQr = 5, kSvd = 6, kEigh = 7, kEig = 8, kLuFullPivot = 9, kOpCount = 10 };
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
