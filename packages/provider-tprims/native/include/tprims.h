// @tenferro/provider-tprims: what the entry (entry.cc) and the per-ISA engines
// (kernels_{scalar,avx2,avx512}.cc, all compiled from tprims_engine.h) share.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tprims {

using idx = int64_t;

/** Axes a task may have (longer descriptors are refused: BadArguments). */
constexpr int kMaxRank = 32;

enum Kind : int { kUnary = 0, kBinary = 1, kReduce = 2 };
enum Dtype : int { kF32 = 0, kF64 = 1, kC64 = 2, kC128 = 3, kI32 = 4, kI64 = 5, kBool = 6, kDtypeCount = 7 };
enum UnaryOp : int {
  kCopy = 0, kCopyConj = 1, kNeg = 2, kAbs = 3, kExp = 4, kLog = 5, kSqrt = 6, kSin = 7, kCos = 8, kTanh = 9,
  kConj = 10, kReal = 11, kImag = 12, kScale = 13, kCast = 14, kUnaryCount = 15,
};
enum BinaryOp : int {
  kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kMaximum = 4, kMinimum = 5, kPow = 6, kEq = 7, kLt = 8, kLe = 9, kGt = 10, kGe = 11, kBinaryCount = 12,
};
enum ReduceOp : int { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kProd = 4, kArgmax = 5, kArgmin = 6, kNorm = 7, kReduceCount = 8 };

enum Status : int {
  kOk = 0,
  kBadArguments = 1,   // a malformed descriptor or argument list
  kOutOfBounds = 2,    // an operand reaches outside its array
  kIsaUnavailable = 3, // the requested ISA path cannot run on this CPU
  kBadDtype = 4,       // no kernel for this (kind, op, dtypes)
  kNoMemory = 5,       // no reduction scratch could be allocated
  kAborted = 6,        // the abort word was raised: the engine stopped between rows or tiles, the output is partly written
};

/** Element bytes of each dtype code. */
constexpr int kDtypeBytes[kDtypeCount] = {4, 8, 8, 16, 4, 8, 1};

/**
 * One checked task. Strides are in elements of each operand's dtype; every reachable element
 * lies inside its array (the entry checked it). `shape` is the iteration shape: the output's for
 * unary/binary, the source's for a reduction (whose output strides are 0 on reduced axes).
 */
struct Task {
  int kind, op, din, dout, rank;
  idx shape[kMaxRank];
  idx s_out[kMaxRank], s_a[kMaxRank], s_b[kMaxRank];
  bool reduced[kMaxRank];
  char* out;
  const char* a;
  const char* b;
  double alpha_re, alpha_im;
  const int32_t* abort;  // the execution's abort word, polled between rows and tiles; null: never stops early
};

enum Isa : int { kIsaScalar = 0, kIsaAvx2 = 1, kIsaAvx512 = 2, kIsaCount = 3 };

struct Engine {
  const char* name;
  /** Runs a checked task; kBadDtype (before writing anything) when there is no kernel for it. */
  int (*run)(const Task&);
  /** Whether a kernel exists for (kind, op, din, dout): the same answer run() would give. */
  bool (*supports)(int kind, int op, int din, int dout);
};

extern const Engine kEngineScalar;
extern const Engine kEngineAvx2;
extern const Engine kEngineAvx512;

bool isa_supported(Isa isa);  // built into this binary and runnable on this CPU
bool isa_built(Isa isa);      // compiled in (binding.gyp: tenferro_avx512)
bool isa_runs_here(Isa isa);  // this CPU (and OS) runs the instruction set
Isa best_isa();
const Engine& engine(Isa isa);

/** Per-thread scratch of at least `bytes` bytes (64-byte aligned, reused), or nullptr. */
void* scratch(std::size_t bytes);

}  // namespace tprims
