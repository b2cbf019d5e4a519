// The linalg benchmark anchor: C++ calling the system LAPACK (OpenBLAS's Fortran symbols) directly,
// the same routines provider-blas runs for la.* — measured in the same run as tenferro.
//
//   lapack-anchor <op> <n> <threads> <reps> [batch]
//
// op: getrf (la.luFactor), potrf (la.cholesky), qr (geqrf + orgqr: la.qr reduced), syevd (la.eigh,
// vectors), gesdd (la.svd, jobz 'A': full matrices as la.svd's default), gesv (la.solve, one
// right-hand side). Each call first copies the input (LAPACK overwrites it; la.* copies too).
// With `batch` > 1 each rep runs `batch` separate n×n problems, one LAPACK call each (the C loop
// over dgesv_ that a batch of small solves is compared with).
//
// Prints one JSON line: per-rep seconds (after one warm-up rep), the median, and OpenBLAS's
// identity (config, core) when present.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

extern "C" {
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*, const int*, int*, size_t, size_t);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*, double*, const int*, double*, const int*, int*, int*, size_t);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
}

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: lapack-anchor <getrf|potrf|qr|syevd|gesdd|gesv> <n> <threads> <reps> [batch]\n");
    return 2;
  }
  const std::string op = argv[1];
  const int n = atoi(argv[2]), threads = atoi(argv[3]), reps = atoi(argv[4]);
  const int batch = argc == 6 ? atoi(argv[5]) : 1;
  if (n <= 0 || n > 8192 || threads <= 0 || reps <= 0 || reps > 100000 || batch <= 0 || batch > 1000000) return 2;
  auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get_config = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  auto get_core = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (set_threads) set_threads(threads);

  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  // The same symmetric positive definite input as bench/run.mjs (one per batch item).
  std::vector<double> src(nn * static_cast<size_t>(batch)), rhs(static_cast<size_t>(n) * static_cast<size_t>(batch), 1.0);
  for (int b = 0; b < batch; b++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double v = batch > 1 ? (i == j ? 9 : 0) + std::sin(b + i * 3 + j)
                             : (i == j ? n : 0) + 1.0 / (1 + std::abs(i - j)) + 0.01 * std::sin(std::min(i, j) * 7 + std::max(i, j) * 13);
        src[static_cast<size_t>(b) * nn + static_cast<size_t>(i) + static_cast<size_t>(j) * n] = v;
      }
  std::vector<double> a(nn), w(static_cast<size_t>(n)), tau(static_cast<size_t>(n)), u, vt, x(static_cast<size_t>(n));
  std::vector<int> ipiv(static_cast<size_t>(n)), iwork;
  std::vector<double> work;
  int info = 0, lwork = -1, liwork = -1;
  double q = 0;
  // Workspace queries, once (as the provider does per call; cheap next to the factorisations).
  if (op == "qr") {
    dgeqrf_(&n, &n, a.data(), &n, tau.data(), &q, &lwork, &info);
    double q2 = 0;
    dorgqr_(&n, &n, &n, a.data(), &n, tau.data(), &q2, &lwork, &info);
    work.resize(static_cast<size_t>(std::max(q, q2)));
  } else if (op == "syevd") {
    int iq = 0;
    dsyevd_("V", "L", &n, a.data(), &n, w.data(), &q, &lwork, &iq, &liwork, &info, 1, 1);
    work.resize(static_cast<size_t>(q));
    iwork.resize(static_cast<size_t>(iq));
  } else if (op == "gesdd") {
    u.resize(nn);
    vt.resize(nn);
    iwork.resize(8 * static_cast<size_t>(n));
    dgesdd_("A", &n, &n, a.data(), &n, w.data(), u.data(), &n, vt.data(), &n, &q, &lwork, iwork.data(), &info, 1);
    work.resize(static_cast<size_t>(q));
  } else if (op != "getrf" && op != "potrf" && op != "gesv") {
    fprintf(stderr, "unknown op %s\n", op.c_str());
    return 2;
  }
  std::vector<double> secs;
  for (int r = -1; r < reps; r++) {
    const double t0 = now();
    for (int b = 0; b < batch; b++) {
      memcpy(a.data(), src.data() + static_cast<size_t>(b) * nn, nn * sizeof(double));
      int lw = static_cast<int>(work.size()), liw = static_cast<int>(iwork.size()), one = 1;
      if (op == "getrf") dgetrf_(&n, &n, a.data(), &n, ipiv.data(), &info);
      else if (op == "potrf") dpotrf_("L", &n, a.data(), &n, &info, 1);
      else if (op == "qr") {
        dgeqrf_(&n, &n, a.data(), &n, tau.data(), work.data(), &lw, &info);
        dorgqr_(&n, &n, &n, a.data(), &n, tau.data(), work.data(), &lw, &info);
      } else if (op == "syevd") dsyevd_("V", "L", &n, a.data(), &n, w.data(), work.data(), &lw, iwork.data(), &liw, &info, 1, 1);
      else if (op == "gesdd") dgesdd_("A", &n, &n, a.data(), &n, w.data(), u.data(), &n, vt.data(), &n, work.data(), &lw, iwork.data(), &info, 1);
      else {
        memcpy(x.data(), rhs.data() + static_cast<size_t>(b) * n, static_cast<size_t>(n) * sizeof(double));
        dgesv_(&n, &one, a.data(), &n, ipiv.data(), x.data(), &n, &info);
      }
      if (info != 0) {
        fprintf(stderr, "%s: info %d\n", op.c_str(), info);
        return 4;
      }
    }
    const double dt = now() - t0;
    if (r >= 0) secs.push_back(dt);
  }
  std::vector<double> sorted = secs;
  std::sort(sorted.begin(), sorted.end());
  printf("{\"op\":\"%s\",\"n\":%d,\"batch\":%d,\"threads\":%d,\"seconds\":[", op.c_str(), n, batch, threads);
  for (size_t r = 0; r < secs.size(); r++) printf("%s%.9f", r ? "," : "", secs[r]);
  printf("],\"median\":%.9f,\"config\":\"%s\",\"core\":\"%s\"}\n", sorted[sorted.size() / 2], get_config ? get_config() : "", get_core ? get_core() : "");
  return 0;
}
