// The op runners on one scalar type S (float, double, std::complex<float>, std::complex<double>),
// on Eigen 3.4. Each runs batches [b0, b1) of a checked Job: it gathers the batch's input into a
// dense Eigen matrix (reading only the offsets addon.cc proved inside the buffer), factors it, and
// writes dense column-major outputs. Numerical outcomes go to info[batch] in LAPACK's convention.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

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

namespace tfl {

template <typename T> struct real_of { using type = T; };
template <typename T> struct real_of<std::complex<T>> { using type = T; };
template <typename T> struct is_cplx : std::false_type {};
template <typename T> struct is_cplx<std::complex<T>> : std::true_type {};

// The order of eig's eigenvalues, shared by every kernel: by real part; eigenvalues whose real parts
// lie within δ = √ε·max|λ| of the first of their run (a conjugate pair, or equal real parts that
// rounding made differ) by imaginary part. NaN sorts last; both sorts are stable.
template <typename C>
void eig_order(const C* w, long n, long* order) {
  using R = typename C::value_type;
  R big = 0;
  for (long i = 0; i < n; i++) { order[i] = i; R a = std::abs(w[i]); if (a > big) big = a; }
  const R delta = std::sqrt(std::numeric_limits<R>::epsilon()) * big;
  auto before = [](R x, R y) {
    const bool xn = std::isnan(x), yn = std::isnan(y);
    return (xn || yn) ? (!xn && yn) : x < y;
  };
  std::stable_sort(order, order + n, [&](long x, long y) { return before(w[x].real(), w[y].real()); });
  for (long i = 0; i < n;) {
    long j = i + 1;
    while (j < n && w[order[j]].real() - w[order[i]].real() <= delta) j++;
    std::stable_sort(order + i, order + j, [&](long x, long y) { return before(w[x].imag(), w[y].imag()); });
    i = j;
  }
}

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

  // Unit phase of x (sign for reals; 1 for zero).
  template <typename T>
  static T phase(const T& x) {
    if constexpr (is_cplx<T>::value) {
      auto a = std::abs(x);
      return a == 0 ? T(1) : x / a;
    } else {
      return x < 0 ? T(-1) : T(1);
    }
  }

  // Scale column c of `v` (and of `w`, if given, by the same phase) so that its entry of largest
  // magnitude (the first of equal ones) is real and non-negative.
  template <typename M1, typename M2>
  static void normalize_columns(M1& v, M2* w) {
    for (Idx c = 0; c < v.cols(); c++) {
      Idx best = 0;
      R bestAbs = -1;
      for (Idx r = 0; r < v.rows(); r++) {
        R a = std::abs(v(r, c));
        if (a > bestAbs * (R(1) + R(64) * Eigen::NumTraits<R>::epsilon())) { bestAbs = a; best = r; }
      }
      if (v.rows() == 0) continue;
      auto p = phase(v(best, c));
      using T = typename M1::Scalar;
      T cp;
      if constexpr (is_cplx<T>::value) cp = std::conj(p); else cp = p;
      v.col(c) *= cp;
      if (w != nullptr && c < w->cols()) w->col(c) *= cp;
    }
  }

  int run() {
    for (int64_t b = j.b0; b < j.b1; b++) {
      if (aborted(j.abort)) return kAborted;
      j.info[b] = 0;
      if (j.m == 0 || j.n == 0) { empty(b); continue; }
      switch (j.op) {
        case kCholesky: cholesky(b); break;
        case kTrsm: trsm(b); break;
        case kLuFactor: lu(b, false); break;
        case kLu: lu(b, true); break;
        case kSolve: solve(b); break;
        case kQr: qr(b); break;
        case kSvd: svd(b); break;
        case kEigh: eigh(b); break;
        case kEig: eig(b); break;
        case kLuFullPivot: lu_full(b); break;
        default: return kBadOp;
      }
    }
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
    Mat a = gather(j.a, b, n, n);
    // Eigen's blocked in-place Cholesky on the lower triangle: returns the 0-based column of the
    // first non-positive pivot, or -1 (LAPACK potrf's info is that column + 1).
    Idx bad = Eigen::internal::llt_inplace<S, Eigen::Lower>::blocked(a);
    auto o = out<S>(j.out[0], b, n, n);
    if (bad >= 0) {
      j.info[b] = static_cast<int32_t>(bad + 1);
      o.setZero();
      return;
    }
    Mat l = a.template triangularView<Eigen::Lower>();
    if (j.flags & kFlagUpper) o = l.adjoint(); else o = l;
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

  // Rectangular LU with partial pivoting (LAPACK getf2's algorithm: the pivot is the first entry
  // of largest abs1, as i?amax); returns info.
  static int32_t getf2(Mat& a, int32_t* piv) {
    const Idx m = a.rows(), n = a.cols(), k = std::min(m, n);
    int32_t info = 0;
    for (Idx c = 0; c < k; c++) {
      Idx p = c;
      R best = -1;
      for (Idx r = c; r < m; r++) {
        R v = abs1(a(r, c));
        if (v > best) { best = v; p = r; }
      }
      piv[c] = static_cast<int32_t>(p + 1);
      if (a(p, c) == S(0)) {
        if (info == 0) info = static_cast<int32_t>(c + 1);
        continue;
      }
      if (p != c) a.row(p).swap(a.row(c));
      // As LAPACK getf2: multiply by the reciprocal when it is representable, else divide entry by
      // entry; both through the scalar (C99 Annex G) division, never Eigen's vectorised complex
      // division, which squares |pivot| and underflows to NaN for |pivot| below √(min normal).
      const S pivot = a(c, c);
      if (std::abs(pivot) >= std::numeric_limits<R>::min()) {
        const S inv = S(1) / pivot;
        for (Idx r = c + 1; r < m; r++) a(r, c) *= inv;
      } else {
        for (Idx r = c + 1; r < m; r++) a(r, c) = a(r, c) / pivot;
      }
      a.bottomRightCorner(m - c - 1, n - c - 1).noalias() -= a.col(c).tail(m - c - 1) * a.row(c).tail(n - c - 1);
    }
    return info;
  }

  // LU of batch b: square through Eigen's blocked PartialPivLU, rectangular through getf2.
  // Pivots in LAPACK's convention (1-based; row i was swapped with row piv[i] at step i).
  int32_t factor(int64_t b, Mat& lu, std::vector<int32_t>& piv, Idx m, Idx n) {
    const Idx k = std::min(m, n);
    piv.assign(static_cast<size_t>(k), 0);
    Mat a = gather(j.a, b, m, n);
    // Rectangular, and complex (see getf2): the unblocked LU; real square: Eigen's blocked one.
    if (m != n || m == 0 || is_cplx<S>::value) {
      lu = std::move(a);
      return getf2(lu, piv.data());
    }
    Eigen::PartialPivLU<Mat> f(a);
    lu = f.matrixLU();
    // P A = L U with P.indices()[i] = where row i of A went; turn P into LAPACK's swap sequence.
    const auto& ind = f.permutationP().indices();
    std::vector<Idx> inv(static_cast<size_t>(m)), cur(static_cast<size_t>(m)), where(static_cast<size_t>(m));
    for (Idx i = 0; i < m; i++) { inv[static_cast<size_t>(ind[i])] = i; cur[static_cast<size_t>(i)] = i; where[static_cast<size_t>(i)] = i; }
    for (Idx i = 0; i < k; i++) {
      Idx target = inv[static_cast<size_t>(i)];
      Idx p = where[static_cast<size_t>(target)];
      piv[static_cast<size_t>(i)] = static_cast<int32_t>(p + 1);
      Idx ri = cur[static_cast<size_t>(i)];
      std::swap(cur[static_cast<size_t>(i)], cur[static_cast<size_t>(p)]);
      where[static_cast<size_t>(ri)] = p;
      where[static_cast<size_t>(target)] = i;
    }
    int32_t info = 0;
    for (Idx i = 0; i < k; i++)
      if (lu(i, i) == S(0)) { info = static_cast<int32_t>(i + 1); break; }
    return info;
  }

  void lu(int64_t b, bool unpack) {
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    Mat f;
    std::vector<int32_t> piv;
    j.info[b] = factor(b, f, piv, m, n);
    if (!unpack) {
      out<S>(j.out[0], b, m, n) = f;
      int32_t* p = static_cast<int32_t*>(j.out[1]) + b * k;
      for (Idx i = 0; i < k; i++) p[i] = piv[static_cast<size_t>(i)];
      return;
    }
    // A = P L U: P is the inverse of the row permutation the swaps apply.
    std::vector<Idx> perm(static_cast<size_t>(m));
    for (Idx i = 0; i < m; i++) perm[static_cast<size_t>(i)] = i;
    for (Idx i = 0; i < k; i++) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(piv[static_cast<size_t>(i)] - 1)]);
    auto P = out<S>(j.out[0], b, m, m);
    P.setZero();
    for (Idx i = 0; i < m; i++) P(perm[static_cast<size_t>(i)], i) = S(1);
    auto L = out<S>(j.out[1], b, m, k);
    L = f.leftCols(k).template triangularView<Eigen::UnitLower>();
    auto U = out<S>(j.out[2], b, k, n);
    U = f.topRows(k).template triangularView<Eigen::Upper>();
  }

  void solve(int64_t b) {
    const Idx n = j.m, nr = j.n;
    auto o = out<S>(j.out[0], b, n, nr);
    if (n == 0) return;
    if constexpr (is_cplx<S>::value) {
      // Complex: the robust unblocked LU (getf2), then row swaps and two triangular solves.
      Mat f;
      std::vector<int32_t> piv;
      int32_t info = factor(b, f, piv, n, n);
      if (info != 0) { j.info[b] = info; o.setZero(); return; }
      Mat x = gather(j.b, b, n, nr);
      for (Idx i = 0; i < n; i++) if (piv[static_cast<size_t>(i)] - 1 != i) x.row(i).swap(x.row(piv[static_cast<size_t>(i)] - 1));
      f.template triangularView<Eigen::UnitLower>().solveInPlace(x);
      f.template triangularView<Eigen::Upper>().solveInPlace(x);
      o = x;
      return;
    }
    Mat a = gather(j.a, b, n, n);
    Eigen::PartialPivLU<Mat> f(a);
    const Mat& lu = f.matrixLU();
    for (Idx i = 0; i < n; i++)
      if (lu(i, i) == S(0)) { j.info[b] = static_cast<int32_t>(i + 1); o.setZero(); return; }
    o = f.solve(gather(j.b, b, n, nr));
  }

  void qr(int64_t b) {
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    const bool full = (j.flags & kFlagFull) != 0, ronly = (j.flags & kFlagROnly) != 0;
    Mat a = gather(j.a, b, m, n);
    Eigen::HouseholderQR<Mat> f(a);
    const Idx rr = full ? m : k, qc = full ? m : k;
    Mat r = Mat::Zero(rr, n);
    r.topRows(k) = f.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
    Mat q;
    if (!ronly) q = f.householderQ() * Mat::Identity(m, qc);
    // R's diagonal real and non-negative: row i of R and column i of Q take opposite phases.
    for (Idx i = 0; i < k; i++) {
      S p = phase(r(i, i));
      S cp;
      if constexpr (is_cplx<S>::value) cp = std::conj(p); else cp = p;
      r.row(i) *= cp;
      if (!ronly) q.col(i) *= p;
      if constexpr (is_cplx<S>::value) r(i, i) = S(std::real(r(i, i)));
    }
    if (!ronly) out<S>(j.out[0], b, m, qc) = q;
    out<S>(j.out[1], b, rr, n) = r;
  }

  void svd(int64_t b) {
    const Idx m = j.m, n = j.n, k = std::min(m, n);
    const bool vec = (j.flags & kFlagVectors) != 0, full = (j.flags & kFlagFull) != 0;
    Mat a = gather(j.a, b, m, n);
    int opts = vec ? (full ? (Eigen::ComputeFullU | Eigen::ComputeFullV) : (Eigen::ComputeThinU | Eigen::ComputeThinV)) : 0;
    Eigen::BDCSVD<Mat> f(a, opts);
    if (f.info() != Eigen::Success) { j.info[b] = 1; return; }
    auto s = out<R>(j.out[1], b, k, 1);
    s = f.singularValues().head(k);
    if (!vec) return;
    Mat u = f.matrixU(), v = f.matrixV();
    normalize_columns(u, &v);
    out<S>(j.out[0], b, m, u.cols()) = u;
    out<S>(j.out[2], b, v.cols(), n) = v.adjoint();
  }

  void eigh(int64_t b) {
    const Idx n = j.m;
    const bool vec = (j.flags & kFlagVectors) != 0;
    Mat a = gather(j.a, b, n, n);
    if (j.flags & kFlagUpper) { Mat h = a.template selfadjointView<Eigen::Upper>(); a = h; }
    Eigen::SelfAdjointEigenSolver<Mat> es(a, vec ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
    if (es.info() != Eigen::Success) { j.info[b] = 1; return; }
    out<R>(j.out[0], b, n, 1) = es.eigenvalues();
    if (!vec) return;
    Mat v = es.eigenvectors();
    normalize_columns(v, static_cast<Mat*>(nullptr));
    out<S>(j.out[1], b, n, n) = v;
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
    // Eigenvalues in eig_order's order, so that every kernel — Eigen's, LAPACK's geev — gives the
    // same order; vectors follow.
    std::vector<long> order(static_cast<size_t>(n));
    eig_order(w.data(), static_cast<long>(n), order.data());
    auto wo = out<C>(j.out[0], b, n, 1);
    for (Idx i = 0; i < n; i++) wo(i) = w(order[static_cast<size_t>(i)]);
    if (!vec) return;
    CMat vs(n, n);
    for (Idx c = 0; c < n; c++) vs.col(c) = v.col(order[static_cast<size_t>(c)]);
    for (Idx c = 0; c < n; c++) { R nr = vs.col(c).norm(); if (nr > 0) vs.col(c) /= nr; }
    normalize_columns(vs, static_cast<CMat*>(nullptr));
    out<C>(j.out[1], b, n, n) = vs;
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

}  // namespace tfl
