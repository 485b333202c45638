/* l_settings.c -- per-state settings exposed to Lua: the promotion mode
   (and promote_types/result_type under it) and the thread count. */
#include <string.h>
#include "l_ew.h"
#include "ltensor.h"

/* ====================================================================== */
/* promotion and threading settings                                      */
/* ====================================================================== */
static const char *const promo_names[] = {"torch", "jax", "strict", NULL};

static int l_promote_types(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  ltensor_dtype a = ltl_checkdtype(L, 1), b = ltl_checkdtype(L, 2);
  ltl_pushdtype(L, lt_promote_types(S->promotion, a, b, S->default_dtype));
  return 1;
}

static int l_result_type(lua_State *L) {
  int n = lua_gettop(L);
  if (n < 1) return ltl_argerror(L, 1, "tensor, number or boolean expected");
  operand ops[LT_MAX_DIMS];
  if (n > LT_MAX_DIMS) return ltl_error(L, "result_type", "too many operands (%d)", n);
  for (int i = 0; i < n; i++) ew_classify(L, i + 1, "result_type", &ops[i]);
  ltl_pushdtype(L, ew_common_dtype(L, "result_type", ops, n));
  return 1;
}

static int check_mode(lua_State *L, int idx, const char *fname) {
  const char *m = ltl_checkstring(L, idx);
  for (int i = 0; promo_names[i]; i++)
    if (strcmp(m, promo_names[i]) == 0) return i;
  return ltl_error(L, fname, "unknown promotion mode '%s' (expected \"torch\", \"jax\" or \"strict\")", m);
}

static int l_set_promotion(lua_State *L) {
  ltl_settings_of(L)->promotion = check_mode(L, 1, "set_promotion");
  return 0;
}
static int l_get_promotion(lua_State *L) {
  ltl_check_nargs(L, 0);
  lua_pushstring(L, promo_names[ltl_settings_of(L)->promotion]);
  return 1;
}
/* with_promotion(mode, fn, ...): the previous mode comes back even when fn raises */
static int l_with_promotion(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  int mode = check_mode(L, 1, "with_promotion");
  ltl_checktype(L, 2, LUA_TFUNCTION);
  int old = S->promotion;
  S->promotion = mode;
  int st = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
  S->promotion = old;
  if (st != LUA_OK) return lua_error(L);
  return lua_gettop(L) - 1;
}

static int l_set_num_threads(lua_State *L) {
  lua_Integer n = ltl_checkinteger(L, 1);
  if (n < 1) return ltl_error(L, "set_num_threads", "number of threads must be positive (got %I)", n);
  ltl_settings *S = ltl_settings_of(L);
  S->num_threads = (int)(n > 1024 ? 1024 : n);   /* the pool runs at most LT_MAX_THREADS */
  lt_pool_set_threads(S->pool, S->num_threads);
  return 0;
}
static int l_get_num_threads(lua_State *L) {
  ltl_check_nargs(L, 0);
  lua_pushinteger(L, ltl_settings_of(L)->num_threads);
  return 1;
}

/* ---- interruption (ltensor.h: ltensor_interrupt_flag) --------------------- */
volatile sig_atomic_t *ltensor_interrupt_flag(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_settings);
  ltl_settings *S = (ltl_settings *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return S && S->magic == LT_SETTINGS_MAGIC ? &S->interrupt : NULL;
}

/* Raises "ltensor.<fname>: interrupted" when the flag is set, clearing it:
   one request stops one op (the error unwinds the Lua code that ran it). */
void ltl_check_interrupt(lua_State *L, ltl_settings *S, const char *fname) {
  if (!S->interrupt) return;
  S->interrupt = 0;
  ltl_error(L, fname, "interrupted");
}

const ltl_reg ltl_reg_settings[] = {
  {"promote_types", l_promote_types, LT_MODULE, NULL},
  {"result_type", l_result_type, LT_MODULE, NULL},
  {"set_promotion", l_set_promotion, LT_MODULE, NULL},
  {"get_promotion", l_get_promotion, LT_MODULE, NULL},
  {"with_promotion", l_with_promotion, LT_MODULE, NULL},
  {"set_num_threads", l_set_num_threads, LT_MODULE, NULL},
  {"get_num_threads", l_get_num_threads, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
