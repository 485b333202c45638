/* l_grad_shape.c -- the C backward rules of the reductions (sum, mean),
   the matrix products (mm, matmul, the fused linear layer) and the views
   and shape ops; the arithmetic's are in l_grad_rules.c, which says how
   these rules work. */
#include "l_grad_rules.h"

/* ---- sum and mean ----------------------------------------------------------------- */
/* a table of options: no metatable, no list part, some key (as
   util.is_nonempty_opts: {} is an empty list of dims) */
static int nonempty_opts(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  if (lua_getmetatable(L, idx)) { lua_pop(L, 1); return 0; }
  if (lua_rawlen(L, idx) != 0) return 0;
  lua_pushnil(L);
  if (!lua_next(L, idx)) return 0;
  lua_pop(L, 2);
  return 1;
}
static uint64_t dim_bit(lua_State *L, int idx, int nd) {
  lua_Integer d = lua_tointeger(L, idx);
  if (d < 0) d += nd + 1;
  return (d >= 1 && d <= LT_MAX_DIMS) ? (uint64_t)1 << (d - 1) : 0;
}
/* The dims a reduction's arguments name, as l_reduce.c reads them (dim or
   {dims}) (keepdim) (opts: dim=, keepdim=; the first options table ends
   the positional ones): a bit per 1-based dim of the nd-dim input, 0 for
   every dim.  Called after raw, which checked them. */
static uint64_t reduced_dims(lua_State *L, int nargs, int nd, int *keep) {
  int last = nargs - 1, opts = 0, top = lua_gettop(L);
  for (int k = 1; k <= nargs - 1 && !opts; k++)
    if (nonempty_opts(L, 3 + k)) { opts = 3 + k; last = k - 1; }
  int dim = last >= 1 ? 4 : 0;
  *keep = last >= 2 && lua_toboolean(L, 5);
  if (opts) {
    if (lua_getfield(L, opts, "dim") != LUA_TNIL) dim = lua_gettop(L);
    if (lua_getfield(L, opts, "keepdim") != LUA_TNIL) *keep = lua_toboolean(L, -1);
  }
  uint64_t mask = 0;
  if (nd > 0 && dim && lua_type(L, dim) == LUA_TTABLE) {
    lua_Integer len = (lua_Integer)lua_rawlen(L, dim);
    for (lua_Integer i = 1; i <= len; i++) {
      lua_rawgeti(L, dim, i);
      mask |= dim_bit(L, -1, nd);
      lua_pop(L, 1);
    }
  } else if (nd > 0 && dim && !lua_isnil(L, dim)) {
    mask = dim_bit(L, dim, nd);
  }
  lua_settop(L, top);
  return mask;
}
/* variant 0: over every dim; 1: over the dims in sv.i (aux2: keepdim) */
static int rec_reduce(lua_State *L, int nargs, const ag_rec *R, int rule) {
  lt_tensor *x = ltl_test(L, 3);
  if (nargs < 1 || !x) return -1;
  int nd = x->ndim, keep;
  int out = agr_call_raw(L, nargs);
  uint64_t mask = reduced_dims(L, nargs, nd, &keep);
  int ins[1] = {3};
  ag_node *n = agr_node(L, R, rule, mask ? 1 : 0, 1, ins, 0, NULL, out, 0);
  if (n) { n->sv.i = (lua_Integer)mask; n->aux2 = (int8_t)keep; }
  return lua_gettop(L) - out + 1;
}
int agr_rec_sum(lua_State *L, int nargs, const ag_rec *R) { return rec_reduce(L, nargs, R, R_SUM); }
int agr_rec_mean(lua_State *L, int nargs, const ag_rec *R) { return rec_reduce(L, nargs, R, R_MEAN); }
static int reduced(const ag_node *n, int i) { return n->variant == 0 || (((uint64_t)n->sv.i >> i) & 1); }
/* the value on top, expanded to input 0's shape (reshaped for a 0-dim input) */
static void expand_to_in(lua_State *L, ag_node *n, const ag_bw *B) {
  const ag_in *in = &n->in[0];
  agr_push_shape(L, n, in);
  agr_fcall(L, B, in->ndim == 0 ? AGF_RESHAPE : AGF_EXPAND, 2);
}
/* g with the reduced dims put back, in increasing order (unless keepdim) */
static void push_unreduced(lua_State *L, ag_node *n, int g, const ag_bw *B) {
  lua_pushvalue(L, g);
  if (n->variant == 0 || n->aux2) return;
  for (int i = 0; i < n->in[0].ndim; i++) {
    if (!reduced(n, i)) continue;
    lua_pushinteger(L, i + 1);
    agr_fcall(L, B, AGF_UNSQUEEZE, 2);
  }
}
void agr_bw_sum(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  push_unreduced(L, n, g, B);
  expand_to_in(L, n, B);
}
void agr_bw_mean(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  const ag_in *in = &n->in[0];
  const int64_t *s = node_shape(n, in);
  /* x:numel() / out:numel(), 0 for an empty result */
  int64_t count = 1, others = 1;
  for (int i = 0; i < in->ndim; i++) {
    if (reduced(n, i)) count *= s[i];
    else others *= s[i];
  }
  if (others == 0) count = 0;
  push_unreduced(L, n, g, B);
  lua_pushnumber(L, (lua_Number)count);
  agr_fcall(L, B, AGF_DIV, 2);
  expand_to_in(L, n, B);
}

/* ---- matrix products ------------------------------------------------------------------
   matmul's variants name its forms (dot, mv, mm, vector @ matrix, batched);
   aux and aux2 keep the operands' dims.  Each operand is saved only when
   the other one's gradient needs it. */
static int rec_product(lua_State *L, int nargs, const ag_rec *R, int rule) {
  lt_tensor *a = ltl_test(L, 3), *b = ltl_test(L, 4);
  if (nargs < 2 || !a || !b) return -1;
  int da = a->ndim, db = b->ndim;
  int ins[2] = {3, 4}, sv[2] = {b->requires_grad ? 3 : 0, a->requires_grad ? 4 : 0};
  int out = agr_call_raw(L, nargs);   /* raw checks the shapes */
  int variant = rule == R_MM ? 0 : (da == 1 && db == 1) ? 0 : (da == 2 && db == 1) ? 1 : (da == 2 && db == 2) ? 2
              : (da == 1 && db == 2) ? 3 : 4;
  ag_node *n = agr_node(L, R, rule, variant, 2, ins, 2, sv, out, 0);
  if (n) { n->aux = (int8_t)da; n->aux2 = (int8_t)db; }
  return lua_gettop(L) - out + 1;
}
int agr_rec_mm(lua_State *L, int nargs, const ag_rec *R) { return rec_product(L, nargs, R, R_MM); }
int agr_rec_matmul(lua_State *L, int nargs, const ag_rec *R) { return rec_product(L, nargs, R, R_MATMUL); }
static void fcall_dim(lua_State *L, const ag_bw *B, int f, int dim) {
  lua_pushinteger(L, dim);
  agr_fcall(L, B, f, 2);
}
static void m_t(lua_State *L, const ag_bw *B) {   /* the matrix transpose of the value on top */
  lua_pushinteger(L, -1);
  lua_pushinteger(L, -2);
  agr_fcall(L, B, AGF_TRANSPOSE, 3);
}
/* 2-D @ 2-D: g @ b^T and a^T @ g (the transposes are views: BLAS takes them as flags) */
static void bw_mm(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (agr_need(n, 0)) {
    lua_pushvalue(L, g);
    agr_push_saved(L, n, node, 1);
    agr_fcall(L, B, AGF_T, 1);
    agr_fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (agr_need(n, 1)) {
    agr_push_saved(L, n, node, 0);
    agr_fcall(L, B, AGF_T, 1);
    lua_pushvalue(L, g);
    agr_fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
}
/* the other forms as matmuls, a 1-D operand made a matrix and the
   gradient's extra dim squeezed out again */
void agr_bw_matmul(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  int da = n->aux, db = n->aux2;
  if (n->rule == R_MM || (da == 2 && db == 2)) { bw_mm(L, n, node, g, B); return; }
  if (da == 1 && db == 1) {   /* g y, g x */
    for (int i = 0; i < 2; i++) {
      if (!agr_need(n, i)) { lua_pushnil(L); continue; }
      lua_pushvalue(L, g);
      agr_push_saved(L, n, node, 1 - i);
      agr_fcall(L, B, AGF_MUL, 2);
    }
    return;
  }
  if (agr_need(n, 0)) {
    lua_pushvalue(L, g);
    if (da == 1) {              /* (k) @ (..., k, m): (g as a row @ b^T) squeezed */
      fcall_dim(L, B, AGF_UNSQUEEZE, -2);
      agr_push_saved(L, n, node, 1);
      m_t(L, B);
      agr_fcall(L, B, AGF_MATMUL, 2);
      fcall_dim(L, B, AGF_SQUEEZE, -2);
    } else if (db == 1) {       /* (..., n, k) @ (k): g as a column @ b as a row */
      fcall_dim(L, B, AGF_UNSQUEEZE, -1);
      agr_push_saved(L, n, node, 1);
      fcall_dim(L, B, AGF_UNSQUEEZE, 1);
      agr_fcall(L, B, AGF_MATMUL, 2);
    } else {
      agr_push_saved(L, n, node, 1);
      m_t(L, B);
      agr_fcall(L, B, AGF_MATMUL, 2);
    }
  } else {
    lua_pushnil(L);
  }
  if (agr_need(n, 1)) {
    agr_push_saved(L, n, node, 0);
    if (da == 1) {              /* a as a column @ g as a row */
      fcall_dim(L, B, AGF_UNSQUEEZE, 2);
      lua_pushvalue(L, g);
      fcall_dim(L, B, AGF_UNSQUEEZE, -2);
      agr_fcall(L, B, AGF_MATMUL, 2);
    } else if (db == 1) {       /* (a^T @ g as a column) squeezed */
      m_t(L, B);
      lua_pushvalue(L, g);
      fcall_dim(L, B, AGF_UNSQUEEZE, -1);
      agr_fcall(L, B, AGF_MATMUL, 2);
      fcall_dim(L, B, AGF_SQUEEZE, -1);
    } else {
      m_t(L, B);
      lua_pushvalue(L, g);
      agr_fcall(L, B, AGF_MATMUL, 2);
    }
  } else {
    lua_pushnil(L);
  }
}

/* ---- the fused linear layer (l_grad_linear.c) ------------------------------------------ */
int agr_rec_linear(lua_State *L, int nargs, const ag_rec *R) {
  if (nargs < 2 || nargs > 3) return -1;
  if (nargs == 3 && lua_isnil(L, 5)) nargs = 2;
  else if (nargs == 3 && !ltl_test(L, 5)) return -1;
  lt_tensor *x = ltl_test(L, 3), *w = ltl_test(L, 4);
  if (!x || !w) return -1;
  int out = agr_call_raw(L, lua_gettop(L) - 2);
  int ins[3] = {3, 4, nargs == 3 ? 5 : 0}, sv[2] = {w->requires_grad ? 3 : 0, x->requires_grad ? 4 : 0};
  agr_node(L, R, R_LINEAR, nargs == 3 ? 0 : 1, nargs, ins, 2, sv, out, 0);
  return lua_gettop(L) - out + 1;
}
void agr_bw_linear(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (agr_need(n, 0)) {                  /* g @ w: (N, O) @ (O, K) */
    lua_pushvalue(L, g);
    agr_push_saved(L, n, node, 1);
    agr_fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (agr_need(n, 1)) {                  /* g^T @ x: (O, N) @ (N, K), the transpose a BLAS flag */
    lua_pushvalue(L, g);
    agr_fcall(L, B, AGF_T, 1);
    agr_push_saved(L, n, node, 0);
    agr_fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (n->nin == 3 && agr_need(n, 2)) {   /* column sums */
    lua_pushvalue(L, g);
    lua_pushinteger(L, 1);
    agr_fcall(L, B, AGF_SUM, 2);
  } else if (n->nin == 3) {
    lua_pushnil(L);
  }
}

/* ---- views and shapes --------------------------------------------------------------- */
int agr_rec_t(lua_State *L, int nargs, const ag_rec *R) {
  if (nargs != 1 || !ltl_test(L, 3)) return -1;
  int out = agr_call_raw(L, 1);
  int ins[1] = {3};
  agr_node(L, R, R_T, 0, 1, ins, 0, NULL, out, 3);
  return lua_gettop(L) - out + 1;
}
void agr_bw_t(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node;
  lua_pushvalue(L, g);
  agr_fcall(L, B, AGF_T, 1);
}
static int rec_transpose_as(lua_State *L, int nargs, const ag_rec *R, int rule) {
  if (nargs != 3 || !ltl_test(L, 3) || !lua_isinteger(L, 4) || !lua_isinteger(L, 5)) return -1;
  lua_Integer d0 = lua_tointeger(L, 4), d1 = lua_tointeger(L, 5);
  int out = agr_call_raw(L, 3);    /* raw validates the dims */
  int ins[1] = {3};
  ag_node *n = agr_node(L, R, rule, 0, 1, ins, 0, NULL, out, 3);
  if (n) { n->aux = (int8_t)d0; n->aux2 = (int8_t)d1; }
  return lua_gettop(L) - out + 1;
}
int agr_rec_transpose(lua_State *L, int nargs, const ag_rec *R) { return rec_transpose_as(L, nargs, R, R_TRANSPOSE); }
int agr_rec_swapaxes(lua_State *L, int nargs, const ag_rec *R) { return rec_transpose_as(L, nargs, R, R_SWAPAXES); }
int agr_rec_swapdims(lua_State *L, int nargs, const ag_rec *R) { return rec_transpose_as(L, nargs, R, R_SWAPDIMS); }
void agr_bw_transpose(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  lua_pushvalue(L, g);
  lua_pushinteger(L, n->aux);
  lua_pushinteger(L, n->aux2);
  agr_fcall(L, B, AGF_TRANSPOSE, 3);
}

/* shape ops whose backward reshapes g back to the input's shape; any
   arguments (raw checks them).  variant 0, or 1 for reshape-like ops whose
   result is a copy (UnsafeViewBackward0), or squeeze with a dim */
static int rec_shape(lua_State *L, int nargs, const ag_rec *R, int rule) {
  if (nargs < 1 || !ltl_test(L, 3)) return -1;
  int out = agr_call_raw(L, nargs);
  int variant = 0;
  lt_tensor *x = ltl_test(L, 3), *o = ltl_test(L, out);
  if ((rule == R_RESHAPE || rule == R_FLATTEN) && o && o->storage != x->storage) variant = 1;
  if (rule == R_SQUEEZE && nargs > 1) variant = 1;
  int ins[1] = {3};
  agr_node(L, R, rule, variant, 1, ins, 0, NULL, out, 3);
  return lua_gettop(L) - out + 1;
}
int agr_rec_view(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_VIEW); }
int agr_rec_reshape(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_RESHAPE); }
int agr_rec_flatten(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_FLATTEN); }
int agr_rec_unsqueeze(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_UNSQUEEZE); }
int agr_rec_squeeze(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_SQUEEZE); }
int agr_rec_expand(lua_State *L, int nargs, const ag_rec *R) { return rec_shape(L, nargs, R, R_EXPAND); }
void agr_bw_shape(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  lua_pushvalue(L, g);
  agr_push_shape(L, n, &n->in[0]);
  agr_fcall(L, B, AGF_RESHAPE, 2);
}
void agr_bw_expand(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node; (void)B;
  lua_pushvalue(L, g);   /* the engine sums it back to the input's shape */
}
