/* l_attention.c -- binding of the fused scaled dot-product attention
 * (lt_attention.h), the no-grad path of T.nn.MultiheadAttention:
 *
 *   T._sdpa(q, k, v, H, attn_mask|nil, kpm|nil, scale, need_weights, batch_first)
 *     -> out, weights|nil
 *
 * q (L, N, E), k (S, N, E), v (S, N, Ev): the projected inputs, sequence
 * first, any strides (heads are E / H consecutive features); attn_mask
 * (1 or N*H, L, S) and kpm (N, S) float masks added to the scores.  out is
 * (N, L, Ev) when batch_first, else (L, N, Ev), contiguous; weights
 * (N, H, L, S) when need_weights.  Not differentiable: nn_attention.lua
 * calls it only when no gradient is wanted.  Everything is checked before
 * the outputs are allocated; the kernel runs after.
 */
#include "l_lua.h"
#include "lt_attention.h"

static const char *FN = "_sdpa";

static lt_tensor *check_in(lua_State *L, int idx, int ndim, ltensor_dtype dt) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != LTENSOR_FLOAT32 && t->dtype != LTENSOR_FLOAT64)
    ltl_error(L, FN, "argument #%d: expected a float32 or float64 tensor", idx);
  if ((int)dt >= 0 && t->dtype != dt) ltl_error(L, FN, "argument #%d: dtype mismatch", idx);
  if (t->ndim != ndim) ltl_error(L, FN, "argument #%d: expected %d dims", idx, ndim);
  return t;
}

static int l_sdpa(lua_State *L) {
  lt_tensor *q = check_in(L, 1, 3, (ltensor_dtype)-1);
  lt_tensor *k = check_in(L, 2, 3, q->dtype), *v = check_in(L, 3, 3, q->dtype);
  int64_t H = ltl_checkinteger(L, 4);
  lt_tensor *am = lua_isnoneornil(L, 5) ? NULL : check_in(L, 5, 3, q->dtype);
  lt_tensor *kpm = lua_isnoneornil(L, 6) ? NULL : check_in(L, 6, 2, q->dtype);
  double scale = ltl_checknumber(L, 7);
  int need_w = lua_toboolean(L, 8), batch_first = lua_toboolean(L, 9);
  int64_t Lq = q->shape[0], N = q->shape[1], E = q->shape[2];
  int64_t S = k->shape[0], Ev = v->shape[2];
  if (H <= 0 || E % H != 0 || Ev % H != 0) ltl_error(L, FN, "embedding dims not divisible by the heads");
  if (k->shape[1] != N || v->shape[1] != N || v->shape[0] != S || k->shape[2] != E)
    ltl_error(L, FN, "inconsistent q, k, v shapes");
  if (am && ((am->shape[0] != 1 && am->shape[0] != N * H) || am->shape[1] != Lq || am->shape[2] != S))
    ltl_error(L, FN, "attn_mask: expected (1 or N*H, L, S)");
  if (kpm && (kpm->shape[0] != N || kpm->shape[1] != S)) ltl_error(L, FN, "key_padding_mask: expected (N, S)");
  int64_t D = E / H, Dv = Ev / H;
  int64_t oshape[3] = {batch_first ? N : Lq, batch_first ? Lq : N, Ev};
  lt_tensor *out = ltl_push_new(L, q->dtype, 3, oshape);
  lt_tensor *w = NULL;
  if (need_w) {
    int64_t wshape[4] = {N, H, Lq, S};
    w = ltl_push_new(L, q->dtype, 4, wshape);
  } else {
    lua_pushnil(L);
  }
  lt_sdpa_args a = {
    .dt = q->dtype, .N = N, .H = H, .L = Lq, .S = S, .D = D, .Dv = Dv,
    .q = lt_data(q), .k = lt_data(k), .v = lt_data(v),
    .qs = {q->stride[1], D * q->stride[2], q->stride[0], q->stride[2]},
    .ks = {k->stride[1], D * k->stride[2], k->stride[0], k->stride[2]},
    .vs = {v->stride[1], Dv * v->stride[2], v->stride[0], v->stride[2]},
    .am = am ? lt_data(am) : NULL,
    .kpm = kpm ? lt_data(kpm) : NULL,
    .scale = scale, .out = lt_data(out),
    .os = {batch_first ? Lq * Ev : Ev, Dv, batch_first ? Ev : N * Ev, 1},
    .w = w ? lt_data(w) : NULL,
  };
  if (am) {
    int per = am->shape[0] > 1;
    a.ams[0] = per ? H * am->stride[0] : 0;
    a.ams[1] = per ? am->stride[0] : 0;
    a.ams[2] = am->stride[1];
    a.ams[3] = am->stride[2];
  }
  if (kpm) {
    a.kpms[0] = kpm->stride[0];
    a.kpms[1] = kpm->stride[1];
  }
  if (lt_sdpa_fwd(&a, ltl_settings_of(L)->pool) != 0) ltl_error(L, FN, "out of memory");
  return 2;
}

const ltl_reg ltl_reg_attention[] = {
  {"_sdpa", l_sdpa, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
