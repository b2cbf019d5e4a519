// @tenferro/provider-tprims: what the entry (entry.cc) and the per-ISA engines
// (kernels_{scalar,avx2,avx512}.cc, all compiled from tprims_engine.h) share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tenferro/isa.h"
#include "../src/abi.generated.h"

namespace tprims {

using idx = int64_t;

// kMaxRank, the status codes, task kinds, dtype and op codes (kUnaryCount ...), the ISA ids and the
// descriptor fields: native/src/abi.mjs, shared with the TypeScript (#40).
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

// The ISA paths are @tenferro/native's (tenferro/isa.h): which this CPU runs, which this build
// compiled in, and the pick (#40).
using Isa = tenferro::isa::Path;
constexpr Isa kIsaScalar = tenferro::isa::kPortable;
constexpr Isa kIsaAvx2 = tenferro::isa::kAvx2;
constexpr Isa kIsaAvx512 = tenferro::isa::kAvx512;
constexpr int kIsaCount = tenferro::isa::kCount;
static_assert(kIsaIdCount == kIsaCount, "the ABI table's ISA ids are tenferro/isa.h's paths");

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

/** The ISA path to run (tenferro::isa::pick with TENFERRO_TPRIMS_ISA; decided once per process). */
Isa best_isa();
const Engine& engine(Isa isa);

/** Per-thread scratch of at least `bytes` bytes (64-byte aligned, reused), or nullptr. */
void* scratch(std::size_t bytes);

}  // namespace tprims
