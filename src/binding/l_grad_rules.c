/* l_grad_rules.c -- backward rules of the common ops in C.

   A node recorded here has no Lua table (issue 13: a deep graph was 1.3 KB
   of Lua heap per op): its saved tensors are user values of the node, its
   scalar and dims are fields of the node, its name comes from ag_crules.
   The formulas are the same as the Lua rules' in lua/ltensor/autograd/
   (same ops in the same order, so the gradients are bit-identical); they
   call the ops through the engine's function table (ctx[CTX_FNS], by index:
   no string lookups), so that under create_graph the gradient computation
   is recorded like any other.  A call form a rule here does not take (extra
   options, alpha, dims, ...) goes to the Lua rule. */
#include "l_autograd.h"

enum {
  R_ADD, R_SUB, R_MUL, R_DIV, R_NEG, R_SUM, R_MEAN, R_MM, R_MATMUL, R_T, R_TRANSPOSE, R_SWAPAXES, R_SWAPDIMS,
  R_VIEW, R_RESHAPE, R_FLATTEN, R_UNSQUEEZE, R_SQUEEZE, R_EXPAND, R_EXP, R_LOG, R_TANH, R_SIGMOID, R_RELU, R_POW,
  R_LINEAR
};

/* ---- recording helpers --------------------------------------------------- */
/* raw(args at 3..2+nargs): outputs left on top; returns the first one's slot */
static int call_raw(lua_State *L, int nargs) {
  int top = lua_gettop(L);
  luaL_checkstack(L, nargs + 8, "autograd");
  lua_pushvalue(L, 2);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 3 + i);
  lua_call(L, nargs, LUA_MULTRET);
  return top + 1;
}

/* a plain operand: a tensor or a Lua number (anything else: the Lua rule) */
static int operand(lua_State *L, int idx) { return ltl_test(L, idx) != NULL || lua_type(L, idx) == LUA_TNUMBER; }

static void get_scalar(lua_State *L, int idx, ag_scalar *s) {
  s->present = 1;
  if (lua_isinteger(L, idx)) { s->isint = 1; s->v.i = lua_tointeger(L, idx); }
  else { s->isint = 0; s->v.d = lua_tonumber(L, idx); }
}

/* Record a node for the output at `out` (left in place): inputs at the
   stack slots ins[0..nin-1] (non-tensors get no edge), tensors to save at
   sv[0..nsv-1] (0: nothing saved there).  view_of: the input the output is
   a view of, or 0.  Returns the node (popped) or NULL when no input
   requires grad. */
static ag_node *cnode(lua_State *L, int rule, int variant, int nin, const int *ins, int nsv, const int *sv, int out,
                      int view_of) {
  int nedge = 0, ndims = 0;
  while (nsv > 0 && !sv[nsv - 1]) nsv--;   /* nothing saved at the end: no slots for it */
  for (int i = 0; i < nin; i++) {
    lt_tensor *x = ltl_test(L, ins[i]);
    if (x && x->requires_grad) { nedge++; ndims += x->ndim; }
  }
  if (!nedge) return NULL;
  luaL_checkstack(L, 8, "autograd");
  ag_node *n = new_node(L, nin, nedge, nsv, ndims, 1);
  int node = lua_gettop(L);
  n->flags = AG_C;
  n->rule = (int16_t)rule;
  n->variant = (int8_t)variant;
  int uv = 0, soff = 0;   /* a C node's edges are user values 1..nedge */
  for (int i = 0; i < nin; i++) {
    lt_tensor *x = ltl_test(L, ins[i]);
    if (!x || !x->requires_grad) continue;
    ag_in *in = &n->in[i];
    set_input(L, node, n, in, x, ins[i], &uv, &soff);
  }
  int64_t *vers = node_versions(n);
  for (int j = 0; j < nsv; j++) {
    lt_tensor *s = sv[j] ? ltl_test(L, sv[j]) : NULL;
    if (!s) { vers[j] = -1; continue; }
    n->flags |= AG_HAS_SAVED;
    vers[j] = (int64_t)atomic_load(&s->storage->version);
    lua_pushvalue(L, sv[j]);
    lua_setiuservalue(L, node, ag_saved_uv(n, j));
  }
  ag_mark_outputs(L, node, out, out, 0, view_of, 0, 0, nin, ins);
  lua_pop(L, 1);
  return n;
}

/* ---- backward helpers ------------------------------------------------------ */
/* f(args on top) -> 1 result */
static void fcall(lua_State *L, const ag_bw *B, int f, int nargs) {
  lua_rawgeti(L, B->fns, f);
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, 1);
}
static void push_saved(lua_State *L, ag_node *n, int node, int j) { lua_getiuservalue(L, node, ag_saved_uv(n, j)); }
static void push_scalar(lua_State *L, const ag_scalar *s) {
  if (s->isint) lua_pushinteger(L, s->v.i);
  else lua_pushnumber(L, s->v.d);
}
static int need(const ag_node *n, int i) { return n->in[i].nr != 0; }
static void push_shape(lua_State *L, ag_node *n, const ag_in *in) {
  const int64_t *s = node_shape(n, in);
  lua_createtable(L, in->ndim, 0);
  for (int i = 0; i < in->ndim; i++) { lua_pushinteger(L, s[i]); lua_rawseti(L, -2, i + 1); }
}

/* ---- arithmetic ------------------------------------------------------------------ */
static int rec_add(lua_State *L, int nargs) {
  if (nargs != 2 || !operand(L, 3) || !operand(L, 4)) return -1;
  int both = ltl_test(L, 3) && ltl_test(L, 4);
  int out = call_raw(L, 2);
  int ins[2] = {3, 4};
  cnode(L, R_ADD, both ? 0 : 1, 2, ins, 0, NULL, out, 0);
  return lua_gettop(L) - out + 1;
}
static void bw_add(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node; (void)B;
  if (need(n, 0)) lua_pushvalue(L, g); else lua_pushnil(L);
  if (need(n, 1)) lua_pushvalue(L, g); else lua_pushnil(L);
}

static int rec_sub(lua_State *L, int nargs) {
  if (nargs != 2 || !operand(L, 3) || !operand(L, 4)) return -1;
  int ta = ltl_test(L, 3) != NULL, tb = ltl_test(L, 4) != NULL;
  int out = call_raw(L, 2);
  int ins[2] = {3, 4};
  cnode(L, R_SUB, (ta && tb) ? 0 : (ta ? 1 : 2), 2, ins, 0, NULL, out, 0);
  return lua_gettop(L) - out + 1;
}
static void bw_sub(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  if (need(n, 0)) lua_pushvalue(L, g); else lua_pushnil(L);
  if (need(n, 1)) { lua_pushvalue(L, g); fcall(L, B, AGF_NEG, 1); } else lua_pushnil(L);
}

/* mul and div save what the other input's gradient needs; a scalar operand
   is kept in the node (aux: which side it was on) */
static int rec_muldiv(lua_State *L, int nargs, int rule) {
  if (nargs != 2 || !operand(L, 3) || !operand(L, 4)) return -1;
  lt_tensor *a = ltl_test(L, 3), *b = ltl_test(L, 4);
  int out = call_raw(L, 2);
  int ins[2] = {3, 4}, sv[2] = {0, 0};
  int ra = a && a->requires_grad, rb = b && b->requires_grad;
  if (rule == R_MUL) {
    if (a && rb) sv[0] = 3;
    if (b && ra) sv[1] = 4;
  } else {
    if (a && rb) sv[0] = 3;
    if (b && (ra || rb)) sv[1] = 4;
  }
  ag_scalar sc = {{0}, 0, 0};
  int side = -1;
  if (!a) { get_scalar(L, 3, &sc); side = 0; }
  if (!b) { get_scalar(L, 4, &sc); side = 1; }
  ag_node *n = cnode(L, rule, (a && b) ? 0 : 1, 2, ins, 2, sv, out, 0);
  if (n) { ag_set_scalar(n, &sc); n->aux = (int8_t)side; }
  return lua_gettop(L) - out + 1;
}
static int rec_mul(lua_State *L, int nargs) { return rec_muldiv(L, nargs, R_MUL); }
static int rec_div(lua_State *L, int nargs) { return rec_muldiv(L, nargs, R_DIV); }
/* operand j (0 or 1) of a mul/div node: the saved tensor or the scalar */
static void push_operand(lua_State *L, ag_node *n, int node, int j) {
  ag_scalar sc = ag_get_scalar(n);
  if (sc.present && n->aux == j) push_scalar(L, &sc);
  else push_saved(L, n, node, j);
}
static void bw_mul(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (need(n, 0)) { lua_pushvalue(L, g); push_operand(L, n, node, 1); fcall(L, B, AGF_MUL, 2); }
  else lua_pushnil(L);
  if (need(n, 1)) { lua_pushvalue(L, g); push_operand(L, n, node, 0); fcall(L, B, AGF_MUL, 2); }
  else lua_pushnil(L);
}
static void bw_div(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (need(n, 0)) { lua_pushvalue(L, g); push_operand(L, n, node, 1); fcall(L, B, AGF_DIV, 2); }
  else lua_pushnil(L);
  if (need(n, 1)) {   /* -g * ((x / y) / y), PyTorch's order (y * y underflows first) */
    lua_pushvalue(L, g);
    fcall(L, B, AGF_NEG, 1);
    push_operand(L, n, node, 0);
    push_operand(L, n, node, 1);
    fcall(L, B, AGF_DIV, 2);
    push_operand(L, n, node, 1);
    fcall(L, B, AGF_DIV, 2);
    fcall(L, B, AGF_MUL, 2);
  } else {
    lua_pushnil(L);
  }
}

static int rec_neg(lua_State *L, int nargs) {
  /* (__unm is called with the operand twice) */
  if (!(nargs == 1 || (nargs == 2 && lua_rawequal(L, 3, 4))) || !ltl_test(L, 3)) return -1;
  int out = call_raw(L, nargs);
  int ins[1] = {3};
  cnode(L, R_NEG, 0, 1, ins, 0, NULL, out, 0);
  return lua_gettop(L) - out + 1;
}
static void bw_neg(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node;
  lua_pushvalue(L, g);
  fcall(L, B, AGF_NEG, 1);
}

/* pow(x, e) with a number e */
static int rec_pow(lua_State *L, int nargs) {
  if (nargs != 2 || !ltl_test(L, 3) || lua_type(L, 4) != LUA_TNUMBER) return -1;
  int out = call_raw(L, 2);
  int ins[1] = {3}, sv[1] = {3};
  ag_scalar sc = {{0}, 0, 0};
  get_scalar(L, 4, &sc);
  ag_node *n = cnode(L, R_POW, 0, 1, ins, 1, sv, out, 0);
  if (n) ag_set_scalar(n, &sc);
  return lua_gettop(L) - out + 1;
}
static void bw_pow(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  const ag_scalar es = ag_get_scalar(n), *e = &es;
  if (e->isint ? e->v.i == 0 : e->v.d == 0) { lua_pushvalue(L, g); fcall(L, B, AGF_ZEROS_LIKE, 1); return; }
  lua_pushvalue(L, g);               /* g * e * pow(x, e - 1) */
  push_scalar(L, e);
  fcall(L, B, AGF_MUL, 2);
  push_saved(L, n, node, 0);
  if (e->isint) lua_pushinteger(L, (lua_Integer)((lua_Unsigned)e->v.i - 1u));
  else lua_pushnumber(L, e->v.d - 1);
  fcall(L, B, AGF_POW, 2);
  fcall(L, B, AGF_MUL, 2);
}

/* ---- sum and mean: over everything, or over one dim (keepdim or not) ----------- */
static int rec_reduce(lua_State *L, int nargs, int rule) {
  lt_tensor *x = ltl_test(L, 3);
  if (!x) return -1;
  if (nargs == 1) {
    int out = call_raw(L, 1);
    int ins[1] = {3};
    cnode(L, rule, 0, 1, ins, 0, NULL, out, 0);
    return lua_gettop(L) - out + 1;
  }
  /* (x, dim [, keepdim]) with an integer dim on a tensor with dims; any
     other form (lists of dims, options, dtype) is the Lua rule's */
  if (nargs > 3 || x->ndim == 0 || !lua_isinteger(L, 4) || (nargs == 3 && lua_type(L, 5) != LUA_TBOOLEAN)) return -1;
  lua_Integer d = lua_tointeger(L, 4);
  int keep = nargs == 3 && lua_toboolean(L, 5);
  int nd = x->ndim;
  int out = call_raw(L, nargs);   /* raw checks the dim */
  if (d < 0) d += nd + 1;
  int ins[1] = {3};
  ag_node *n = cnode(L, rule, 1, 1, ins, 0, NULL, out, 0);
  if (n) { n->aux = (int8_t)d; n->aux2 = (int8_t)keep; }
  return lua_gettop(L) - out + 1;
}
static int rec_sum(lua_State *L, int nargs) { return rec_reduce(L, nargs, R_SUM); }
static int rec_mean(lua_State *L, int nargs) { return rec_reduce(L, nargs, R_MEAN); }
/* the value on top, expanded to input 0's shape (reshaped for a 0-dim input) */
static void expand_to_in(lua_State *L, ag_node *n, const ag_bw *B) {
  const ag_in *in = &n->in[0];
  push_shape(L, n, in);
  fcall(L, B, in->ndim == 0 ? AGF_RESHAPE : AGF_EXPAND, 2);
}
/* g with the reduced dim put back (variant 1 without keepdim) */
static void push_unreduced(lua_State *L, ag_node *n, int g, const ag_bw *B) {
  lua_pushvalue(L, g);
  if (n->variant == 1 && !n->aux2) {
    lua_pushinteger(L, n->aux);
    fcall(L, B, AGF_UNSQUEEZE, 2);
  }
}
static void bw_sum(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  push_unreduced(L, n, g, B);
  expand_to_in(L, n, B);
}
static void bw_mean(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  const ag_in *in = &n->in[0];
  const int64_t *s = node_shape(n, in);
  /* x:numel() / out:numel() as the Lua rule computes it (0 for an empty result) */
  int64_t count = 1, others = 1;
  for (int i = 0; i < in->ndim; i++) {
    if (n->variant == 1 && i + 1 == n->aux) count *= s[i];
    else if (n->variant == 1) others *= s[i];
    else count *= s[i];
  }
  if (n->variant == 1 && others == 0) count = 0;
  push_unreduced(L, n, g, B);
  lua_pushnumber(L, (lua_Number)count);
  fcall(L, B, AGF_DIV, 2);
  expand_to_in(L, n, B);
}

/* ---- matrix products (2-D by 2-D) ------------------------------------------------ */
static int rec_mm2(lua_State *L, int nargs, int rule) {
  if (nargs != 2) return -1;
  lt_tensor *a = ltl_test(L, 3), *b = ltl_test(L, 4);
  if (!a || !b || a->ndim != 2 || b->ndim != 2) return -1;
  int out = call_raw(L, 2);
  int ins[2] = {3, 4}, sv[2] = {b->requires_grad ? 3 : 0, a->requires_grad ? 4 : 0};
  cnode(L, rule, 0, 2, ins, 2, sv, out, 0);
  return lua_gettop(L) - out + 1;
}
static int rec_mm(lua_State *L, int nargs) { return rec_mm2(L, nargs, R_MM); }
static int rec_matmul(lua_State *L, int nargs) { return rec_mm2(L, nargs, R_MATMUL); }
static void bw_mm(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (need(n, 0)) {                  /* g @ b^T (the transpose is a view: BLAS takes it as a flag) */
    lua_pushvalue(L, g);
    push_saved(L, n, node, 1);
    fcall(L, B, AGF_T, 1);
    fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (need(n, 1)) {                  /* a^T @ g */
    push_saved(L, n, node, 0);
    fcall(L, B, AGF_T, 1);
    lua_pushvalue(L, g);
    fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
}

/* ---- views and shapes --------------------------------------------------------------- */
static int rec_t(lua_State *L, int nargs) {
  if (nargs != 1 || !ltl_test(L, 3)) return -1;
  int out = call_raw(L, 1);
  int ins[1] = {3};
  cnode(L, R_T, 0, 1, ins, 0, NULL, out, 3);
  return lua_gettop(L) - out + 1;
}
static void bw_t(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node;
  lua_pushvalue(L, g);
  fcall(L, B, AGF_T, 1);
}
static int rec_transpose_as(lua_State *L, int nargs, int rule) {
  if (nargs != 3 || !ltl_test(L, 3) || !lua_isinteger(L, 4) || !lua_isinteger(L, 5)) return -1;
  lua_Integer d0 = lua_tointeger(L, 4), d1 = lua_tointeger(L, 5);
  int out = call_raw(L, 3);    /* raw validates the dims */
  int ins[1] = {3};
  ag_node *n = cnode(L, rule, 0, 1, ins, 0, NULL, out, 3);
  if (n) { n->aux = (int8_t)d0; n->aux2 = (int8_t)d1; }
  return lua_gettop(L) - out + 1;
}
static int rec_transpose(lua_State *L, int nargs) { return rec_transpose_as(L, nargs, R_TRANSPOSE); }
static int rec_swapaxes(lua_State *L, int nargs) { return rec_transpose_as(L, nargs, R_SWAPAXES); }
static int rec_swapdims(lua_State *L, int nargs) { return rec_transpose_as(L, nargs, R_SWAPDIMS); }
static void bw_transpose(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  lua_pushvalue(L, g);
  lua_pushinteger(L, n->aux);
  lua_pushinteger(L, n->aux2);
  fcall(L, B, AGF_TRANSPOSE, 3);
}

/* shape ops whose backward reshapes g back to the input's shape; any
   arguments (raw checks them).  variant 0, or 1 for reshape-like ops whose
   result is a copy (UnsafeViewBackward0), or squeeze with a dim */
static int rec_shape(lua_State *L, int nargs, int rule) {
  if (nargs < 1 || !ltl_test(L, 3)) return -1;
  int out = call_raw(L, nargs);
  int variant = 0;
  lt_tensor *x = ltl_test(L, 3), *o = ltl_test(L, out);
  if ((rule == R_RESHAPE || rule == R_FLATTEN) && o && o->storage != x->storage) variant = 1;
  if (rule == R_SQUEEZE && nargs > 1) variant = 1;
  int ins[1] = {3};
  cnode(L, rule, variant, 1, ins, 0, NULL, out, 3);
  return lua_gettop(L) - out + 1;
}
static int rec_view(lua_State *L, int nargs) { return rec_shape(L, nargs, R_VIEW); }
static int rec_reshape(lua_State *L, int nargs) { return rec_shape(L, nargs, R_RESHAPE); }
static int rec_flatten(lua_State *L, int nargs) { return rec_shape(L, nargs, R_FLATTEN); }
static int rec_unsqueeze(lua_State *L, int nargs) { return rec_shape(L, nargs, R_UNSQUEEZE); }
static int rec_squeeze(lua_State *L, int nargs) { return rec_shape(L, nargs, R_SQUEEZE); }
static int rec_expand(lua_State *L, int nargs) { return rec_shape(L, nargs, R_EXPAND); }
static void bw_shape(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  lua_pushvalue(L, g);
  push_shape(L, n, &n->in[0]);
  fcall(L, B, AGF_RESHAPE, 2);
}
static void bw_expand(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node; (void)B;
  lua_pushvalue(L, g);   /* the engine sums it back to the input's shape */
}

/* ---- elementwise functions ------------------------------------------------------------ */
/* save: 0 the input, 1 the output */
static int rec_unary(lua_State *L, int nargs, int rule, int save_out) {
  if (nargs != 1 || !ltl_test(L, 3)) return -1;
  int out = call_raw(L, 1);
  int ins[1] = {3}, sv[1] = {save_out ? out : 3};
  cnode(L, rule, 0, 1, ins, 1, sv, out, 0);
  return lua_gettop(L) - out + 1;
}
static int rec_exp(lua_State *L, int nargs) { return rec_unary(L, nargs, R_EXP, 1); }
static int rec_log(lua_State *L, int nargs) { return rec_unary(L, nargs, R_LOG, 0); }
static int rec_tanh(lua_State *L, int nargs) { return rec_unary(L, nargs, R_TANH, 1); }
static int rec_sigmoid(lua_State *L, int nargs) { return rec_unary(L, nargs, R_SIGMOID, 1); }
static int rec_relu(lua_State *L, int nargs) { return rec_unary(L, nargs, R_RELU, 1); }
static void bw_exp(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {   /* g * y */
  lua_pushvalue(L, g);
  push_saved(L, n, node, 0);
  fcall(L, B, AGF_MUL, 2);
}
static void bw_log(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {   /* g / x */
  lua_pushvalue(L, g);
  push_saved(L, n, node, 0);
  fcall(L, B, AGF_DIV, 2);
}
static void bw_tanh(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {  /* g * (1 - y*y) */
  lua_pushvalue(L, g);
  push_saved(L, n, node, 0);
  lua_pushvalue(L, -1);
  fcall(L, B, AGF_MUL, 2);
  lua_pushinteger(L, 1);
  fcall(L, B, AGF_RSUB, 2);
  fcall(L, B, AGF_MUL, 2);
}
static void bw_sigmoid(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {  /* g * y * (1 - y) */
  lua_pushvalue(L, g);
  push_saved(L, n, node, 0);
  fcall(L, B, AGF_MUL, 2);
  push_saved(L, n, node, 0);
  lua_pushinteger(L, 1);
  fcall(L, B, AGF_RSUB, 2);
  fcall(L, B, AGF_MUL, 2);
}
static void bw_relu(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  push_saved(L, n, node, 0);
  int y = lua_gettop(L);
  lt_tensor *yt = ltl_check(L, y);
  if (!B->create && (yt->dtype == LTENSOR_FLOAT32 || yt->dtype == LTENSOR_FLOAT64)) {
    /* one pass: g where y > 0 (src/binding/l_nnfused.c) */
    lua_pushvalue(L, g);
    lua_pushvalue(L, y);
    lua_pushinteger(L, 0);
    fcall(L, B, AGF_THRESHOLD_BW, 3);
  } else {   /* where(y <= 0, 0, g): differentiable under create_graph (NaN passes g) */
    lua_pushvalue(L, y);
    lua_pushinteger(L, 0);
    fcall(L, B, AGF_LE, 2);
    lua_pushvalue(L, g);
    fcall(L, B, AGF_ZEROS_LIKE, 1);
    lua_pushvalue(L, g);
    fcall(L, B, AGF_WHERE, 3);
  }
  lua_remove(L, y);
}

/* ---- the fused linear layer (l_grad_linear.c) ------------------------------------------ */
static int rec_linear(lua_State *L, int nargs) {
  if (nargs < 2 || nargs > 3) return -1;
  if (nargs == 3 && lua_isnil(L, 5)) nargs = 2;
  else if (nargs == 3 && !ltl_test(L, 5)) return -1;
  lt_tensor *x = ltl_test(L, 3), *w = ltl_test(L, 4);
  if (!x || !w) return -1;
  int out = call_raw(L, lua_gettop(L) - 2);
  int ins[3] = {3, 4, nargs == 3 ? 5 : 0}, sv[2] = {w->requires_grad ? 3 : 0, x->requires_grad ? 4 : 0};
  cnode(L, R_LINEAR, nargs == 3 ? 0 : 1, nargs, ins, 2, sv, out, 0);
  return lua_gettop(L) - out + 1;
}
static void bw_linear(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (need(n, 0)) {                  /* g @ w: (N, O) @ (O, K) */
    lua_pushvalue(L, g);
    push_saved(L, n, node, 1);
    fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (need(n, 1)) {                  /* g^T @ x: (O, N) @ (N, K), the transpose a BLAS flag */
    lua_pushvalue(L, g);
    fcall(L, B, AGF_T, 1);
    push_saved(L, n, node, 0);
    fcall(L, B, AGF_MM, 2);
  } else {
    lua_pushnil(L);
  }
  if (n->nin == 3 && need(n, 2)) {   /* column sums */
    lua_pushvalue(L, g);
    lua_pushinteger(L, 1);
    fcall(L, B, AGF_SUM, 2);
  } else if (n->nin == 3) {
    lua_pushnil(L);
  }
}

const ag_crule ag_crules[] = {
  /* Where a rule below does not take every call, the Lua rule of the same
     name (lua/ltensor/autograd/rules_*.lua) takes the rest, as noted; a
     rule with no note takes every call, and has no Lua twin. */
  [R_ADD] = {"add", rec_add, bw_add, {"AddBackward0", "AddBackward0", NULL}},    /* Lua too: add_, alpha/options */
  [R_SUB] = {"sub", rec_sub, bw_sub, {"SubBackward0", "SubBackward0", "RsubBackward1"}},   /* Lua too: sub_, alpha */
  [R_MUL] = {"mul", rec_mul, bw_mul, {"MulBackward0", "MulBackward0", NULL}},    /* Lua too: mul_ */
  [R_DIV] = {"div", rec_div, bw_div, {"DivBackward0", "DivBackward0", NULL}},    /* Lua too: div_, rounding_mode */
  [R_NEG] = {"neg", rec_neg, bw_neg, {"NegBackward0", NULL, NULL}},              /* Lua too: neg_ */
  [R_SUM] = {"sum", rec_sum, bw_sum, {"SumBackward0", "SumBackward1", NULL}},    /* Lua too: dim lists, options, 0-dim */
  [R_MEAN] = {"mean", rec_mean, bw_mean, {"MeanBackward0", "MeanBackward1", NULL}},   /* Lua too: as sum */
  [R_MM] = {"mm", rec_mm, bw_mm, {"MmBackward0", NULL, NULL}},
  [R_MATMUL] = {"matmul", rec_matmul, bw_mm, {"MmBackward0", NULL, NULL}},      /* Lua too: other than 2-D @ 2-D */
  [R_T] = {"t", rec_t, bw_t, {"TBackward0", NULL, NULL}},
  [R_TRANSPOSE] = {"transpose", rec_transpose, bw_transpose, {"TransposeBackward0", NULL, NULL}},
  [R_SWAPAXES] = {"swapaxes", rec_swapaxes, bw_transpose, {"TransposeBackward0", NULL, NULL}},
  [R_SWAPDIMS] = {"swapdims", rec_swapdims, bw_transpose, {"TransposeBackward0", NULL, NULL}},
  [R_VIEW] = {"view", rec_view, bw_shape, {"ViewBackward0", NULL, NULL}},
  [R_RESHAPE] = {"reshape", rec_reshape, bw_shape, {"ViewBackward0", "UnsafeViewBackward0", NULL}},
  [R_FLATTEN] = {"flatten", rec_flatten, bw_shape, {"ViewBackward0", "UnsafeViewBackward0", NULL}},
  [R_UNSQUEEZE] = {"unsqueeze", rec_unsqueeze, bw_shape, {"UnsqueezeBackward0", NULL, NULL}},
  [R_SQUEEZE] = {"squeeze", rec_squeeze, bw_shape, {"SqueezeBackward0", "SqueezeBackward1", NULL}},
  [R_EXPAND] = {"expand", rec_expand, bw_expand, {"ExpandBackward0", NULL, NULL}},
  [R_EXP] = {"exp", rec_exp, bw_exp, {"ExpBackward0", NULL, NULL}},              /* Lua too: exp_ */
  [R_LOG] = {"log", rec_log, bw_log, {"LogBackward0", NULL, NULL}},              /* Lua too: log_ */
  [R_TANH] = {"tanh", rec_tanh, bw_tanh, {"TanhBackward0", NULL, NULL}},         /* Lua too: tanh_ */
  [R_SIGMOID] = {"sigmoid", rec_sigmoid, bw_sigmoid, {"SigmoidBackward0", NULL, NULL}},   /* Lua too: sigmoid_ */
  [R_RELU] = {"relu", rec_relu, bw_relu, {"ReluBackward0", NULL, NULL}},         /* Lua too: relu_ (rules_nn.lua) */
  [R_POW] = {"pow", rec_pow, bw_pow, {"PowBackward0", NULL, NULL}},              /* Lua too: pow_, tensor exponent */
  [R_LINEAR] = {"_linear", rec_linear, bw_linear, {"AddmmBackward0", "MmBackward0", NULL}},   /* Lua too: a nil bias given */
  {NULL, NULL, NULL, {NULL, NULL, NULL}}
};
