// The LAPACK side of tenferro_blas.node (src/lapack-kernels.ts): the Fortran LAPACK routines of
// the BLAS runtime already dlopen()ed by runtime.cc, resolved from the same handle with dlsym on
// first use. OpenBLAS and MKL export them; a runtime without them (reference CBLAS alone, BLIS)
// is reported by lapackSymbols() and the TypeScript side declines before writing.
//   lapackSymbols() -> { dpotrf: true, zgeev: false, ... } (every routine below, s/d/c/z) | null (not loaded)
//   lapack(words, a, b, out0, out1, out2, info) -> status
// Words (src/lapack-kernels.ts): [op, dtype, m, n, flags, threads, nb, offA, rsA, csA, offB, rsB,
// csB, info offset, 0, 0, out0 offset, rows, cols, out1 …, out2 … | ext[nb] | A batch strides[nb] |
// B batch strides[nb]]. op and flags are @tenferro/linalg's codes (native/src/linalg.h there):
// 0 cholesky, 1 solveTriangular, 2 luFactor, 3 lu, 4 solve, 5 qr, 6 svd, 7 eigh, 8 eig,
// 9 luFullPivot; dtype 0 f32, 1 f64, 2 c64, 3 c128; flags 1 upper, 2 left, 4 unit diagonal,
// 8 full, 16 vectors, 32 R only. Each output is a descriptor of the request (#35): its offset in
// elements of its type (-1: none) and its matrix extents (rows, cols; a vector is rows × 1), dense,
// column-major and batch-contiguous from the offset; the info words start at int32 `info offset`.
// The shapes are @tenferro/linalg's (its src/output-convention.ts); this file keeps no table of its
// own — each routine takes its extents from the descriptors and checks them as LAPACK checks its
// arguments. The results are LAPACK's raw ones (geqrf/orgqr's signs, gesdd's and syevd's vectors,
// geev's order and vectors): @tenferro/linalg applies its output convention after the kernel.
// Every word is copied and checked (128-bit arithmetic) before anything is read or written: every
// descriptor against its buffer, again after the TypeScript side did.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <numeric>
#include <type_traits>
#include <vector>

#include <napi.h>

#include "blas_addon.h"
#include "blas_runtime.h"
#include "tenferro/napi_args.h"

namespace blas {
namespace {

using i128 = __int128;
using Fn = void (*)();

// The routines, by family; [dtype] = s, d, c, z. orgqr is ungqr, syevd heevd for c/z.
enum Routine : int { kPotrf, kGetrf, kGetrs, kTrsm, kGeqrf, kOrgqr, kGesdd, kSyevd, kGeev, kGetc2, kGesv, kRoutines };
const char* const kNames[kRoutines][4] = {
    {"spotrf", "dpotrf", "cpotrf", "zpotrf"}, {"sgetrf", "dgetrf", "cgetrf", "zgetrf"}, {"sgetrs", "dgetrs", "cgetrs", "zgetrs"},
    {"strsm", "dtrsm", "ctrsm", "ztrsm"},     {"sgeqrf", "dgeqrf", "cgeqrf", "zgeqrf"}, {"sorgqr", "dorgqr", "cungqr", "zungqr"},
    {"sgesdd", "dgesdd", "cgesdd", "zgesdd"}, {"ssyevd", "dsyevd", "cheevd", "zheevd"}, {"sgeev", "dgeev", "cgeev", "zgeev"},
    {"sgetc2", "dgetc2", "cgetc2", "zgetc2"}, {"sgesv", "dgesv", "cgesv", "zgesv"},
};

struct Lapack {
  Fn fn[kRoutines][4] = {};
};

std::once_flag g_once;
Lapack g_lapack;

const Lapack* lapack() {
  if (!runtime_loaded()) return nullptr;
  std::call_once(g_once, [] {
    void* h = runtime().handle;
    if (h == nullptr) return;
    for (int r = 0; r < kRoutines; r++)
      for (int d = 0; d < 4; d++) {
        std::string name = std::string(kNames[r][d]) + "_";
        g_lapack.fn[r][d] = reinterpret_cast<Fn>(dlsym(h, name.c_str()));
      }
  });
  return &g_lapack;
}

// The routines each op needs (bit set of Routine), given its flags.
unsigned needs(int op, int flags) {
  switch (op) {
    case 0: return 1u << kPotrf;
    case 1: return 1u << kTrsm;
    case 2: case 3: return 1u << kGetrf;
    case 4: return 1u << kGesv;
    case 5: return (1u << kGeqrf) | ((flags & 32) ? 0u : (1u << kOrgqr));
    case 6: return 1u << kGesdd;
    case 7: return 1u << kSyevd;
    case 8: return 1u << kGeev;
    case 9: return 1u << kGetc2;
    default: return 0;
  }
}

// Per-thread workspace (each engine worker is a thread): the column-major copies and LAPACK's
// work arrays, in a few slots, each grown to the largest size a call needed and kept for the next
// call — repeated calls neither zero-fill nor page-fault their workspaces (std::vector did both on
// every call: a 1024×1024 gesdd's ~30 MB per call). Up to kRetainBytes is kept for any next call.
// A call that grew the slots past that keeps them (up to kRepeatBytes) only for a next call of the
// same kind (op, dtype, sizes, flags): the call before it releases them when it is of another kind,
// and a call past kRepeatBytes releases them when it ends — so a loop of equal large calls does
// not fault its workspace in again each time (f64 at n = 2048: eigh's work 64.1 MiB, svd's 96 MiB
// plus the 32 MiB copy; at ~15 µs per 4 KiB page on first touch here, releasing them after every
// call made the native call 0.74 (eigh) and 0.82 (svd) of the C anchor's speed, which keeps its
// workspace; kept: 0.98 and 0.96), while one large call leaves at most kRepeatBytes until the
// thread's next call. The rest goes when the thread exits.
// Slots hold any element type: kSlotA a matrix copy, kSlotWork LAPACK's work, the others the
// small arrays (pivots, tau, iwork, rwork).
enum Slot : int { kSlotA = 0, kSlotWork = 1, kSlotAux = 2, kSlotAux2 = 3, kSlots = 4 };
constexpr size_t kRetainBytes = size_t{64} << 20;
constexpr size_t kRepeatBytes = size_t{256} << 20;

// What a call's workspace sizes depend on (not its batch: every matrix of a call needs the same).
struct CallKind {
  int op = -1, dtype = -1, flags = -1;
  int64_t m = -1, n = -1;
  bool operator==(const CallKind& o) const { return op == o.op && dtype == o.dtype && flags == o.flags && m == o.m && n == o.n; }
};

struct Arena {
  void* ptr[kSlots] = {};
  size_t size[kSlots] = {};
  CallKind current{}, kept{};  // kept: the kind the slots past kRetainBytes are kept for
  ~Arena() {
    for (void* p : ptr) free(p);
  }
  // At least `bytes` (64-byte aligned, uninitialised), or nullptr when the allocation fails.
  void* get(int slot, size_t bytes) {
    if (bytes == 0) bytes = 64;
    if (size[slot] >= bytes) return ptr[slot];
    free(ptr[slot]);
    const size_t rounded = (bytes + 63) / 64 * 64;
    ptr[slot] = aligned_alloc(64, rounded);
    size[slot] = ptr[slot] != nullptr ? rounded : 0;
    return ptr[slot];
  }
  size_t total() const {
    size_t t = 0;
    for (size_t z : size) t += z;
    return t;
  }
  void release() {
    for (int i = 0; i < kSlots; i++) {
      free(ptr[i]);
      ptr[i] = nullptr;
      size[i] = 0;
    }
  }
  // Before a call: slots kept past kRetainBytes for another kind of call are released first.
  void begin(const CallKind& kind) {
    if (total() > kRetainBytes && !(kept == kind)) release();
    current = kind;
  }
  // After it: past kRetainBytes, keep them for a call of this kind (up to kRepeatBytes), else release.
  void trim() {
    const size_t t = total();
    if (t <= kRetainBytes) return;
    if (t <= kRepeatBytes) kept = current;
    else release();
  }
};
thread_local Arena t_arena;

// The request words, op codes and flags: native/src/abi.mjs (#40). Words 0..12 are read by index below.
constexpr int kHeader = kLapackWordCount;
constexpr int kInfoWord = kLapackWordOffInfo;  // the info words' offset (int32)
constexpr int kOutWords = kLapackWordOut0Offset;  // per output o: [kOutWords + 3o] offset (elements of its type; -1: none), rows, cols
constexpr int kMaxAxes = kLapackMaxAxes;
static_assert(kLapackWordOp == 0 && kLapackWordDtype == 1 && kLapackWordM == 2 && kLapackWordN == 3 && kLapackWordFlags == 4 && kLapackWordThreads == 5 &&
                  kLapackWordNb == 6 && kLapackWordOffA == 7 && kLapackWordOffB == 10 && kLapackWordZero14 == 14 && kLapackWordZero15 == 15,
              "lapack() reads these words by index");

using tenferro::napi_args::is_int;
using tenferro::napi_args::TypedView;

// A Uint8Array or Int32Array: its memory (tenferro/napi_args.h); `ok` false for anything else.
TypedView bytes_of(const Napi::Value& v) {
  TypedView t = tenferro::napi_args::typed_view(v);
  if (t.type != napi_uint8_array && t.type != napi_int32_array) t.ok = false;
  return t;
}

struct Operand {
  int64_t off = 0, rs = 0, cs = 0, bs[kMaxAxes] = {};
  const uint8_t* data = nullptr;
};

// Bytes of one element of output `which`: 0 the dtype's, 1 its real type, 2 int32, 3 its complex type.
int out_kind(int op, int which) {
  if (op == 2) return which == 1 ? 2 : 0;
  if (op == 9) return which == 0 ? 0 : 2;
  if (op == 6) return which == 1 ? 1 : 0;
  if (op == 7) return which == 0 ? 1 : 0;
  if (op == 8) return 3;
  return 0;
}

// One output descriptor of a request (words kOutWords + 3o …), checked against its buffer.
struct Out {
  uint8_t* data = nullptr;  // at the descriptor's offset
  int64_t rows = 0, cols = 0;
  bool present = false;
};

bool want(const Out& o, int64_t rows, int64_t cols) { return o.present && o.rows == rows && o.cols == cols; }

// The routines' argument checks of the output descriptors (as LAPACK checks LDA ≥ M): each output
// an op writes is present, with the extents the routine writes — where the request chooses them
// (qr's Q columns and R rows, svd's thin or full U and Vᴴ) within what the routine accepts.
bool outputs_fit(int op, int flags, int64_t m, int64_t n, const Out* o) {
  const int64_t k = std::min(m, n);
  const bool vec = (flags & kFlagVectors) != 0;
  switch (op) {
    case 0: return want(o[0], m, m);
    case 1: case 4: return want(o[0], m, n);
    case 2: return want(o[0], m, n) && want(o[1], k, 1);
    case 3: return want(o[0], m, m) && want(o[1], m, k) && want(o[2], k, n);
    case 5:  // R: rr×n, k ≤ rr ≤ m (rows past k zero); Q (not for R only): m×qc with k ≤ qc ≤ m (orgqr's M ≥ N ≥ K)
      if (!o[1].present || o[1].cols != n || o[1].rows < k || o[1].rows > m) return false;
      return (flags & kFlagROnly) != 0 || (o[0].present && o[0].rows == m && o[0].cols >= k && o[0].cols <= m);
    case 6:  // S: k; with vectors, gesdd's jobz 'S' (U m×k, Vᴴ k×n) or 'A' (U m×m, Vᴴ n×n)
      if (!want(o[1], k, 1)) return false;
      if (!vec) return true;
      return o[0].present && o[2].present && o[0].rows == m && o[2].cols == n && ((o[0].cols == k && o[2].rows == k) || (o[0].cols == m && o[2].rows == n));
    case 7: case 8: return want(o[0], m, 1) && (!vec || want(o[1], m, m));
    case 9: return want(o[0], m, m) && want(o[1], m, 1) && want(o[2], m, 1);
    default: return false;
  }
}

template <typename T> struct real_of { using type = T; };
template <typename T> struct real_of<std::complex<T>> { using type = T; };
template <typename T> constexpr bool is_cplx_v = !std::is_same_v<T, typename real_of<T>::type>;

template <typename T>
T conj_of(const T& x) {
  if constexpr (is_cplx_v<T>) return std::conj(x); else return x;
}

// LAPACK's optimal workspace (a query's work[0]), at least `min`, at most INT_MAX.
template <typename T>
int lwork_of(const T& w, int64_t min) {
  double q;
  if constexpr (is_cplx_v<T>) q = static_cast<double>(w.real()); else q = static_cast<double>(w);
  int64_t v = std::max<int64_t>(min, static_cast<int64_t>(std::ceil(q)));
  return static_cast<int>(std::min<int64_t>(v, 2147483647));
}

template <typename T>
struct Runner {
  using R = typename real_of<T>::type;
  using C = std::complex<R>;
  const Lapack& L;
  int idx, op, flags, nb;
  int64_t m, n;
  const int64_t* ext;
  const Operand &A, &B;
  uint8_t *out0, *out1, *out2;
  int32_t* info;
  const Out* outs;  // the descriptors (extents) of out0..2
  // Per-call pivots, reused from one batch to the next.
  std::vector<int> scratchPiv{};

  template <typename F>
  F fn(Routine r) const { return reinterpret_cast<F>(L.fn[r][idx]); }

  // `count` elements of type U in workspace slot `slot` (uninitialised), or nullptr.
  template <typename U = T>
  static U* ws(Slot slot, int64_t count) {
    const size_t n = static_cast<size_t>(std::max<int64_t>(count, 1));
    if (n > SIZE_MAX / sizeof(U)) return nullptr;
    return static_cast<U*>(t_arena.get(slot, n * sizeof(U)));
  }

  void gather(const Operand& o, int64_t base, int64_t rows, int64_t cols, T* dst, int64_t ld) const {
    const T* src = reinterpret_cast<const T*>(o.data) + base;
    if (o.rs == 1 && o.cs == rows && ld == rows) {  // the whole matrix contiguous: one copy
      memcpy(dst, src, static_cast<size_t>(rows * cols) * sizeof(T));
      return;
    }
    if (o.rs == 1) {  // columns contiguous: a copy per column
      for (int64_t c = 0; c < cols; c++) memcpy(dst + c * ld, src + c * o.cs, static_cast<size_t>(rows) * sizeof(T));
      return;
    }
    for (int64_t c = 0; c < cols; c++)
      for (int64_t r = 0; r < rows; r++) dst[r + c * ld] = src[r * o.rs + c * o.cs];
  }

  template <typename U>
  static U* at(uint8_t* p, int64_t b, int64_t per) { return reinterpret_cast<U*>(p) + b * per; }

  static void identity(T* o, int64_t n) {
    std::fill(o, o + n * n, T(0));
    for (int64_t i = 0; i < n; i++) o[i + i * n] = T(1);
  }

  int run(int64_t count) {
    // Batch b's offsets, stepped from b − 1's (an odometer over the batch axes, first fastest)
    // rather than recomputed with a division and a remainder per axis for every matrix.
    int64_t idx[kMaxAxes] = {};
    int64_t offA = A.off, offB = B.off;
    // Only stepped when the matrices have entries: the descriptor check bounds the strides then.
    for (int64_t b = 0; b < count; b++) {
      info[b] = 0;
      if (m == 0 || n == 0) { empty(b); continue; }
      int s = kStatusOk;
      switch (op) {
        case 0: s = cholesky(b, offA); break;
        case 1: s = trsm(b, offA, offB); break;
        case 2: case 3: s = lu(b, offA); break;
        case 4: s = solve(b, offA, offB); break;
        case 5: s = qr(b, offA); break;
        case 6: s = svd(b, offA); break;
        case 7: s = eigh(b, offA); break;
        case 8: s = eig(b, offA); break;
        case 9: s = lu_full(b, offA); break;
        default: s = kStatusBadDescriptor;
      }
      if (s != kStatusOk) return s;
      step(idx, offA, offB);
    }
    return kStatusOk;
  }

  // The next batch's offsets: axis t's index up by one, carrying into axis t + 1 at its extent.
  // Every offset reached is one the descriptor check bounded (the last step's carry out of the
  // last axis is never used).
  void step(int64_t* idx, int64_t& offA, int64_t& offB) const {
    for (int t = 0; t < nb; t++) {
      offA += A.bs[t];
      offB += B.bs[t];
      if (++idx[t] < ext[t]) return;
      offA -= ext[t] * A.bs[t];
      offB -= ext[t] * B.bs[t];
      idx[t] = 0;
    }
  }

  // As the built-in kernels: no factorisation of an empty matrix; the square factors that still
  // have entries (P of lu, Q of a complete qr, U or V of a full svd) are identities.
  void empty(int64_t b) {
    const bool vec = (flags & kFlagVectors) != 0;
    if (op == 3) identity(at<T>(out0, b, m * m), m);
    if (op == 5 && !(flags & kFlagROnly) && outs[0].cols == m) identity(at<T>(out0, b, m * m), m);
    if (op == 6 && vec) {
      if (outs[0].cols == m) identity(at<T>(out0, b, m * m), m);
      if (outs[2].rows == n) identity(at<T>(out2, b, n * n), n);
    }
  }

  int cholesky(int64_t b, int64_t offA) {
    using Potrf = void (*)(const char*, const int*, T*, const int*, int*, size_t);
    const int im = static_cast<int>(m);
    T* o = at<T>(out0, b, m * m);
    // potrf('L') reads and writes only the lower triangle: copy it in and zero the strict upper
    // triangle in the same pass (no second pass over L).
    const T* src = reinterpret_cast<const T*>(A.data) + offA;
    for (int64_t c = 0; c < m; c++) {
      T* col = o + c * m;
      std::fill(col, col + c, T(0));
      if (A.rs == 1) memcpy(col + c, src + c + c * A.cs, static_cast<size_t>(m - c) * sizeof(T));
      else
        for (int64_t r = c; r < m; r++) col[r] = src[r * A.rs + c * A.cs];
    }
    int li = 0;
    fn<Potrf>(kPotrf)("L", &im, o, &im, &li, 1);
    if (li < 0) return kStatusBadArguments;
    if (li > 0) {
      info[b] = li;
      std::fill(o, o + m * m, T(0));
      return kStatusOk;
    }
    if (flags & kFlagUpper)
      for (int64_t c = 0; c < m; c++) {
        o[c + c * m] = conj_of(o[c + c * m]);
        for (int64_t r = c + 1; r < m; r++) {
          o[c + r * m] = conj_of(o[r + c * m]);
          o[r + c * m] = T(0);
        }
      }
    return kStatusOk;
  }

  int trsm(int64_t b, int64_t offA, int64_t offB) {
    using Trsm = void (*)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*, const int*, T*, const int*, size_t, size_t, size_t, size_t);
    const bool left = (flags & kFlagLeft) != 0;
    const int64_t na = left ? m : n;
    const int im = static_cast<int>(m), in = static_cast<int>(n), ia = static_cast<int>(na);
    T* a = ws(kSlotA, na * na);
    if (a == nullptr) return kStatusTooLarge;
    gather(A, offA, na, na, a, na);
    T* o = at<T>(out0, b, m * n);
    gather(B, offB, m, n, o, m);
    const T one(1);
    fn<Trsm>(kTrsm)(left ? "L" : "R", (flags & kFlagUpper) ? "U" : "L", "N", (flags & kFlagUnit) ? "U" : "N", &im, &in, &one, a, &ia, o, &im, 1, 1, 1, 1);
    return kStatusOk;
  }

  int getrf(T* a, int64_t rows, int64_t cols, int* ipiv) {
    using Getrf = void (*)(const int*, const int*, T*, const int*, int*, int*);
    const int ir = static_cast<int>(rows), ic = static_cast<int>(cols);
    int li = 0;
    fn<Getrf>(kGetrf)(&ir, &ic, a, &ir, ipiv, &li);
    return li;
  }

  int lu(int64_t b, int64_t offA) {
    const int64_t k = std::min(m, n);
    std::vector<int>& ipiv = scratchPiv;
    ipiv.resize(static_cast<size_t>(k));
    T* f;
    if (op == 2) f = at<T>(out0, b, m * n);
    else if ((f = ws(kSlotA, m * n)) == nullptr) return kStatusTooLarge;
    gather(A, offA, m, n, f, m);
    int li = getrf(f, m, n, ipiv.data());
    if (li < 0) return kStatusBadArguments;
    info[b] = li;
    if (op == 2) {
      int32_t* p = at<int32_t>(out1, b, k);
      for (int64_t i = 0; i < k; i++) p[i] = ipiv[static_cast<size_t>(i)];
      return kStatusOk;
    }
    // lu: A = P L U, P the inverse of the row permutation the swaps apply (as the built-in).
    std::vector<int64_t> perm(static_cast<size_t>(m));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    for (int64_t i = 0; i < k; i++) {
      int64_t p = ipiv[static_cast<size_t>(i)] - 1;
      if (p < 0 || p >= m) return kStatusBadArguments;
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(p)]);
    }
    T* P = at<T>(out0, b, m * m);
    std::fill(P, P + m * m, T(0));
    for (int64_t i = 0; i < m; i++) P[perm[static_cast<size_t>(i)] + i * m] = T(1);
    T* Lo = at<T>(out1, b, m * k);
    T* U = at<T>(out2, b, k * n);
    for (int64_t c = 0; c < k; c++)
      for (int64_t r = 0; r < m; r++) Lo[r + c * m] = r == c ? T(1) : r > c ? f[r + c * m] : T(0);
    for (int64_t c = 0; c < n; c++)
      for (int64_t r = 0; r < k; r++) U[r + c * k] = r <= c ? f[r + c * m] : T(0);
    return kStatusOk;
  }

  // A X = B through ?gesv_ — the routine a C program calls (one interface entry per matrix, not
  // getrf's and getrs's two): A copied into this thread's workspace (kept across the batch and
  // across calls: a batch of small solves allocates nothing), B into the output, solved there.
  int solve(int64_t b, int64_t offA, int64_t offB) {
    using Gesv = void (*)(const int*, const int*, T*, const int*, int*, T*, const int*, int*);
    T* a = ws(kSlotA, m * m);
    int* ipiv = ws<int>(kSlotAux, m);
    if (a == nullptr || ipiv == nullptr) return kStatusTooLarge;
    gather(A, offA, m, m, a, m);
    T* o = at<T>(out0, b, m * n);
    gather(B, offB, m, n, o, m);
    const int im = static_cast<int>(m), in = static_cast<int>(n);
    int li = 0;
    fn<Gesv>(kGesv)(&im, &in, a, &im, ipiv, o, &im, &li);
    if (li < 0) return kStatusBadArguments;
    if (li > 0) {
      info[b] = li;
      std::fill(o, o + m * n, T(0));
    }
    return kStatusOk;
  }

  // geqrf, R copied out of its upper triangle (rows past k zero), orgqr/ungqr forming Q: the raw
  // factors (Householder's signs on R's diagonal; the output convention makes it real ≥ 0).
  int qr(int64_t b, int64_t offA) {
    using Geqrf = void (*)(const int*, const int*, T*, const int*, T*, T*, const int*, int*);
    using Orgqr = void (*)(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*);
    const int64_t k = std::min(m, n);
    const bool ronly = (flags & kFlagROnly) != 0;
    // The extents the request chose (outputs_fit checked them): R rr×n, Q m×qc.
    const int64_t rr = outs[1].rows, qc = ronly ? 0 : outs[0].cols;
    // Working matrix m × max(n, qc): orgqr forms Q in its first qc columns. When Q is wanted and
    // has at least n columns (m ≥ n, or complete), that is Q's output itself (no copy); else a
    // workspace.
    const bool inPlace = !ronly && qc >= n;
    const int64_t wc = std::max(n, qc);
    T* w = inPlace ? at<T>(out0, b, m * qc) : ws(kSlotA, m * wc);
    T* tau = ws(kSlotAux, k);
    if (w == nullptr || tau == nullptr) return kStatusTooLarge;
    gather(A, offA, m, n, w, m);
    std::fill(w + m * n, w + m * wc, T(0));
    const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k), iq = static_cast<int>(qc);
    int li = 0, lw = -1;
    T q;
    fn<Geqrf>(kGeqrf)(&im, &in, w, &im, tau, &q, &lw, &li);
    if (li < 0) return kStatusBadArguments;
    lw = lwork_of(q, std::max<int64_t>(1, n));
    T* work = ws(kSlotWork, lw);
    if (work == nullptr) return kStatusTooLarge;
    fn<Geqrf>(kGeqrf)(&im, &in, w, &im, tau, work, &lw, &li);
    if (li < 0) return kStatusBadArguments;
    // R before orgqr overwrites w: a column at a time (contiguous), zeros below its last row.
    T* r = at<T>(out1, b, rr * n);
    for (int64_t c = 0; c < n; c++) {
      T* rc = r + c * rr;
      const T* wc_ = w + c * m;
      const int64_t last = std::min(c + 1, k);
      std::copy(wc_, wc_ + last, rc);
      std::fill(rc + last, rc + rr, T(0));
    }
    if (!ronly) {
      lw = -1;
      fn<Orgqr>(kOrgqr)(&im, &iq, &ik, w, &im, tau, &q, &lw, &li);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, std::max<int64_t>(1, qc));
      if ((work = ws(kSlotWork, lw)) == nullptr) return kStatusTooLarge;
      fn<Orgqr>(kOrgqr)(&im, &iq, &ik, w, &im, tau, work, &lw, &li);
      if (li < 0) return kStatusBadArguments;
      if (!inPlace) std::copy(w, w + m * qc, at<T>(out0, b, m * qc));
    }
    return kStatusOk;
  }

  int svd(int64_t b, int64_t offA) {
    const int64_t k = std::min(m, n), mx = std::max(m, n);
    const bool vec = (flags & kFlagVectors) != 0;
    // Thin or full, as the request's U and Vᴴ are (outputs_fit checked them).
    const int64_t uc = vec ? outs[0].cols : k, vr = vec ? outs[2].rows : k;
    const char* jobz = vec ? (uc == m && vr == n ? "A" : "S") : "N";
    T* a = ws(kSlotA, m * n);
    int* iwork = ws<int>(kSlotAux, 8 * k);
    if (a == nullptr || iwork == nullptr) return kStatusTooLarge;
    gather(A, offA, m, n, a, m);
    R* s = at<R>(out1, b, k);
    T dummy[1] = {T(0)};
    T* u = vec ? at<T>(out0, b, m * uc) : dummy;
    T* vt = vec ? at<T>(out2, b, vr * n) : dummy;
    const int im = static_cast<int>(m), in = static_cast<int>(n), ldu = static_cast<int>(vec ? m : 1), ldvt = static_cast<int>(vec ? std::max<int64_t>(1, vr) : 1);
    int li = 0, lw = -1;
    T q;
    if constexpr (is_cplx_v<T>) {
      using Gesdd = void (*)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*, const int*, R*, int*, int*, size_t);
      const int64_t lr = vec ? std::max(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k) : 7 * k;
      R* rwork = ws<R>(kSlotAux2, std::max<int64_t>(1, lr));
      if (rwork == nullptr) return kStatusTooLarge;
      fn<Gesdd>(kGesdd)(jobz, &im, &in, a, &im, s, u, &ldu, vt, &ldvt, &q, &lw, rwork, iwork, &li, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, 1);
      T* work = ws(kSlotWork, lw);
      if (work == nullptr) return kStatusTooLarge;
      fn<Gesdd>(kGesdd)(jobz, &im, &in, a, &im, s, u, &ldu, vt, &ldvt, work, &lw, rwork, iwork, &li, 1);
    } else {
      using Gesdd = void (*)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*, const int*, int*, int*, size_t);
      fn<Gesdd>(kGesdd)(jobz, &im, &in, a, &im, s, u, &ldu, vt, &ldvt, &q, &lw, iwork, &li, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, 1);
      T* work = ws(kSlotWork, lw);
      if (work == nullptr) return kStatusTooLarge;
      fn<Gesdd>(kGesdd)(jobz, &im, &in, a, &im, s, u, &ldu, vt, &ldvt, work, &lw, iwork, &li, 1);
    }
    if (li < 0) return kStatusBadArguments;
    if (li > 0) {
      info[b] = li;
      std::fill(s, s + k, R(0));
      if (vec) {
        std::fill(u, u + m * uc, T(0));
        std::fill(vt, vt + vr * n, T(0));
      }
      return kStatusOk;
    }
    return kStatusOk;  // raw vectors: the output convention fixes their phases
  }

  int eigh(int64_t b, int64_t offA) {
    const bool vec = (flags & kFlagVectors) != 0;
    const char* jobz = vec ? "V" : "N";
    const char* uplo = (flags & kFlagUpper) ? "U" : "L";
    T* a = vec ? at<T>(out1, b, m * m) : ws(kSlotA, m * m);
    if (a == nullptr) return kStatusTooLarge;
    gather(A, offA, m, m, a, m);
    R* w = at<R>(out0, b, m);
    const int im = static_cast<int>(m);
    int li = 0, lw = -1, liw = -1, iq = 0;
    T q;
    if constexpr (is_cplx_v<T>) {
      using Heevd = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*, const int*, int*, const int*, int*, size_t, size_t);
      R rq = 0;
      int lrw = -1;
      fn<Heevd>(kSyevd)(jobz, uplo, &im, a, &im, w, &q, &lw, &rq, &lrw, &iq, &liw, &li, 1, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, 1);
      lrw = lwork_of(rq, 1);
      liw = std::max(1, iq);
      T* work = ws(kSlotWork, lw);
      R* rwork = ws<R>(kSlotAux2, lrw);
      int* iwork = ws<int>(kSlotAux, liw);
      if (work == nullptr || rwork == nullptr || iwork == nullptr) return kStatusTooLarge;
      fn<Heevd>(kSyevd)(jobz, uplo, &im, a, &im, w, work, &lw, rwork, &lrw, iwork, &liw, &li, 1, 1);
    } else {
      using Syevd = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*, const int*, int*, size_t, size_t);
      fn<Syevd>(kSyevd)(jobz, uplo, &im, a, &im, w, &q, &lw, &iq, &liw, &li, 1, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, 1);
      liw = std::max(1, iq);
      T* work = ws(kSlotWork, lw);
      int* iwork = ws<int>(kSlotAux, liw);
      if (work == nullptr || iwork == nullptr) return kStatusTooLarge;
      fn<Syevd>(kSyevd)(jobz, uplo, &im, a, &im, w, work, &lw, iwork, &liw, &li, 1, 1);
    }
    if (li < 0) return kStatusBadArguments;
    if (li > 0) {
      info[b] = li;
      std::fill(w, w + m, R(0));
      if (vec) std::fill(a, a + m * m, T(0));
    }
    return kStatusOk;  // raw vectors: the output convention fixes their phases
  }

  // geev's right eigenvectors and eigenvalues, raw, in geev's order (a real matrix's packed
  // conjugate pairs unpacked to complex vectors): the output convention orders them, scales the
  // vectors to unit norm and fixes their phases.
  int eig(int64_t b, int64_t offA) {
    const bool vec = (flags & kFlagVectors) != 0;
    const int im = static_cast<int>(m), ldv = static_cast<int>(vec ? m : 1);
    std::vector<T> a(static_cast<size_t>(m * m));
    gather(A, offA, m, m, a.data(), m);
    C* wo = at<C>(out0, b, m);
    C* vo = vec ? at<C>(out1, b, m * m) : nullptr;
    T dummy[1] = {T(0)};
    const int one = 1;
    int li = 0, lw = -1;
    T q;
    if constexpr (is_cplx_v<T>) {
      // T is C: the eigenvalues and vectors straight into the outputs.
      using Geev = void (*)(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, T*, const int*, T*, const int*, R*, int*, size_t, size_t);
      std::vector<R> rwork(static_cast<size_t>(2 * m));
      T* vr = vec ? vo : dummy;
      fn<Geev>(kGeev)("N", vec ? "V" : "N", &im, a.data(), &im, wo, dummy, &one, vr, &ldv, &q, &lw, rwork.data(), &li, 1, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, std::max<int64_t>(1, 2 * m));
      std::vector<T> work(static_cast<size_t>(lw));
      fn<Geev>(kGeev)("N", vec ? "V" : "N", &im, a.data(), &im, wo, dummy, &one, vr, &ldv, work.data(), &lw, rwork.data(), &li, 1, 1);
    } else {
      using Geev = void (*)(const char*, const char*, const int*, T*, const int*, T*, T*, T*, const int*, T*, const int*, T*, const int*, int*, size_t, size_t);
      std::vector<T> wr(static_cast<size_t>(m)), wi(static_cast<size_t>(m)), vr(static_cast<size_t>(vec ? m * m : 1));
      fn<Geev>(kGeev)("N", vec ? "V" : "N", &im, a.data(), &im, wr.data(), wi.data(), dummy, &one, vr.data(), &ldv, &q, &lw, &li, 1, 1);
      if (li < 0) return kStatusBadArguments;
      lw = lwork_of(q, std::max<int64_t>(1, (vec ? 4 : 3) * m));
      std::vector<T> work(static_cast<size_t>(lw));
      fn<Geev>(kGeev)("N", vec ? "V" : "N", &im, a.data(), &im, wr.data(), wi.data(), dummy, &one, vr.data(), &ldv, work.data(), &lw, &li, 1, 1);
      if (li == 0) {
        for (int64_t j = 0; j < m; j++) wo[j] = C(wr[static_cast<size_t>(j)], wi[static_cast<size_t>(j)]);
        // A complex pair (wi[j] > 0, then its conjugate) stores re and im of vector j in columns j, j+1.
        if (vec)
          for (int64_t j = 0; j < m; j++) {
            if (wi[static_cast<size_t>(j)] != 0 && j + 1 < m) {
              for (int64_t r = 0; r < m; r++) {
                T re = vr[static_cast<size_t>(r + j * m)], ii = vr[static_cast<size_t>(r + (j + 1) * m)];
                vo[r + j * m] = C(re, ii);
                vo[r + (j + 1) * m] = C(re, -ii);
              }
              j++;
            } else {
              for (int64_t r = 0; r < m; r++) vo[r + j * m] = C(vr[static_cast<size_t>(r + j * m)], 0);
            }
          }
      }
    }
    if (li < 0) return kStatusBadArguments;
    if (li > 0) info[b] = li;  // the call fails: its outputs are disposed unread
    return kStatusOk;
  }

  int lu_full(int64_t b, int64_t offA) {
    using Getc2 = void (*)(const int*, T*, const int*, int*, int*, int*);
    T* o = at<T>(out0, b, m * m);
    gather(A, offA, m, m, o, m);
    const int im = static_cast<int>(m);
    int li = 0;
    fn<Getc2>(kGetc2)(&im, o, &im, at<int32_t>(out1, b, m), at<int32_t>(out2, b, m), &li);
    if (li < 0) return kStatusBadArguments;
    info[b] = li;
    return kStatusOk;
  }
};

}  // namespace

namespace js {

Napi::Value lapack_symbols(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Lapack* L = lapack();
  if (L == nullptr) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  for (int r = 0; r < kRoutines; r++)
    for (int d = 0; d < 4; d++) o.Set(kNames[r][d], L->fn[r][d] != nullptr);
  return o;
}

Napi::Value lapack_run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto status = [&](int s) { return Napi::Number::New(env, s); };
  const Lapack* L = lapack();
  if (L == nullptr) return status(kStatusNotLoaded);
  const TypedView w = info.Length() < 7 ? TypedView{} : tenferro::napi_args::typed_view(info[0]);
  if (!w.ok || w.type != napi_float64_array) return status(kStatusBadArguments);
  const size_t wl = w.length;
  if (wl < static_cast<size_t>(kHeader) || wl > 256) return status(kStatusBadDescriptor);
  double d[256];
  memcpy(d, w.data, wl * sizeof(double));  // read once: the shared words could change meanwhile
  const double maxIdx = 9007199254740991.0, maxDim = 2147483647.0;
  if (!is_int(d[0], 0, 9)) return status(kStatusBadDescriptor);
  if (!is_int(d[1], 0, 3)) return status(kStatusBadDType);
  if (!is_int(d[2], 0, maxDim) || !is_int(d[3], 0, maxDim) || !is_int(d[4], 0, 63) || !is_int(d[5], 0, 4096) || !is_int(d[6], 0, kMaxAxes)) return status(kStatusBadDescriptor);
  const int op = static_cast<int>(d[0]), dt = static_cast<int>(d[1]), flags = static_cast<int>(d[4]), threads = static_cast<int>(d[5]), nb = static_cast<int>(d[6]);
  const bool square = op == 0 || op == 7 || op == 8 || op == 9;
  const int64_t m = static_cast<int64_t>(d[2]), n = square ? m : static_cast<int64_t>(d[3]);
  if (wl < static_cast<size_t>(kHeader + 3 * nb)) return status(kStatusBadDescriptor);
  int64_t ext[kMaxAxes] = {};
  i128 count = 1;
  for (int t = 0; t < nb; t++) {
    if (!is_int(d[kHeader + t], 0, maxDim)) return status(kStatusBadDescriptor);
    ext[t] = static_cast<int64_t>(d[kHeader + t]);
    count *= ext[t];
    if (count > (static_cast<i128>(1) << 40)) return status(kStatusTooLarge);
  }
  // Workspaces LAPACK indexes with 32-bit integers: every per-matrix array it sees must fit.
  {
    const i128 mx = std::max(m, n), mn = std::min(m, n);
    i128 biggest = mx * mx;
    if (op == 6) biggest = std::max<i128>(biggest, 5 * mn * mn + 5 * mn + 2 * mx * mn);
    if (biggest >= (static_cast<i128>(1) << 31)) return status(kStatusTooLarge);
  }
  const int64_t comp = (dt == 0 || dt == 2) ? 4 : 8;
  const int64_t el = dt >= 2 ? 2 * comp : comp;
  Operand ops[2];
  for (int o = 0; o < 2; o++) {
    for (int q = 0; q < 3; q++)
      if (!is_int(d[7 + 3 * o + q], 0, maxIdx)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
    ops[o].off = static_cast<int64_t>(d[7 + 3 * o]);
    ops[o].rs = static_cast<int64_t>(d[8 + 3 * o]);
    ops[o].cs = static_cast<int64_t>(d[9 + 3 * o]);
    for (int t = 0; t < nb; t++) {
      double s = d[kHeader + nb * (1 + o) + t];
      if (!is_int(s, 0, maxIdx)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
      ops[o].bs[t] = static_cast<int64_t>(s);
    }
  }
  // Inputs: A is m×m (cholesky, solve, eigh, eig, luFullPivot), (left ? m : n)² (solveTriangular)
  // or m×n; B (solveTriangular, solve) is m×n.
  const bool hasB = op == 1 || op == 4;
  const int64_t aDim = op == 1 ? ((flags & kFlagLeft) ? m : n) : m;
  const int64_t aRows = (op == 1 || op == 4) ? aDim : m, aCols = (op == 1 || op == 4) ? aDim : n;
  for (int o = 0; o < (hasB ? 2 : 1); o++) {
    TypedView v = bytes_of(info[1 + o]);
    if (!v.ok) return status(kStatusBadArguments);
    if (reinterpret_cast<uintptr_t>(v.data) % static_cast<uintptr_t>(comp) != 0) return status(kStatusMisaligned);
    const int64_t rows = o == 0 ? aRows : m, cols = o == 0 ? aCols : n;
    if (rows > 0 && cols > 0 && count > 0) {
      i128 last = static_cast<i128>(ops[o].off) + static_cast<i128>(rows - 1) * ops[o].rs + static_cast<i128>(cols - 1) * ops[o].cs;
      for (int t = 0; t < nb; t++) last += static_cast<i128>(ext[t] - 1) * ops[o].bs[t];
      if ((last + 1) * el > static_cast<i128>(v.bytes)) return status(o == 0 ? kStatusOutOfBoundsA : kStatusOutOfBoundsB);
    }
    ops[o].data = static_cast<const uint8_t*>(v.data);
  }
  if (!hasB) ops[1] = ops[0];
  // Outputs: each descriptor (offset, rows, cols) against its buffer — (offset + rows·cols·count)·es
  // within it, the pointer at the offset aligned — then against what its routine writes.
  Out outs[3];
  for (int o = 0; o < 3; o++) {
    TypedView v = bytes_of(info[3 + o]);
    if (!v.ok) return status(kStatusBadArguments);
    const double* p = d + kOutWords + 3 * o;
    if (p[0] == -1 && p[1] == 0 && p[2] == 0) continue;  // no output in this slot
    if (!is_int(p[0], 0, maxIdx)) return status(kStatusOutOfBoundsC);
    if (!is_int(p[1], 0, maxDim) || !is_int(p[2], 0, maxDim)) return status(kStatusBadDescriptor);
    const int kind = out_kind(op, o);
    const int64_t es = kind == 0 ? el : kind == 1 ? comp : kind == 2 ? 4 : 2 * comp;
    const i128 first = static_cast<i128>(static_cast<int64_t>(p[0])) * es;
    const int64_t rows = static_cast<int64_t>(p[1]), cols = static_cast<int64_t>(p[2]);
    if (first + static_cast<i128>(rows) * cols * count * es > static_cast<i128>(v.bytes)) return status(kStatusOutOfBoundsC);
    uint8_t* at = static_cast<uint8_t*>(v.data) + static_cast<size_t>(first);
    if (reinterpret_cast<uintptr_t>(at) % static_cast<uintptr_t>(kind == 2 ? 4 : comp) != 0) return status(kStatusMisaligned);
    outs[o] = Out{at, rows, cols, true};
  }
  if (!outputs_fit(op, flags, m, n, outs)) return status(kStatusBadDescriptor);
  TypedView inf = bytes_of(info[6]);
  if (!inf.ok) return status(kStatusBadArguments);
  if (!is_int(d[kInfoWord], 0, maxIdx) || d[14] != 0 || d[15] != 0) return status(kStatusBadDescriptor);
  const i128 infoFirst = static_cast<i128>(static_cast<int64_t>(d[kInfoWord])) * 4;
  if (reinterpret_cast<uintptr_t>(inf.data) % 4 != 0) return status(kStatusMisaligned);
  if (infoFirst + count * 4 > static_cast<i128>(inf.bytes)) return status(kStatusOutOfBoundsC);
  const unsigned need = needs(op, flags);
  for (int r = 0; r < kRoutines; r++)
    if ((need & (1u << r)) && L->fn[r][dt] == nullptr) return status(kStatusNotLoaded);
  // OpenBLAS 0.3.21's ?gesv_ takes its threaded path at every size (its ?getrf_ keeps matrices
  // below 10,000 entries on one thread; a threaded 8×8 gesv_ costs ~14 µs against ~0.4 µs): a
  // solve of matrices that small runs on one thread, as getrf_ would have run it.
  ThreadScope scope(op == 4 && threads > 1 && m * m < 10000 ? 1 : threads);
  t_arena.begin(CallKind{op, dt, flags, m, n});
  struct Trim {
    ~Trim() { t_arena.trim(); }
  } trim;
  // Runs on the engine worker's own stack: core creates engine workers with a 64 MiB stack, as
  // OpenBLAS's ?getrf_parallel needs more than a Node worker's default 4 MiB (engine-worker.ts).
  int32_t* infoOut = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(inf.data) + static_cast<size_t>(infoFirst));
  const int64_t c = static_cast<int64_t>(count);
  int s = kStatusBadDType;
  switch (dt) {
    case 0: s = Runner<float>{*L, 0, op, flags, nb, m, n, ext, ops[0], ops[1], outs[0].data, outs[1].data, outs[2].data, infoOut, outs}.run(c); break;
    case 1: s = Runner<double>{*L, 1, op, flags, nb, m, n, ext, ops[0], ops[1], outs[0].data, outs[1].data, outs[2].data, infoOut, outs}.run(c); break;
    case 2: s = Runner<std::complex<float>>{*L, 2, op, flags, nb, m, n, ext, ops[0], ops[1], outs[0].data, outs[1].data, outs[2].data, infoOut, outs}.run(c); break;
    case 3: s = Runner<std::complex<double>>{*L, 3, op, flags, nb, m, n, ext, ops[0], ops[1], outs[0].data, outs[1].data, outs[2].data, infoOut, outs}.run(c); break;
  }
  return status(s);
}

}  // namespace js
}  // namespace blas
