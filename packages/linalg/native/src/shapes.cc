// Output sizes and element kinds per op (one batch), shared by the checks in addon.cc.
#include "linalg.h"

#include <Eigen/Core>

#define TFL_STR2(x) #x
#define TFL_STR(x) TFL_STR2(x)

namespace tfl {

static int64_t mn(int64_t a, int64_t b) { return a < b ? a : b; }

// Every product here is of two extents the addon checked to be below 2^31, so it cannot overflow.
int64_t out_elems(const Job& j, int which) {
  const int64_t m = j.m, n = j.n, k = mn(m, n);
  const bool vec = (j.flags & kFlagVectors) != 0, full = (j.flags & kFlagFull) != 0;
  switch (j.op) {
    case kCholesky: return which == 0 ? m * m : -1;
    case kSolveTriangular:
    case kSolve: return which == 0 ? m * n : -1;
    case kLuFactor: return which == 0 ? m * n : which == 1 ? k : -1;
    case kLu: return which == 0 ? m * m : which == 1 ? m * k : k * n;
    case kQr:
      if (which == 0) return (j.flags & kFlagROnly) ? -1 : full ? m * m : m * k;
      if (which == 1) return full ? m * n : k * n;
      return -1;
    case kSvd:
      if (which == 1) return k;
      if (!vec) return -1;
      return which == 0 ? (full ? m * m : m * k) : (full ? n * n : k * n);
    case kEigh:
    case kEig: return which == 0 ? m : which == 1 ? (vec ? m * m : -1) : -1;
    case kLuFullPivot: return which == 0 ? m * m : m;
    case kLuStep: case kCholStep: {
      const int64_t panels = j.k > 0 ? (m + j.k - 1) / j.k : 0;
      if (which == 2) return kSyncHeader + panels;
      return which == 0 ? m * m : which == 1 && j.op == kLuStep ? m : -1;
    }
    default: return -1;
  }
}

OutKind out_kind(const Job& j, int which) {
  switch (j.op) {
    case kLuFactor: return which == 1 ? kInt32 : kSame;
    case kLuFullPivot: return which == 0 ? kSame : kInt32;
    case kLuStep: case kCholStep: return which == 0 ? kSame : kInt32;
    case kSvd: return which == 1 ? kReal : kSame;
    case kEigh: return which == 0 ? kReal : kSame;
    case kEig: return kComplex;
    default: return kSame;
  }
}

const char* eigen_version() { return TFL_STR(EIGEN_WORLD_VERSION) "." TFL_STR(EIGEN_MAJOR_VERSION) "." TFL_STR(EIGEN_MINOR_VERSION); }

}  // namespace tfl
