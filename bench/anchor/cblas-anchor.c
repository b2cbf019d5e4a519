/*
 * The benchmark anchor: C calling cblas_dgemm / cblas_sgemm directly on the system BLAS, the
 * same library tenferro's providers are measured against in the same run.
 *
 *   cblas-anchor <d|s> <n> <threads> <reps>
 *
 * Prints one JSON line: per-rep seconds (after one warm-up call), best and median GFLOP/s, and
 * the library's identity (OpenBLAS config and core when present).
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 5 || (argv[1][0] != 'd' && argv[1][0] != 's')) {
    fprintf(stderr, "usage: cblas-anchor <d|s> <n> <threads> <reps>\n");
    return 2;
  }
  const int dbl = argv[1][0] == 'd';
  const int n = atoi(argv[2]), threads = atoi(argv[3]), reps = atoi(argv[4]);
  if (n <= 0 || threads <= 0 || reps <= 0 || reps > 1000) return 2;

  void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  char *(*get_config)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_config");
  char *(*get_core)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
  if (set_threads) set_threads(threads);

  const size_t count = (size_t)n * (size_t)n, esz = dbl ? sizeof(double) : sizeof(float);
  void *a = aligned_alloc(64, count * esz), *b = aligned_alloc(64, count * esz), *c = aligned_alloc(64, count * esz);
  if (!a || !b || !c) return 3;
  srand(7);
  for (size_t i = 0; i < count; i++) {
    double va = (double)(rand() % 16 - 8) / 4.0, vb = (double)(rand() % 16 - 8) / 4.0;
    if (dbl) { ((double *)a)[i] = va; ((double *)b)[i] = vb; ((double *)c)[i] = 0; }
    else { ((float *)a)[i] = (float)va; ((float *)b)[i] = (float)vb; ((float *)c)[i] = 0; }
  }
  double *secs = malloc(sizeof(double) * (size_t)reps);
  for (int r = -1; r < reps; r++) {
    double t0 = now();
    if (dbl) cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    else cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double dt = now() - t0;
    if (r >= 0) secs[r] = dt;
  }
  double flops = 2.0 * (double)n * (double)n * (double)n;
  printf("{\"dtype\":\"%s\",\"n\":%d,\"threads\":%d,\"seconds\":[", dbl ? "f64" : "f32", n, threads);
  for (int r = 0; r < reps; r++) printf("%s%.9f", r ? "," : "", secs[r]);
  qsort(secs, (size_t)reps, sizeof(double), cmp);
  printf("],\"gflopsBest\":%.3f,\"gflopsMedian\":%.3f,\"config\":\"%s\",\"core\":\"%s\"}\n",
         flops / secs[0] * 1e-9, flops / secs[reps / 2] * 1e-9, get_config ? get_config() : "", get_core ? get_core() : "");
  free(secs); free(a); free(b); free(c);
  return 0;
}
