/* l_core.c -- luaopen_ltensor_core: the per-state settings, the metatables,
   and registration of every area's ltl_reg array (one register_area line
   each).  The binding's other jobs live in files named for them:
   l_args.c (argument errors), l_dtype.c (dtype objects), l_tensor.c (the
   userdata), l_create.c (creation), l_attr.c (attributes, __index),
   l_convert.c (copies, conversions), l_trampoline.c (autograd trampoline). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "l_lua.h"

/* registry keys: their addresses, never written */
const char ltl_key_settings = 's', ltl_key_dtypes = 'd', ltl_key_hook = 'h', ltl_key_tensor_mt = 'm',
           ltl_key_storage_mt = 'b', ltl_key_names = 'n',
           ltl_key_methods = 'M';
static const char diff_key = 'D';   /* set of the grad names of every LT_DIFF function */

ltl_settings *ltl_settings_slow(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_settings);
  ltl_settings *s = (ltl_settings *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!s) luaL_error(L, "ltensor: core not opened in this lua_State");
  return s;
}

/* The settings' finalizer: the settings userdata is made before any box, so
   at lua_close it is finalized after all of them and frees what they cached. */
static int settings_gc(lua_State *L) {
  ltl_settings *S = (ltl_settings *)lua_touserdata(L, 1);
  if (S && S->magic == LT_SETTINGS_MAGIC) {
    lt_alloc_close(&S->alloc);
    lt_pool_free(S->pool);   /* joins the workers */
    S->pool = NULL;
  }
  return 0;
}

/* Installs one area's functions; each closure's name goes into the names
   table (ltl_argerror reads it). */
static void register_area(lua_State *L, const ltl_reg *regs, int module, int methods, int mt, int settings) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_names);
  int names = lua_gettop(L);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &diff_key);
  int diffs = lua_gettop(L);
  for (const ltl_reg *r = regs; r->name; r++) {
    if (r->flags & LT_DIFF) {
      lua_pushboolean(L, 1);
      lua_setfield(L, diffs, r->grad_name ? r->grad_name : r->name);
      lua_pushvalue(L, settings);
      lua_pushlightuserdata(L, (void *)r);
      lua_pushstring(L, r->grad_name ? r->grad_name : r->name);
      lua_pushvalue(L, settings);
      lua_pushcclosure(L, r->fn, 1);         /* the raw function for the hook */
      lua_pushvalue(L, -1);
      lua_pushstring(L, r->name);
      lua_rawset(L, names);
      lua_pushcclosure(L, ltl_trampoline, 4);
    } else {
      lua_pushvalue(L, settings);
      lua_pushcclosure(L, r->fn, 1);
    }
    if (r->flags & LT_MODULE) { lua_pushvalue(L, -1); lua_setfield(L, module, r->name); }
    if (r->flags & LT_METHOD) { lua_pushvalue(L, -1); lua_setfield(L, methods, r->name); }
    if ((r->flags & LT_META) && ltc_has_metamethod(r->name)) { lua_pushvalue(L, -1); lua_setfield(L, mt, r->name); }
    lua_pushstring(L, r->name);
    lua_rawset(L, names);
  }
  lua_pop(L, 2);
}

/* The closure on top gets a name in the names table, so that its argument
   errors read "ltensor.<name>: ..." (closures made outside register_area). */
static void name_closure(lua_State *L, const char *name) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_names);
  lua_pushvalue(L, -2);
  lua_pushstring(L, name);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* T._diff_ops() -> the grad names of every differentiable (LT_DIFF) C
   function, for the spec that checks each has a backward rule */
static int l_diff_ops(lua_State *L) {
  lua_newtable(L);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &diff_key);
  lua_Integer n = 0;
  for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
    lua_pushvalue(L, -2);
    lua_rawseti(L, -5, ++n);
  }
  lua_pop(L, 1);
  return 1;
}

int luaopen_ltensor_core(lua_State *L) {
  luaL_checkversion(L);
  /* settings */
  ltl_settings *S = (ltl_settings *)lua_newuserdatauv(L, sizeof(ltl_settings), 0);
  memset(S, 0, sizeof *S);
  S->magic = LT_SETTINGS_MAGIC;
  S->default_dtype = LTENSOR_FLOAT32;
  S->promotion = LT_PROMO_TORCH;
  S->grad_enabled = 1;
  S->num_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);   /* threads of every parallel loop: core count */
  if (S->num_threads < 1) S->num_threads = 1;
  S->pool = lt_pool_new(S->num_threads);   /* NULL (out of memory): one thread; workers start on first use */
  lt_pool_set_interrupt(S->pool, &S->interrupt);   /* parallel loops stop between chunks on Ctrl-C */
  S->allocf = lua_getallocf(L, &S->alloc_ud);
  ltl_alloc_open(L, S);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, settings_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_settings);
  int settings = lua_gettop(L);

  lua_newtable(L);                       /* closure -> name (ltl_argerror) */
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_names);
  lua_newtable(L);                       /* grad names of LT_DIFF functions */
  lua_rawsetp(L, LUA_REGISTRYINDEX, &diff_key);
  lua_newtable(L);                       /* module */
  int module = lua_gettop(L);
  ltl_open_dtypes(L, module);
  lua_newtable(L);                       /* methods */
  int methods = lua_gettop(L);
  luaL_newmetatable(L, LT_TENSOR_MT);
  int mt = lua_gettop(L);
  S->tensor_mt = lua_topointer(L, mt);
  lua_pushvalue(L, mt);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_tensor_mt);
  luaL_newmetatable(L, LT_STORAGE_MT);
  lua_pushcfunction(L, ltl_storage_box_gc);
  lua_setfield(L, -2, "__gc");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_storage_mt);

  register_area(L, ltl_reg_create, module, methods, mt, settings);
  register_area(L, ltl_reg_attr, module, methods, mt, settings);
  register_area(L, ltl_reg_convert, module, methods, mt, settings);
  register_area(L, ltl_reg_tensor, module, methods, mt, settings);
  register_area(L, ltl_reg_dtype, module, methods, mt, settings);
  register_area(L, ltl_reg_trampoline, module, methods, mt, settings);
  register_area(L, ltl_reg_view, module, methods, mt, settings);
  register_area(L, ltl_reg_index, module, methods, mt, settings);
  register_area(L, ltl_reg_scatter, module, methods, mt, settings);
  register_area(L, ltl_reg_ops, module, methods, mt, settings);
  register_area(L, ltl_reg_settings, module, methods, mt, settings);
  register_area(L, ltl_reg_reduce, module, methods, mt, settings);
  register_area(L, ltl_reg_linalg, module, methods, mt, settings);
  register_area(L, ltl_reg_random, module, methods, mt, settings);
  register_area(L, ltl_reg_samplers, module, methods, mt, settings);
  register_area(L, ltl_reg_embed, module, methods, mt, settings);
  register_area(L, ltl_reg_io, module, methods, mt, settings);
  register_area(L, ltl_reg_autograd, module, methods, mt, settings);
  register_area(L, ltl_reg_backward, module, methods, mt, settings);
  register_area(L, ltl_reg_fs, module, methods, mt, settings);
  register_area(L, ltl_reg_image, module, methods, mt, settings);
  register_area(L, ltl_reg_zip, module, methods, mt, settings);
  register_area(L, ltl_reg_struct, module, methods, mt, settings);
  register_area(L, ltl_reg_combos, module, methods, mt, settings);
  register_area(L, ltl_reg_search, module, methods, mt, settings);
  register_area(L, ltl_reg_nnfused, module, methods, mt, settings);
  register_area(L, ltl_reg_attention, module, methods, mt, settings);
  register_area(L, ltl_reg_optim, module, methods, mt, settings);
  register_area(L, ltl_reg_csv, module, methods, mt, settings);
  register_area(L, ltl_reg_progress, module, methods, mt, settings);
  register_area(L, ltl_reg_lapack, module, methods, mt, settings);
  register_area(L, ltl_reg_rnn, module, methods, mt, settings);
  register_area(L, ltl_reg_conv, module, methods, mt, settings);
  register_area(L, ltl_reg_args, module, methods, mt, settings);

  /* __index: methods, properties, then T.index for non-string keys */
  lua_pushvalue(L, settings);
  lua_pushvalue(L, methods);
  lua_getfield(L, module, "index");
  lua_pushcclosure(L, ltl_tensor_index, 3);
  name_closure(L, "index");
  lua_setfield(L, mt, "__index");
  lua_pushvalue(L, settings);
  lua_getfield(L, module, "setindex");
  lua_pushcclosure(L, ltl_tensor_newindex, 2);
  name_closure(L, "setindex");
  lua_setfield(L, mt, "__newindex");
  lua_pushcfunction(L, l_diff_ops);
  lua_setfield(L, module, "_diff_ops");
  lua_pushvalue(L, methods);
  lua_setfield(L, module, "_methods");
  lua_pushvalue(L, methods);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_methods);
  lua_pushvalue(L, mt);
  lua_setfield(L, module, "_metatable");
  lua_pushinteger(L, LTENSOR_MAX_DIMS);
  lua_setfield(L, module, "MAX_DIMS");
  lua_pushfstring(L, "%d.%d.%d", LTENSOR_VERSION_MAJOR, LTENSOR_VERSION_MINOR, LTENSOR_VERSION_PATCH);
  lua_setfield(L, module, "_VERSION");
  lua_settop(L, module);
  return 1;
}
