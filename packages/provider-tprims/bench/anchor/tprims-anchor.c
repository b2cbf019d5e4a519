// C anchors for bench/run.mjs: the same work as the tprims cases, in plain C loops (the anchor
// alone may be compiled with -O3 -march=native), on 1 or 2 POSIX threads splitting the work in
// halves. Prints one JSON line: {"best": s, "median": s} over `reps` timed runs after one warm-up.
//
//   tprims-anchor memcpy <n> <threads> <reps>     memcpy of n f64 (8n bytes), warm buffers
//   tprims-anchor add    <n> <threads> <reps>     c[i] = a[i] + b[i], n f32
//   tprims-anchor sum0   <n> <threads> <reps>     column sums of an n x n column-major f64 (contiguous columns)
//   tprims-anchor sum1   <n> <threads> <reps>     row sums of the same (out[i] += a[i + j n], vectorised)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* mode;
static long n;
static double *A, *O;
static float *fa, *fb, *fc;

struct part { long lo, hi; };

static void* work(void* arg) {
  struct part* p = arg;
  if (strcmp(mode, "memcpy") == 0) {
    memcpy(O + p->lo, A + p->lo, (size_t)(p->hi - p->lo) * sizeof(double));
  } else if (strcmp(mode, "add") == 0) {
    for (long i = p->lo; i < p->hi; ++i) fc[i] = fa[i] + fb[i];
  } else if (strcmp(mode, "sum0") == 0) {
    for (long j = p->lo; j < p->hi; ++j) {
      double s = 0;
      const double* col = A + j * n;
      for (long i = 0; i < n; ++i) s += col[i];
      O[j] = s;
    }
  } else {  // sum1: rows [lo, hi)
    for (long i = p->lo; i < p->hi; ++i) O[i] = 0;
    for (long j = 0; j < n; ++j) {
      const double* col = A + j * n;
      for (long i = p->lo; i < p->hi; ++i) O[i] += col[i];
    }
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  mode = argv[1];
  n = atol(argv[2]);
  int threads = atoi(argv[3]);
  int reps = atoi(argv[4]);
  long extent;  // the split extent
  if (strcmp(mode, "add") == 0) {
    fa = aligned_alloc(64, n * 4 + 64); fb = aligned_alloc(64, n * 4 + 64); fc = aligned_alloc(64, n * 4 + 64);
    for (long i = 0; i < n; ++i) { fa[i] = (float)(i % 1000); fb[i] = 1.0f; fc[i] = 0; }
    extent = n;
  } else if (strcmp(mode, "memcpy") == 0) {
    A = aligned_alloc(64, n * 8 + 64); O = aligned_alloc(64, n * 8 + 64);
    for (long i = 0; i < n; ++i) { A[i] = (double)i; O[i] = 0; }
    extent = n;
  } else {
    A = aligned_alloc(64, n * n * 8 + 64); O = aligned_alloc(64, n * 8 + 64);
    for (long i = 0; i < n * n; ++i) A[i] = (double)(i % 1000) * 0.001;
    extent = n;
  }
  double* t = malloc(sizeof(double) * (reps + 1));
  for (int r = 0; r <= reps; ++r) {
    pthread_t th[2];
    struct part p[2] = {{0, threads > 1 ? extent / 2 : extent}, {extent / 2, extent}};
    double t0 = now();
    if (threads > 1) {
      pthread_create(&th[1], NULL, work, &p[1]);
      work(&p[0]);
      pthread_join(th[1], NULL);
    } else {
      work(&p[0]);
    }
    t[r] = now() - t0;
  }
  qsort(t + 1, reps, sizeof(double), cmp);
  printf("{\"best\": %.9f, \"median\": %.9f, \"check\": %g}\n", t[1], t[1 + reps / 2], O ? O[1] : fc[1]);
  return 0;
}
