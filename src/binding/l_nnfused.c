/* l_nnfused.c -- bindings of the fused nn kernels (lt_norm.c) and relu's
 * one-pass backward.
 *
 * These are internal entry points (T._norm_rows, T._norm_chan, T._xent and
 * their *_backward, T._threshold_backward) called by lua/ltensor/nn/functional/,
 * which makes every tensor contiguous and of one float32/float64 dtype
 * before calling and registers the autograd rules of the forward ones
 * (LT_DIFF).  They still check what they rely on, so a wrong call raises
 * instead of reading out of bounds.  Outputs are allocated (ltl_push_new)
 * before any work: nothing here holds malloc'd memory across a raise.
 */
#include <string.h>
#include "l_lua.h"
#include "lt_parallel.h"
#include "lt_iter.h"
#include "lt_norm.h"

/* a contiguous float32/float64 tensor at idx (NULL for nil when optional) */
static lt_tensor *check_ft(lua_State *L, int idx, const char *fname, int optional, ltensor_dtype want) {
  if (optional && lua_isnoneornil(L, idx)) return NULL;
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != LTENSOR_FLOAT32 && t->dtype != LTENSOR_FLOAT64)
    ltl_error(L, fname, "argument #%d: expected a float32 or float64 tensor", idx);
  if ((int)want >= 0 && t->dtype != want) ltl_error(L, fname, "argument #%d: dtype mismatch", idx);
  if (!lt_is_contiguous(t)) ltl_error(L, fname, "argument #%d: expected a contiguous tensor", idx);
  return t;
}
static void check_numel(lua_State *L, const char *fname, int idx, const lt_tensor *t, int64_t n) {
  if (t && lt_numel(t) != n) ltl_error(L, fname, "argument #%d: expected %I elements", idx, (lua_Integer)n);
}
static const void *cdata(const lt_tensor *t) { return t ? lt_data(t) : NULL; }
static lt_pool *pool_of(lua_State *L) { return ltl_settings_of(L)->pool; }

/* numel = R * D and, for groups, D = Cg * S with G dividing R; checked by
   division so that huge arguments cannot overflow a product */
static int rows_consistent(int64_t numel, int64_t R, int64_t D, int64_t G, int64_t Cg, int64_t S) {
  if (R < 0 || D <= 0 || G < 0 || Cg < 0 || S < 0) return 0;
  if (numel % D != 0 || numel / D != R) return 0;
  if (G == 0) return 1;
  if (R % G != 0 || S == 0 || D % S != 0 || D / S != Cg) return 0;
  if (Cg > 0 && G > INT64_MAX / Cg) return 0;   /* R = 0 admits any G: G * Cg must not overflow */
  return 1;
}

/* _norm_rows(x, w, b, R, D, eps, G, Cg, S) -> y, mean (R), rstd (R) */
static int l_norm_rows(lua_State *L) {
  const char *fn = "_norm_rows";
  lt_tensor *x = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  lt_tensor *w = check_ft(L, 2, fn, 1, x->dtype), *b = check_ft(L, 3, fn, 1, x->dtype);
  int64_t R = ltl_checkinteger(L, 4), D = ltl_checkinteger(L, 5);
  double eps = ltl_checknumber(L, 6);
  int64_t G = ltl_checkinteger(L, 7), Cg = ltl_checkinteger(L, 8), S = ltl_checkinteger(L, 9);
  if (!rows_consistent(lt_numel(x), R, D, G, Cg, S)) ltl_error(L, fn, "inconsistent sizes");
  check_numel(L, fn, 2, w, G ? G * Cg : D);
  check_numel(L, fn, 3, b, G ? G * Cg : D);
  lt_tensor *y = ltl_push_new_like(L, x, x->dtype);
  lt_tensor *mean = ltl_push_new(L, x->dtype, 1, &R);
  lt_tensor *rstd = ltl_push_new(L, x->dtype, 1, &R);
  lt_norm_rows_fwd(x->dtype, lt_data(x), lt_data(y), lt_data(mean), lt_data(rstd), R, D, eps, cdata(w), cdata(b),
                   G, Cg, S, pool_of(L));
  return 3;
}

/* the first five arguments of both norm backwards: g, then x, mean and
   rstd of g's dtype, then the optional weight */
static void norm_bw_args(lua_State *L, const char *fn, lt_tensor **g, lt_tensor **x, lt_tensor **mean,
                         lt_tensor **rstd, lt_tensor **w) {
  *g = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  *x = check_ft(L, 2, fn, 0, (*g)->dtype);
  *mean = check_ft(L, 3, fn, 0, (*g)->dtype);
  *rstd = check_ft(L, 4, fn, 0, (*g)->dtype);
  *w = check_ft(L, 5, fn, 1, (*g)->dtype);
}

/* _norm_rows_backward(g, x, mean, rstd, w, R, D, G, Cg, S, need_dx, need_dw, need_db) -> dx, dw, db */
static int l_norm_rows_backward(lua_State *L) {
  const char *fn = "_norm_rows_backward";
  lt_tensor *g, *x, *mean, *rstd, *w;
  norm_bw_args(L, fn, &g, &x, &mean, &rstd, &w);
  int64_t R = ltl_checkinteger(L, 6), D = ltl_checkinteger(L, 7);
  int64_t G = ltl_checkinteger(L, 8), Cg = ltl_checkinteger(L, 9), S = ltl_checkinteger(L, 10);
  int need_dx = lua_toboolean(L, 11), need_dw = lua_toboolean(L, 12), need_db = lua_toboolean(L, 13);
  if (!rows_consistent(lt_numel(x), R, D, G, Cg, S) || lt_numel(g) != lt_numel(x))
    ltl_error(L, fn, "inconsistent sizes");
  check_numel(L, fn, 3, mean, R);
  check_numel(L, fn, 4, rstd, R);
  int64_t P = G ? G * Cg : D;
  check_numel(L, fn, 5, w, P);
  lt_tensor *dx = NULL, *dw = NULL, *db = NULL;
  if (need_dx) dx = ltl_push_new_like(L, x, x->dtype); else lua_pushnil(L);
  if (need_dw) dw = ltl_push_new(L, x->dtype, 1, &P); else lua_pushnil(L);
  if (need_db) db = ltl_push_new(L, x->dtype, 1, &P); else lua_pushnil(L);
  lt_norm_rows_bwd(x->dtype, lt_data(g), lt_data(x), lt_data(mean), lt_data(rstd), cdata(w), R, D, G, Cg, S,
                   dx ? lt_data(dx) : NULL, dw ? lt_data(dw) : NULL, db ? lt_data(db) : NULL, pool_of(L));
  return 3;
}

/* (N, C, S) of an input whose dim 2 (1-based) is the channel */
static void chan_sizes(lua_State *L, const char *fn, const lt_tensor *x, int64_t *N, int64_t *C, int64_t *S) {
  if (x->ndim < 2) ltl_error(L, fn, "expected an input with at least 2 dims");
  *N = x->shape[0];
  *C = x->shape[1];
  *S = 1;
  for (int d = 2; d < x->ndim; d++) *S *= x->shape[d];
}

/* _norm_chan(x, w, b, eps) -> y, mean (C), rstd (C), var (C, biased) */
static int l_norm_chan(lua_State *L) {
  const char *fn = "_norm_chan";
  lt_tensor *x = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  lt_tensor *w = check_ft(L, 2, fn, 1, x->dtype), *b = check_ft(L, 3, fn, 1, x->dtype);
  double eps = ltl_checknumber(L, 4);
  int64_t N, C, S;
  chan_sizes(L, fn, x, &N, &C, &S);
  if (N * S == 0) ltl_error(L, fn, "empty channels");
  check_numel(L, fn, 2, w, C);
  check_numel(L, fn, 3, b, C);
  lt_tensor *y = ltl_push_new_like(L, x, x->dtype);
  lt_tensor *mean = ltl_push_new(L, x->dtype, 1, &C);
  lt_tensor *rstd = ltl_push_new(L, x->dtype, 1, &C);
  lt_tensor *var = ltl_push_new(L, x->dtype, 1, &C);
  lt_norm_chan_fwd(x->dtype, lt_data(x), lt_data(y), lt_data(mean), lt_data(rstd), lt_data(var), N, C, S, eps,
                   cdata(w), cdata(b), pool_of(L));
  return 4;
}

/* _norm_chan_backward(g, x, mean, rstd, w, need_dx, need_dw, need_db) -> dx, dw, db */
static int l_norm_chan_backward(lua_State *L) {
  const char *fn = "_norm_chan_backward";
  lt_tensor *g, *x, *mean, *rstd, *w;
  norm_bw_args(L, fn, &g, &x, &mean, &rstd, &w);
  int need_dx = lua_toboolean(L, 6), need_dw = lua_toboolean(L, 7), need_db = lua_toboolean(L, 8);
  int64_t N, C, S;
  chan_sizes(L, fn, x, &N, &C, &S);
  if (lt_numel(g) != lt_numel(x)) ltl_error(L, fn, "inconsistent sizes");
  check_numel(L, fn, 3, mean, C);
  check_numel(L, fn, 4, rstd, C);
  check_numel(L, fn, 5, w, C);
  lt_tensor *dx = NULL, *dw = NULL, *db = NULL;
  if (need_dx) dx = ltl_push_new_like(L, x, x->dtype); else lua_pushnil(L);
  if (need_dw) dw = ltl_push_new(L, x->dtype, 1, &C); else lua_pushnil(L);
  if (need_db) db = ltl_push_new(L, x->dtype, 1, &C); else lua_pushnil(L);
  lt_norm_chan_bwd(x->dtype, lt_data(g), lt_data(x), lt_data(mean), lt_data(rstd), cdata(w), N, C, S,
                   dx ? lt_data(dx) : NULL, dw ? lt_data(dw) : NULL, db ? lt_data(db) : NULL, pool_of(L));
  return 3;
}

/* _norm_chan_eval(x, w, b, running_mean, running_var, eps) -> y, scale (C):
   y = x * scale + shift per channel, scale = w / sqrt(var + eps) */
static int l_norm_chan_eval(lua_State *L) {
  const char *fn = "_norm_chan_eval";
  lt_tensor *x = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  lt_tensor *w = check_ft(L, 2, fn, 1, x->dtype), *b = check_ft(L, 3, fn, 1, x->dtype);
  lt_tensor *rm = check_ft(L, 4, fn, 0, x->dtype), *rv = check_ft(L, 5, fn, 0, x->dtype);
  double eps = ltl_checknumber(L, 6);
  int64_t N, C, S;
  chan_sizes(L, fn, x, &N, &C, &S);
  check_numel(L, fn, 2, w, C);
  check_numel(L, fn, 3, b, C);
  check_numel(L, fn, 4, rm, C);
  check_numel(L, fn, 5, rv, C);
  lt_tensor *y = ltl_push_new_like(L, x, x->dtype);
  lt_tensor *scale = ltl_push_new(L, x->dtype, 1, &C);
  lt_norm_chan_eval(x->dtype, lt_data(x), lt_data(y), lt_data(scale), N, C, S, eps, cdata(w), cdata(b), lt_data(rm),
                    lt_data(rv), pool_of(L));
  return 2;
}

static lt_tensor *check_target(lua_State *L, int idx, const char *fn, int64_t R) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != LTENSOR_INT64 || !lt_is_contiguous(t) || lt_numel(t) != R)
    ltl_error(L, fn, "argument #%d: expected a contiguous int64 tensor of %I targets", idx, (lua_Integer)R);
  return t;
}
/* targets must lie in 1..K (or be `ignore`): the kernels index with them */
static void check_target_range(lua_State *L, const char *fn, const lt_tensor *t, int64_t R, int64_t K,
                               int has_ignore, int64_t ignore) {
  (void)fn;   /* the message names nll_loss, as PyTorch's does for cross_entropy too */
  const int64_t *p = (const int64_t *)lt_data(t);
  for (int64_t r = 0; r < R; r++) {
    if (has_ignore && p[r] == ignore) continue;
    if (p[r] < 1 || p[r] > K) {
      /* no position prefix: the message is the Lua function's, not this helper's */
      lua_pushfstring(L, "ltensor.nn.functional.nll_loss: Target %I is out of bounds. (class targets are 1-based: 1..%I)",
                      (lua_Integer)p[r], (lua_Integer)K);
      lua_error(L);
    }
  }
}

/* _xent(x (R, K), target (R), w (K) or nil, ignore or nil, with_lse [, reduction])
   -> loss, lse (R), wsum ().  reduction 0 (or none): loss per row (R);
   1: their sum (); 2: their mean over the counted weights, sum / wsum ():
   the reduced loss in the same call, so that cross_entropy is one op and
   one autograd node.  The sum runs in double, in row order. */
static int l_xent(lua_State *L) {
  const char *fn = "_xent";
  lt_tensor *x = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  if (x->ndim != 2) ltl_error(L, fn, "expected a 2-D input");
  int64_t R = x->shape[0], K = x->shape[1];
  lt_tensor *tg = check_target(L, 2, fn, R);
  lt_tensor *w = check_ft(L, 3, fn, 1, x->dtype);
  check_numel(L, fn, 3, w, K);
  int has_ignore = !lua_isnoneornil(L, 4);
  int64_t ignore = has_ignore ? ltl_checkinteger(L, 4) : 0;
  int with_lse = lua_toboolean(L, 5);
  lua_Integer red = ltl_optinteger(L, 6, 0);
  if (red < 0 || red > 2) ltl_error(L, fn, "reduction must be 0, 1 or 2");
  check_target_range(L, fn, tg, R, K, has_ignore, ignore);
  lt_tensor *loss = ltl_push_new(L, x->dtype, 1, &R);
  lt_tensor *lse = ltl_push_new(L, x->dtype, 1, &R);
  lt_tensor *ws = ltl_push_new(L, x->dtype, 0, NULL);
  double wsum = 0;
  lt_xent_fwd(x->dtype, lt_data(x), (const int64_t *)lt_data(tg), cdata(w), R, K, with_lse, has_ignore, ignore,
              lt_data(loss), lt_data(lse), &wsum, pool_of(L));
  if (x->dtype == LTENSOR_FLOAT64) *(double *)lt_data(ws) = wsum;
  else *(float *)lt_data(ws) = (float)wsum;
  if (red == 0) return 3;
  double total = 0;
  for (int64_t r = 0; r < R; r++)
    total += x->dtype == LTENSOR_FLOAT64 ? ((const double *)lt_data(loss))[r] : (double)((const float *)lt_data(loss))[r];
  if (red == 2) total = total / wsum;   /* 0/0 = NaN when nothing is counted, as PyTorch's mean */
  lt_tensor *out = ltl_push_new(L, x->dtype, 0, NULL);
  if (x->dtype == LTENSOR_FLOAT64) *(double *)lt_data(out) = total;
  else *(float *)lt_data(out) = (float)total;
  lua_replace(L, -4);   /* the reduced loss in loss's slot: out, lse, wsum */
  return 3;
}

/* _xent_backward(g (R), x, target, w, lse, ignore, with_lse) -> dx */
static int l_xent_backward(lua_State *L) {
  const char *fn = "_xent_backward";
  lt_tensor *g = check_ft(L, 1, fn, 0, (ltensor_dtype)-1);
  lt_tensor *x = check_ft(L, 2, fn, 0, g->dtype);
  if (x->ndim != 2) ltl_error(L, fn, "expected a 2-D input");
  int64_t R = x->shape[0], K = x->shape[1];
  check_numel(L, fn, 1, g, R);
  lt_tensor *tg = check_target(L, 3, fn, R);
  lt_tensor *w = check_ft(L, 4, fn, 1, g->dtype);
  check_numel(L, fn, 4, w, K);
  lt_tensor *lse = check_ft(L, 5, fn, 0, g->dtype);
  check_numel(L, fn, 5, lse, R);
  int has_ignore = !lua_isnoneornil(L, 6);
  int64_t ignore = has_ignore ? ltl_checkinteger(L, 6) : 0;
  int with_lse = lua_toboolean(L, 7);
  check_target_range(L, fn, tg, R, K, has_ignore, ignore);
  lt_tensor *dx = ltl_push_new_like(L, x, x->dtype);
  lt_xent_bwd(x->dtype, lt_data(g), lt_data(x), (const int64_t *)lt_data(tg), cdata(w), lt_data(lse), R, K,
              with_lse, has_ignore, ignore, lt_data(dx), pool_of(L));
  return 1;
}

/* ---- relu's backward: out = y > thr ? g : 0, one pass --------------------- */
#define THR_LOOP(T, U, SFX)                                                            \
static void thr_loop_##SFX(char **data, const int64_t *strides, int64_t n, void *ctx) { \
  const T thr = (T)((const lt_kctx *)ctx)->f1;                                         \
  char *o = data[0];                                                                   \
  const char *g = data[1], *y = data[2];                                               \
  const int64_t es = (int64_t)sizeof(T);                                               \
  if (strides[0] == es && strides[1] == es && strides[2] == es) {                      \
    thr_##SFX((const T *)(const void *)g, (const T *)(const void *)y, (T *)(void *)o, n, thr); \
    return;                                                                            \
  }                                                                                    \
  if (strides[0] == es && strides[1] == 0 && strides[2] == es) {                       \
    /* a broadcast gradient (sum/mean's backward): one value, selected */              \
    U b, *op = (U *)(void *)o;                                                         \
    const T *yp = (const T *)(const void *)y;                                          \
    memcpy(&b, g, sizeof b);                                                           \
    for (int64_t i = 0; i < n; i++) op[i] = b & ((U)0 - (U)!(yp[i] <= thr));             \
    return;                                                                            \
  }                                                                                    \
  for (int64_t i = 0; i < n; i++) {                                                    \
    U b, m = (U)0 - (U)!(*(const T *)y <= thr);   /* branch-free select */               \
    memcpy(&b, g, sizeof b);                                                           \
    b &= m;                                                                            \
    memcpy(o, &b, sizeof b);                                                           \
    o += strides[0]; g += strides[1]; y += strides[2];                                 \
  }                                                                                    \
}

/* the contiguous loops: branch-free through a bit mask (a branch on the
   sign of random data is mispredicted half the time, 5x slower) */
#define THR_CONTIG(T, U, SFX)                                                           \
static void thr_##SFX(const T *g, const T *y, T *o, int64_t n, T t) {                    \
  for (int64_t i = 0; i < n; i++) {                                                     \
    U b, m = (U)0 - (U)!(y[i] <= t);                                                    \
    memcpy(&b, &g[i], sizeof b);                                                        \
    b &= m;                                                                             \
    memcpy(&o[i], &b, sizeof b);                                                        \
  }                                                                                     \
}
THR_CONTIG(float, uint32_t, f32)
THR_CONTIG(double, uint64_t, f64)

THR_LOOP(float, uint32_t, f32)
THR_LOOP(double, uint64_t, f64)

typedef struct {
  ltensor_dtype dt;
  const char *g, *y;
  char *o;
  double thr;
} thr_job;
static void thr_range(void *ctx, int64_t b, int64_t e, int part) {
  (void)part;
  const thr_job *j = (const thr_job *)ctx;
  if (j->dt == LTENSOR_FLOAT32)
    thr_f32((const float *)(const void *)j->g + b, (const float *)(const void *)j->y + b,
            (float *)(void *)j->o + b, e - b, (float)j->thr);
  else
    thr_f64((const double *)(const void *)j->g + b, (const double *)(const void *)j->y + b,
            (double *)(void *)j->o + b, e - b, j->thr);
}

/* _threshold_backward(g, y, thr): 0 where y <= thr, else g (so a NaN in y
   passes g, as PyTorch's threshold_backward does); g broadcasts to
   y's shape (an expanded gradient is read in place, never copied) */
static int l_threshold_backward(lua_State *L) {
  const char *fn = "_threshold_backward";
  lt_tensor *g = ltl_check(L, 1), *y = ltl_check(L, 2);
  double thr = ltl_optnumber(L, 3, 0.0);
  if (!lt_is_floating(y->dtype)) ltl_error(L, fn, "expected a floating-point tensor");
  const lt_tensor *ts[2] = {g, y};
  int ndim;
  int64_t shape[LT_MAX_DIMS], ba, bb;
  int bd;
  if (lt_broadcast_shape(ts, 2, &ndim, shape, &ba, &bb, &bd) != 0 || ndim != y->ndim)
    ltl_error(L, fn, "gradient does not match the output's shape");
  for (int d = 0; d < ndim; d++)
    if (shape[d] != y->shape[d]) ltl_error(L, fn, "gradient does not match the output's shape");
  lt_tensor *out = ltl_push_new(L, y->dtype, ndim, shape);
  /* the common case, contiguous float operands of one dtype and one size
     (a g that broadcasts has fewer elements: the iterator reads it): a plain
     loop, cut over the state's pool when large (the library's grain) */
  if (g->dtype == y->dtype && lt_numel(g) == lt_numel(y) && lt_is_contiguous(g) && lt_is_contiguous(y) &&
      (y->dtype == LTENSOR_FLOAT32 || y->dtype == LTENSOR_FLOAT64)) {
    thr_job j = { y->dtype, lt_data(g), lt_data(y), lt_data(out), thr };
    lt_parallel_for(pool_of(L), lt_numel(y), LT_GRAIN, thr_range, &j);
    return 1;
  }
  /* half types compute in float32 (the iterator casts chunk by chunk) */
  ltensor_dtype k = y->dtype == LTENSOR_FLOAT64 ? LTENSOR_FLOAT64 : LTENSOR_FLOAT32;
  const lt_tensor *ops[3] = {out, g, y};
  ltensor_dtype kdt[3] = {k, k, k};
  lt_iter it;
  lt_iter_init(&it, ops, 1, 2, kdt, ndim, shape, pool_of(L));
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.f1 = thr;
  atomic_init(&ctx.err, 0);
  lt_iter_run(&it, k == LTENSOR_FLOAT64 ? thr_loop_f64 : thr_loop_f32, &ctx);
  return 1;
}

const ltl_reg ltl_reg_nnfused[] = {
  {"_norm_rows", l_norm_rows, LT_MODULE | LT_DIFF, "_norm_rows"},
  {"_norm_rows_backward", l_norm_rows_backward, LT_MODULE, NULL},
  {"_norm_chan", l_norm_chan, LT_MODULE | LT_DIFF, "_norm_chan"},
  {"_norm_chan_backward", l_norm_chan_backward, LT_MODULE, NULL},
  {"_norm_chan_eval", l_norm_chan_eval, LT_MODULE | LT_DIFF, "_norm_chan_eval"},
  {"_xent", l_xent, LT_MODULE | LT_DIFF, "_xent"},
  {"_xent_backward", l_xent_backward, LT_MODULE, NULL},
  {"_threshold_backward", l_threshold_backward, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
