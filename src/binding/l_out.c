/* l_out.c -- out= for the functions that compute a new tensor and then hand
   it over (gather, index_select): the option is read and checked before the
   work (a freed tensor, or not a tensor, is refused by name), and the result
   is written into it after (PyTorch's out=: the same dtype as the input; a
   shape that differs is refused, as the elementwise ops' out= does, rather
   than resized). */
#include <string.h>
#include "l_lua.h"
#include "l_ew.h"

/* Options at opts_idx (nil, or a table with only these keys): checks them
   and pushes the out= tensor, returning its index, or 0 (nothing pushed). */
int ltl_opt_out(lua_State *L, const char *fname, int opts_idx, const char *const *known) {
  int ty = lua_type(L, opts_idx);
  if (ty == LUA_TNONE || ty == LUA_TNIL) return 0;
  if (ty != LUA_TTABLE || ltl_test(L, opts_idx)) ltl_typeerror(L, opts_idx, "options table");
  ltl_check_opts(L, opts_idx, fname, known);
  return ew_opt_out(L, opts_idx);
}

/* The result on top of the stack goes into the tensor at out_idx (0: none),
   which replaces it there.  dtype: the one out must have. */
void ltl_into_out(lua_State *L, const char *fname, int out_idx, ltensor_dtype dtype) {
  if (!out_idx) return;
  lt_tensor *r = ltl_check(L, -1), *o = ltl_check(L, out_idx);
  if (o->dtype != dtype)
    ltl_error(L, fname, "Expected out tensor to have dtype %s, but got %s instead", lt_dtypes[dtype].name,
              lt_dtypes[o->dtype].name);
  if (o->ndim != r->ndim || memcmp(o->shape, r->shape, sizeof(int64_t) * (size_t)r->ndim) != 0) {
    char b1[LT_SHAPE_STR_MAX], b2[LT_SHAPE_STR_MAX];
    ltl_error(L, fname, "output with shape %s doesn't match the result shape %s",
              lt_shape_str(b1, sizeof b1, o->ndim, o->shape, "[]"), lt_shape_str(b2, sizeof b2, r->ndim, r->shape, "[]"));
  }
  ltl_copy(L, fname, o, r);
  lua_pushvalue(L, out_idx);
}
