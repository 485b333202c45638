/* bench/sgemm_peak.c: OpenBLAS sgemm GFLOP/s on given shapes, for the
   per-shape convolution benchmark (bench/convs.py builds and runs it with
   OPENBLAS_NUM_THREADS=1: the one-core figure a conv's gemm is compared to).

   usage: sgemm_peak M N K [M N K ...]   prints "M N K<TAB>GFLOP/s" (best of 20 calls) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  for (int a = 1; a + 2 < argc; a += 3) {
    int M = atoi(argv[a]), N = atoi(argv[a + 1]), K = atoi(argv[a + 2]);
    float *A = malloc(sizeof(float) * (size_t)M * (size_t)K), *B = malloc(sizeof(float) * (size_t)K * (size_t)N);
    float *C = malloc(sizeof(float) * (size_t)M * (size_t)N);
    if (!A || !B || !C) return 1;
    for (size_t i = 0; i < (size_t)M * (size_t)K; i++) A[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < (size_t)K * (size_t)N; i++) B[i] = (float)(i % 5) * 0.1f;
    double best = 1e30;
    for (int r = 0; r < 20; r++) {
      double t = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
      t = now() - t;
      if (t < best) best = t;
    }
    printf("%d %d %d\t%.1f\n", M, N, K, 2.0 * M * N * K / best * 1e-9);
    free(A); free(B); free(C);
  }
  return 0;
}
