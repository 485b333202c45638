/*
 * lt_rnn.h -- the step loops of a recurrent layer (lt_rnn.c); Lua-free.
 *
 * mode: LT_RNN_TANH, LT_RNN_RELU, LT_RNN_LSTM (gates i,f,g,o), LT_RNN_GRU
 * (r,z,n).  Every array is contiguous, of one dtype dt (float32 or
 * float64), allocated by the caller:
 *   xp (T,B,G*H): W_ih x + b_ih (+ b_hh except for GRU, whose b_hn sits
 *     inside r * (W_hn h + b_hn), so b_hh (G*H, zeros when the layer has
 *     none) is passed apart); w_hh (G*H,H); h0, c0, h_n, c_n (B,H);
 *   ws, the workspace backward needs: LSTM (T,B,5H) = activated i,f,g,o and
 *     the cell c_t; GRU (T,B,4H) = r, z, n and W_hn h + b_hn; RNN: empty
 *     (lt_rnn_ws_row).  keep = 0 (no backward will follow): ws holds two
 *     steps (min(T, 2)), used in turn.
 * The batch rows are cut into bands on the pool's threads when the
 * sequence holds enough arithmetic; one_thread: every product on its
 * caller's thread (the state's setting).
 */
#ifndef LT_RNN_H
#define LT_RNN_H

#include <stdint.h>
#include "ltensor_types.h"
#include "lt_parallel.h"

enum { LT_RNN_TANH = 0, LT_RNN_RELU = 1, LT_RNN_LSTM = 2, LT_RNN_GRU = 3 };
/* gates per hidden unit, and the length of a workspace row */
static inline int64_t lt_rnn_gates(int mode) { return mode == LT_RNN_LSTM ? 4 : mode == LT_RNN_GRU ? 3 : 1; }
static inline int64_t lt_rnn_ws_row(int mode, int64_t H) {
  return mode == LT_RNN_LSTM ? 5 * H : mode == LT_RNN_GRU ? 4 * H : 0;
}

typedef struct lt_rnn_fw {
  int mode, reverse, keep;
  ltensor_dtype dt;
  int64_t Tn, B, H;
  const void *xp, *w_hh, *b_hh, *h0, *c0;   /* b_hh: GRU only; c0: LSTM only */
  void *y, *h_n, *c_n, *ws, *g;             /* y (T,B,H); c_n: LSTM only; g: (B,G*H) scratch */
} lt_rnn_fw;
void lt_rnn_forward(const lt_rnn_fw *a, lt_pool *pool, int one_thread);

typedef struct lt_rnn_bw {
  int mode, reverse;
  ltensor_dtype dt;
  int64_t Tn, B, H;
  const void *y, *ws, *dy, *w_hh, *h0, *c0, *dh_n, *dc_n;   /* dc_n: NULL = zeros */
  /* dxp (T,B,G*H), dh0/dc0 (B,H; dc0 LSTM only), dhh (T,B,3H, GRU only),
     tmp (B,H) scratch */
  void *dxp, *dh0, *dc0, *dhh, *tmp;
} lt_rnn_bw;
void lt_rnn_backward(const lt_rnn_bw *a, lt_pool *pool, int one_thread);

/* C (M,N, contiguous) = A (M,K) @ B (K,N) (+ bias (N) on every row), A and
   B of any strides BLAS takes, in bands small enough for OpenBLAS to run
   on one thread, spread over the pool. */
void lt_rnn_mm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t ars, int64_t acs,
               const void *B, int64_t brs, int64_t bcs, const void *bias, void *C, lt_pool *pool);

#endif
