/*
 * How long this machine keeps a thread's working set in cache: a dependent walk over a random
 * cyclic permutation of `kib` KiB (64-byte nodes), timed warm (back to back) and after `ms`
 * milliseconds of unrelated work on the same thread (register-only arithmetic: nothing of ours is
 * evicted by it) and after as long asleep. On a dedicated machine the three agree while the set fits
 * the caches; on a host shared with other tenants the last two grow with `ms` — the cost any code
 * pays when it runs again after a kernel of that length (tenferro's main-thread work between GEMMs).
 *
 *   cache-retention [kib=1024] [steps=4096] [ms=2]
 *
 * Prints one JSON line: median µs of 101 walks in each state.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct node {
  struct node *next;
  long pad[7];
} node;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static volatile double sink;

static node *walk(node *p, long steps) {
  for (long i = 0; i < steps; i++) p = p->next;
  return p;
}

enum { REPS = 101 };

static double median_walk(node *start, long steps, int state, double ms) {
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    if (state == 1) {
      double until = now_us() + ms * 1e3, x = 1.0001;
      while (now_us() < until)
        for (int q = 0; q < 256; q++) x = x * 1.0000001 + 1e-9;
      sink += x;
    } else if (state == 2) {
      struct timespec ts = {(time_t)(ms / 1e3), (long)((ms - 1e3 * (double)(time_t)(ms / 1e3)) * 1e6)};
      nanosleep(&ts, NULL);
    }
    double t0 = now_us();
    sink += (double)(long)walk(start, steps);
    t[r] = now_us() - t0;
  }
  qsort(t, REPS, sizeof t[0], cmp);
  return t[REPS / 2];
}

int main(int argc, char **argv) {
  long kib = argc > 1 ? atol(argv[1]) : 1024;
  long steps = argc > 2 ? atol(argv[2]) : 4096;
  double ms = argc > 3 ? atof(argv[3]) : 2.0;
  if (kib < 1 || kib > (1L << 22) || steps < 1 || ms < 0 || ms > 1000) {
    fprintf(stderr, "usage: cache-retention [kib 1..4194304] [steps >= 1] [ms 0..1000]\n");
    return 2;
  }
  long count = kib * 1024 / (long)sizeof(node);
  if (count < 2) count = 2;
  node *nodes = aligned_alloc(64, (size_t)count * sizeof(node));
  long *order = malloc((size_t)count * sizeof(long));
  if (nodes == NULL || order == NULL) return 1;
  for (long i = 0; i < count; i++) order[i] = i;
  srand(12345);
  for (long i = count - 1; i > 0; i--) {
    long j = (long)((((unsigned long)rand() << 16) ^ (unsigned long)rand()) % (unsigned long)(i + 1));
    long x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  for (long i = 0; i < count; i++) nodes[order[i]].next = &nodes[order[(i + 1) % count]];
  sink += (double)(long)walk(nodes, count); // fault in and warm up
  double warm = median_walk(nodes, steps, 0, 0);
  double busy = median_walk(nodes, steps, 1, ms);
  double asleep = median_walk(nodes, steps, 2, ms);
  printf("{\"kib\":%ld,\"steps\":%ld,\"ms\":%g,\"warmUs\":%.1f,\"afterWorkUs\":%.1f,\"afterSleepUs\":%.1f}\n", kib, steps, ms, warm, busy, asleep);
  free(order);
  free(nodes);
  return 0;
}
