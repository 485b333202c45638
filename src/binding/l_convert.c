/* l_convert.c -- copies and dtype conversions: clone, contiguous, copy_,
   fill_, zero_, to, type and the t:float()-style converters. */
#include <string.h>
#include "l_lua.h"

static int l_clone(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);   /* extra arguments are slips, never dropped (issue 11) */
  lt_tensor *out = ltl_push_new_preserve(L, t, t->dtype);
  lt_copy_into_pool(out, t, ltl_settings_of(L)->pool);
  return 1;
}
static int l_contiguous(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  if (lt_is_contiguous(t)) { lua_settop(L, 1); return 1; }
  ltl_push_clone(L, t);
  return 1;
}
/* copy_/fill_/zero_ of a Lua value: dst (at 1) gets the value at 2 as a
   0-dim tensor of its dtype, broadcast; returns dst */
static int fill_value(lua_State *L, const char *fname, lt_tensor *dst) {
  lt_tensor *s = ltl_push_scalar(L, dst->dtype, 2);
  ltl_copy(L, fname, dst, s);
  lua_settop(L, 1);
  return 1;
}
static int l_copy_(lua_State *L) {
  lt_tensor *dst = ltl_check(L, 1);
  lt_tensor *src = ltl_test(L, 2);
  if (src && !src->storage) ltl_argerror(L, 2, "tensor was freed");
  if (!src) {
    if (lua_type(L, 2) != LUA_TNUMBER && lua_type(L, 2) != LUA_TBOOLEAN)
      return ltl_typeerror(L, 2, "tensor, number or boolean");
    return fill_value(L, "copy_", dst);
  }
  ltl_copy(L, "copy_", dst, src);
  lua_settop(L, 1);
  return 1;
}
static int l_fill_(lua_State *L) {
  lt_tensor *dst = ltl_check(L, 1);
  if (lua_type(L, 2) != LUA_TNUMBER && lua_type(L, 2) != LUA_TBOOLEAN && !ltl_test(L, 2))
    return ltl_typeerror(L, 2, "number or boolean");
  return fill_value(L, "fill_", dst);
}
static int l_zero_(lua_State *L) {
  lt_tensor *dst = ltl_check(L, 1);
  lua_settop(L, 1);
  lua_pushinteger(L, 0);
  return fill_value(L, "zero_", dst);
}

static int convert_to(lua_State *L, ltensor_dtype dt, int copy) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->dtype == dt && !copy) { lua_settop(L, 1); return 1; }
  lt_tensor *out = ltl_push_new_like(L, t, dt);
  lt_copy_into_pool(out, t, ltl_settings_of(L)->pool);
  return 1;
}
/* A device argument: ltensor runs on the CPU, so "cpu" (PyTorch code is
   full of x:to("cpu") and {device = "cpu"}) is accepted and changes
   nothing; any other device is refused by name. */
static void check_device(lua_State *L, int idx) {
  const char *d = lua_tostring(L, idx);
  if (d && (strcmp(d, "cpu") == 0 || strcmp(d, "cpu:0") == 0)) return;
  ltl_error(L, "to", "device '%s' is not available: ltensor runs on the CPU (use \"cpu\")",
            d ? d : luaL_typename(L, idx));
}

/* t:to(dtype [, {copy=}]), t:to(device [, dtype] [, {copy=}]), t:to(other)
   (other's dtype), t:to{dtype=, device=, copy=}: PyTorch's forms */
static int l_to(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltensor_dtype dt = t->dtype;
  int copy = 0, opts = 0;
  static const char *const TO_OPTS[] = {"dtype", "device", "copy", NULL}, *const COPY_OPTS[] = {"copy", NULL};
  if (lua_type(L, 2) == LUA_TTABLE && !luaL_testudata(L, 2, LT_DTYPE_MT)) {
    ltl_check_opts(L, 2, "to", TO_OPTS);
    dt = ltl_opt_dtype(L, 2, t->dtype);
    ltl_getopt(L, 2, "device");
    if (!lua_isnil(L, -1)) check_device(L, lua_gettop(L));
    lua_pop(L, 1);
    copy = ltl_opt_bool(L, 2, "copy", 0);
    return convert_to(L, dt, copy);
  }
  int next = 2;
  if (lua_type(L, 2) == LUA_TSTRING) {   /* a device, then maybe a dtype */
    check_device(L, 2);
    next = 3;
    if (luaL_testudata(L, 3, LT_DTYPE_MT)) { dt = ltl_checkdtype(L, 3); next = 4; }
  } else if (ltl_test(L, 2)) {           /* another tensor: its dtype */
    dt = ltl_check(L, 2)->dtype;
    next = 3;
  } else {
    dt = ltl_checkdtype(L, 2);
    next = 3;
  }
  opts = next;
  ltl_check_opts(L, opts, "to", COPY_OPTS);
  copy = ltl_opt_bool(L, opts, "copy", 0);
  return convert_to(L, dt, copy);
}

/* t:cpu(): the tensor itself (PyTorch returns self when already there) */
static int l_cpu(lua_State *L) {
  ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  lua_settop(L, 1);
  return 1;
}
static int l_type(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (lua_isnoneornil(L, 2)) { lua_pushfstring(L, "ltensor.%s", lt_dtypes[t->dtype].name); return 1; }
  return convert_to(L, ltl_checkdtype(L, 2), 0);
}
#define CONVERTER(fname, DT) static int l_##fname(lua_State *L) { return convert_to(L, DT, 0); }
CONVERTER(float, LTENSOR_FLOAT32)
CONVERTER(double, LTENSOR_FLOAT64)
CONVERTER(half, LTENSOR_FLOAT16)
CONVERTER(bfloat16, LTENSOR_BFLOAT16)
CONVERTER(int, LTENSOR_INT32)
CONVERTER(long, LTENSOR_INT64)
CONVERTER(short, LTENSOR_INT16)
CONVERTER(char, LTENSOR_INT8)
CONVERTER(byte, LTENSOR_UINT8)
CONVERTER(bool, LTENSOR_BOOL)
CONVERTER(cfloat, LTENSOR_COMPLEX64)
CONVERTER(cdouble, LTENSOR_COMPLEX128)


const ltl_reg ltl_reg_convert[] = {
  {"clone", l_clone, LT_BOTH | LT_DIFF, NULL},
  {"contiguous", l_contiguous, LT_BOTH | LT_DIFF, NULL},
  {"copy_", l_copy_, LT_METHOD | LT_DIFF, NULL},
  {"fill_", l_fill_, LT_METHOD | LT_DIFF, NULL},
  {"zero_", l_zero_, LT_METHOD | LT_DIFF, NULL},
  {"to", l_to, LT_METHOD | LT_DIFF, NULL},
  {"cpu", l_cpu, LT_METHOD, NULL},
  {"type", l_type, LT_METHOD, NULL},
  {"float", l_float, LT_METHOD | LT_DIFF, NULL},
  {"double", l_double, LT_METHOD | LT_DIFF, NULL},
  {"half", l_half, LT_METHOD | LT_DIFF, NULL},
  {"bfloat16", l_bfloat16, LT_METHOD | LT_DIFF, NULL},
  {"int", l_int, LT_METHOD, NULL},
  {"long", l_long, LT_METHOD, NULL},
  {"short", l_short, LT_METHOD, NULL},
  {"char", l_char, LT_METHOD, NULL},
  {"byte", l_byte, LT_METHOD, NULL},
  {"bool", l_bool, LT_METHOD, NULL},
  {"cfloat", l_cfloat, LT_METHOD | LT_DIFF, NULL},
  {"cdouble", l_cdouble, LT_METHOD | LT_DIFF, NULL},
  {NULL, NULL, 0, NULL}
};
