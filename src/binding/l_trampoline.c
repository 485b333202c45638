/* l_trampoline.c -- the autograd trampoline every LT_DIFF function is
   wrapped in, and the plumbing the Lua autograd engine uses (per-tensor
   meta tables, version counters, the recording hook, grad mode). */
#include <string.h>
#include "l_lua.h"

/* ---- autograd plumbing for the Lua engine ---------------------------- */
static int l_meta(lua_State *L) {   /* T._meta(t [, create]) -> per-tensor autograd table */
  ltl_check(L, 1);
  if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE || !lua_toboolean(L, 2)) return 1;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, 1);
  return 1;
}
static int l_set_requires_grad_flag(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_set_requires_grad(L, t, lua_toboolean(L, 2));
  return 0;
}
static int l_version(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)atomic_load(&ltl_check(L, 1)->storage->version));
  return 1;
}
static int l_bump_version(lua_State *L) { lt_bump_version(ltl_check(L, 1)); return 0; }
static int l_same_storage(lua_State *L) {
  lua_pushboolean(L, ltl_check(L, 1)->storage == ltl_check(L, 2)->storage);
  return 1;
}
static int l_set_autograd_hook(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  if (!lua_isnil(L, 1)) ltl_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_hook);
  S->has_autograd_hook = !lua_isnil(L, 1);
  return 0;
}
static int l_set_grad_enabled(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  lua_pushboolean(L, S->grad_enabled);
  S->grad_enabled = lua_toboolean(L, 1);
  return 1;
}
static int l_is_grad_enabled(lua_State *L) { ltl_check_nargs(L, 0); lua_pushboolean(L, ltl_settings_of(L)->grad_enabled); return 1; }


/* upvalues: 1 settings, 2 ltl_reg entry (light userdata), 3 grad name, 4 raw closure */
int ltl_trampoline(lua_State *L) {
  ltl_settings *S = (ltl_settings *)lua_touserdata(L, lua_upvalueindex(1));
  const ltl_reg *r = (const ltl_reg *)lua_touserdata(L, lua_upvalueindex(2));
  if (S->any_requires_grad && S->grad_enabled && S->has_autograd_hook) {
    int n = lua_gettop(L), any = 0;
    for (int i = 1; i <= n && !any; i++) {
      lt_tensor *t = ltl_test(L, i);
      if (t) any = t->requires_grad;
      else if (lua_type(L, i) == LUA_TTABLE && !luaL_testudata(L, i, LT_DTYPE_MT)) {
        /* lists of tensors (cat, stack) */
        lua_Integer len = (lua_Integer)lua_rawlen(L, i);
        for (lua_Integer k = 1; k <= len && !any; k++) {
          lua_rawgeti(L, i, k);
          lt_tensor *e = ltl_test(L, -1);
          any = e && e->requires_grad;
          lua_pop(L, 1);
        }
      }
    }
    if (any) {
      /* the recording hook reads every tensor argument: refuse freed ones here */
      for (int i = 1; i <= n; i++) {
        lt_tensor *t = ltl_test(L, i);
        if (t && !t->storage)
          ltl_error(L, lua_tostring(L, lua_upvalueindex(3)), "bad argument #%d (tensor was freed)", i);
      }
      lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_hook);
      lua_pushvalue(L, lua_upvalueindex(3));
      lua_pushvalue(L, lua_upvalueindex(4));
      lua_rotate(L, 1, 3);                    /* hook, name, raw, args... */
      lua_call(L, n + 2, LUA_MULTRET);
      ltl_check_interrupt(L, S, r->name);
      return lua_gettop(L);
    }
  }
  int nres = r->fn(L);
  /* a loop that saw the interrupt flag stopped early: its result is
     incomplete and must not be seen */
  if (S->interrupt) ltl_check_interrupt(L, S, r->name);
  return nres;
}


const ltl_reg ltl_reg_trampoline[] = {
  {"_meta", l_meta, LT_MODULE, NULL},
  {"_set_requires_grad_flag", l_set_requires_grad_flag, LT_MODULE, NULL},
  {"_version", l_version, LT_MODULE, NULL},
  {"_bump_version", l_bump_version, LT_MODULE, NULL},
  {"_same_storage", l_same_storage, LT_MODULE, NULL},
  {"_set_autograd_hook", l_set_autograd_hook, LT_MODULE, NULL},
  {"_set_grad_enabled", l_set_grad_enabled, LT_MODULE, NULL},
  {"is_grad_enabled", l_is_grad_enabled, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
