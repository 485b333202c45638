/* l_dtype.c -- dtype objects (T.float32 ...), dtype arguments, and the
   state's default dtype. */
#include <string.h>
#include "l_lua.h"

void ltl_pushdtype(lua_State *L, ltensor_dtype dt) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_dtypes);
  lua_rawgeti(L, -1, (lua_Integer)dt + 1);
  lua_remove(L, -2);
}

static const struct { const char *alias; ltensor_dtype dt; } dtype_aliases[] = {
  {"byte", LTENSOR_UINT8}, {"char", LTENSOR_INT8}, {"short", LTENSOR_INT16},
  {"int", LTENSOR_INT32}, {"long", LTENSOR_INT64}, {"half", LTENSOR_FLOAT16},
  {"float", LTENSOR_FLOAT32}, {"double", LTENSOR_FLOAT64}, {"chalf", LTENSOR_COMPLEX32},
  {"cfloat", LTENSOR_COMPLEX64}, {"cdouble", LTENSOR_COMPLEX128}, {NULL, 0}
};

static int dtype_from_name(const char *s, ltensor_dtype *out) {
  for (int i = 0; i < LTENSOR_NUM_DTYPES; i++)
    if (strcmp(s, lt_dtypes[i].name) == 0) { *out = (ltensor_dtype)i; return 1; }
  for (int i = 0; dtype_aliases[i].alias; i++)
    if (strcmp(s, dtype_aliases[i].alias) == 0) { *out = dtype_aliases[i].dt; return 1; }
  return 0;
}

int ltl_testdtype(lua_State *L, int idx, ltensor_dtype *out) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    if (strncmp(s, "ltensor.", 8) == 0) s += 8;
    return dtype_from_name(s, out);
  }
  unsigned char *p = (unsigned char *)luaL_testudata(L, idx, LT_DTYPE_MT);
  if (!p) return 0;
  *out = (ltensor_dtype)*p;
  return 1;
}

ltensor_dtype ltl_checkdtype(lua_State *L, int idx) {
  ltensor_dtype dt;
  if (!ltl_testdtype(L, idx, &dt)) ltl_typeerror(L, idx, "ltensor dtype");
  return dt;
}

ltensor_dtype ltl_opt_dtype(lua_State *L, int idx, ltensor_dtype def) {
  if (idx == 0 || lua_type(L, idx) != LUA_TTABLE) return def;
  idx = lua_absindex(L, idx);
  /* raw: an __index metamethod could run Lua code (free a tensor argument
     the caller already checked) in the middle of argument parsing */
  lua_pushliteral(L, "dtype");
  lua_rawget(L, idx);
  ltensor_dtype dt = def;
  if (!lua_isnil(L, -1) && !ltl_testdtype(L, -1, &dt))   /* argerror: names the function and the argument */
    ltl_argerror(L, idx, lua_pushfstring(L, "option 'dtype': ltensor dtype expected, got %s",
                                          luaL_typename(L, -1)));
  lua_pop(L, 1);
  return dt;
}

static int dtype_index(lua_State *L) {
  ltensor_dtype dt = (ltensor_dtype) * (unsigned char *)ltl_checkudata(L, 1, LT_DTYPE_MT);
  const char *k = ltl_checkstring(L, 2);
  const lt_dtype_info *in = &lt_dtypes[dt];
  if (strcmp(k, "name") == 0) lua_pushstring(L, in->name);
  else if (strcmp(k, "itemsize") == 0) lua_pushinteger(L, (lua_Integer)in->itemsize);
  else if (strcmp(k, "is_floating_point") == 0) lua_pushboolean(L, in->kind == LT_KIND_FLOAT);
  else if (strcmp(k, "is_complex") == 0) lua_pushboolean(L, in->kind == LT_KIND_COMPLEX);
  else if (strcmp(k, "is_signed") == 0) lua_pushboolean(L, in->is_signed);
  else if (strcmp(k, "id") == 0) lua_pushinteger(L, dt);
  else if (strcmp(k, "_torch_name") == 0) lua_pushstring(L, lt_torch_name(dt));   /* for ltensor.util */
  else lua_pushnil(L);
  return 1;
}

static int dtype_tostring(lua_State *L) {
  ltensor_dtype dt = (ltensor_dtype) * (unsigned char *)ltl_checkudata(L, 1, LT_DTYPE_MT);
  lua_pushfstring(L, "ltensor.%s", lt_dtypes[dt].name);
  return 1;
}

void ltl_open_dtypes(lua_State *L, int module) {
  luaL_newmetatable(L, LT_DTYPE_MT);
  lua_pushcfunction(L, dtype_index); lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, dtype_tostring); lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_createtable(L, LTENSOR_NUM_DTYPES, 0);
  for (int i = 0; i < LTENSOR_NUM_DTYPES; i++) {
    unsigned char *p = (unsigned char *)lua_newuserdatauv(L, 1, 0);
    *p = (unsigned char)i;
    luaL_setmetatable(L, LT_DTYPE_MT);
    lua_pushvalue(L, -1);
    lua_setfield(L, module, lt_dtypes[i].name);
    lua_rawseti(L, -2, i + 1);
  }
  for (int i = 0; dtype_aliases[i].alias; i++) {
    lua_rawgeti(L, -1, dtype_aliases[i].dt + 1);
    lua_setfield(L, module, dtype_aliases[i].alias);
  }
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_key_dtypes);
}


/* ---- default dtype ---------------------------------------------------- */
static int l_get_default_dtype(lua_State *L) { ltl_check_nargs(L, 0); ltl_pushdtype(L, ltl_settings_of(L)->default_dtype); return 1; }
static int l_set_default_dtype(lua_State *L) {
  ltensor_dtype dt = ltl_checkdtype(L, 1);
  if (!lt_is_floating(dt))
    return ltl_error(L, "set_default_dtype", "only floating-point types are supported as the default type (got %s)",
                    lt_dtypes[dt].name);
  ltl_settings_of(L)->default_dtype = dt;
  return 0;
}
static int l_promote_default_complex(lua_State *L) {
  ltl_pushdtype(L, lt_to_complex(ltl_settings_of(L)->default_dtype));
  return 1;
}


const ltl_reg ltl_reg_dtype[] = {
  {"get_default_dtype", l_get_default_dtype, LT_MODULE, NULL},
  {"set_default_dtype", l_set_default_dtype, LT_MODULE, NULL},
  {"_default_complex_dtype", l_promote_default_complex, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
