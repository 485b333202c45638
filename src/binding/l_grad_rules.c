/* l_grad_rules.c -- backward rules of the common ops in C.

   A node recorded here has no Lua table (issue 13: a deep graph was 1.3 KB
   of Lua heap per op): its saved tensors are user values of the node, its
   scalar and dims are fields of the node, its name comes from ag_crules.
   The gradients are computed by calling the ops through the engine's
   function table (ctx[CTX_FNS], by index: no string lookups), so that under
   create_graph the gradient computation is recorded like any other.

   Each rule takes every form of its op's call (options, alpha, dims,
   scalar or tensor operands, the in-place op: l_autograd.c hands add_ to
   add's rule with an ag_rec), so these ops have no rule in Lua; the other
   ops' rules are in lua/ltensor/autograd/rules_*.lua.  The matrix products'
   and shapes' rules are in l_grad_shape.c. */
#include <math.h>
#include "l_grad_rules.h"

/* ---- recording helpers --------------------------------------------------- */
/* raw(args at 3..2+nargs): outputs left on top; returns the first one's slot */
int agr_call_raw(lua_State *L, int nargs) {
  int top = lua_gettop(L);
  luaL_checkstack(L, nargs + 8, "autograd");
  lua_pushvalue(L, 2);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 3 + i);
  lua_call(L, nargs, LUA_MULTRET);
  return top + 1;
}

/* the two operands at 3 and 4 are tensors (*a, *b) or Lua numbers or
   booleans (weak scalars: NULL there) */
static int operands(lua_State *L, lt_tensor **a, lt_tensor **b) {
  for (int i = 0; i < 2; i++) {
    lt_tensor *t = ltl_test(L, 3 + i);
    int ty = lua_type(L, 3 + i);
    if (!t && ty != LUA_TNUMBER && ty != LUA_TBOOLEAN) return 0;
    *(i ? b : a) = t;
  }
  return 1;
}

/* a scalar argument as Lua had it; a boolean is the integer 1 or 0 (as
   PyTorch counts it in arithmetic) */
static void get_scalar(lua_State *L, int idx, ag_scalar *s) {
  s->present = 1;
  if (lua_type(L, idx) == LUA_TBOOLEAN) { s->isint = 1; s->v.i = lua_toboolean(L, idx); }
  else if (lua_isinteger(L, idx)) { s->isint = 1; s->v.i = lua_tointeger(L, idx); }
  else { s->isint = 0; s->v.d = lua_tonumber(L, idx); }
}

/* Record a node for the output at `out` (left in place): inputs at the
   stack slots ins[0..nin-1] (non-tensors get no edge; for an in-place call
   input 1's edge is the target's), tensors to save at sv[0..nsv-1] (0:
   nothing saved there).  view_of: the input the output is a view of, or 0.
   Returns the node (popped) or NULL when no input requires grad. */
ag_node *agr_node(lua_State *L, const ag_rec *R, int rule, int variant, int nin, const int *ins, int nsv,
                  const int *sv, int out, int view_of) {
  int nedge = 0, ndims = 0, slot[3];
  while (nsv > 0 && !sv[nsv - 1]) nsv--;   /* nothing saved at the end: no slots for it */
  for (int i = 0; i < nin; i++) {
    slot[i] = (R->target && ins[i] == 3) ? R->target : ins[i];
    lt_tensor *x = slot[i] ? ltl_test(L, slot[i]) : NULL;
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
    lt_tensor *x = slot[i] ? ltl_test(L, slot[i]) : NULL;
    if (!x || !x->requires_grad) continue;
    set_input(L, node, n, &n->in[i], x, slot[i], &uv, &soff);
  }
  int64_t *vers = node_versions(n);
  for (int j = 0; j < nsv; j++) {
    lt_tensor *s = sv[j] ? ltl_test(L, sv[j]) : NULL;
    if (!s) { vers[j] = -1; continue; }
    n->flags |= AG_HAS_SAVED;
    if (R->alias && lua_rawequal(L, sv[j], R->target)) vers[j] = (int64_t)R->v0;
    else vers[j] = (int64_t)atomic_load(&s->storage->version);
    lua_pushvalue(L, sv[j]);
    lua_setiuservalue(L, node, ag_saved_uv(n, j));
  }
  ag_mark_outputs(L, node, out, out, R->target, view_of, 0, 0, nin, ins);
  lua_pop(L, 1);
  return n;
}

/* ---- backward helpers ------------------------------------------------------ */
/* f(args on top) -> 1 result */
void agr_fcall(lua_State *L, const ag_bw *B, int f, int nargs) {
  lua_rawgeti(L, B->fns, f);
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, 1);
}
static void push_scalar(lua_State *L, const ag_scalar *s) {
  if (s->isint) lua_pushinteger(L, s->v.i);
  else lua_pushnumber(L, s->v.d);
}
/* the value on top -> where(cond, 0, value), cond popped from under it
   (the gradient is zero where cond holds) */
static void zero_where(lua_State *L, const ag_bw *B) {
  lua_pushvalue(L, -1);
  agr_fcall(L, B, AGF_ZEROS_LIKE, 1);   /* cond v 0 */
  lua_insert(L, -2);                    /* cond 0 v */
  agr_fcall(L, B, AGF_WHERE, 3);
}
/* the saved tensor j >= 0 (0: is it complex?) */
static int saved_complex(lua_State *L, ag_node *n, int node, int j) {
  agr_push_saved(L, n, node, j);
  lt_tensor *t = ltl_test(L, -1);
  int c = t && lt_is_complex(t->dtype);
  lua_pop(L, 1);
  return c;
}

/* ---- add and sub: a + alpha b, a - alpha b -------------------------------------- */
/* alpha at slot 5, a number or opts.alpha (raw checked it); kept unless 1 */
static void get_alpha(lua_State *L, int nargs, ag_scalar *al) {
  al->present = 0;
  if (nargs < 3) return;
  int idx = 5;
  if (lua_type(L, 5) == LUA_TTABLE) { lua_getfield(L, 5, "alpha"); idx = lua_gettop(L); }
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TBOOLEAN) {
    get_scalar(L, idx, al);
    if (al->isint ? al->v.i == 1 : al->v.d == 1) al->present = 0;
  }
  if (idx != 5) lua_pop(L, 1);
}
static int rec_addsub(lua_State *L, int nargs, const ag_rec *R, int rule) {
  lt_tensor *a, *b;
  if (nargs < 2 || !operands(L, &a, &b)) return -1;
  int ta = a != NULL, tb = b != NULL;
  int out = agr_call_raw(L, nargs);
  ag_scalar al;
  get_alpha(L, nargs, &al);
  int ins[2] = {3, 4};
  int variant = (ta && tb) ? 0 : (rule == R_ADD || ta) ? 1 : 2;
  ag_node *n = agr_node(L, R, rule, variant, 2, ins, 0, NULL, out, 0);
  if (n) ag_set_scalar(n, &al);
  return lua_gettop(L) - out + 1;
}
static int rec_add(lua_State *L, int nargs, const ag_rec *R) { return rec_addsub(L, nargs, R, R_ADD); }
static int rec_sub(lua_State *L, int nargs, const ag_rec *R) { return rec_addsub(L, nargs, R, R_SUB); }
/* g for a, g * alpha (add) or g * -alpha / -g (sub) for b */
static void bw_addsub(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)node;
  ag_scalar al = ag_get_scalar(n);
  if (agr_need(n, 0)) lua_pushvalue(L, g); else lua_pushnil(L);
  if (!agr_need(n, 1)) { lua_pushnil(L); return; }
  lua_pushvalue(L, g);
  if (al.present) {
    if (n->rule == R_SUB) {
      if (al.isint) al.v.i = (lua_Integer)(0u - (uint64_t)al.v.i);
      else al.v.d = -al.v.d;
    }
    push_scalar(L, &al);
    agr_fcall(L, B, AGF_MUL, 2);
  } else if (n->rule == R_SUB) {
    agr_fcall(L, B, AGF_NEG, 1);
  }
}

/* ---- mul and div ------------------------------------------------------------------
   They save what the other input's gradient needs; a scalar operand is kept
   in the node (aux: which side it was on).  div with a rounding mode is
   piecewise constant: zero gradients, nothing saved (variants 2, 3). */
static int div_rounds(lua_State *L, int nargs) {
  if (nargs < 3) return 0;
  if (lua_type(L, 5) == LUA_TSTRING) return 1;
  if (lua_type(L, 5) != LUA_TTABLE) return 0;
  int r = lua_getfield(L, 5, "rounding_mode") == LUA_TSTRING;
  lua_pop(L, 1);
  return r;
}
static int rec_muldiv(lua_State *L, int nargs, const ag_rec *R, int rule) {
  lt_tensor *a, *b;
  if (nargs < 2 || !operands(L, &a, &b)) return -1;
  int out = agr_call_raw(L, nargs);
  int ins[2] = {3, 4}, sv[2] = {0, 0};
  if (rule == R_DIV && div_rounds(L, nargs)) {
    agr_node(L, R, rule, b ? 2 : 3, 2, ins, 0, NULL, out, 0);
    return lua_gettop(L) - out + 1;
  }
  /* (in place: input 1 is the target, slot 3 may be a copy of it) */
  int ra = R->target ? ltl_check(L, R->target)->requires_grad : a && a->requires_grad, rb = b && b->requires_grad;
  if (a && rb) sv[0] = 3;
  if (b && (ra || (rule == R_DIV && rb))) sv[1] = 4;
  ag_scalar sc = {{0}, 0, 0};
  int side = -1;
  if (!a) { get_scalar(L, 3, &sc); side = 0; }
  if (!b) { get_scalar(L, 4, &sc); side = 1; }
  ag_node *n = agr_node(L, R, rule, (a && b) ? 0 : 1, 2, ins, 2, sv, out, 0);
  if (n) { ag_set_scalar(n, &sc); n->aux = (int8_t)side; }
  return lua_gettop(L) - out + 1;
}
static int rec_mul(lua_State *L, int nargs, const ag_rec *R) { return rec_muldiv(L, nargs, R, R_MUL); }
static int rec_div(lua_State *L, int nargs, const ag_rec *R) { return rec_muldiv(L, nargs, R, R_DIV); }
/* operand j (0 or 1) of a mul/div node: the saved tensor or the scalar */
static void push_operand(lua_State *L, ag_node *n, int node, int j) {
  ag_scalar sc = ag_get_scalar(n);
  if (sc.present && n->aux == j) push_scalar(L, &sc);
  else agr_push_saved(L, n, node, j);
}
static void bw_mul(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (agr_need(n, 0)) { lua_pushvalue(L, g); push_operand(L, n, node, 1); agr_fcall(L, B, AGF_MUL, 2); }
  else lua_pushnil(L);
  if (agr_need(n, 1)) { lua_pushvalue(L, g); push_operand(L, n, node, 0); agr_fcall(L, B, AGF_MUL, 2); }
  else lua_pushnil(L);
}
static void bw_div(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (n->variant >= 2) {   /* a rounding mode */
    for (int i = 0; i < 2; i++) {
      if (agr_need(n, i)) { lua_pushvalue(L, g); agr_fcall(L, B, AGF_ZEROS_LIKE, 1); }
      else lua_pushnil(L);
    }
    return;
  }
  if (agr_need(n, 0)) { lua_pushvalue(L, g); push_operand(L, n, node, 1); agr_fcall(L, B, AGF_DIV, 2); }
  else lua_pushnil(L);
  if (agr_need(n, 1)) {   /* -g * ((x / y) / y), PyTorch's order (y * y underflows first) */
    lua_pushvalue(L, g);
    agr_fcall(L, B, AGF_NEG, 1);
    push_operand(L, n, node, 0);
    push_operand(L, n, node, 1);
    agr_fcall(L, B, AGF_DIV, 2);
    push_operand(L, n, node, 1);
    agr_fcall(L, B, AGF_DIV, 2);
    agr_fcall(L, B, AGF_MUL, 2);
  } else {
    lua_pushnil(L);
  }
}

static int rec_neg(lua_State *L, int nargs, const ag_rec *R) {
  /* (__unm passes the operand twice; raw checks any other argument) */
  if (nargs < 1 || !ltl_test(L, 3)) return -1;
  int out = agr_call_raw(L, nargs);
  int ins[1] = {3};
  agr_node(L, R, R_NEG, 0, 1, ins, 0, NULL, out, 0);
  return lua_gettop(L) - out + 1;
}
static void bw_neg(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  (void)n; (void)node;
  lua_pushvalue(L, g);
  agr_fcall(L, B, AGF_NEG, 1);
}

/* ---- pow ---------------------------------------------------------------------------
   variant 0: x ^ number (saved x; the exponent in the node); 1: x ^ e, both
   tensors (saved x, e, y); 2: number ^ e (saved y, e; the base in the node) */
static int rec_pow(lua_State *L, int nargs, const ag_rec *R) {
  lt_tensor *a, *b;
  if (nargs < 2 || !operands(L, &a, &b)) return -1;
  int out = agr_call_raw(L, nargs);
  int ins[2] = {3, 4};
  ag_scalar sc = {{0}, 0, 0};
  ag_node *n;
  if (!b) {
    int sv[1] = {3};
    get_scalar(L, 4, &sc);
    n = agr_node(L, R, R_POW, 0, 1, ins, 1, sv, out, 0);
  } else if (a) {
    int sv[3] = {3, 4, out};
    n = agr_node(L, R, R_POW, 1, 2, ins, 3, sv, out, 0);
  } else {
    int sv[2] = {out, 4};
    get_scalar(L, 3, &sc);
    n = agr_node(L, R, R_POW, 2, 2, ins, 2, sv, out, 0);
  }
  if (n) ag_set_scalar(n, &sc);
  return lua_gettop(L) - out + 1;
}
/* e >= 0 for the tensor e on top (popped); a complex e: real part, and no
   imaginary part (PyTorch's pow_backward_exponent) */
static void exponent_nonneg(lua_State *L, int is_complex, const ag_bw *B) {
  int e = lua_gettop(L);
  if (is_complex) {
    lua_pushvalue(L, e);
    agr_fcall(L, B, AGF_IMAG, 1);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_EQ, 2);
    lua_pushvalue(L, e);
    agr_fcall(L, B, AGF_REAL, 1);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_GE, 2);
    agr_fcall(L, B, AGF_LOGICAL_AND, 2);
  } else {
    lua_pushvalue(L, e);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_GE, 2);
  }
  lua_remove(L, e);
}
static void bw_pow_tensor(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  if (agr_need(n, 0)) {    /* g e x^(e-1), 0 where e = 0 */
    agr_push_saved(L, n, node, 1);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_EQ, 2);
    lua_pushvalue(L, g);
    agr_push_saved(L, n, node, 1);
    agr_fcall(L, B, AGF_MUL, 2);
    agr_push_saved(L, n, node, 0);
    agr_push_saved(L, n, node, 1);
    lua_pushinteger(L, 1);
    agr_fcall(L, B, AGF_SUB, 2);
    agr_fcall(L, B, AGF_POW, 2);
    agr_fcall(L, B, AGF_MUL, 2);
    zero_where(L, B);
  } else {
    lua_pushnil(L);
  }
  if (agr_need(n, 1)) {    /* g y log(x), 0 where x = 0 and e >= 0 */
    agr_push_saved(L, n, node, 0);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_EQ, 2);
    int cx = saved_complex(L, n, node, 1);
    agr_push_saved(L, n, node, 1);
    if (cx) agr_fcall(L, B, AGF_REAL, 1);
    exponent_nonneg(L, 0, B);
    agr_fcall(L, B, AGF_LOGICAL_AND, 2);
    lua_pushvalue(L, g);
    agr_push_saved(L, n, node, 2);
    agr_fcall(L, B, AGF_MUL, 2);
    agr_push_saved(L, n, node, 0);
    agr_fcall(L, B, AGF_LOG, 1);
    agr_fcall(L, B, AGF_MUL, 2);
    zero_where(L, B);
  } else {
    lua_pushnil(L);
  }
}
static void bw_pow(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  const ag_scalar es = ag_get_scalar(n), *e = &es;
  if (n->variant == 1) { bw_pow_tensor(L, n, node, g, B); return; }
  if (n->variant == 2) {   /* g y log(base); 0 where e >= 0 when the base is 0 */
    lua_pushnil(L);
    int zero = e->isint ? e->v.i == 0 : e->v.d == 0;
    if (zero) {
      agr_push_saved(L, n, node, 1);
      exponent_nonneg(L, saved_complex(L, n, node, 1), B);
    }
    lua_pushvalue(L, g);
    agr_push_saved(L, n, node, 0);
    agr_fcall(L, B, AGF_MUL, 2);
    lua_pushnumber(L, log(e->isint ? (lua_Number)e->v.i : e->v.d));
    agr_fcall(L, B, AGF_MUL, 2);
    if (zero) zero_where(L, B);
    return;
  }
  if (e->isint ? e->v.i == 0 : e->v.d == 0) { lua_pushvalue(L, g); agr_fcall(L, B, AGF_ZEROS_LIKE, 1); return; }
  lua_pushvalue(L, g);               /* g * e * pow(x, e - 1) */
  push_scalar(L, e);
  agr_fcall(L, B, AGF_MUL, 2);
  agr_push_saved(L, n, node, 0);
  if (e->isint) lua_pushinteger(L, (lua_Integer)((uint64_t)e->v.i - 1u));
  else lua_pushnumber(L, e->v.d - 1);
  agr_fcall(L, B, AGF_POW, 2);
  agr_fcall(L, B, AGF_MUL, 2);
}

/* ---- elementwise functions ------------------------------------------------------------ */
/* save: 0 the input, 1 the output; an options table (out=) goes to raw */
static int rec_unary(lua_State *L, int nargs, const ag_rec *R, int rule, int save_out) {
  if (nargs < 1 || !ltl_test(L, 3)) return -1;
  int out = agr_call_raw(L, nargs);
  int ins[1] = {3}, sv[1] = {save_out ? out : 3};
  agr_node(L, R, rule, 0, 1, ins, 1, sv, out, 0);
  return lua_gettop(L) - out + 1;
}
static int rec_exp(lua_State *L, int nargs, const ag_rec *R) { return rec_unary(L, nargs, R, R_EXP, 1); }
static int rec_log(lua_State *L, int nargs, const ag_rec *R) { return rec_unary(L, nargs, R, R_LOG, 0); }
static int rec_tanh(lua_State *L, int nargs, const ag_rec *R) { return rec_unary(L, nargs, R, R_TANH, 1); }
static int rec_sigmoid(lua_State *L, int nargs, const ag_rec *R) { return rec_unary(L, nargs, R, R_SIGMOID, 1); }
static int rec_relu(lua_State *L, int nargs, const ag_rec *R) { return rec_unary(L, nargs, R, R_RELU, 1); }
static void bw_exp(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {   /* g * y */
  lua_pushvalue(L, g);
  agr_push_saved(L, n, node, 0);
  agr_fcall(L, B, AGF_MUL, 2);
}
static void bw_log(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {   /* g / x */
  lua_pushvalue(L, g);
  agr_push_saved(L, n, node, 0);
  agr_fcall(L, B, AGF_DIV, 2);
}
static void bw_tanh(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {  /* g * (1 - y*y) */
  lua_pushvalue(L, g);
  agr_push_saved(L, n, node, 0);
  lua_pushvalue(L, -1);
  agr_fcall(L, B, AGF_MUL, 2);
  lua_pushinteger(L, 1);
  agr_fcall(L, B, AGF_RSUB, 2);
  agr_fcall(L, B, AGF_MUL, 2);
}
static void bw_sigmoid(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {  /* g * y * (1 - y) */
  lua_pushvalue(L, g);
  agr_push_saved(L, n, node, 0);
  agr_fcall(L, B, AGF_MUL, 2);
  agr_push_saved(L, n, node, 0);
  lua_pushinteger(L, 1);
  agr_fcall(L, B, AGF_RSUB, 2);
  agr_fcall(L, B, AGF_MUL, 2);
}
static void bw_relu(lua_State *L, ag_node *n, int node, int g, const ag_bw *B) {
  agr_push_saved(L, n, node, 0);
  int y = lua_gettop(L);
  lt_tensor *yt = ltl_check(L, y);
  if (!B->create && (yt->dtype == LTENSOR_FLOAT32 || yt->dtype == LTENSOR_FLOAT64)) {
    /* one pass: g where y > 0 (src/binding/l_nnfused.c) */
    lua_pushvalue(L, g);
    lua_pushvalue(L, y);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_THRESHOLD_BW, 3);
  } else {   /* where(y <= 0, 0, g): differentiable under create_graph (NaN passes g) */
    lua_pushvalue(L, y);
    lua_pushinteger(L, 0);
    agr_fcall(L, B, AGF_LE, 2);
    lua_pushvalue(L, g);
    agr_fcall(L, B, AGF_ZEROS_LIKE, 1);
    lua_pushvalue(L, g);
    agr_fcall(L, B, AGF_WHERE, 3);
  }
  lua_remove(L, y);
}

const ag_crule ag_crules[] = {
  /* Each rule takes every form of its op (and the in-place op, add_ for
     add): none of these ops has a Lua rule.  The names are those
     PyTorch 1.13 shows from Python, where a number operand is a wrapped
     tensor (x * 2 is MulBackward0, x:div(2, "floor") DivBackward2).  Indexed by R_* (l_grad_rules.h). */
  [R_ADD] = {"add", rec_add, bw_addsub, {"AddBackward0", "AddBackward0"}},
  [R_SUB] = {"sub", rec_sub, bw_addsub, {"SubBackward0", "SubBackward0", "RsubBackward1"}},
  [R_MUL] = {"mul", rec_mul, bw_mul, {"MulBackward0", "MulBackward0"}},
  [R_DIV] = {"div", rec_div, bw_div, {"DivBackward0", "DivBackward0", "DivBackward2", "DivBackward2"}},
  [R_NEG] = {"neg", rec_neg, bw_neg, {"NegBackward0"}},
  [R_SUM] = {"sum", agr_rec_sum, agr_bw_sum, {"SumBackward0", "SumBackward1"}},
  [R_MEAN] = {"mean", agr_rec_mean, agr_bw_mean, {"MeanBackward0", "MeanBackward1"}},
  [R_MM] = {"mm", agr_rec_mm, agr_bw_matmul, {"MmBackward0"}},
  [R_MATMUL] = {"matmul", agr_rec_matmul, agr_bw_matmul,
                {"DotBackward0", "MvBackward0", "MmBackward0", "SqueezeBackward1", "BmmBackward0"}},
  [R_T] = {"t", agr_rec_t, agr_bw_t, {"TBackward0"}},
  [R_TRANSPOSE] = {"transpose", agr_rec_transpose, agr_bw_transpose, {"TransposeBackward0"}},
  [R_SWAPAXES] = {"swapaxes", agr_rec_swapaxes, agr_bw_transpose, {"TransposeBackward0"}},
  [R_SWAPDIMS] = {"swapdims", agr_rec_swapdims, agr_bw_transpose, {"TransposeBackward0"}},
  [R_VIEW] = {"view", agr_rec_view, agr_bw_shape, {"ViewBackward0"}},
  [R_RESHAPE] = {"reshape", agr_rec_reshape, agr_bw_shape, {"ViewBackward0", "UnsafeViewBackward0"}},
  [R_FLATTEN] = {"flatten", agr_rec_flatten, agr_bw_shape, {"ViewBackward0", "UnsafeViewBackward0"}},
  [R_UNSQUEEZE] = {"unsqueeze", agr_rec_unsqueeze, agr_bw_shape, {"UnsqueezeBackward0"}},
  [R_SQUEEZE] = {"squeeze", agr_rec_squeeze, agr_bw_shape, {"SqueezeBackward0", "SqueezeBackward1"}},
  [R_EXPAND] = {"expand", agr_rec_expand, agr_bw_expand, {"ExpandBackward0"}},
  [R_EXP] = {"exp", rec_exp, bw_exp, {"ExpBackward0"}},
  [R_LOG] = {"log", rec_log, bw_log, {"LogBackward0"}},
  [R_TANH] = {"tanh", rec_tanh, bw_tanh, {"TanhBackward0"}},
  [R_SIGMOID] = {"sigmoid", rec_sigmoid, bw_sigmoid, {"SigmoidBackward0"}},
  [R_RELU] = {"relu", rec_relu, bw_relu, {"ReluBackward0"}},
  [R_POW] = {"pow", rec_pow, bw_pow, {"PowBackward0", "PowBackward1", "PowBackward2"}},
  [R_LINEAR] = {"_linear", agr_rec_linear, agr_bw_linear, {"AddmmBackward0", "MmBackward0"}},
  {NULL, NULL, NULL, {NULL}}
};
