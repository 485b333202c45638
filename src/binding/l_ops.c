/* l_ops.c -- the elementwise ops and the operator metamethods: each is a
   descriptor (name, kernel table, dtype rule) run by the driver in l_ew.c. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "l_ew.h"

/* luaconf.h's l_floor would shadow the floor op's function name */
#undef l_floor

/* ====================================================================== */
/* arithmetic                                                             */
/* ====================================================================== */
/* Every descriptor of an op on the list takes its dtype rule from the line
   (LT_RULE_<name>, l_oplist.h): the list is what runs, and
   spec/oplist_spec.lua checks each line's rule against T.<name> on every
   dtype class. */
static const ew E_add = {"add", lt_k_add, LT_RULE_add, 0};
static const ew E_sub = {"sub", lt_k_sub, LT_RULE_sub, 0};
static const ew E_add_alpha = {"add", lt_k_add_alpha, LT_RULE_add, 0};
static const ew E_sub_alpha = {"sub", lt_k_add_alpha, LT_RULE_sub, 0};
static const ew E_mul = {"mul", lt_k_mul, LT_RULE_mul, 0};
static const ew E_div = {"div", lt_k_div, LT_RULE_div, 0};
static const ew E_true_divide = {"true_divide", lt_k_div, LT_RULE_div, 0};
/* div with a rounding mode keeps the common dtype (int / int stays int), as
   floor_divide: the variants of the div line, not lines of their own */
static const ew E_div_trunc = {"div", lt_k_div_trunc, R_SAME, 0};
static const ew E_div_floor = {"div", lt_k_div_floor, R_SAME, 0};
static const ew E_floor_divide = {"floor_divide", lt_k_div_floor, R_SAME, 0};
static const ew E_remainder = {"remainder", lt_k_remainder, LT_RULE_remainder, 0};
static const ew E_fmod = {"fmod", lt_k_fmod, LT_RULE_fmod, 0};
static const ew E_pow = {"pow", lt_k_pow, LT_RULE_pow, 1};
static const ew E_atan2 = {"atan2", lt_k_atan2, LT_RULE_atan2, 1};
static const ew E_maximum = {"maximum", lt_k_maximum, LT_RULE_maximum, 0};
static const ew E_minimum = {"minimum", lt_k_minimum, LT_RULE_minimum, 0};

/* alpha: a number at 3, or opts.alpha when 3 is a table.  Returns 1 when
   given (and not the identity), filling ctx for the add_alpha kernel. */
static int read_alpha(lua_State *L, const char *fname, int negate, lt_kctx *ctx, ltensor_dtype common) {
  int idx = 3;
  if (lua_gettop(L) < 3) return 0;
  if (lua_type(L, 3) == LUA_TTABLE && !ltl_test(L, 3)) {
    static const char *const ALPHA_OPTS[] = {"alpha", "out", NULL};
    static const char *const ALPHA_ONLY[] = {"alpha", NULL};
    /* in-place (add_, sub_) writes into self: no out= */
    ltl_check_opts(L, 3, fname, fname[strlen(fname) - 1] == '_' ? ALPHA_ONLY : ALPHA_OPTS);
    ltl_getopt(L, 3, "alpha");
    idx = lua_gettop(L);
  }
  int ty = lua_type(L, idx);
  if (ty == LUA_TNIL || ty == LUA_TNONE) return 0;
  if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN)
    return ltl_typeerror(L, idx, "number or boolean (alpha)");
  if (ty == LUA_TNUMBER && !lua_isinteger(L, idx) && lt_is_integral(common))
    ltl_error(L, fname, "for integral input tensors, argument alpha must not be a floating point number");
  if (ty == LUA_TBOOLEAN && common != LTENSOR_BOOL)
    ltl_error(L, fname, "boolean alpha only supported for Boolean results");
  if (ty == LUA_TBOOLEAN) {
    ctx->i1 = lua_toboolean(L, idx);
  } else if (lua_isinteger(L, idx)) {
    lua_Integer a = lua_tointeger(L, idx);
    ctx->i1 = negate ? (int64_t)(0u - (uint64_t)a) : a;
    ctx->f1 = negate ? -(double)a : (double)a;
  } else {
    double a = lua_tonumber(L, idx);
    ctx->f1 = negate ? -a : a;
    ctx->i1 = lt_f64_to_i64(ctx->f1);
  }
  ctx->c1 = ctx->f1;
  if (idx != 3) lua_pop(L, 1);
  return 1;
}

static void sub_check(lua_State *L, const char *fname, const operand *a, const operand *b) {
  if (a->pin.dtype == LTENSOR_BOOL && b->pin.dtype == LTENSOR_BOOL)
    ltl_error(L, fname, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                       "Use the `^` or `logical_xor()` operator instead.");
  if (a->pin.dtype == LTENSOR_BOOL || b->pin.dtype == LTENSOR_BOOL)
    ltl_error(L, fname, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

static int add_sub(lua_State *L, int inplace, int is_sub) {
  const char *fname = is_sub ? (inplace ? "sub_" : "sub") : (inplace ? "add_" : "add");
  ltl_check_nargs(L, 3);   /* (a, b [, alpha | opts]) */
  if (!inplace) {
    lt_kctx fctx;
    memset(&fctx, 0, sizeof fctx);
    if (ew_fast_binary(L, is_sub ? &E_sub : &E_add, &fctx)) return 1;
  }
  operand ops[2];
  ew_classify(L, 1, fname, &ops[0]);
  ew_classify(L, 2, fname, &ops[1]);
  if (is_sub) sub_check(L, fname, &ops[0], &ops[1]);
  int top = lua_gettop(L);
  int out_idx = ew_out_index(L, inplace, top >= 3 ? top : 0);
  ltensor_dtype common = ew_common_dtype(L, fname, ops, 2), cdt, kout, rdt;
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  const ew *op = is_sub ? &E_sub : &E_add;
  if (top >= 3 && read_alpha(L, fname, is_sub, &ctx, common)) op = is_sub ? &E_sub_alpha : &E_add_alpha;
  ew_op_dtypes(L, op, common, out_idx, &cdt, &kout, &rdt);
  ew_run(L, fname, op->k[cdt], ops, 2, cdt, kout, rdt, out_idx, &ctx);
  return 1;
}
static int l_add(lua_State *L) { return add_sub(L, 0, 0); }
static int l_add_(lua_State *L) { return add_sub(L, 1, 0); }
static int l_sub(lua_State *L) { return add_sub(L, 0, 1); }
static int l_sub_(lua_State *L) { return add_sub(L, 1, 1); }

/* a - b with the operands in either order (rsub: b - a) */
static int l_rsub(lua_State *L) {
  lua_settop(L, lua_gettop(L) < 2 ? 2 : lua_gettop(L));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_replace(L, 1);
  lua_replace(L, 2);
  return add_sub(L, 0, 1);
}

static int l_mul(lua_State *L) { return ew_binary(L, &E_mul, 0); }
static int l_mul_(lua_State *L) { return ew_binary(L, &E_mul, 1); }

/* An op's mode argument at idx (div's rounding_mode, gelu's approximate):
   a string there, or the key field of an options table there (known: its
   keys); NULL when neither. */
static const char *mode_arg(lua_State *L, int idx, const char *fname, const char *key, const char *const *known) {
  if (lua_type(L, idx) == LUA_TSTRING) return lua_tostring(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) return NULL;
  ltl_check_opts(L, idx, fname, known);
  ltl_getopt(L, idx, key);
  const char *m = lua_tostring(L, -1);   /* stays valid: the table holds it */
  lua_pop(L, 1);
  return m;
}

/* div(a, b [, rounding_mode | {rounding_mode=, out=}]) */
static const ew *div_kind(lua_State *L, const char *fname) {
  if (lua_gettop(L) < 3) return &E_div;
  int ty = lua_type(L, 3);
  if (ty != LUA_TSTRING && ty != LUA_TTABLE && ty != LUA_TNIL) ltl_typeerror(L, 3, "string or table (rounding_mode)");
  static const char *const DIV_OPTS[] = {"rounding_mode", "out", NULL};
  const char *mode = mode_arg(L, 3, "div", "rounding_mode", DIV_OPTS);
  if (!mode) return &E_div;
  if (strcmp(mode, "trunc") == 0) return &E_div_trunc;
  if (strcmp(mode, "floor") == 0) return &E_div_floor;
  ltl_error(L, fname, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", mode);
  return NULL;
}
static int l_div(lua_State *L) { return ew_binary(L, div_kind(L, "div"), 0); }
static int l_div_(lua_State *L) { return ew_binary(L, div_kind(L, "div_"), 1); }
static int l_true_divide(lua_State *L) { return ew_binary(L, &E_true_divide, 0); }
static int l_floor_divide(lua_State *L) { return ew_binary(L, &E_floor_divide, 0); }
static int l_floor_divide_(lua_State *L) { return ew_binary(L, &E_floor_divide, 1); }
static int l_remainder(lua_State *L) { return ew_binary(L, &E_remainder, 0); }
static int l_remainder_(lua_State *L) { return ew_binary(L, &E_remainder, 1); }
static int l_fmod(lua_State *L) { return ew_binary(L, &E_fmod, 0); }
static int l_fmod_(lua_State *L) { return ew_binary(L, &E_fmod, 1); }
static int l_atan2(lua_State *L) { return ew_binary(L, &E_atan2, 0); }
static int l_atan2_(lua_State *L) { return ew_binary(L, &E_atan2, 1); }

/* The plain binary functions of the op list (LT_OPS_BINARY_PLAIN):
   libm-class, so heavy; t:name_ only where the line says so. */
#define BINARY_DEFINE(nm, arity, fam, rule, diff, inpl)                         \
  static const ew E_##nm = {#nm, lt_k_##nm, rule, 1};                           \
  static int l_##nm(lua_State *L) { return ew_binary(L, &E_##nm, 0); }              \
  BINARY_IP_##inpl(nm)
#define BINARY_IP_0(nm)
#define BINARY_IP_1(nm) static int l_##nm##_(lua_State *L) { return ew_binary(L, &E_##nm, 1); }
LT_OPS_BINARY_PLAIN(BINARY_DEFINE)

static int minmax(lua_State *L, const ew *op, int inplace) {
  for (int i = 1; i <= 2; i++) {
    lt_tensor *t = ltl_test(L, i);
    if (t && lt_is_complex(t->dtype)) ltl_error(L, op->name, "%s not implemented for complex tensors.", op->name);
  }
  return ew_binary(L, op, inplace);
}
static int l_maximum(lua_State *L) { return minmax(L, &E_maximum, 0); }
static int l_minimum(lua_State *L) { return minmax(L, &E_minimum, 0); }

static int pow_impl(lua_State *L, int inplace) {
  lt_tensor *base = ltl_test(L, 1);
  if (base && lt_is_integral(base->dtype) && lua_isinteger(L, 2) && lua_tointeger(L, 2) < 0)
    ltl_error(L, "pow", "Integers to negative integer powers are not allowed.");
  return ew_binary(L, &E_pow, inplace);
}
static int l_pow(lua_State *L) { return pow_impl(L, 0); }
static int l_pow_(lua_State *L) { return pow_impl(L, 1); }

/* ====================================================================== */
/* comparisons, logical and bitwise                                       */
/* ====================================================================== */
#define CMP(nm, arity, fam, rule, diff, inpl)                                   \
  static const ew E_##nm = {#nm, lt_k_##nm, rule, 0};                              \
  static int l_##nm(lua_State *L) { return ew_binary(L, &E_##nm, 0); }
LT_OPS_COMPARE(CMP)

/* Lua's rule for bitwise operands: a float must have an exact integer value */
static void int_operands(lua_State *L, int n, const char *fname) {
  for (int i = 1; i <= n; i++) {
    if (lua_type(L, i) == LUA_TNUMBER && !lua_isinteger(L, i)) {
      double d = lua_tonumber(L, i);
      lua_Integer v = 0;
      if (d != floor(d) || !lua_numbertointeger(d, &v)) ltl_error(L, fname, "bad argument #%d (number has no integer representation)", i);
      lua_pushinteger(L, v);
      lua_replace(L, i);
    }
  }
}
/* the shift kernels keep their short names */
#define lt_k_bitwise_left_shift lt_k_lshift
#define lt_k_bitwise_right_shift lt_k_rshift
#define BITWISE(nm, arity, fam, rule, diff, inpl)                               \
  static const ew E_##nm = {#nm, lt_k_##nm, rule, 0};                            \
  static int l_##nm(lua_State *L) { int_operands(L, 2, #nm); return ew_binary(L, &E_##nm, 0); } \
  static int l_##nm##_(lua_State *L) { int_operands(L, 2, #nm "_"); return ew_binary(L, &E_##nm, 1); }
LT_OPS_BITWISE(BITWISE)

/* ====================================================================== */
/* unary                                                                  */
/* ====================================================================== */
/* The plain unary ops of the op list (LT_OPS_UNARY, l_oplist.h): each gets
   its descriptor E_<name>, l_<name> / l_<name>_ and its registration
   entries from the list.  They are libm-class functions: compute-bound
   (heavy = 1). */
#define UNARY_DEFINE(nm, arity, fam, rule, diff, inpl)                          \
  static const ew E_##nm = {#nm, lt_k_##nm, rule, 1};                           \
  static int l_##nm(lua_State *L) { return ew_unary(L, &E_##nm, 0); }              \
  static int l_##nm##_(lua_State *L) { return ew_unary(L, &E_##nm, 1); }
LT_OPS_UNARY(UNARY_DEFINE)

/* ops whose dtype checks come before PyTorch's kernel dispatch, with its
   messages (the kernel tables have no entry for the remaining bad dtypes) */
static void relu_check(lua_State *L, const lt_tensor *t) {
  if (t->dtype == LTENSOR_BOOL) ltl_error(L, "relu", "Boolean inputs not supported for relu");
  if (lt_is_complex(t->dtype)) ltl_error(L, "relu", "clamp is not supported for complex types");
}
#define ROUNDING_CHECK(nm)                                                                 \
  static void nm##_check(lua_State *L, const lt_tensor *t) {                               \
    if (lt_is_complex(t->dtype)) ltl_error(L, #nm, #nm " is not supported for complex inputs"); \
  }
ROUNDING_CHECK(floor) ROUNDING_CHECK(ceil) ROUNDING_CHECK(trunc)
#define UNARY_CHECKED(nm)                                                       \
  static const ew E_##nm = {#nm, lt_k_##nm, LT_RULE_##nm, 0};                              \
  static int l_##nm(lua_State *L) { nm##_check(L, ltl_check(L, 1)); return ew_unary(L, &E_##nm, 0); } \
  static int l_##nm##_(lua_State *L) { nm##_check(L, ltl_check(L, 1)); return ew_unary(L, &E_##nm, 1); }
#define NOT_COMPLEX(nm, msg)                                                               \
  static void nm##_check(lua_State *L, const lt_tensor *t) {                               \
    if (lt_is_complex(t->dtype)) ltl_error(L, #nm, msg);                                   \
  }
NOT_COMPLEX(deg2rad, "deg2rad is not supported for complex tensors.")
NOT_COMPLEX(rad2deg, "rad2deg is not supported for complex tensors.")
NOT_COMPLEX(signbit, "signbit is not implemented for complex tensors.")
NOT_COMPLEX(isposinf, "isposinf does not support complex inputs.")
NOT_COMPLEX(isneginf, "isneginf does not support complex inputs.")
UNARY_CHECKED(relu) UNARY_CHECKED(floor) UNARY_CHECKED(ceil)
UNARY_CHECKED(trunc) UNARY_CHECKED(deg2rad) UNARY_CHECKED(rad2deg)
/* bool-valued tests without an in-place form */
#define UNARY_B_CHECKED(nm)                                                     \
  static const ew E_##nm = {#nm, lt_k_##nm, LT_RULE_##nm, 0};                            \
  static int l_##nm(lua_State *L) { nm##_check(L, ltl_check(L, 1)); return ew_unary(L, &E_##nm, 0); }
UNARY_B_CHECKED(signbit) UNARY_B_CHECKED(isposinf) UNARY_B_CHECKED(isneginf)

/* sgn: sign for real dtypes (bool stays bool), z / |z| for complex */
static const ew E_sgn = {"sgn", lt_k_sgn, LT_RULE_sgn, 0};
static int l_sgn(lua_State *L) { return ew_unary(L, &E_sgn, 0); }
static int l_sgn_(lua_State *L) { return ew_unary(L, &E_sgn, 1); }

/* The optional numbers of an op taken positionally from slot 2 on (nil
   skips one) and from an options table after them (keys[i], which wins):
   vals[i] / given[i] for each of the n keys.  The numbers are removed, so
   the options table (if any) is left at slot 2 for the driver's checks. */
static void num_args(lua_State *L, const char *fname, const char *const *keys, int n, double *vals, int *given) {
  int i = 0;
  while (i < n && lua_gettop(L) >= 2) {
    int ty = lua_type(L, 2);
    if (ty == LUA_TNUMBER) { vals[i] = lua_tonumber(L, 2); given[i] = 1; }
    else if (ty != LUA_TNIL) break;
    lua_remove(L, 2);
    i++;
  }
  if (i == n && !lua_isnoneornil(L, 2) && (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2)))
    ltl_error(L, fname, "bad argument #%d (options table expected, got %s)", n + 2, luaL_typename(L, 2));
  if (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2)) return;
  for (i = 0; i < n; i++) {
    ltl_getopt(L, 2, keys[i]);
    if (!lua_isnil(L, -1)) {
      if (lua_type(L, -1) != LUA_TNUMBER)
        ltl_error(L, fname, "option '%s' must be a number (got %s)", keys[i], luaL_typename(L, -1));
      vals[i] = lua_tonumber(L, -1);
      given[i] = 1;
    }
    lua_pop(L, 1);
  }
}

/* logit(x [, eps] [, {eps=, out=}]): log(z / (1 - z)), z = x clamped to
   [eps, 1 - eps] when eps is given and not negative (PyTorch: a negative
   eps, like None, clamps nothing) */
static const ew E_logit = {"logit", lt_k_logit, LT_RULE_logit, 1};
static int logit_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_is_complex(t->dtype)) ew_not_implemented(L, "logit", t->dtype);
  static const char *const KEYS[] = {"eps"};
  double eps = -1.0;
  int given = 0;
  num_args(L, inplace ? "logit_" : "logit", KEYS, 1, &eps, &given);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.mode = given && eps >= 0;
  ctx.f1 = eps;
  return ew_unary_k(L, &E_logit, inplace, &ctx);
}
static int l_logit(lua_State *L) { return logit_impl(L, 0); }
static int l_logit_(lua_State *L) { return logit_impl(L, 1); }

/* nan_to_num(x [, nan [, posinf [, neginf]]] [, {nan=, posinf=, neginf=,
   out=}]): NaN -> nan (0), +inf -> posinf, -inf -> neginf (the largest /
   lowest finite value of x's dtype by default); integral and bool input is
   copied unchanged; complex is refused, as PyTorch 1.13 */
static const ew E_nan_to_num = {"nan_to_num", lt_k_nan_to_num, LT_RULE_nan_to_num, 0};
static double dtype_max(ltensor_dtype dt) {
  switch (dt) {
  case LTENSOR_FLOAT16: return 65504.0;
  case LTENSOR_BFLOAT16: return 3.38953138925153547590470800371487866880e38;
  case LTENSOR_FLOAT32: return FLT_MAX;
  default: return DBL_MAX;
  }
}
static int nan_to_num_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_is_complex(t->dtype))
    ltl_error(L, "nan_to_num", "\"nan_to_num\" not implemented for '%s'", lt_torch_name(t->dtype));
  static const char *const KEYS[] = {"nan", "posinf", "neginf"};
  double max = dtype_max(t->dtype), v[3] = {0.0, max, -max};
  int given[3] = {0, 0, 0};
  num_args(L, inplace ? "nan_to_num_" : "nan_to_num", KEYS, 3, v, given);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.c1 = v[0];
  ctx.f1 = v[1];
  ctx.f2 = v[2];
  return ew_unary_k(L, &E_nan_to_num, inplace, &ctx);
}
static int l_nan_to_num(lua_State *L) { return nan_to_num_impl(L, 0); }
static int l_nan_to_num_(lua_State *L) { return nan_to_num_impl(L, 1); }

/* round(x [, decimals | {decimals=, out=}]): PyTorch rounds x * 10^d (or
   x / 10^-d for negative d) half to even, in the op's compute type, and
   only floating dtypes take decimals */
static const ew E_round = {"round", lt_k_round, LT_RULE_round, 0};
static const ew E_round_dec = {"round", lt_k_round_dec, LT_RULE_round, 0};
static int round_impl(lua_State *L, int inplace) {
  ltl_check(L, 1);
  lua_Integer d = 0;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    d = ltl_checkinteger(L, 2);
    lua_remove(L, 2);   /* what follows may be an options table */
  } else if (lua_type(L, 2) == LUA_TTABLE && !ltl_test(L, 2)) {
    static const char *const ROUND_OPTS[] = {"decimals", "out", NULL};
    ltl_check_opts(L, 2, "round", ROUND_OPTS);
    ltl_getopt(L, 2, "decimals");
    if (!lua_isnil(L, -1)) d = ltl_checkinteger(L, -1);
    lua_pop(L, 1);
  }
  if (d == 0) return ew_unary(L, &E_round, inplace);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  if (d > 400) d = 400;     /* 10^400 is already inf in double: same result, no overflow of -d */
  if (d < -400) d = -400;
  ctx.mode = d < 0;
  ctx.f1 = pow(10.0, (double)(d < 0 ? -d : d));
  return ew_unary_k(L, &E_round_dec, inplace, &ctx);
}
static int l_round(lua_State *L) { return round_impl(L, 0); }
static int l_round_(lua_State *L) { return round_impl(L, 1); }
#define UNARY_B(nm)                                                             \
  static const ew E_##nm = {#nm, lt_k_##nm, LT_RULE_##nm, 0};                            \
  static int l_##nm(lua_State *L) { return ew_unary(L, &E_##nm, 0); }
UNARY_B(logical_not) UNARY_B(isnan) UNARY_B(isinf) UNARY_B(isfinite)

static const ew E_neg = {"neg", lt_k_neg, LT_RULE_neg, 0};
static int neg_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->dtype == LTENSOR_BOOL)
    ltl_error(L, "neg", "Negation, the `-` operator, on a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return ew_unary(L, &E_neg, inplace);
}
static int l_neg(lua_State *L) { return neg_impl(L, 0); }
static int l_neg_(lua_State *L) { return neg_impl(L, 1); }

static const ew E_bitwise_not = {"bitwise_not", lt_k_bitwise_not, LT_RULE_bitwise_not, 0};
static int l_bitwise_not(lua_State *L) { return ew_unary(L, &E_bitwise_not, 0); }
static int l_bitwise_not_(lua_State *L) { return ew_unary(L, &E_bitwise_not, 1); }

static const ew E_square = {"square", lt_k_square, LT_RULE_square, 0};
static int square_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->dtype == LTENSOR_BOOL && !inplace) {   /* as PyTorch: pow(bool, 2) is int64 */
    lua_settop(L, 1);
    lt_tensor *c = ltl_push_new_like(L, t, LTENSOR_INT64);
    lt_copy_into(c, t);
    lua_replace(L, 1);
  }
  return ew_unary(L, &E_square, inplace);
}
static int l_square(lua_State *L) { return square_impl(L, 0); }
static int l_square_(lua_State *L) { return square_impl(L, 1); }

/* complex -> real ops: kernel input is the complex compute dtype */
static int complex_to_real(lua_State *L, const char *fname, const lt_loop_fn *k, int inplace) {
  operand o;
  ltl_check(L, 1);
  ew_classify(L, 1, fname, &o);
  ltensor_dtype cdt = lt_compute_dtype(o.t->dtype);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  int out_idx = ew_out_index(L, inplace, lua_gettop(L) >= 2 ? 2 : 0);
  ew_run(L, fname, k[cdt], &o, 1, cdt, lt_to_real(cdt), lt_to_real(o.t->dtype), out_idx, &ctx);
  return 1;
}

static const ew E_abs = {"abs", lt_k_abs, LT_RULE_abs, 0};
static int abs_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_is_complex(t->dtype)) return complex_to_real(L, "abs", lt_k_cabs, inplace);
  return ew_unary(L, &E_abs, inplace);
}
static int l_abs(lua_State *L) { return abs_impl(L, 0); }
static int l_abs_(lua_State *L) { return abs_impl(L, 1); }

static const ew E_angle = {"angle", lt_k_angle_real, R_FLOAT, 0};
static int l_angle(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_is_complex(t->dtype)) return complex_to_real(L, "angle", lt_k_angle, 0);
  return ew_unary(L, &E_angle, 0);
}

static const ew E_sign_c = {"sign", lt_k_sign, R_SAME, 0};
static int sign_impl(lua_State *L, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_is_complex(t->dtype))
    ltl_error(L, "sign", "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.");
  return ew_unary(L, &E_sign_c, inplace);
}
static int l_sign2(lua_State *L) { return sign_impl(L, 0); }
static int l_sign2_(lua_State *L) { return sign_impl(L, 1); }

/* gelu(x [, {approximate = "none"|"tanh"}]) */
static const ew E_gelu = {"gelu", lt_k_gelu, LT_RULE_gelu, 1};
static const ew E_gelu_tanh = {"gelu", lt_k_gelu_tanh, LT_RULE_gelu, 1};
static const ew *gelu_kind(lua_State *L) {
  static const char *const GELU_OPTS[] = {"approximate", "out", NULL};
  const char *a = mode_arg(L, 2, "gelu", "approximate", GELU_OPTS);
  if (!a || strcmp(a, "none") == 0) return &E_gelu;
  if (strcmp(a, "tanh") == 0) return &E_gelu_tanh;
  ltl_error(L, "gelu", "approximate argument must be either none or tanh.");
  return NULL;
}
static int l_gelu(lua_State *L) { const ew *e = gelu_kind(L); return ew_unary(L, e, 0); }
static int l_gelu_(lua_State *L) { const ew *e = gelu_kind(L); return ew_unary(L, e, 1); }

/* real/imag: views of a complex tensor's parts; conj: a copy */
static int real_imag(lua_State *L, int imag) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  if (!lt_is_complex(t->dtype)) {
    if (imag) return ltl_error(L, "imag", "imag is not implemented for tensors with non-complex dtypes.");
    lua_settop(L, 1);
    return 1;
  }
  int64_t st[LT_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) st[i] = t->stride[i] * 2;
  lt_tensor *v = ltl_push_view(L, t, t->ndim, t->shape, st, t->offset * 2 + imag);
  v->dtype = lt_to_real(t->dtype);
  return 1;
}
static int l_real(lua_State *L) { return real_imag(L, 0); }
static int l_imag(lua_State *L) { return real_imag(L, 1); }
static const ew E_conj = {"conj", lt_k_conj, R_SAME, 0};
static int l_conj(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  if (!lt_is_complex(t->dtype)) { lua_settop(L, 1); return 1; }
  return ew_unary(L, &E_conj, 0);
}

/* ====================================================================== */
/* clamp, where, lerp                                                     */
/* ====================================================================== */
static int l_maximum(lua_State *L);
static int l_minimum(lua_State *L);

/* clamp(x, min, max) with nil bounds allowed; which: 0 both, 1 min only, 2 max only */
/* x and the bounds present (slots imin/imax, 0 when absent) as operands */
static int clamp_operands(lua_State *L, const char *fname, int imin, int imax, operand *ops) {
  int n = 0;
  ew_classify(L, 1, fname, &ops[n++]);
  if (imin) ew_classify(L, imin, fname, &ops[n++]);
  if (imax) ew_classify(L, imax, fname, &ops[n++]);
  return n;
}

static int clamp_impl(lua_State *L, int inplace, int which) {
  const char *fname = inplace ? "clamp_" : "clamp";
  lt_tensor *x = ltl_check(L, 1);
  ltl_check_nargs(L, which == 0 ? 3 : 2);   /* lua_settop below would drop the rest */
  int imin = 0, imax = 0;
  if (which == 0) { imin = 2; imax = 3; }
  else if (which == 1) imin = 2;
  else imax = 2;
  lua_settop(L, 3);
  if (imin && lua_isnil(L, imin)) imin = 0;
  if (imax && lua_isnil(L, imax)) imax = 0;
  if (!imin && !imax) return ltl_error(L, fname, "at least one of 'min' or 'max' must not be None");
  if (lt_is_complex(x->dtype)) return ltl_error(L, fname, "clamp is not supported for complex types");
  if ((imin && ltl_test(L, imin)) || (imax && ltl_test(L, imax))) {
    /* tensor bounds: minimum(maximum(x, min), max) with promotion; the
       in-place safe-cast check, then the kernel's dtype check, come first */
    operand ops[3];
    int n = clamp_operands(L, fname, imin, imax, ops);
    ltensor_dtype common = ew_common_dtype(L, fname, ops, n);
    if (inplace && !lt_can_cast(common, x->dtype))
      return ltl_error(L, fname, "result type %s can't be cast to the desired output type %s", lt_torch_name(common),
                      lt_torch_name(x->dtype));
    if (lt_is_complex(common)) return ew_not_implemented(L, "clamp", common);
    lua_pushvalue(L, 1);
    if (imin) {
      lua_pushcfunction(L, l_maximum);
      lua_insert(L, -2);
      lua_pushvalue(L, imin);
      lua_call(L, 2, 1);
    }
    if (imax) {
      lua_pushcfunction(L, l_minimum);
      lua_insert(L, -2);
      lua_pushvalue(L, imax);
      lua_call(L, 2, 1);
    }
    if (inplace) {
      ltl_copy(L, fname, x, ltl_check(L, -1));
      lua_settop(L, 1);
    }
    return 1;
  }
  operand ops[3];
  int n = clamp_operands(L, fname, imin, imax, ops);
  ltensor_dtype common = ew_common_dtype(L, fname, ops, n);
  ltensor_dtype cdt = lt_compute_dtype(common);
  if (!lt_k_clamp[cdt]) ew_not_implemented(L, fname, common);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  unsigned char buf[16];
  if (imin) {
    ltl_store_lua(L, imin, cdt, (char *)buf);
    ctx.has1 = 1;
    ctx.i1 = lt_load_i64(cdt, buf);
    ctx.f1 = lt_load_f64(cdt, buf);
  }
  if (imax) {
    ltl_store_lua(L, imax, cdt, (char *)buf);
    ctx.has2 = 1;
    ctx.i2 = lt_load_i64(cdt, buf);
    ctx.f2 = lt_load_f64(cdt, buf);
  }
  ctx.mode = (imin && ctx.f1 != ctx.f1) || (imax && ctx.f2 != ctx.f2);
  int out_idx = ew_out_index(L, inplace, 0);
  ew_run(L, fname, lt_k_clamp[cdt], ops, 1, cdt, cdt, common, out_idx, &ctx);
  return 1;
}
static int l_clamp(lua_State *L) { return clamp_impl(L, 0, 0); }
static int l_clamp_(lua_State *L) { return clamp_impl(L, 1, 0); }
static int l_clamp_min(lua_State *L) { return clamp_impl(L, 0, 1); }
static int l_clamp_min_(lua_State *L) { return clamp_impl(L, 1, 1); }
static int l_clamp_max(lua_State *L) { return clamp_impl(L, 0, 2); }
static int l_clamp_max_(lua_State *L) { return clamp_impl(L, 1, 2); }

/* T.where(cond, a, b): a and b may be Lua scalars */
static int where_impl(lua_State *L) {
  lt_tensor *c = ltl_check(L, 1);
  if (c->dtype != LTENSOR_BOOL && c->dtype != LTENSOR_UINT8)
    return ltl_error(L, "where", "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                    lt_torch_name(c->dtype));
  operand ops[3];
  ew_classify(L, 1, "where", &ops[0]);
  ew_classify(L, 2, "where", &ops[1]);
  ew_classify(L, 3, "where", &ops[2]);
  ltensor_dtype common = ew_common_dtype(L, "where", ops + 1, 2);
  ltensor_dtype cdt = lt_compute_dtype(common);
  ltensor_dtype in_kdt[3] = { LTENSOR_BOOL, cdt, cdt };
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  static const char *const WHERE_OPTS[] = {"out", NULL};
  if (lua_gettop(L) >= 4) ltl_check_opts(L, 4, "where", WHERE_OPTS);
  int out_idx = lua_gettop(L) >= 4 ? ew_opt_out(L, 4) : 0;
  ew_run_in(L, "where", lt_k_where[cdt], ops, 3, cdt, in_kdt, cdt, common, out_idx, &ctx);
  return 1;
}
static int l_where(lua_State *L) {
  if (lua_gettop(L) == 1) {   /* where(condition): PyTorch's nonzero(condition, as_tuple=True) */
    ltl_check(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "as_tuple");
    return ltl_nonzero(L);
  }
  return where_impl(L);
}
/* x:where(cond, y) is PyTorch's Tensor.where: where(cond, x, y) */
static int l_where_method(lua_State *L) {
  lua_settop(L, 3);
  lua_pushvalue(L, 2);
  lua_insert(L, 1);       /* cond, x, cond, y */
  lua_remove(L, 3);
  return where_impl(L);
}

static const ew E_lerp = {"lerp", lt_k_lerp, LT_RULE_lerp, 0};
static int lerp_impl(lua_State *L, int inplace) {
  operand ops[3];
  ltl_check(L, 1);
  ew_classify(L, 1, "lerp", &ops[0]);
  ew_classify(L, 2, "lerp", &ops[1]);
  ew_classify(L, 3, "lerp", &ops[2]);
  /* PyTorch: end and a tensor weight must have self's dtype, which must be
     floating or complex (a Lua weight does not take part in promotion) */
  static const char *const what[3] = { NULL, "end", "weight" };
  for (int i = 1; i < 3; i++)
    if (!ops[i].weak && ops[i].t->dtype != ops[0].t->dtype)
      ltl_error(L, "lerp", "expected dtype %s for `%s` but got dtype %s", lt_typemeta_name(ops[0].t->dtype),
               what[i], lt_typemeta_name(ops[i].t->dtype));
  if (lt_is_integral(ops[0].t->dtype)) ew_not_implemented(L, "lerp", ops[0].t->dtype);
  int out_idx = ew_out_index(L, inplace, lua_gettop(L) >= 4 ? 4 : 0);
  ltensor_dtype common = ew_common_dtype(L, "lerp", ops, 3), cdt, kout, rdt;
  ew_op_dtypes(L, &E_lerp, common, out_idx, &cdt, &kout, &rdt);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ew_run(L, "lerp", lt_k_lerp[cdt], ops, 3, cdt, kout, rdt, out_idx, &ctx);
  return 1;
}
static int l_lerp(lua_State *L) { return lerp_impl(L, 0); }
static int l_lerp_(lua_State *L) { return lerp_impl(L, 1); }

/* ====================================================================== */
/* equal, isclose, allclose                                               */
/* ====================================================================== */
static int all_true(const lt_tensor *b) {
  const uint8_t *p = (const uint8_t *)lt_data(b);   /* fresh contiguous tensor */
  int64_t n = lt_numel(b);
  for (int64_t i = 0; i < n; i++) if (!p[i]) return 0;
  return 1;
}

static int l_equal(lua_State *L) {
  lt_tensor *a = ltl_test(L, 1), *b = ltl_test(L, 2);
  ltl_check_nargs(L, 2);
  if (!a || !b) {   /* __eq may see another userdata */
    if (!lua_isuserdata(L, 1) || !lua_isuserdata(L, 2)) { ltl_check(L, 1); ltl_check(L, 2); }
    lua_pushboolean(L, 0);
    return 1;
  }
  if (!a->storage || !b->storage) { ltl_check(L, 1); ltl_check(L, 2); }
  if (a->ndim != b->ndim) { lua_pushboolean(L, 0); return 1; }
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) { lua_pushboolean(L, 0); return 1; }
  lua_settop(L, 2);
  ew_binary(L, &E_eq, 0);
  lua_pushboolean(L, all_true(ltl_check(L, -1)));
  return 1;
}

#include "lt_k_loops.h"
/* |a - b| <= atol + rtol * |b|, equal infinities, NaN == NaN if asked */
LT_LOOP2(k_isclose_f64, double, uint8_t,
         (uint8_t)(a == b || ((a != a && b != b) ? ctx->mode :
                   (isfinite(a) && isfinite(b) && fabs(a - b) <= ctx->f2 + ctx->f1 * fabs(b)))))
/* complex: PyTorch's isclose on |a - b| (finite) and |b|, NaN meaning a NaN
   real or imaginary part */
static inline int cnan(lt_cdouble z) { return isnan(creal(z)) || isnan(cimag(z)); }
LT_LOOP2(k_isclose_c128, lt_cdouble, uint8_t,
         (uint8_t)(a == b || ((cnan(a) && cnan(b)) ? ctx->mode :
                   (isfinite(cabs(a - b)) && cabs(a - b) <= ctx->f2 + ctx->f1 * cabs(b)))))
static lt_tensor *isclose_run(lua_State *L, const char *fname) {
  operand ops[2];
  ltl_check(L, 1);
  ltl_check(L, 2);
  ew_classify(L, 1, fname, &ops[0]);
  ew_classify(L, 2, fname, &ops[1]);
  lt_kctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.f1 = 1e-5;
  ctx.f2 = 1e-8;
  ltl_check_nargs(L, lua_type(L, 3) == LUA_TTABLE ? 3 : 5);   /* (a, b, opts) or (a, b, rtol, atol, equal_nan) */
  int top = lua_gettop(L);
  if (top >= 3 && lua_type(L, 3) == LUA_TTABLE) {
    static const char *const CLOSE_OPTS[] = {"rtol", "atol", "equal_nan", NULL};
    ltl_check_opts(L, 3, fname, CLOSE_OPTS);
    ltl_getopt(L, 3, "rtol"); if (!lua_isnil(L, -1)) ctx.f1 = ltl_checknumber(L, -1);
    ltl_getopt(L, 3, "atol"); if (!lua_isnil(L, -1)) ctx.f2 = ltl_checknumber(L, -1);
    ltl_getopt(L, 3, "equal_nan"); ctx.mode = lua_toboolean(L, -1);
    lua_pop(L, 3);
  } else {
    if (top >= 3 && !lua_isnil(L, 3)) ctx.f1 = ltl_checknumber(L, 3);
    if (top >= 4 && !lua_isnil(L, 4)) ctx.f2 = ltl_checknumber(L, 4);
    if (top >= 5) ctx.mode = lua_toboolean(L, 5);
  }
  if (ops[0].t->dtype != ops[1].t->dtype)
    ltl_error(L, fname, "%s, %s", lt_torch_name(ops[0].t->dtype), lt_torch_name(ops[1].t->dtype));
  if (lt_is_complex(ops[0].t->dtype))
    return ew_run(L, fname, k_isclose_c128, ops, 2, LTENSOR_COMPLEX128, LTENSOR_BOOL, LTENSOR_BOOL, 0, &ctx);
  return ew_run(L, fname, k_isclose_f64, ops, 2, LTENSOR_FLOAT64, LTENSOR_BOOL, LTENSOR_BOOL, 0, &ctx);
}
static int l_isclose(lua_State *L) { isclose_run(L, "isclose"); return 1; }
static int l_allclose(lua_State *L) {
  lt_tensor *r = isclose_run(L, "allclose");
  lua_pushboolean(L, all_true(r));
  return 1;
}

/* ====================================================================== */
/* registration                                                           */
/* ====================================================================== */
/* T._op_list() -> {{name=, arity=, family=, rule=, diff=, inplace=}, ...}:
   the op list (l_oplist.h), for spec/oplist_spec.lua */
static int l_op_list(lua_State *L) {
  static const struct { const char *name; int arity, fam, rule, diff, inpl; } ops[] = {
#define OP_ROW(nm, arity, fam, rule, diff, inpl) {#nm, arity, fam, rule, diff, inpl},
    LT_OPS_ALL(OP_ROW)
#undef OP_ROW
  };
  static const char *const FAM[] = {"unary", "binary", "reduce", "dim", "sort"};
  static const char *const RULE[] = {"same", "bool", "float", "int64", "index", "real", "logical"};
  int n = (int)(sizeof ops / sizeof ops[0]);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, ops[i].name); lua_setfield(L, -2, "name");
    lua_pushinteger(L, ops[i].arity); lua_setfield(L, -2, "arity");
    lua_pushstring(L, FAM[ops[i].fam]); lua_setfield(L, -2, "family");
    lua_pushstring(L, RULE[ops[i].rule]); lua_setfield(L, -2, "rule");
    lua_pushboolean(L, ops[i].diff); lua_setfield(L, -2, "diff");
    lua_pushboolean(L, ops[i].inpl); lua_setfield(L, -2, "inplace");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ====================================================================== */
/* registration: the op list's lines (l_oplist.h), then the aliases, the  */
/* irregular forms and the operators                                      */
/* ====================================================================== */
#define D (LT_BOTH | LT_DIFF)
const ltl_reg ltl_reg_ops[] = {
  LT_OPS_UNARY(LT_OP_REG_ALL)
  LT_OPS_UNARY_CUSTOM(LT_OP_REG_ALL)
  LT_OPS_BINARY(LT_OP_REG_ALL)
  LT_OPS_BINARY_PLAIN(LT_OP_REG_ALL)
  LT_OPS_COMPARE(LT_OP_REG_ALL)
  LT_OPS_BITWISE(LT_OP_REG_ALL)
  {"_op_list", l_op_list, LT_MODULE, NULL},
  {"subtract", l_sub, D, "sub"}, {"rsub", l_rsub, D, "rsub"},
  {"multiply", l_mul, D, "mul"},
  {"divide", l_div, D, "div"}, {"true_divide", l_true_divide, D, "div"},
  {"floor_divide", l_floor_divide, LT_BOTH, NULL}, {"floor_divide_", l_floor_divide_, LT_METHOD, NULL},
  {"negative", l_neg, D, "neg"},
  {"sign", l_sign2, D, "sign"}, {"sign_", l_sign2_, LT_METHOD | LT_DIFF, "sign_"},
  {"clip", l_clamp, D, "clamp"},
  {"where", l_where, LT_MODULE | LT_DIFF, "where"},
  {"where", l_where_method, LT_METHOD | LT_DIFF, "where_method"},
  {"real", l_real, D, "real"}, {"imag", l_imag, D, "imag"}, {"conj", l_conj, D, "conj"},
  {"angle", l_angle, D, "angle"},
  {"greater", l_gt, LT_BOTH, NULL}, {"less", l_lt, LT_BOTH, NULL},
  {"greater_equal", l_ge, LT_BOTH, NULL}, {"less_equal", l_le, LT_BOTH, NULL},
  {"not_equal", l_ne, LT_BOTH, NULL},
  {"equal", l_equal, LT_BOTH, NULL}, {"isclose", l_isclose, LT_BOTH, NULL}, {"allclose", l_allclose, LT_BOTH, NULL},
  /* operators: Lua numbers and booleans on either side are weak scalars */
  {"__add", l_add, LT_META | LT_DIFF, "add"},
  {"__sub", l_sub, LT_META | LT_DIFF, "sub"},
  {"__mul", l_mul, LT_META | LT_DIFF, "mul"},
  {"__div", l_div, LT_META | LT_DIFF, "div"},
  {"__mod", l_remainder, LT_META | LT_DIFF, "remainder"},
  {"__idiv", l_floor_divide, LT_META, NULL},
  {"__pow", l_pow, LT_META | LT_DIFF, "pow"},
  {"__unm", l_neg, LT_META | LT_DIFF, "neg"},
  {"__band", l_bitwise_and, LT_META, NULL},
  {"__bor", l_bitwise_or, LT_META, NULL},
  {"__bxor", l_bitwise_xor, LT_META, NULL},
  {"__shl", l_bitwise_left_shift, LT_META, NULL},
  {"__shr", l_bitwise_right_shift, LT_META, NULL},
  {"__bnot", l_bitwise_not, LT_META, NULL},
  {"__eq", l_equal, LT_META, NULL},
  {NULL, NULL, 0, NULL}
};

