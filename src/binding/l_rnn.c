/* l_rnn.c -- the binding of the step loops of a recurrent layer (RNN
 * tanh/relu, LSTM, GRU; src/core/lt_rnn.c): argument checks, allocation.
 *
 * lua/ltensor/nn/rnn.lua wraps these two functions in one autograd node per
 * layer and direction: it computes the input projection of every timestep
 * as one gemm before calling _rnn_forward, and the weight gradients as
 * whole-sequence gemms after _rnn_backward, so what is left here is what
 * cannot be batched over time: per step one gemm h @ W_hh^T for all gates
 * and the gate math, which in Lua would be a dozen tensor ops (and, with
 * autograd, a dozen graph nodes) per step.
 *
 *   T._rnn_forward(mode, reverse, xp, w_hh, b_hh, h0, c0 [, keep_ws = true])
 *     -> y (T,B,H), h_n (B,H), c_n (B,H) or nil, ws
 *   T._rnn_backward(mode, reverse, xp, w_hh, b_hh, h0, c0, y, ws, dy, dh_n, dc_n)
 *     -> dxp (T,B,G*H), dh0, dc0 or nil, dhh (GRU: T,B,3H) or nil
 *
 * mode: 0 RNN tanh, 1 RNN relu, 2 LSTM (gates i,f,g,o), 3 GRU (r,z,n).
 * xp (T,B,G*H): W_ih x + b_ih (+ b_hh except for GRU, whose b_hn sits
 * inside r * (W_hn h + b_hn), so b_hh is passed apart).  All tensors are
 * contiguous float32 or float64 of one dtype (checked).  ws, the workspace
 * backward needs: LSTM (T,B,5H) = activated i,f,g,o and the cell c_t; GRU
 * (T,B,4H) = r, z, n and W_hn h + b_hn; RNN: empty.
 */
#include <string.h>
#include "l_lua.h"
#include "lt_rnn.h"

/* memset of n bytes; an empty tensor's data pointer may be NULL */
static void zero_n(void *d, size_t n) { if (n) memset(d, 0, n); }

/* ---- argument checks ---------------------------------------------------- */
static lt_tensor *check_arg(lua_State *L, int idx, ltensor_dtype dt, int ndim, const int64_t *shape,
                            const char *fname, const char *what) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != dt) ltl_error(L, fname, "%s must be %s", what, lt_dtypes[dt].name);
  if (t->ndim != ndim) ltl_error(L, fname, "%s must be %d-D", what, ndim);
  for (int i = 0; i < ndim; i++)
    if (t->shape[i] != shape[i]) ltl_error(L, fname, "%s has a wrong shape", what);
  if (!lt_is_contiguous(t)) ltl_error(L, fname, "%s must be contiguous", what);
  return t;
}
static lt_tensor *opt_arg(lua_State *L, int idx, ltensor_dtype dt, int ndim, const int64_t *shape,
                          const char *fname, const char *what) {
  if (lua_isnoneornil(L, idx) || (lua_isboolean(L, idx) && !lua_toboolean(L, idx))) return NULL;
  return check_arg(L, idx, dt, ndim, shape, fname, what);
}

static int check_mode(lua_State *L, const char *fname) {
  lua_Integer mode = ltl_checkinteger(L, 1);
  if (mode < 0 || mode > 3) ltl_error(L, fname, "unknown mode %d", (int)mode);
  return (int)mode;
}

/* The arguments both functions begin with: mode (1), reverse (2), xp (3:
   float32 or float64, 3-D; forward also wants it contiguous and (T, B, G*H))
   and w_hh (4: (G*H, H), xp's dtype, contiguous). */
typedef struct rnn_head {
  int mode, reverse;
  lt_tensor *xp, *whh;
  ltensor_dtype dt;
  int64_t Tn, B, G, H;
} rnn_head;

static void check_head(lua_State *L, const char *fname, int forward, rnn_head *h) {
  h->mode = check_mode(L, fname);
  h->reverse = lua_toboolean(L, 2);
  lt_tensor *xp = h->xp = ltl_check(L, 3);
  ltensor_dtype dt = h->dt = xp->dtype;
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) ltl_error(L, fname, "xp must be float32 or float64");
  if (forward && (xp->ndim != 3 || !lt_is_contiguous(xp))) ltl_error(L, fname, "xp must be a contiguous 3-D tensor");
  if (!forward && xp->ndim != 3) ltl_error(L, fname, "xp must be 3-D");
  h->Tn = xp->shape[0];
  h->B = xp->shape[1];
  h->G = lt_rnn_gates(h->mode);
  h->whh = ltl_check(L, 4);
  if (h->whh->ndim != 2) ltl_error(L, fname, "w_hh must be 2-D");
  h->H = h->whh->shape[1];
  if (forward && xp->shape[2] != h->G * h->H) ltl_error(L, fname, "xp has a wrong shape");
  int64_t swhh[2] = { h->G * h->H, h->H };
  check_arg(L, 4, dt, 2, swhh, fname, "w_hh");
}

/* T._rnn_forward(mode, reverse, xp, w_hh, b_hh, h0, c0 [, keep_ws]) */
static int l_rnn_forward(lua_State *L) {
  const char *fname = "_rnn_forward";
  rnn_head h;
  check_head(L, fname, 1, &h);
  int mode = h.mode, reverse = h.reverse;
  lt_tensor *xp = h.xp, *whh = h.whh;
  ltensor_dtype dt = h.dt;
  int64_t Tn = h.Tn, B = h.B, G = h.G, H = h.H;
  int64_t sb[1] = { G * H }, sh[2] = { B, H };
  lt_tensor *bhh = mode == LT_RNN_GRU ? opt_arg(L, 5, dt, 1, sb, fname, "b_hh") : NULL;
  lt_tensor *h0 = check_arg(L, 6, dt, 2, sh, fname, "h0");
  lt_tensor *c0 = mode == LT_RNN_LSTM ? check_arg(L, 7, dt, 2, sh, fname, "c0") : NULL;
  /* keep_ws false (no backward will follow): ws holds two steps, used in
     turn, instead of every step's gate activations */
  int keep = lua_isnoneornil(L, 8) || lua_toboolean(L, 8);
  lua_settop(L, 7);
  int64_t sy[3] = { Tn, B, H };
  lt_tensor *y = ltl_push_new(L, dt, 3, sy);                                    /* 8 */
  lt_tensor *hn = ltl_push_new(L, dt, 2, sh);                                   /* 9 */
  lt_tensor *cn = NULL;
  if (mode == LT_RNN_LSTM) cn = ltl_push_new(L, dt, 2, sh); else lua_pushnil(L);   /* 10 */
  int64_t wsz = lt_rnn_ws_row(mode, H);
  int64_t sws[3] = { keep ? Tn : (Tn < 2 ? Tn : 2), B, wsz };
  lt_tensor *ws = ltl_push_new(L, dt, 3, sws);                                  /* 11 */
  int64_t sg[2] = { B, G * H };
  lt_tensor *g = ltl_push_new(L, dt, 2, sg);                                    /* 12: scratch */
  const char *pb = bhh ? lt_data(bhh) : NULL;
  if (mode == LT_RNN_GRU && !pb) {
    lt_tensor *zb = ltl_push_new(L, dt, 1, sb);                                 /* 13: zero b_hh */
    zero_n(lt_data(zb), (size_t)(G * H) * lt_dtypes[dt].itemsize);
    pb = lt_data(zb);
  }
  lt_rnn_fw a = { mode, reverse, keep, dt, Tn, B, H, lt_data(xp), lt_data(whh), pb, lt_data(h0),
                  c0 ? lt_data(c0) : NULL, lt_data(y), lt_data(hn), cn ? lt_data(cn) : NULL, lt_data(ws),
                  lt_data(g) };
  lt_rnn_forward(&a, ltl_settings_of(L)->pool, ltl_one_thread(L));
  lua_settop(L, 11);
  return 4;
}

/* T._rnn_backward(mode, reverse, xp, w_hh, b_hh, h0, c0, y, ws, dy, dh_n, dc_n) */
static int l_rnn_backward(lua_State *L) {
  const char *fname = "_rnn_backward";
  rnn_head h;
  check_head(L, fname, 0, &h);
  int mode = h.mode, reverse = h.reverse;
  lt_tensor *whh = h.whh;
  ltensor_dtype dt = h.dt;
  int64_t Tn = h.Tn, B = h.B, G = h.G, H = h.H;
  int64_t sh[2] = { B, H }, sy[3] = { Tn, B, H };
  int64_t sws[3] = { Tn, B, lt_rnn_ws_row(mode, H) };
  lt_tensor *h0 = check_arg(L, 6, dt, 2, sh, fname, "h0");
  lt_tensor *c0 = mode == LT_RNN_LSTM ? check_arg(L, 7, dt, 2, sh, fname, "c0") : NULL;
  lt_tensor *y = check_arg(L, 8, dt, 3, sy, fname, "y");
  lt_tensor *ws = check_arg(L, 9, dt, 3, sws, fname, "ws");
  lt_tensor *dy = check_arg(L, 10, dt, 3, sy, fname, "dy");
  lt_tensor *dhn = check_arg(L, 11, dt, 2, sh, fname, "dh_n");
  lt_tensor *dcn = mode == LT_RNN_LSTM ? opt_arg(L, 12, dt, 2, sh, fname, "dc_n") : NULL;
  lua_settop(L, 12);
  int64_t sg[3] = { Tn, B, G * H };
  lt_tensor *dxp = ltl_push_new(L, dt, 3, sg);                                  /* 13 */
  lt_tensor *dh = ltl_push_new(L, dt, 2, sh);                                   /* 14: dh0 */
  lt_tensor *dc = NULL;
  if (mode == LT_RNN_LSTM) dc = ltl_push_new(L, dt, 2, sh); else lua_pushnil(L);   /* 15: dc0 */
  lt_tensor *dhh = NULL;
  int64_t shh[3] = { Tn, B, 3 * H };
  if (mode == LT_RNN_GRU) dhh = ltl_push_new(L, dt, 3, shh); else lua_pushnil(L);  /* 16 */
  lt_tensor *tmp = ltl_push_new(L, dt, 2, sh);                                  /* 17: scratch */
  lt_rnn_bw a = { mode, reverse, dt, Tn, B, H, lt_data(y), lt_data(ws), lt_data(dy), lt_data(whh), lt_data(h0),
                  c0 ? lt_data(c0) : NULL, lt_data(dhn), dcn ? lt_data(dcn) : NULL, lt_data(dxp), lt_data(dh),
                  dc ? lt_data(dc) : NULL, dhh ? lt_data(dhh) : NULL, lt_data(tmp) };
  lt_rnn_backward(&a, ltl_settings_of(L)->pool, ltl_one_thread(L));
  lua_pushvalue(L, 13);
  lua_pushvalue(L, 14);
  lua_pushvalue(L, 15);
  lua_pushvalue(L, 16);
  return 4;
}

/* T._rnn_mm(A, B [, bias]) -> A @ B (+ bias per column), A (M, K) and B (K, N)
   float32/float64 matrices of any strides BLAS takes (a transposed view is
   fine), the result contiguous (lt_rnn_mm) */
static int l_rnn_mm(lua_State *L) {
  const char *fname = "_rnn_mm";
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  lt_tensor *bias = lua_isnoneornil(L, 3) ? NULL : ltl_check(L, 3);
  if (a->ndim != 2 || b->ndim != 2) ltl_error(L, fname, "expected two matrices");
  if (a->dtype != b->dtype || (a->dtype != LTENSOR_FLOAT32 && a->dtype != LTENSOR_FLOAT64))
    ltl_error(L, fname, "expected float32 or float64 matrices of one dtype");
  if (a->shape[1] != b->shape[0]) ltl_error(L, fname, "inner sizes differ (%I and %I)", a->shape[1], b->shape[0]);
  if (bias && (bias->dtype != a->dtype || bias->ndim != 1 || bias->shape[0] != b->shape[1] || !lt_is_contiguous(bias)))
    ltl_error(L, fname, "bias must be a contiguous vector of the output's width and dtype");
  int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
  int64_t shape[2] = { M, N };
  lt_tensor *c = ltl_push_new(L, a->dtype, 2, shape);
  lt_rnn_mm(a->dtype, M, N, K, lt_data(a), a->stride[0], a->stride[1], lt_data(b), b->stride[0], b->stride[1],
            bias ? lt_data(bias) : NULL, lt_data(c), ltl_settings_of(L)->pool);
  return 1;
}

const ltl_reg ltl_reg_rnn[] = {
  { "_rnn_mm", l_rnn_mm, LT_MODULE, NULL },
  { "_rnn_forward", l_rnn_forward, LT_MODULE, NULL },
  { "_rnn_backward", l_rnn_backward, LT_MODULE, NULL },
  { NULL, NULL, 0, NULL }
};
