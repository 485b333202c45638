/* l_attr.c -- what a tensor says about itself: size/stride/dim/... methods,
   element access (item, totable, get, set), and the metatable's
   __index/__newindex properties (dtype, shape, grad, T...). */
#include <string.h>
#include "l_lua.h"

/* The metatable of sizes (T.Size, lua/ltensor/size.lua) lives in the
   registry under this byte's address; until it is set, a size is a plain
   list. */
static const char size_mt_key = 'S';

/* t:size() / t.shape: a list of the sizes with T.Size's metatable (prints as
   {2, 3}, compares by value, # and table.unpack work) */
static void push_shape(lua_State *L, const lt_tensor *t) {
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) { lua_pushinteger(L, t->shape[i]); lua_rawseti(L, -2, i + 1); }
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &size_mt_key) == LUA_TTABLE) lua_setmetatable(L, -2);
  else lua_pop(L, 1);
}

/* T._set_size_metatable(mt): size.lua hands over T.Size's metatable */
static int l_set_size_metatable(lua_State *L) {
  ltl_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &size_mt_key);
  return 0;
}

static int l_size(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (lua_isnoneornil(L, 2)) { push_shape(L, t); return 1; }
  if (t->ndim == 0) return ltl_error(L, "size", "dimension specified as %d but tensor has no dimensions",
                                     (int)ltl_checkinteger(L, 2));
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "size");
  lua_pushinteger(L, t->shape[d]);
  return 1;
}
static int l_stride(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (lua_isnoneornil(L, 2)) {
    lua_createtable(L, t->ndim, 0);
    for (int i = 0; i < t->ndim; i++) { lua_pushinteger(L, t->stride[i]); lua_rawseti(L, -2, i + 1); }
    return 1;
  }
  if (t->ndim == 0) return ltl_error(L, "stride", "dimension specified as %d but tensor has no dimensions",
                                     (int)ltl_checkinteger(L, 2));
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "stride");
  lua_pushinteger(L, t->stride[d]);
  return 1;
}
static int l_dim(lua_State *L) { ltl_check_nargs(L, 1); lua_pushinteger(L, ltl_check(L, 1)->ndim); return 1; }
static int l_numel(lua_State *L) { ltl_check_nargs(L, 1); lua_pushinteger(L, lt_numel(ltl_check(L, 1))); return 1; }
static int l_is_contiguous(lua_State *L) { ltl_check_nargs(L, 1); lua_pushboolean(L, lt_is_contiguous(ltl_check(L, 1))); return 1; }
static int l_storage_offset(lua_State *L) { lua_pushinteger(L, ltl_check(L, 1)->offset); return 1; }
static int l_len(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim == 0) return ltl_error(L, "len", "len() of a 0-d tensor");
  lua_pushinteger(L, t->shape[0]);
  return 1;
}
static int l_is_floating_point(lua_State *L) { ltl_check_nargs(L, 1); lua_pushboolean(L, lt_is_floating(ltl_check(L, 1)->dtype)); return 1; }
static int l_is_complex(lua_State *L) { ltl_check_nargs(L, 1); lua_pushboolean(L, lt_is_complex(ltl_check(L, 1)->dtype)); return 1; }
static int l_element_size(lua_State *L) { lua_pushinteger(L, (lua_Integer)lt_itemsize(ltl_check(L, 1)->dtype)); return 1; }

static int l_item(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (lt_numel(t) != 1)
    return ltl_error(L, "item", "a Tensor with %d elements cannot be converted to Scalar", (int)lt_numel(t));
  int64_t zero[LT_MAX_DIMS] = {0};
  ltl_push_elem(L, t->dtype, lt_elem_ptr(t, zero));
  return 1;
}

static void totable_rec(lua_State *L, const lt_tensor *t, int d, const char *p) {
  if (d == t->ndim) { ltl_push_elem(L, t->dtype, p); return; }
  int64_t n = t->shape[d];
  /* a dim of size <= 1 may carry any stride: do not scale it (overflow) */
  int64_t step = n > 1 ? t->stride[d] * (int64_t)lt_itemsize(t->dtype) : 0;
  lua_createtable(L, (int)(n < 1 << 20 ? n : 0), 0);
  for (int64_t i = 0; i < n; i++) {
    totable_rec(L, t, d + 1, p + i * step);
    lua_rawseti(L, -2, i + 1);
  }
}
static int l_totable(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  luaL_checkstack(L, t->ndim + 4, "totable");
  totable_rec(L, t, 0, lt_data(t));
  return 1;
}

/* t:get(i, j, ...) with 1-based (or negative) indices, one per dim */
static char *element_at(lua_State *L, lt_tensor *t, int first, const char *fname) {
  int64_t off = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    lua_Integer i = ltl_checkinteger(L, first + d);
    int64_t n = t->shape[d];
    if (i < 0) i += n + 1;
    if (i < 1 || i > n)
      ltl_error(L, fname, "index %I is out of bounds for dimension %d with size %I%s",
               ltl_checkinteger(L, first + d), d + 1, (lua_Integer)n,
               ltl_checkinteger(L, first + d) == 0 ? " (indices are 1-based: 1 is the first, -1 the last)" : "");
    off += (i - 1) * t->stride[d];
  }
  return t->storage->data + off * (int64_t)lt_itemsize(t->dtype);
}
static int l_get(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int nidx = lua_gettop(L) - 1;
  if (nidx != t->ndim) return ltl_error(L, "get", "expected %d indices, got %d", t->ndim, nidx);
  ltl_push_elem(L, t->dtype, element_at(L, t, 2, "get"));
  return 1;
}
static int l_set(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int nidx = lua_gettop(L) - 2;
  if (nidx != t->ndim) return ltl_error(L, "set", "expected %d indices and a value, got %d arguments", t->ndim, nidx + 1);
  char *p = element_at(L, t, 2, "set");
  int v = lua_gettop(L);
  if (lua_type(L, v) != LUA_TNUMBER && lua_type(L, v) != LUA_TBOOLEAN && !ltl_test(L, v))
    return ltl_typeerror(L, v, "number or boolean");
  ltl_store_lua(L, v, t->dtype, p);
  lt_bump_version(t);
  lua_settop(L, 1);
  return 1;
}


static int push_meta_field(lua_State *L, int t_idx, const char *field) {
  if (lua_getiuservalue(L, t_idx, 1) != LUA_TTABLE) { lua_pop(L, 1); lua_pushnil(L); return 1; }
  lua_getfield(L, -1, field);
  lua_remove(L, -2);
  return 1;
}

/* upvalues: 1 settings, 2 methods table, 3 index function (T.index) */
int ltl_tensor_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    lt_tensor *t = ltl_check(L, 1);
    const char *k = lua_tostring(L, 2);
    switch (k[0]) {
    case 'd':
      if (strcmp(k, "dtype") == 0) { ltl_pushdtype(L, t->dtype); return 1; }
      if (strcmp(k, "data") == 0) { ltl_push_view(L, t, t->ndim, t->shape, t->stride, t->offset); return 1; }
      break;
    case 's': if (strcmp(k, "shape") == 0) { push_shape(L, t); return 1; } break;
    case 'n': if (strcmp(k, "ndim") == 0) { lua_pushinteger(L, t->ndim); return 1; } break;
    case 'r': if (strcmp(k, "requires_grad") == 0) { lua_pushboolean(L, t->requires_grad); return 1; } break;
    case 'g':
      if (strcmp(k, "grad") == 0) return push_meta_field(L, 1, "grad");
      if (strcmp(k, "grad_fn") == 0) return push_meta_field(L, 1, "grad_fn");
      break;
    case 'i':
      if (strcmp(k, "is_leaf") == 0) {
        push_meta_field(L, 1, "grad_fn");
        lua_pushboolean(L, lua_isnil(L, -1));
        return 1;
      }
      break;
    case 'T':
      if (k[1] == 0) {   /* t.T: reversed dims, like PyTorch's Tensor.T */
        lua_getfield(L, lua_upvalueindex(2), "t");
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        return 1;
      }
      break;
    }
    lua_pushnil(L);
    return 1;
  }
  /* t[i], t[{...}], t[mask], t[index_tensor] */
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_insert(L, 1);
  lua_settop(L, 3);
  lua_call(L, 2, 1);
  return 1;
}

/* upvalues: 1 settings, 2 setindex function */
int ltl_tensor_newindex(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lt_tensor *t = ltl_check(L, 1);
    const char *k = lua_tostring(L, 2);
    if (strcmp(k, "requires_grad") == 0) {
      /* PyTorch: "requires_grad must be a bool"; a truthy 1 or "yes" is a slip */
      if (lua_type(L, 3) != LUA_TBOOLEAN)
        return ltl_error(L, "requires_grad_", "requires_grad must be a boolean (got %s)", luaL_typename(L, 3));
      int b = lua_toboolean(L, 3);
      if (b && !lt_is_floating(t->dtype) && !lt_is_complex(t->dtype))
        return ltl_error(L, "requires_grad_", "only Tensors of floating point and complex dtype can require gradients");
      push_meta_field(L, 1, "grad_fn");
      if (!lua_isnil(L, -1))
        return ltl_error(L, "requires_grad_", "you can only change requires_grad flags of leaf variables.%s",
                        b ? "" : " If you want to use a computed variable in a subgraph that doesn't require "
                                 "differentiation use var_no_grad = var.detach().");
      ltl_set_requires_grad(L, t, b);
      return 0;
    }
    if (strcmp(k, "grad") == 0) {
      if (!lua_isnil(L, 3)) ltl_check(L, 3);
      if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
      }
      lua_pushvalue(L, 3);
      lua_setfield(L, -2, "grad");
      return 0;
    }
    return ltl_error(L, "__newindex", "cannot set field '%s' of a tensor", k);
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_settop(L, 4);
  lua_call(L, 3, 0);
  return 0;
}

static int tensor_tostring_fallback(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "ltensor.tostring");
  if (lua_isfunction(L, -1)) { lua_pushvalue(L, 1); lua_call(L, 1, 1); return 1; }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "tensor(shape={");
  for (int i = 0; i < t->ndim; i++) {
    lua_pushfstring(L, i ? ", %I" : "%I", (lua_Integer)t->shape[i]);
    luaL_addvalue(&b);
  }
  lua_pushfstring(L, "}, dtype=%s)", lt_dtypes[t->dtype].name);
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  return 1;
}

static int tensor_eq_guard(lua_State *L) {
  /* replaced by l_ops.c's __eq when that area registers one */
  lua_pushboolean(L, lua_rawequal(L, 1, 2));
  return 1;
}
static int tensor_lt_error(lua_State *L) {
  return ltl_error(L, "__lt", "'<' and '<=' are not defined for tensors: use t:lt(x) / t:le(x) (or T.lt/T.le) for elementwise comparison");
}


const ltl_reg ltl_reg_attr[] = {
  {"size", l_size, LT_BOTH, NULL},
  {"_set_size_metatable", l_set_size_metatable, LT_MODULE, NULL},
  {"stride", l_stride, LT_BOTH, NULL},
  {"dim", l_dim, LT_BOTH, NULL},
  {"numel", l_numel, LT_BOTH, NULL},
  {"nelement", l_numel, LT_METHOD, NULL},
  {"is_contiguous", l_is_contiguous, LT_BOTH, NULL},
  {"storage_offset", l_storage_offset, LT_METHOD, NULL},
  {"is_floating_point", l_is_floating_point, LT_BOTH, NULL},
  {"is_complex", l_is_complex, LT_BOTH, NULL},
  {"element_size", l_element_size, LT_METHOD, NULL},
  {"item", l_item, LT_BOTH, NULL},
  {"totable", l_totable, LT_BOTH, NULL},
  {"get", l_get, LT_METHOD, NULL},
  {"set", l_set, LT_METHOD, NULL},
  {"__len", l_len, LT_META, NULL},
  {"__tostring", tensor_tostring_fallback, LT_META, NULL},
  {"__eq", tensor_eq_guard, LT_META, NULL},
  {"__lt", tensor_lt_error, LT_META, NULL},
  {"__le", tensor_lt_error, LT_META, NULL},
  {NULL, NULL, 0, NULL}
};
