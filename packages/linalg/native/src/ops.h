// The op runners on one scalar type S (float, double, std::complex<float>, std::complex<double>),
// on Eigen 3.4, compiled once per instruction set (binding.gyp: generic x86-64 or arm64, AVX2+FMA,
// AVX-512) into the namespace tfl::TFL_ISA — with Eigen renamed per instruction set by the build
// (-DEigen=tfl_eigen_<isa>) and no std:: container instantiated here, so that no inline function
// compiled for one instruction set can stand in for another's at link time; dispatch.cc picks one
// per process. Each runs batches [b0, b1) of a checked Job: it gathers the batch's input into a
// dense Eigen matrix (reading only the offsets addon.cc proved inside the buffer), factors it, and
// writes dense column-major outputs. Numerical outcomes go to info[batch] in LAPACK's convention.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include <sched.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE 1
#endif
#ifndef EIGEN_NO_DEBUG
#define EIGEN_NO_DEBUG 1
#endif
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include "linalg.h"

#ifndef TFL_ISA
#define TFL_ISA generic
#endif

// The compiler of this translation unit (info().compilers; native/cxx-select.cjs picks it per unit).
#if defined(__clang__)
#define TFL_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define TFL_COMPILER "gcc " __VERSION__
#else
#define TFL_COMPILER "unknown"
#endif

namespace tfl {
namespace TFL_ISA {

template <typename T> struct real_of { using type = T; };
template <typename T> struct real_of<std::complex<T>> { using type = T; };
template <typename T> struct is_cplx : std::false_type {};
template <typename T> struct is_cplx<std::complex<T>> : std::true_type {};

// The team task's waiting (linalg.h: sync words [2] wake generation, [3] sleepers).
static inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// CLOCK_MONOTONIC in µs (the team's diagnostics).
static inline uint64_t micros() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000u + static_cast<uint64_t>(t.tv_nsec) / 1000u;
}

// Sleep (at most 1 ms) while the generation word still holds `gen`.
static inline void sleep_on(int32_t* sync, int32_t gen) {
#if defined(__linux__)
  __atomic_fetch_add(sync + 3, 1, __ATOMIC_SEQ_CST);
  const timespec limit{0, 1000000};
  syscall(SYS_futex, sync + 2, FUTEX_WAIT_PRIVATE, gen, &limit, nullptr, 0);
  __atomic_fetch_sub(sync + 3, 1, __ATOMIC_SEQ_CST);
#else
  (void)sync;
  (void)gen;
  sched_yield();
#endif
}

// A task finished (or the team stopped): bump the generation, wake the sleepers.
static inline void wake(int32_t* sync) {
  __atomic_fetch_add(sync + 2, 1, __ATOMIC_SEQ_CST);
#if defined(__linux__)
  if (__atomic_load_n(sync + 3, __ATOMIC_SEQ_CST) > 0) syscall(SYS_futex, sync + 2, FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0);
#endif
}

template <typename S>
struct Runner;
// c128's SVD retry in complex<long double> (Runner::svd), compiled in its own translation unit
// (ops_c128_wide.cc, #39: it compiles beside ops_c128.cc on the other CPU; a JacobiSVD only, ~10 s).
void svd_c128_wide(Runner<std::complex<double>>& r, int64_t b, const Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>& a);

template <typename S>
struct Runner {
  using R = typename real_of<S>::type;
  using C = std::complex<R>;
  using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using CMat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Idx = Eigen::Index;

  const Job& j;
  explicit Runner(const Job& job) : j(job) {}

  Mat gather(const Operand& o, int64_t flat, Idx rows, Idx cols) const {
    Mat x(rows, cols);
    const S* base = static_cast<const S*>(o.data) + batch_offset(j, o, flat);
    for (Idx c = 0; c < cols; c++)
      for (Idx r = 0; r < rows; r++) x(r, c) = base[r * o.rs + c * o.cs];
    return x;
  }

  template <typename T>
  static Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>> out(void* p, int64_t flat, Idx rows, Idx cols) {
    return Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>>(static_cast<T*>(p) + flat * rows * cols, rows, cols);
  }

  int run() {
    if (j.op == kLuStep || j.op == kCholStep) {
      if (aborted(j.abort)) return kAborted;
      return team();
    }
    for (int64_t b = j.b0; b < j.b1; b++) {
      if (aborted(j.abort)) { trim_scratch(); return kAborted; }
      j.info[b] = 0;
      if (j.m == 0 || j.n == 0) { empty(b); continue; }
      switch (j.op) {
        case kCholesky: cholesky(b); break;
        case kSolveTriangular: trsm(b); break;
        case kLuFactor: lu(b, false); break;
        case kLu: lu(b, true); break;
        case kSolve: solve(b); break;
        case kQr: qr(b); break;
#if defined(TFL_SVD_EIG_ON_AVX2)
        // Not compiled here: dispatch.cc runs these jobs on the AVX2 kernels (binding.gyp).
        case kSvd:
        case kEig: trim_scratch(); return kBadOp;
#else
        case kSvd: svd(b); break;
        case kEig: eig(b); break;
#endif
        case kEigh: eigh(b); break;
        case kLuFullPivot: lu_full(b); break;
        default: trim_scratch(); return kBadOp;
      }
    }
    trim_scratch();
    return kOk;
  }

  // An empty matrix: no factorisation (Eigen's solvers are not meant for 0 rows or columns); the
  // square factors that still have entries (P of lu, Q of a complete qr, U or V of a full svd) are identities.
  void empty(int64_t b) {
    const Idx m = j.m, n = j.n;
    const bool full = (j.flags & kFlagFull) != 0, vec = (j.flags & kFlagVectors) != 0;
    if (j.op == kLu) out<S>(j.out[0], b, m, m).setIdentity();
    if (j.op == kQr && full && !(j.flags & kFlagROnly)) out<S>(j.out[0], b, m, m).setIdentity();
    if (j.op == kSvd && vec && full) {
      out<S>(j.out[0], b, m, m).setIdentity();
      out<S>(j.out[2], b, n, n).setIdentity();
    }
  }

  void cholesky(int64_t b) {
    const Idx n = j.m;
    // In place in the output: Eigen's blocked Cholesky on the lower triangle returns the 0-based
    // column of the first non-positive pivot, or -1 (LAPACK potrf's info is that column + 1).
    S* o = static_cast<S*>(j.out[0]) + b * n * n;
    gather_lower_into(j.a, b, n, o);
    auto a = view(o, n, n, n);
    const Idx bad = Eigen::internal::llt_inplace<S, Eigen::Lower>::blocked(a);
    if (bad >= 0) {
      j.info[b] = static_cast<int32_t>(bad + 1);
      std::fill(o, o + n * n, S(0));
      return;
    }
    // L as it stands (its strict upper triangle was zeroed by the gather), or U = Lᴴ.
    if ((j.flags & kFlagUpper) == 0) return;
    for (Idx c = 0; c < n; c++) {
      if constexpr (is_cplx<S>::value) o[c + c * n] = std::conj(o[c + c * n]);
      for (Idx r = c + 1; r < n; r++) {
        if constexpr (is_cplx<S>::value) o[c + r * n] = std::conj(o[r + c * n]); else o[c + r * n] = o[r + c * n];
        o[r + c * n] = S(0);
      }
    }
  }

  void trsm(int64_t b) {
    const Idx m = j.m, n = j.n;
    const bool left = (j.flags & kFlagLeft) != 0, upper = (j.flags & kFlagUpper) != 0, unit = (j.flags & kFlagUnit) != 0;
    const Idx na = left ? m : n;
    Mat a = gather(j.a, b, na, na);
    auto o = out<S>(j.out[0], b, m, n);
    o = gather(j.b, b, m, n);
    if (left) {
      if (upper) { if (unit) a.template triangularView<Eigen::UnitUpper>().solveInPlace(o); else a.template triangularView<Eigen::Upper>().solveInPlace(o); }
      else { if (unit) a.template triangularView<Eigen::UnitLower>().solveInPlace(o); else a.template triangularView<Eigen::Lower>().solveInPlace(o); }
    } else {
      if (upper) { if (unit) a.template triangularView<Eigen::UnitUpper>().template solveInPlace<Eigen::OnTheRight>(o); else a.template triangularView<Eigen::Upper>().template solveInPlace<Eigen::OnTheRight>(o); }
      else { if (unit) a.template triangularView<Eigen::UnitLower>().template solveInPlace<Eigen::OnTheRight>(o); else a.template triangularView<Eigen::Lower>().template solveInPlace<Eigen::OnTheRight>(o); }
    }
  }

  // The pivot measure of LAPACK's i?amax: |x| for reals, |re| + |im| for complex (so that complex
  // LU picks the same pivots as ?getrf).
  static R abs1(const S& x) {
    if constexpr (is_cplx<S>::value) return std::abs(std::real(x)) + std::abs(std::imag(x));
    else return std::abs(x);
  }

  using Strided = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
  // The rows×cols column-major block at p with leading dimension ld, as an Eigen expression.
  static Strided view(S* p, Idx rows, Idx cols, Idx ld) { return Strided(p, rows, cols, Eigen::OuterStride<>(ld)); }

  // LAPACK laswp on `cols` columns of the block at a (leading dimension ld): for i in [k1, k2),
  // rows i and piv[i] − 1 swapped, in that order.
  static void laswp(S* a, Idx ld, Idx cols, Idx k1, Idx k2, const int32_t* piv) {
    for (Idx c = 0; c < cols; c++) {
      S* col = a + c * ld;
      for (Idx i = k1; i < k2; i++) {
        const Idx p = piv[i] - 1;
        if (p != i) std::swap(col[i], col[p]);
      }
    }
  }

  // Unblocked LU with partial pivoting of the m×n block at a (LAPACK getf2's algorithm: the pivot
  // is the first entry of largest abs1, as i?amax); 1-based pivots relative to the block; returns
  // info (the first exactly zero pivot, 1-based), as getf2.
  static int32_t getf2(S* a, Idx ld, Idx m, Idx n, int32_t* piv) {
    const Idx k = std::min(m, n);
    int32_t info = 0;
    for (Idx c = 0; c < k; c++) {
      S* col = a + c * ld;
      Idx p = c;
      R best = -1;
      for (Idx r = c; r < m; r++) {
        R v = abs1(col[r]);
        if (v > best) { best = v; p = r; }
      }
      piv[c] = static_cast<int32_t>(p + 1);
      if (col[p] == S(0)) {
        if (info == 0) info = static_cast<int32_t>(c + 1);
        continue;
      }
      if (p != c)
        for (Idx x = 0; x < n; x++) std::swap(a[c + x * ld], a[p + x * ld]);
      // As LAPACK getf2: multiply by the reciprocal when it is representable, else divide entry by
      // entry; both through the scalar (C99 Annex G) division, never Eigen's vectorised complex
      // division, which squares |pivot| and underflows to NaN for |pivot| below √(min normal).
      const S pivot = col[c];
      if (std::abs(pivot) >= std::numeric_limits<R>::min()) {
        const S inv = S(1) / pivot;
        for (Idx r = c + 1; r < m; r++) col[r] *= inv;
      } else {
        for (Idx r = c + 1; r < m; r++) col[r] = col[r] / pivot;
      }
      if (c + 1 < m && c + 1 < n)
        view(a + (c + 1) + (c + 1) * ld, m - c - 1, n - c - 1, ld).noalias() -= view(col + c + 1, m - c - 1, 1, ld) * view(a + c + (c + 1) * ld, 1, n - c - 1, ld);
    }
    return info;
  }

  // Columns up to which getrf factors a block unblocked.
  static constexpr Idx kLuBase = 16;

  // Recursive LU with partial pivoting of the m×n block at a (LAPACK getrf2's recursion: the left
  // half factored, its swaps applied to the right half, U12 = L11⁻¹ A12, A22 −= L21 U12 through
  // Eigen's GEMM, the right half factored, its swaps applied back to the left), unblocked below
  // kLuBase columns. Pivots and info exactly as getf2 (the same pivot sequence up to rounding).
  static int32_t getrf(S* a, Idx ld, Idx m, Idx n, int32_t* piv) {
    const Idx k = std::min(m, n);
    if (k <= kLuBase) return getf2(a, ld, m, n, piv);
    const Idx n1 = k / 2, n2 = n - n1;
    int32_t info = getrf(a, ld, m, n1, piv);
    S* a12 = a + n1 * ld;
    laswp(a12, ld, n2, 0, n1, piv);
    view(a, n1, n1, ld).template triangularView<Eigen::UnitLower>().solveInPlace(view(a12, n1, n2, ld));
    view(a12 + n1, m - n1, n2, ld).noalias() -= view(a + n1, m - n1, n1, ld) * view(a12, n1, n2, ld);
    const int32_t info2 = getrf(a12 + n1, ld, m - n1, n2, piv + n1);
    if (info == 0 && info2 > 0) info = static_cast<int32_t>(info2 + n1);
    const Idx k2 = std::min(m - n1, n2);
    for (Idx i = n1; i < n1 + k2; i++) piv[i] += static_cast<int32_t>(n1);
    laswp(a, ld, n1, n1, n1 + k2, piv);
    return info;
  }

  // This thread's scratch matrix storage (each engine worker is a thread): grown to the largest
  // size a call needed and kept for the next call — the first touch of fresh memory costs ~13 µs per
  // 4 KiB page on the VMs measured, 27 ms for an 8 MiB matrix — and released at the end of a call
  // that grew it past kRetainBytes (Runner::run), or when the thread exits.
  static constexpr size_t kRetainBytes = size_t{64} << 20;
  static Eigen::Matrix<S, Eigen::Dynamic, 1>& tls_buffer() {
    static thread_local Eigen::Matrix<S, Eigen::Dynamic, 1> buffer;
    return buffer;
  }
  // `count` elements of scratch (uninitialised), valid until the next scratch() of this thread.
  static S* scratch(Idx count) {
    auto& buf = tls_buffer();
    if (buf.size() < count) buf.resize(count);
    return buf.data();
  }
  static void trim_scratch() {
    auto& buf = tls_buffer();
    if (static_cast<size_t>(buf.size()) * sizeof(S) > kRetainBytes) buf.resize(0);
  }

  // Per-call pivots and permutations, reused from one batch to the next.
  Eigen::Matrix<int32_t, Eigen::Dynamic, 1> piv_;
  Eigen::Matrix<Idx, Eigen::Dynamic, 1> perm_;

  // Gather batch b's m×n A into dst (dense, leading dimension m).
  void gather_into(const Operand& o, int64_t flat, Idx rows, Idx cols, S* dst) const {
    const S* base = static_cast<const S*>(o.data) + batch_offset(j, o, flat);
    if (o.rs == 1) {
      for (Idx c = 0; c < cols; c++) std::copy(base + c * o.cs, base + c * o.cs + rows, dst + c * rows);
      return;
    }
    for (Idx c = 0; c < cols; c++)
      for (Idx r = 0; r < rows; r++) dst[r + c * rows] = base[r * o.rs + c * o.cs];
  }

  // The lower triangle of the n×n matrix `flat` of `o` into dst, zeros above it, in one pass over
  // dst: Cholesky reads and writes only the lower triangle, so the upper half of A is never read
  // and dst's upper half is written once (a full copy followed by a pass zeroing the upper half
  // read all of A and wrote that half twice).
  void gather_lower_into(const Operand& o, int64_t flat, Idx n, S* dst) const {
    const S* base = static_cast<const S*>(o.data) + batch_offset(j, o, flat);
    for (Idx c = 0; c < n; c++) {
      S* col = dst + c * n;
      std::fill(col, col + c, S(0));
      if (o.rs == 1) std::copy(base + c + c * o.cs, base + c * o.cs + n, col + c);
      else
        for (Idx r = c; r < n; r++) col[r] = base[r * o.rs + c * o.cs];
    }
  }

  // LU of batch b (pivots in LAPACK's convention: 1-based; row i was swapped with row piv[i] at
  // step i): luFactor factors in place in its output; lu unpacks A = P L U.
  void lu(int64_t b, bool unpack) {
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    if (!unpack) {
      S* f = static_cast<S*>(j.out[0]) + b * m * n;
      int32_t* p = static_cast<int32_t*>(j.out[1]) + b * k;
      gather_into(j.a, b, m, n, f);
      j.info[b] = getrf(f, m, m, n, p);
      return;
    }
    S* w = scratch(m * n);
    piv_.resize(k);
    gather_into(j.a, b, m, n, w);
    j.info[b] = getrf(w, m, m, n, piv_.data());
    const auto f = view(w, m, n, m);
    // A = P L U: P is the inverse of the row permutation the swaps apply.
    perm_.resize(m);
    for (Idx i = 0; i < m; i++) perm_[i] = i;
    for (Idx i = 0; i < k; i++) std::swap(perm_[i], perm_[piv_[i] - 1]);
    auto P = out<S>(j.out[0], b, m, m);
    P.setZero();
    for (Idx i = 0; i < m; i++) P(perm_[i], i) = S(1);
    auto L = out<S>(j.out[1], b, m, k);
    L = f.leftCols(k).template triangularView<Eigen::UnitLower>();
    auto U = out<S>(j.out[2], b, k, n);
    U = f.topRows(k).template triangularView<Eigen::Upper>();
  }

  // A X = B: getrf, then the swaps on B and two triangular solves (getrs), in the output.
  void solve(int64_t b) {
    const Idx n = j.m, nr = j.n;
    S* o = static_cast<S*>(j.out[0]) + b * n * nr;
    S* w = scratch(n * n);
    piv_.resize(n);
    gather_into(j.a, b, n, n, w);
    const int32_t info = getrf(w, n, n, n, piv_.data());
    if (info != 0) {
      j.info[b] = info;
      std::fill(o, o + n * nr, S(0));
      return;
    }
    gather_into(j.b, b, n, nr, o);
    laswp(o, n, nr, 0, n, piv_.data());
    auto x = view(o, n, nr, n);
    const auto f = view(w, n, n, n);
    f.template triangularView<Eigen::UnitLower>().solveInPlace(x);
    f.template triangularView<Eigen::Upper>().solveInPlace(x);
  }

  // ── The team task of the blocked right-looking factorisations (linalg.h; src/builtin.ts) ──────
  // One n×n matrix in place in out[0] (leading dimension n); every lane of the team runs team():
  // tickets from the shared sequence, each task run once its inputs are done. A task writes only
  // its block's columns (and F the pivots and info of its panel), and reads only blocks no running
  // task writes, so no two lanes ever write the same element.

  // Gather columns [c0, c1) of A into the matrix; with `lower`, rows from the diagonal down and
  // zeros above it (Cholesky reads and writes only the lower triangle).
  void gather_columns(S* a, Idx n, Idx c0, Idx c1, bool lower) const {
    const S* base = static_cast<const S*>(j.a.data) + j.a.off;
    for (Idx c = c0; c < c1; c++) {
      S* dst = a + c * n;
      const Idx r0 = lower ? c : 0;
      std::fill(dst, dst + r0, S(0));
      if (j.a.rs == 1) std::copy(base + r0 + c * j.a.cs, base + c * j.a.cs + n, dst + r0);
      else
        for (Idx r = r0; r < n; r++) dst[r] = base[r * j.a.rs + c * j.a.cs];
    }
  }

  // Pivots [k1, k2) of out[1] copied into piv_ (index i − k1), each checked to be a row in [i, n)
  // (1-based i + 1 ..= n) — the shared words could hold anything — before any row is swapped.
  bool copy_pivots(const int32_t* piv, Idx k1, Idx k2, Idx n) {
    piv_.resize(k2 - k1);
    for (Idx i = k1; i < k2; i++) {
      const int32_t p = __atomic_load_n(piv + i, __ATOMIC_RELAXED);
      if (p < i + 1 || p > n) return false;
      piv_[i - k1] = p;
    }
    return true;
  }

  // LU U(p, j): panel [j0, j0 + w) applied to columns [c0, c1) — its row swaps (global rows),
  // U12 = L11⁻¹ A12, A22 −= L21 U12 (Eigen's GEMM).
  int lu_update(S* a, Idx n, Idx j0, Idx w, Idx c0, Idx c1) {
    if (!copy_pivots(static_cast<const int32_t*>(j.out[1]), j0, j0 + w, n)) return kBadArguments;
    const Idx cols = c1 - c0;
    S* ac = a + c0 * n;
    for (Idx c = 0; c < cols; c++) {
      S* col = ac + c * n;
      for (Idx i = 0; i < w; i++) {
        const Idx p = piv_[i] - 1;
        if (p != j0 + i) std::swap(col[j0 + i], col[p]);
      }
    }
    view(a + j0 + j0 * n, w, w, n).template triangularView<Eigen::UnitLower>().solveInPlace(view(ac + j0, w, cols, n));
    if (j0 + w < n) view(ac + j0 + w, n - j0 - w, cols, n).noalias() -= view(a + (j0 + w) + j0 * n, n - j0 - w, w, n) * view(ac + j0, w, cols, n);
    return kOk;
  }

  // LU F(j): getrf of the panel [c0, c0 + w), rows c0..n; global 1-based pivots; the first zero pivot.
  void lu_factor(S* a, Idx n, Idx c0, Idx w) {
    int32_t* pp = static_cast<int32_t*>(j.out[1]) + c0;
    const int32_t info = getrf(a + c0 + c0 * n, n, n - c0, w, pp);
    for (Idx i = 0; i < w; i++) pp[i] += static_cast<int32_t>(c0);
    if (c0 == 0) j.info[0] = info;
    else if (info > 0 && j.info[0] == 0) j.info[0] = static_cast<int32_t>(info + c0);
  }

  // LU FIN(j): columns [c0, c1) take the row swaps of every panel from k1 on (getrf's final laswp).
  int lu_finish(S* a, Idx n, Idx c0, Idx c1, Idx k1) {
    if (!copy_pivots(static_cast<const int32_t*>(j.out[1]), k1, n, n)) return kBadArguments;
    for (Idx c = c0; c < c1; c++) {
      S* col = a + c * n;
      for (Idx i = k1; i < n; i++) {
        const Idx p = piv_[i - k1] - 1;
        if (p != i) std::swap(col[i], col[p]);
      }
    }
    return kOk;
  }

  // Cholesky U(p, j): A[s0:n, s0:s1] −= L[s0:n, panel] L[s0:s1, panel]ᴴ, the lower part only: the
  // diagonal square by a rank update of its lower triangle (as Eigen's LLT), the rows below by GEMM.
  void chol_update(S* a, Idx n, Idx j0, Idx w, Idx s0, Idx s1) {
    const Idx bw = s1 - s0;
    auto x = view(a + s0 + j0 * n, bw, w, n);
    view(a + s0 + s0 * n, bw, bw, n).template selfadjointView<Eigen::Lower>().rankUpdate(x, R(-1));
    if (s1 < n) view(a + s1 + s0 * n, n - s1, bw, n).noalias() -= view(a + s1 + j0 * n, n - s1, w, n) * x.adjoint();
  }

  // Cholesky F(j): Eigen's blocked LLT of the diagonal block, then L21 = A21 L11⁻ᴴ; false (info set)
  // at a non-positive minor.
  bool chol_factor(S* a, Idx n, Idx c0, Idx w) {
    auto a11 = view(a + c0 + c0 * n, w, w, n);
    const Idx bad = Eigen::internal::llt_inplace<S, Eigen::Lower>::blocked(a11);
    if (bad >= 0) {
      j.info[0] = static_cast<int32_t>(c0 + bad + 1);
      return false;
    }
    if (c0 == 0) j.info[0] = 0;
    if (c0 + w < n) {
      auto a21 = view(a + (c0 + w) + c0 * n, n - c0 - w, w, n);
      a11.adjoint().template triangularView<Eigen::Upper>().template solveInPlace<Eigen::OnTheRight>(a21);
    }
    return true;
  }

  // Cholesky FIN(j), flag upper: U = Lᴴ on columns [c0, c1) (each column c writes row c of the
  // columns right of it and zeroes its own part below the diagonal: no two blocks meet).
  static void chol_upper(S* a, Idx n, Idx c0, Idx c1) {
    for (Idx c = c0; c < c1; c++) {
      if constexpr (is_cplx<S>::value) a[c + c * n] = std::conj(a[c + c * n]);
      for (Idx r = c + 1; r < n; r++) {
        if constexpr (is_cplx<S>::value) a[c + r * n] = std::conj(a[r + c * n]); else a[c + r * n] = a[r + c * n];
        a[r + c * n] = S(0);
      }
    }
  }

  // The task sequence of linalg.h, decoded ticket by ticket. A lane's tickets increase, so the
  // decoder keeps the segment of the last one: O(1) amortised per ticket.
  struct Task {
    enum Kind { kGather, kFactor, kUpdate, kFinish, kNone } kind = kNone;
    Idx p = 0, blk = 0;
  };
  struct Decoder {
    Idx P, finishFirst, finishCount;
    Idx seg, segBase;  // segment seg = [U(seg, seg+1), F(seg+1), U(seg, seg+2) … U(seg, P−1)] starts at segBase
    Task at(Idx t) {
      Task k;
      if (t < P) { k.kind = Task::kGather; k.blk = t; return k; }
      if (t == P) { k.kind = Task::kFactor; k.blk = 0; return k; }
      while (seg < P - 1 && t >= segBase + (P - seg)) { segBase += P - seg; seg++; }
      if (seg < P - 1) {
        const Idx o = t - segBase;
        if (o == 1) { k.kind = Task::kFactor; k.blk = seg + 1; }
        else { k.kind = Task::kUpdate; k.p = seg; k.blk = o == 0 ? seg + 1 : seg + o; }
        return k;
      }
      const Idx f = t - segBase;
      if (f < finishCount) { k.kind = Task::kFinish; k.blk = finishFirst + f; }
      return k;
    }
  };

  // Spin, then sleep on the wake generation, until `ready()`; false when the team stopped or the
  // execution was aborted (which stops the team).
  template <typename Ready>
  bool wait_until(int32_t* sync, Ready ready) const {
    for (int spins = 0;;) {
      if (ready()) return true;
      if (__atomic_load_n(sync + 1, __ATOMIC_ACQUIRE) != 0) return false;
      if (aborted(j.abort)) { __atomic_store_n(sync + 1, 1, __ATOMIC_RELEASE); wake(sync); return false; }
      if (spins < 2000) { spins++; cpu_relax(); continue; }
      const int32_t gen = __atomic_load_n(sync + 2, __ATOMIC_SEQ_CST);
      if (ready()) return true;
      sleep_on(sync, gen);
    }
  }

  int team() {
    const Idx n = j.m, nb = j.k, P = (n + nb - 1) / nb;
    const bool lu = j.op == kLuStep, upper = (j.flags & kFlagUpper) != 0;
    S* a = static_cast<S*>(j.out[0]);
    int32_t* sync = static_cast<int32_t*>(j.out[2]);
    int32_t* prog = sync + kSyncHeader;
    auto progress = [&](Idx b) { return static_cast<Idx>(__atomic_load_n(prog + b, __ATOMIC_ACQUIRE)); };
    // A lane that finds the team stopped: Aborted when the execution was aborted, else Ok (the lane
    // that stopped it reports the failure).
    auto halted = [&] { return aborted(j.abort) ? kAborted : kOk; };
    auto stop = [&](int status) {
      __atomic_store_n(sync + 1, 1, __ATOMIC_RELEASE);
      wake(sync);
      return status;
    };
    // LU: blocks 0..P−2 take later panels' swaps; Cholesky with `upper`: every block is transposed.
    Decoder dec{P, 0, lu ? P - 1 : upper ? P : 0, 0, P + 1};
    // G(0..P−1), F(0), the segments 0..P−2 (P − p tasks each), the finishes.
    const Idx total = P + P * (P + 1) / 2 + dec.finishCount;
    const int32_t arrival = __atomic_fetch_add(sync + 4, 1, __ATOMIC_RELAXED);
    if (arrival < 2) __atomic_store_n(sync + 5 + arrival, static_cast<int32_t>(static_cast<uint32_t>(micros())), __ATOMIC_RELAXED);
    for (;;) {
      if (__atomic_load_n(sync + 1, __ATOMIC_ACQUIRE) != 0) return halted();
      if (aborted(j.abort)) return stop(kAborted);
      const Idx t = __atomic_fetch_add(sync, 1, __ATOMIC_ACQ_REL);
      if (t < 0 || t >= total) return kOk;
      const Task k = dec.at(t);
      const Idx c0 = k.blk * nb, c1 = std::min(n, c0 + nb);
      bool ok = true;
      switch (k.kind) {
        case Task::kGather:
          gather_columns(a, n, c0, c1, !lu);
          break;
        case Task::kFactor:
          if (!wait_until(sync, [&] { return progress(k.blk) == k.blk + 1; })) return halted();
          if (lu) lu_factor(a, n, c0, c1 - c0);
          else if (!chol_factor(a, n, c0, c1 - c0)) return stop(kOk);
          break;
        case Task::kUpdate: {
          if (!wait_until(sync, [&] { return progress(k.p) >= k.p + 2 && progress(k.blk) == k.p + 1; })) return halted();
          const Idx j0 = k.p * nb, w = std::min(nb, n - j0);
          if (lu) ok = lu_update(a, n, j0, w, c0, c1) == kOk;
          else chol_update(a, n, j0, w, c0, c1);
          break;
        }
        case Task::kFinish:
          if (!wait_until(sync, [&] { return progress(P - 1) >= P + 1; })) return halted();
          if (lu) ok = lu_finish(a, n, c0, c1, c1) == kOk;
          else chol_upper(a, n, c0, c1);
          break;
        case Task::kNone:
          return kOk;
      }
      if (!ok) return stop(kBadArguments);
      if (arrival == 1) __atomic_fetch_add(sync + 7, 1, __ATOMIC_RELAXED);
      if (k.kind != Task::kFinish) __atomic_fetch_add(prog + k.blk, 1, __ATOMIC_RELEASE);
      wake(sync);
    }
  }

  // Householder QR in place in this thread's scratch (Eigen's blocked HouseholderQR on a Ref), R
  // copied out, Q formed in its output by applying the reflectors (blocked) to the identity: the raw
  // factors (Householder's signs on R's diagonal).
  void qr(int64_t b) {
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    const bool full = (j.flags & kFlagFull) != 0, ronly = (j.flags & kFlagROnly) != 0;
    S* w = scratch(m * n);
    gather_into(j.a, b, m, n, w);
    auto W = view(w, m, n, m);
    Eigen::HouseholderQR<Eigen::Ref<Mat>> f(W);
    const Idx rr = full ? m : k, qc = full ? m : k;
    auto r = out<S>(j.out[1], b, rr, n);
    r.setZero();
    r.topRows(k) = W.topRows(k).template triangularView<Eigen::Upper>();
    if (!ronly) {
      auto q = out<S>(j.out[0], b, m, qc);
      q.setIdentity();
      // Eigen's identity shortcut assumes a square destination (as its own operator* checks).
      f.householderQ().applyThisOnTheLeft(q, qc == m);
    }
    // R's diagonal is made real and ≥ 0 by @tenferro/linalg's output convention (#35).
  }

  // Eigen 3.4's BDCSVD hands matrices of fewer than 16 columns to JacobiSVD, whose complex 2×2 steps
  // normalise with √(|x|² + |y|²) unscaled: where those squares underflow, a "rotation" that is not
  // unitary is applied to whole rows, and U·S·Vᴴ can miss A by O(‖A‖) (measured: residuals up to 3·‖A‖
  // in c128 over 100,000 random 1–6 × 1–6 matrices mixing O(1) with tiny entries; up to 0.23 in c64
  // on entries of 1e-14–1e-6). So a complex factorisation below that size is verified —
  // ‖A − U·S·Vᴴ‖ ≤ 16·n·ε·‖A‖, ‖UᴴU − I‖ and ‖VᴴV − I‖ ≤ 16·n·ε, two small products — and, when it
  // fails on a finite A, redone in a type whose exponent range holds every square of S: c64 in c128,
  // c128 in complex<long double> (worst residual then 3e-7 and 5e-16 on the same inputs; 3–7× the
  // time, paid only by such inputs). Real dtypes and the bidiagonal path (16 columns and more, no
  // complex Jacobi step) keep their own precision.
  void svd(int64_t b) {
    Mat a = gather(j.a, b, j.m, j.n);
    if constexpr (is_cplx<S>::value) {
      if (j.n < kJacobiColumns) {
        if (svd_in<S>(b, a, a.allFinite())) return;
        if constexpr (std::is_same_v<R, float>) svd_in<std::complex<double>>(b, a, false);
        else svd_c128_wide(*this, b, a);
        return;
      }
    }
    svd_in<S>(b, a, false);
  }

  static constexpr Idx kJacobiColumns = 16;  // Eigen::BDCSVD's default switch size

  // Factors `a0` in type W and writes the outputs, unless `verify` is set and the factorisation fails
  // the checks above: then nothing is written and it returns false.
  template <typename W>
  bool svd_in(int64_t b, const Mat& a0, bool verify) {
    using WMat = Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    const bool vec = (j.flags & kFlagVectors) != 0, full = (j.flags & kFlagFull) != 0;
    const int opts = (vec || verify) ? (full ? (Eigen::ComputeFullU | Eigen::ComputeFullV) : (Eigen::ComputeThinU | Eigen::ComputeThinV)) : 0;
    if constexpr (std::is_same_v<W, S>) {
      // Eigen's BDCSVD, kept on this thread between calls as eigh's solver is: a call of the same
      // shape and options reuses its members (U, V, the divide-and-conquer's matrices and workspace,
      // ~5·n² scalars) instead of fresh, zeroed pages — on a VM where a fresh 4 KiB page costs ~10 µs
      // they were a fifth of an n = 256 f64 call. Released when what it keeps (m² + n² + 6·k²
      // scalars at most) passes kRetainBytes, and after a failure (Eigen resets info() only when the
      // shape or the options change).
      static thread_local Eigen::BDCSVD<WMat> f;
      f.compute(a0, opts);
      const bool ok = svd_out(b, a0, f, verify);
      const double m = static_cast<double>(j.m), n = static_cast<double>(j.n), k = std::min(m, n);  // no overflow
      if (f.info() != Eigen::Success || (m * m + n * n + 6 * k * k) * sizeof(S) > static_cast<double>(kRetainBytes)) f = Eigen::BDCSVD<WMat>();
      return ok;
    } else {
      // A retry in a wider type (W ≠ S) only ever factors fewer than kJacobiColumns columns, which
      // BDCSVD hands to JacobiSVD as it is: JacobiSVD directly, the same factorisation without
      // BDCSVD's divide-and-conquer instantiated for W (#39: build time).
      const WMat a = a0.template cast<W>();
      Eigen::JacobiSVD<WMat> f(a, opts);
      return svd_out(b, a, f, verify);
    }
  }

  // svd_in's outputs from the factorisation `f` of `a` (type W): false, writing nothing, when
  // `verify` is set and the factorisation fails the checks above.
  template <typename W, typename F>
  bool svd_out(int64_t b, const Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>& a, const F& f, bool verify) {
    using WMat = Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    const bool vec = (j.flags & kFlagVectors) != 0;
    if (f.info() != Eigen::Success) {
      if (verify) return false;
      j.info[b] = 1;
      return true;
    }
    // Only a complex factorisation in the dtype's own type is ever verified (svd above): the wide
    // retries and the real dtypes do not compile the check (#39: fewer GEMM instantiations).
    if constexpr (is_cplx<S>::value && std::is_same_v<W, S>) {
      if (verify) {
        using WR = typename real_of<W>::type;
        const WR bound = WR(16) * WR(std::max(m, n)) * Eigen::NumTraits<WR>::epsilon();
        const auto& U = f.matrixU();
        const auto& V = f.matrixV();
        const WMat r = a - U.leftCols(k) * f.singularValues().head(k).asDiagonal() * V.leftCols(k).adjoint();
        const bool ok = r.stableNorm() <= bound * a.stableNorm() &&
                        (U.adjoint() * U - WMat::Identity(U.cols(), U.cols())).norm() <= bound &&
                        (V.adjoint() * V - WMat::Identity(V.cols(), V.cols())).norm() <= bound;
        if (!ok) return false;
      }
    }
    auto s = out<R>(j.out[1], b, k, 1);
    s = f.singularValues().head(k).template cast<R>();
    if (!vec) return true;
    // The raw vectors: their phases are fixed by @tenferro/linalg's output convention (#35).
    out<S>(j.out[0], b, m, f.matrixU().cols()) = f.matrixU().template cast<S>();
    out<S>(j.out[2], b, f.matrixV().cols(), n) = f.matrixV().adjoint().template cast<S>();
    return true;
  }

  // Eigen's SelfAdjointEigenSolver, kept on this thread between calls (its n×n storage is reused
  // by the next call of the same size; released past kRetainBytes), the input in scratch.
  void eigh(int64_t b) {
    const Idx n = j.m;
    const bool vec = (j.flags & kFlagVectors) != 0;
    static thread_local Eigen::SelfAdjointEigenSolver<Mat> es;
    S* a = scratch(n * n);
    gather_into(j.a, b, n, n, a);
    // The solver reads the lower triangle: with uplo 'U', mirror the upper one into it.
    if (j.flags & kFlagUpper)
      for (Idx c = 0; c < n; c++)
        for (Idx r = c + 1; r < n; r++) {
          if constexpr (is_cplx<S>::value) a[r + c * n] = std::conj(a[c + r * n]); else a[r + c * n] = a[c + r * n];
        }
    es.compute(view(a, n, n, n), vec ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
    const bool ok = es.info() == Eigen::Success;
    if (ok) {
      out<R>(j.out[0], b, n, 1) = es.eigenvalues();
      if (vec) out<S>(j.out[1], b, n, n) = es.eigenvectors();  // phases: the output convention (#35)
    } else {
      j.info[b] = 1;
    }
    if (static_cast<size_t>(n) * static_cast<size_t>(n) * sizeof(S) > kRetainBytes) es = Eigen::SelfAdjointEigenSolver<Mat>();
  }

  void eig(int64_t b) {
    const Idx n = j.m;
    const bool vec = (j.flags & kFlagVectors) != 0;
    Mat a = gather(j.a, b, n, n);
    CMat w, v;
    if constexpr (is_cplx<S>::value) {
      Eigen::ComplexEigenSolver<Mat> es(a, vec);
      if (es.info() != Eigen::Success) { j.info[b] = 1; return; }
      w = es.eigenvalues();
      if (vec) v = es.eigenvectors();
    } else {
      Eigen::EigenSolver<Mat> es(a, vec);
      if (es.info() != Eigen::Success) { j.info[b] = 1; return; }
      w = es.eigenvalues();
      if (vec) v = es.eigenvectors();
    }
    // In the solver's order, raw: @tenferro/linalg's output convention orders them (as every
    // kernel's: Eigen's, LAPACK's geev), scales the vectors to unit norm and fixes their phases (#35).
    out<C>(j.out[0], b, n, 1) = w;
    if (vec) out<C>(j.out[1], b, n, n) = v;
  }

  // Full-pivot LU of a square matrix, exactly LAPACK's ?getc2 (so that both kernels agree): at
  // step i the pivot is the entry of largest magnitude of the trailing block (the last of equal
  // ones in row-major order, as getc2's >= scan), rows and columns swapped (1-based ipiv, jpiv);
  // a pivot below smin = max(ε·max|A|, smlnum) is replaced by smin and info records the last such
  // step. Unblocked — as getc2 is; full pivoting is for small or rank-revealing uses.
  void lu_full(int64_t b) {
    const Idx n = j.m;
    Mat a = gather(j.a, b, n, n);
    int32_t* ip = static_cast<int32_t*>(j.out[1]) + b * n;
    int32_t* jp = static_cast<int32_t*>(j.out[2]) + b * n;
    const R eps = std::numeric_limits<R>::epsilon();  // LAPACK's lamch('P')
    const R smlnum = std::numeric_limits<R>::min() / eps;
    int32_t info = 0;
    R smin = smlnum;
    if (n == 1) {
      ip[0] = jp[0] = 1;
      if (std::abs(a(0, 0)) < smlnum) { info = 1; a(0, 0) = S(smlnum); }
    } else {
      for (Idx i = 0; i < n - 1; i++) {
        R xmax = 0;
        Idx ipv = i, jpv = i;
        for (Idx r = i; r < n; r++)
          for (Idx c = i; c < n; c++) {
            R v = std::abs(a(r, c));
            if (v >= xmax) { xmax = v; ipv = r; jpv = c; }
          }
        if (i == 0) smin = std::max(eps * xmax, smlnum);
        if (ipv != i) a.row(ipv).swap(a.row(i));
        ip[i] = static_cast<int32_t>(ipv + 1);
        if (jpv != i) a.col(jpv).swap(a.col(i));
        jp[i] = static_cast<int32_t>(jpv + 1);
        if (std::abs(a(i, i)) < smin) { info = static_cast<int32_t>(i + 1); a(i, i) = S(smin); }
        const S pivot = a(i, i);
        for (Idx r = i + 1; r < n; r++) a(r, i) = a(r, i) / pivot;
        for (Idx c = i + 1; c < n; c++) {
          const S y = a(i, c);
          for (Idx r = i + 1; r < n; r++) a(r, c) -= a(r, i) * y;
        }
      }
      if (std::abs(a(n - 1, n - 1)) < smin) { info = static_cast<int32_t>(n); a(n - 1, n - 1) = S(smin); }
      ip[n - 1] = jp[n - 1] = static_cast<int32_t>(n);
    }
    j.info[b] = info;
    out<S>(j.out[0], b, n, n) = a;
  }
};

}  // namespace TFL_ISA
}  // namespace tfl
