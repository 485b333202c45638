/* ltensor_open.c -- luaopen_ltensor: the whole library (C core and the Lua
   modules compiled in by tools/embed_lua.lua) for hosts that link
   build/libltensor.a.  No Lua files need to exist on disk: every module is
   installed as a package.preload entry, which `require` consults before
   package.path, so `require "ltensor.nn"` inside a host finds the embedded
   copy. */
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include "l_compat.h"
#include "ltensor.h"
#include "l_embedded.h"

/* The preload loader of one embedded module: upvalue 1 is its table entry.
   Called as loader(name, ":preload:"), like any searcher's loader. */
static int load_embedded(lua_State *L) {
  const lt_embedded_module *m = (const lt_embedded_module *)lua_touserdata(L, lua_upvalueindex(1));
  lua_settop(L, 2);
  if (luaL_loadbufferx(L, m->src, m->len, m->chunkname, "t") != LUA_OK) return lua_error(L);
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

int luaopen_ltensor(lua_State *L) {
  luaL_checkversion(L);
  /* The modules load each other with require; without the package library
     that would fail later with a less helpful message. */
  if (lua_getglobal(L, "require") != LUA_TFUNCTION)
    return luaL_error(L, "ltensor: luaopen_ltensor needs the package library "
                         "(luaL_openlibs, or luaL_requiref of luaopen_package)");
  lua_pop(L, 1);

  const lt_embedded_module *init = NULL;
  ltc_getpreload(L);   /* package.preload */
  lua_pushcfunction(L, luaopen_ltensor_core);
  lua_setfield(L, -2, "ltensor.core");
  for (const lt_embedded_module *m = lt_embedded_modules; m->name; m++) {
    lua_pushlightuserdata(L, (void *)m);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, m->name);
    if (strcmp(m->name, "ltensor") == 0) init = m;
  }
  lua_pop(L, 1);
  if (!init) return luaL_error(L, "ltensor: built without lua/ltensor/init.lua");

  /* Run init.lua as require would; the result is the module table. */
  lua_pushlightuserdata(L, (void *)init);
  lua_pushcclosure(L, load_embedded, 1);
  lua_pushliteral(L, "ltensor");
  lua_pushliteral(L, ":preload:");
  lua_call(L, 2, 1);
  /* Make a later require "ltensor" return this table even when the host
     called luaopen_ltensor directly rather than through luaL_requiref. */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "ltensor") == LUA_TNIL) {
    lua_pushvalue(L, -3);
    lua_setfield(L, -3, "ltensor");
  }
  lua_pop(L, 2);
  return 1;
}
