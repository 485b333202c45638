/* bench/gemm_builtin.c -- the BLAS=none build's gemm (src/core/lt_gemm.c) against
   single-threaded OpenBLAS, same process, interleaved runs, best of each.
   Build and run (from the project root):
     make bench-gemm [REPS=n]   (compiles it with src/core/lt_gemm.c, -O3 as the
                                 library's lt_gemm.o, and links OpenBLAS)
   Prints per size and dtype: builtin ms, OpenBLAS ms, ratio, max rel. error. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "lt_gemm.h"

/* (lt_dtype.h, included by lt_gemm.h, needs lua.h: LUA_CFLAGS) */

void openblas_set_num_threads(int);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define BENCH(T, SFX, BLASFN, EPS)                                                                 \
  static void bench_##SFX(int n, int reps) {                                                       \
    T *a = malloc(sizeof(T) * n * n), *b = malloc(sizeof(T) * n * n);                              \
    T *c1 = malloc(sizeof(T) * n * n), *c2 = malloc(sizeof(T) * n * n);                            \
    for (int i = 0; i < n * n; i++) { a[i] = (T)rand() / RAND_MAX - 0.5; b[i] = (T)rand() / RAND_MAX - 0.5; } \
    double best1 = 1e30, best2 = 1e30;                                                             \
    for (int r = 0; r < reps; r++) {                                                               \
      double t0 = now();                                                                           \
      lt_gemm_##SFX(n, n, n, 1, a, n, 1, b, n, 1, 0, c1, n, 1);                                    \
      double t1 = now();                                                                           \
      BLASFN(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c2, n);          \
      double t2 = now();                                                                           \
      if (t1 - t0 < best1) best1 = t1 - t0;                                                        \
      if (t2 - t1 < best2) best2 = t2 - t1;                                                        \
    }                                                                                              \
    double err = 0, mx = 0;                                                                        \
    for (int i = 0; i < n * n; i++) {                                                              \
      if (fabs((double)c1[i] - c2[i]) > err) err = fabs((double)c1[i] - c2[i]);                    \
      if (fabs((double)c2[i]) > mx) mx = fabs((double)c2[i]);                                      \
    }                                                                                              \
    printf("%-8s %5d  builtin %8.2f ms  openblas(1 thread) %8.2f ms  ratio %.2f  rel.err %.1e%s\n", \
           #SFX, n, best1 * 1e3, best2 * 1e3, best1 / best2, err / mx, err / mx > EPS ? "  BAD" : ""); \
    free(a); free(b); free(c1); free(c2);                                                          \
  }
BENCH(float, f32, cblas_sgemm, 1e-4)
BENCH(double, f64, cblas_dgemm, 1e-12)

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  int sizes[] = { 64, 256, 512, 1000 };
  for (int i = 0; i < 4; i++) { bench_f32(sizes[i], reps); bench_f64(sizes[i], reps); }
  return 0;
}
