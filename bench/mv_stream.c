/* bench/mv_stream.c -- how fast this machine streams a layer's weights
   through a matrix-vector product, on one core and split over two: the
   bound of a batch-1 language model's per-token latency (every weight is
   read once per token, two flops each).  Five 1024 x 256 float32 matrices
   (5 MB, more than one core's L2) are multiplied in turn, as the LSTM LM
   of bench/models does per token.

     cc -O2 -o build/bin/mv_stream bench/mv_stream.c $(pkg-config --cflags --libs openblas) -lpthread
     build/bin/mv_stream */
#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NW 5
#define M 1024
#define K 256
static float *W[NW], x[K], y[M];
static atomic_int go, done;
static int cur;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static void half(int h, int w) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, M / 2, K, 1.f, W[w] + (size_t)h * (M / 2) * K, K, x, 1, 0.f,
              y + h * (M / 2), 1);
}
static void *worker(void *arg) {
  (void)arg;
  int seen = 0;
  for (;;) {
    int g;
    while ((g = atomic_load(&go)) == seen) {}
    if (g < 0) return NULL;
    seen = g;
    half(1, cur);
    atomic_fetch_add(&done, 1);
  }
}
int main(void) {
  for (int i = 0; i < NW; i++) {
    W[i] = aligned_alloc(64, sizeof(float) * M * K);
    for (int j = 0; j < M * K; j++) W[i][j] = (float)rand() / (float)RAND_MAX;
  }
  for (int j = 0; j < K; j++) x[j] = 1;
  openblas_set_num_threads(1);
  const int n = 20000;
  double best1 = 1e9, best2 = 1e9;
  for (int r = 0; r < 3; r++) {
    double t = now();
    for (int i = 0; i < n; i++)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.f, W[i % NW], K, x, 1, 0.f, y, 1);
    double per = (now() - t) / n;
    if (per < best1) best1 = per;
  }
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  for (int r = 0; r < 3; r++) {
    double t = now();
    for (int i = 0; i < n; i++) {
      cur = i % NW;
      atomic_store(&done, 0);
      atomic_fetch_add(&go, 1);
      half(0, cur);
      while (atomic_load(&done) < 1) {}
    }
    double per = (now() - t) / n;
    if (per < best2) best2 = per;
  }
  atomic_store(&go, -1);
  pthread_join(th, NULL);
  double mb = (double)M * K * sizeof(float) / 1e6;
  printf("1 MB matrix-vector product: one core %.1f us (%.1f GB/s), two cores %.1f us (%.1f GB/s)\n", best1 * 1e6,
         mb / best1 / 1e3, best2 * 1e6, mb / best2 / 1e3);
  return 0;
}
