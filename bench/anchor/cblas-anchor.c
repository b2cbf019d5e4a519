/*
 * The benchmark anchor: C calling cblas_dgemm / cblas_sgemm directly on the system BLAS, the
 * same library tenferro's providers are measured against in the same run.
 *
 *   cblas-anchor <d|s|z|c> <n> <threads> <reps> [batch]
 *
 * d/s/z/c: f64, f32, c128, c64. With `batch` > 1 each rep multiplies `batch` separate n×n pairs,
 * one cblas call each (the loop a C program would write for a batch of small GEMMs).
 *
 * Prints one JSON line: per-rep seconds (after one warm-up rep), best and median GFLOP/s (real
 * flops: 8n³ per complex GEMM), and the library's identity (OpenBLAS config and core when present).
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
  if ((argc != 5 && argc != 6) || strchr("dszc", argv[1][0]) == NULL || argv[1][0] == 0) {
    fprintf(stderr, "usage: cblas-anchor <d|s|z|c> <n> <threads> <reps> [batch]\n");
    return 2;
  }
  const char t = argv[1][0];
  const int n = atoi(argv[2]), threads = atoi(argv[3]), reps = atoi(argv[4]);
  const int batch = argc == 6 ? atoi(argv[5]) : 1;
  if (n <= 0 || n > 16384 || threads <= 0 || reps <= 0 || reps > 100000 || batch <= 0 || batch > 1000000) return 2;

  void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  char *(*get_config)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_config");
  char *(*get_core)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
  if (set_threads) set_threads(threads);

  const int cplx = t == 'z' || t == 'c';
  const size_t lanes = (size_t)n * (size_t)n * (cplx ? 2 : 1);
  const size_t esz = (t == 'd' || t == 'z') ? sizeof(double) : sizeof(float);
  const size_t bytes = ((lanes * esz + 63) / 64) * 64 * (size_t)batch;
  char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes), *c = aligned_alloc(64, bytes);
  if (!a || !b || !c) return 3;
  const size_t stride = ((lanes * esz + 63) / 64) * 64;
  srand(7);
  for (size_t i = 0; i < lanes * (size_t)batch; i++) {
    const size_t item = i / lanes, at = i % lanes;
    double va = (double)(rand() % 16 - 8) / 4.0, vb = (double)(rand() % 16 - 8) / 4.0;
    if (esz == sizeof(double)) {
      ((double *)(a + item * stride))[at] = va; ((double *)(b + item * stride))[at] = vb; ((double *)(c + item * stride))[at] = 0;
    } else {
      ((float *)(a + item * stride))[at] = (float)va; ((float *)(b + item * stride))[at] = (float)vb; ((float *)(c + item * stride))[at] = 0;
    }
  }
  const double one[2] = {1, 0}, zero[2] = {0, 0};
  const float onef[2] = {1, 0}, zerof[2] = {0, 0};
  double *secs = malloc(sizeof(double) * (size_t)reps);
  for (int r = -1; r < reps; r++) {
    double t0 = now();
    for (int k = 0; k < batch; k++) {
      const void *A = a + (size_t)k * stride, *B = b + (size_t)k * stride;
      void *C = c + (size_t)k * stride;
      switch (t) {
        case 'd': cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C, n); break;
        case 's': cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n); break;
        case 'z': cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, one, A, n, B, n, zero, C, n); break;
        default: cblas_cgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, onef, A, n, B, n, zerof, C, n); break;
      }
    }
    double dt = now() - t0;
    if (r >= 0) secs[r] = dt;
  }
  const double flops = (cplx ? 8.0 : 2.0) * (double)n * (double)n * (double)n * (double)batch;
  const char *dtype = t == 'd' ? "f64" : t == 's' ? "f32" : t == 'z' ? "c128" : "c64";
  printf("{\"dtype\":\"%s\",\"n\":%d,\"batch\":%d,\"threads\":%d,\"seconds\":[", dtype, n, batch, threads);
  for (int r = 0; r < reps; r++) printf("%s%.9f", r ? "," : "", secs[r]);
  qsort(secs, (size_t)reps, sizeof(double), cmp);
  printf("],\"gflopsBest\":%.3f,\"gflopsMedian\":%.3f,\"config\":\"%s\",\"core\":\"%s\"}\n",
         flops / secs[0] * 1e-9, flops / secs[reps / 2] * 1e-9, get_config ? get_config() : "", get_core ? get_core() : "");
  free(secs); free(a); free(b); free(c);
  return 0;
}
