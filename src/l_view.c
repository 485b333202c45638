/* l_view.c -- placeholder until this area lands. */
#include "lt_lua.h"
const lt_reg lt_reg_view[] = { {NULL, NULL, 0, NULL} };
int lt_l_index(lua_State *L) { return luaL_error(L, "ltensor: indexing not implemented yet"); }
int lt_l_newindex(lua_State *L) { return luaL_error(L, "ltensor: indexing not implemented yet"); }
