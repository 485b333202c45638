/* l_ew.c -- the elementwise driver: each op classifies its operands
   (tensors or weak Lua scalars), asks lt_promote for the common dtype,
   applies its own output rule, and runs a kernel from lt_k_*.c through the
   TensorIterator (lt_iter.h).  Weak scalars never become heap tensors: they
   live on the C stack as 0-dim tensors already converted to the compute
   dtype.  The ops themselves are l_ops.c. */
#include <math.h>
#include <string.h>
#include "l_ew.h"

/* ====================================================================== */
/* operands                                                               */
/* ====================================================================== */

static const char *dtype_names_for_msg(ltensor_dtype d) { return lt_dtypes[d].name; }

/* Fill op from stack slot idx; argument errors name fname. */
void ew_classify(lua_State *L, int idx, const char *fname, operand *op) {
  op->idx = idx;
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
    op->weak = 1;
    op->t = NULL;
    op->pin.dtype = lua_isinteger(L, idx) ? LTENSOR_INT64 : LTENSOR_FLOAT64;
    op->pin.tier = LT_TIER_WEAK;
    return;
  case LUA_TBOOLEAN:
    op->weak = 1;
    op->t = NULL;
    op->pin.dtype = LTENSOR_BOOL;
    op->pin.tier = LT_TIER_WEAK;
    return;
  case LUA_TUSERDATA: {
    lt_tensor *t = ltl_test(L, idx);
    if (t) {
      if (!t->storage) ltl_argerror(L, idx, "tensor was freed");
      op->weak = 0;
      op->t = t;
      op->pin.dtype = t->dtype;
      op->pin.tier = t->ndim > 0 ? LT_TIER_DIM : LT_TIER_ZERO;
      return;
    }
  }
  /* fallthrough */
  default:
    if (ltl_dot_called(L, idx))   /* x.add(y) for x:add(y) */
      ltl_error(L, fname, "expected a tensor, number or boolean as argument %d (got %s; a method is called "
                "with ':', as x:%s(...))", idx, luaL_typename(L, idx), fname);
    ltl_error(L, fname, "expected a tensor, number or boolean as argument %d (got %s)", idx,
             luaL_typename(L, idx));
  }
}

/* Materialise a weak scalar as a 0-dim tensor of dtype dt on the C stack. */
static void weak_tensor(lua_State *L, operand *op, ltensor_dtype dt) {
  memset(&op->sc.t, 0, sizeof op->sc.t);
  op->sc.st.data = (char *)op->sc.buf;
  op->sc.t.storage = &op->sc.st;
  op->sc.t.dtype = dt;
  op->sc.t.ndim = 0;
  ltl_store_lua(L, op->idx, dt, (char *)op->sc.buf);
  op->t = &op->sc.t;
}

static void raise_promo(lua_State *L, const char *fname, int code, const lt_promo_err *e) {
  if (code == LT_PROMO_ERR_TENSORS)
    ltl_error(L, fname, "strict promotion: input dtypes %s and %s differ; cast one explicitly with :to(...)",
             dtype_names_for_msg(e->a), dtype_names_for_msg(e->b));
  const char *kind = e->scalar == LTENSOR_BOOL ? "boolean" : e->scalar == LTENSOR_INT64 ? "integer" :
                     e->scalar == LTENSOR_FLOAT64 ? "float" : "complex";
  ltl_error(L, fname, "strict promotion: a Lua %s would promote %s to %s; cast explicitly with :to(...)",
           kind, dtype_names_for_msg(e->a), dtype_names_for_msg(e->b));
}

ltensor_dtype ew_common_dtype(lua_State *L, const char *fname, operand *ops, int n) {
  /* two tensors of one dtype and tier: every mode agrees */
  if (n == 2 && ops[0].pin.dtype == ops[1].pin.dtype && ops[0].pin.tier == ops[1].pin.tier &&
      ops[0].pin.tier != LT_TIER_WEAK)
    return ops[0].pin.dtype;
  ltl_settings *S = ltl_settings_of(L);
  lt_pin pins[LT_MAX_DIMS];
  if (n > LT_MAX_DIMS) ltl_error(L, fname, "too many operands (%d)", n);
  for (int i = 0; i < n; i++) pins[i] = ops[i].pin;
  lt_promo_err e;
  ltensor_dtype out;
  int code = lt_result_type(S->promotion, pins, n, S->default_dtype, &out, &e);
  if (code != LT_PROMO_OK) raise_promo(L, fname, code, &e);
  return out;
}

int ew_not_implemented(lua_State *L, const char *fname, ltensor_dtype dt) {
  return ltl_error(L, fname, "\"%s_cpu\" not implemented for '%s'", fname, lt_torch_name(dt));
}

/* ====================================================================== */
/* the elementwise driver                                                 */
/* ====================================================================== */

/* The iterator's allocation callback: a new tensor on the Lua stack (the
   GC owns it; the state's caching allocator, lt_alloc.c, supplies the memory), with the
   layout the iterator chose.  Raises on out of memory, which is safe: the
   build holds nothing of its own when it calls this. */
static lt_tensor *ew_alloc(void *ud, ltensor_dtype dt, int ndim, const int64_t *shape, const int64_t *stride) {
  lt_tensor *t = ltl_push_new((lua_State *)ud, dt, ndim, shape);
  if (stride && ndim > 1) memcpy(t->stride, stride, sizeof(int64_t) * (size_t)ndim);
  return t;
}

/* The iterator's status as PyTorch's message. */
static void raise_iter(lua_State *L, const char *fname, int code, const lt_iter_err *e, const lt_tensor *out) {
  char b1[LT_SHAPE_STR_MAX], b2[LT_SHAPE_STR_MAX];
  switch (code) {
  case LT_ITER_BROADCAST:
    ltl_error(L, fname, "the size of tensor a (%I) must match the size of tensor b (%I) at non-singleton dimension %d",
             (lua_Integer)e->a, (lua_Integer)e->b, e->dim);
    break;
  case LT_ITER_OUT_CAST:
    ltl_error(L, fname, "result type %s can't be cast to the desired output type %s", lt_torch_name(e->from),
             lt_torch_name(e->to));
    break;
  case LT_ITER_OUT_SHAPE:
    ltl_error(L, fname, "output with shape %s doesn't match the broadcast shape %s",
             lt_shape_str(b1, sizeof b1, out->ndim, out->shape, "[]"), lt_shape_str(b2, sizeof b2, e->ndim, e->shape, "[]"));
    break;
  case LT_ITER_OUT_OVERLAP:
    ltl_error(L, fname, "unsupported operation: more than one element of the written-to tensor refers to a "
                       "single memory location. Please clone() the tensor before performing the operation.");
    break;
  case LT_ITER_ZERODIV:
    ltl_error(L, fname, "integer division by zero");
    break;
  default:
    ltl_error(L, fname, "not enough memory");
  }
}

/* Run kernel k over ops[0..n-1] (already classified).  cdt is the compute
   dtype of the inputs (in_kdt[i] per input when given), kout the dtype the
   kernel writes, rdt the result dtype.  out_idx: stack index of the
   written-to tensor, or 0 for a new one.  The build, checks and run are
   the iterator's (lt_iter_ew); this turns Lua values into its operands and
   its status into errors.  Leaves the output on top of the stack. */
lt_tensor *ew_run_in(lua_State *L, const char *fname, lt_loop_fn k, operand *ops, int n, ltensor_dtype cdt,
                            const ltensor_dtype *in_kdt, ltensor_dtype kout, ltensor_dtype rdt, int out_idx,
                            lt_kctx *ctx) {
  lt_iter_config cfg;
  cfg.out = out_idx ? ltl_check(L, out_idx) : NULL;
  cfg.out_dtype = rdt;
  cfg.kout = kout;
  cfg.nin = n;
  cfg.round_to = -1;
  cfg.alloc = ew_alloc;
  cfg.alloc_ud = L;
  cfg.pool = ltl_settings_of(L)->pool;
  int mixed = 0;   /* a tensor input whose dtype is not cdt */
  for (int i = 0; i < n; i++) {
    cfg.kin[i] = in_kdt ? in_kdt[i] : cdt;
    if (ops[i].weak) weak_tensor(L, &ops[i], cfg.kin[i]);
    else mixed |= ops[i].t->dtype != cdt;
    cfg.in[i] = ops[i].t;
  }
  /* PyTorch casts every tensor input to the common dtype before computing:
     when that is a 16-bit float (computed in float32) the rounding shows
     (int16 2049 + float16 1 is 2048). */
  if (mixed && (cdt == LTENSOR_FLOAT32 || cdt == LTENSOR_COMPLEX64)) {
    ltensor_dtype common = ew_common_dtype(L, fname, ops, n);
    if (lt_compute_dtype(common) == cdt && common != cdt) cfg.round_to = common;
  }
  lt_iter_err e;
  int code = lt_iter_ew(&cfg, k, ctx, &e);
  if (code != LT_ITER_OK) raise_iter(L, fname, code, &e, cfg.out);
  if (out_idx) lua_pushvalue(L, out_idx);
  return cfg.out;
}

lt_tensor *ew_run(lua_State *L, const char *fname, lt_loop_fn k, operand *ops, int n, ltensor_dtype cdt,
                         ltensor_dtype kout, ltensor_dtype rdt, int out_idx, lt_kctx *ctx) {
  return ew_run_in(L, fname, k, ops, n, cdt, NULL, kout, rdt, out_idx, ctx);
}

/* ---- the small-operand fast path ---------------------------------------- */
/* The tensor at idx (alive), or NULL: ltl_test with the settings fetched
   once by the caller. */
static inline lt_tensor *fast_tensor(lua_State *L, int idx, const ltl_settings *S) {
  lt_tensor *t = (lt_tensor *)lua_touserdata(L, idx);
  if (!t || !lua_getmetatable(L, idx)) return NULL;
  const void *mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  return mt == S->tensor_mt && t->storage ? t : NULL;
}

/* A binary op called with exactly two operands, both tensors of one dtype
   and shape, contiguous and small, or a tensor and a Lua number that does
   not change its dtype (torch mode: a float32/float64 tensor and any
   number, an integer tensor and an integer).  Such calls (the 1-element
   case above all) need no promotion, broadcasting, layout or threads: the
   kernel runs once on a new tensor.  Returns 0, having done nothing, for
   everything else, which then takes the general path (and its errors). */
int ew_fast_binary(lua_State *L, const ew *op, lt_kctx *ctx) {
  if (lua_gettop(L) != 2 || op->rule == R_BOOL) return 0;
  ltl_settings *S = ltl_settings_of(L);
  lt_tensor *a = fast_tensor(L, 1, S), *b = fast_tensor(L, 2, S);
  const lt_tensor *t;
  int sidx = 0;   /* stack index of a Lua number operand */
  if (a && b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
      if (a->shape[i] != b->shape[i]) return 0;
    t = a;
  } else {
    t = a ? a : b;
    sidx = a ? 2 : 1;
    if (!t || S->promotion != LT_PROMO_TORCH || lua_type(L, sidx) != LUA_TNUMBER) return 0;
    if (!(t->dtype == LTENSOR_FLOAT32 || t->dtype == LTENSOR_FLOAT64 ||
          (t->dtype != LTENSOR_BOOL && lt_is_integral(t->dtype) && lua_isinteger(L, sidx))))
      return 0;
  }
  ltensor_dtype dt = t->dtype;
  lt_loop_fn k = op->k[dt];
  if (!k || lt_compute_dtype(dt) != dt || (op->rule == R_FLOAT && lt_is_integral(dt))) return 0;
  int64_t n = lt_numel(t);
  if (n >= LT_GRAIN) return 0;
  if (n > 1 && (!lt_is_contiguous(a ? a : b) || (a && b && !lt_is_contiguous(b)))) return 0;
  lt_tensor *out = ltl_push_new(L, dt, t->ndim, t->shape);
  _Alignas(16) unsigned char buf[16];
  int64_t sz = (int64_t)lt_itemsize(dt);
  char *data[3] = { lt_data(out), a ? lt_data(a) : (char *)buf, b ? lt_data(b) : (char *)buf };
  int64_t st[3] = { sz, a ? sz : 0, b ? sz : 0 };
  if (sidx) ltl_store_lua(L, sidx, dt, (char *)buf);
  atomic_init(&ctx->err, 0);
  if (n > 0) k(data, st, n, ctx);
  if (atomic_load_explicit(&ctx->err, memory_order_relaxed) == LT_KERR_ZERODIV)
    ltl_error(L, op->name, "integer division by zero");
  return 1;
}

/* Result and compute dtypes of an op from the common dtype.  With a
   written-to tensor (out_idx), the safe-cast check comes first, as in
   PyTorch, where TensorIterator checks it before the kernel dispatch. */
void ew_op_dtypes(lua_State *L, const ew *op, ltensor_dtype common, int out_idx, ltensor_dtype *cdt,
                      ltensor_dtype *kout, ltensor_dtype *rdt) {
  if (op->rule == R_FLOAT && lt_is_integral(common)) common = ltl_settings_of(L)->default_dtype;
  *cdt = lt_compute_dtype(common);
  if (op->rule == R_BOOL) { *rdt = LTENSOR_BOOL; *kout = LTENSOR_BOOL; }
  else { *rdt = common; *kout = *cdt; }
  if (!op->k[*cdt]) {
    if (out_idx) {
      ltensor_dtype odt = ltl_check(L, out_idx)->dtype;
      if (!lt_can_cast(*rdt, odt))
        ltl_error(L, op->name, "result type %s can't be cast to the desired output type %s", lt_torch_name(*rdt),
                 lt_torch_name(odt));
    }
    ew_not_implemented(L, op->name, common);
  }
}

/* out= from an options table at idx: pushes the tensor and returns its
   index, or returns 0 (nothing pushed) */
int ew_opt_out(lua_State *L, int idx) {
  if (idx < 1 || lua_type(L, idx) != LUA_TTABLE || ltl_test(L, idx)) return 0;
  ltl_getopt(L, idx, "out");
  if (lua_isnil(L, -1)) { lua_pop(L, 1); return 0; }
  /* the option's own message: an argument error would number the slot the
     value was pushed to */
  lt_tensor *o = ltl_test(L, -1);
  if (!o) ltl_argerror(L, idx, lua_pushfstring(L, "option 'out': ltensor.Tensor expected, got %s", luaL_typename(L, -1)));
  if (!o->storage) ltl_argerror(L, idx, "option 'out': tensor was freed");
  return lua_gettop(L);
}

/* where the output goes: 1 for in-place, an out= option, or 0 */
int ew_out_index(lua_State *L, int inplace, int opts_idx) {
  if (inplace) { ltl_check(L, 1); return 1; }
  return opts_idx ? ew_opt_out(L, opts_idx) : 0;
}

/* The arguments after the operands: one slot, nil or an options table, whose
   keys are the op's own: out= (not for in-place ops, which write into self);
   div, round and gelu read their extra key (and accept it positionally as a
   string: div(a, b, "floor"), gelu(x, "tanh")) before calling here.  PyTorch
   refuses torch.exp(x, alpha=2) and torch.exp(x, 2): so do we, rather than
   drop them. */
static const char *const OPTS_OUT[] = {"out", NULL};
static const char *const OPTS_DIV[] = {"rounding_mode", "out", NULL};
static const char *const OPTS_ROUND[] = {"decimals", "out", NULL};
static const char *const OPTS_GELU[] = {"approximate", "out", NULL};
static const char *const OPTS_LOGIT[] = {"eps", "out", NULL};
static const char *const OPTS_NAN_TO_NUM[] = {"nan", "posinf", "neginf", "out", NULL};
static void ew_check_args(lua_State *L, const ew *op, int inplace, int slot) {
  int ty = lua_type(L, slot);
  if (ty == LUA_TUSERDATA && slot == 2 && lua_gettop(L) == 2 && lua_rawequal(L, 1, 2) &&
      (strcmp(op->name, "neg") == 0 || strcmp(op->name, "bitwise_not") == 0))
    return;   /* __unm / __bnot: Lua passes the operand twice */
  const char *const *known = OPTS_OUT;
  int str_ok = 0;   /* the op's extra key may come positionally as a string */
  if (strcmp(op->name, "div") == 0) known = OPTS_DIV, str_ok = 1;
  else if (strcmp(op->name, "round") == 0) known = OPTS_ROUND;
  else if (strcmp(op->name, "gelu") == 0) known = OPTS_GELU, str_ok = 1;
  else if (strcmp(op->name, "logit") == 0) known = OPTS_LOGIT;
  else if (strcmp(op->name, "nan_to_num") == 0) known = OPTS_NAN_TO_NUM;
  ltl_check_nargs(L, slot);
  if (ty == LUA_TTABLE && !ltl_test(L, slot)) {
    if (inplace) {
      /* no out= for in-place ops: check against the op's keys less "out" */
      const char *own[5] = {NULL, NULL, NULL, NULL, NULL};
      int n = 0;
      for (const char *const *q = known; *q; q++)
        if (strcmp(*q, "out") != 0) own[n++] = *q;
      ltl_check_opts(L, slot, ltl_running_name(L), own);
    } else {
      ltl_check_opts(L, slot, op->name, known);
    }
  } else if (ty != LUA_TNIL && ty != LUA_TNONE && !(str_ok && ty == LUA_TSTRING)) {
    ltl_typeerror(L, slot, "options table");
  }
}

/* generic binary: args (a, b [, opts]) */
static int binary_k(lua_State *L, const ew *op, int inplace, lt_kctx *ctx) {
  if (lua_gettop(L) >= 3) ew_check_args(L, op, inplace, 3);
  if (!inplace && ew_fast_binary(L, op, ctx)) return 1;
  operand ops[2];
  ew_classify(L, 1, op->name, &ops[0]);
  ew_classify(L, 2, op->name, &ops[1]);
  int out_idx = ew_out_index(L, inplace, lua_gettop(L) >= 3 ? 3 : 0);
  ltensor_dtype common = ew_common_dtype(L, op->name, ops, 2), cdt, kout, rdt;
  ew_op_dtypes(L, op, common, out_idx, &cdt, &kout, &rdt);
  ctx->heavy = op->heavy;
  ew_run(L, op->name, op->k[cdt], ops, 2, cdt, kout, rdt, out_idx, ctx);
  return 1;
}
int ew_binary(lua_State *L, const ew *op, int inplace) {
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  return binary_k(L, op, inplace, &ctx);
}

/* generic unary: args (a [, opts]) */
int ew_unary_k(lua_State *L, const ew *op, int inplace, lt_kctx *ctx) {
  operand o;
  ltl_check(L, 1);
  if (lua_gettop(L) >= 2) ew_check_args(L, op, inplace, 2);
  ew_classify(L, 1, op->name, &o);
  int out_idx = ew_out_index(L, inplace, lua_gettop(L) >= 2 ? 2 : 0);
  ltensor_dtype cdt, kout, rdt;
  ew_op_dtypes(L, op, o.t->dtype, out_idx, &cdt, &kout, &rdt);
  ctx->heavy = op->heavy;
  ew_run(L, op->name, op->k[cdt], &o, 1, cdt, kout, rdt, out_idx, ctx);
  return 1;
}
int ew_unary(lua_State *L, const ew *op, int inplace) {
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  return ew_unary_k(L, op, inplace, &ctx);
}

