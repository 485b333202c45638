/* l_combos.c -- T._combinations_index(n, r, with_replacement, count): the
   1-based positions of T.combinations' rows, as a (count, r) int64 tensor in
   itertools.combinations(_with_replacement) order, made by one odometer
   walk.  (lua/ltensor/tensor/construct.lua counts the rows, bounds them and
   gathers t's elements with index_select; the walk was a recursive Lua
   generator filling a Lua table, about 9 s for C(5000, 2) = 12.5M rows.) */
#include "l_lua.h"

#define LT_COMB_MAX_R 64   /* more is out of reach anyway: C(2r-1, r) rows > 2^28 elements */

static int l_combinations_index(lua_State *L) {
  lua_Integer n = ltl_checkinteger(L, 1), r = ltl_checkinteger(L, 2);
  int wr = lua_toboolean(L, 3);
  lua_Integer count = ltl_checkinteger(L, 4);
  if (n < 0 || r < 1 || r > LT_COMB_MAX_R || count < 0 || count > ((lua_Integer)1 << 28) / r)   /* construct.lua's bound */
    return ltl_error(L, "combinations", "bad index request (n %I, r %I, %I rows)", n, r, count);
  int64_t shape[2] = {count, r};
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 2, shape);
  int64_t *o = (int64_t *)lt_data(out), cur[LT_COMB_MAX_R];
  if (count == 0) return 1;
  if (!wr && r > n) return ltl_error(L, "combinations", "%I rows asked of C(%I, %I) = 0", count, n, r);
  for (int i = 0; i < r; i++) cur[i] = wr ? 0 : i;
  for (int64_t row = 0;; row++) {
    for (int i = 0; i < r; i++) o[i] = cur[i] + 1;
    o += r;
    if (row + 1 == count) break;   /* the caller's count bounds the writes */
    /* the rightmost position that can still move up, then its successors
       start again just after it (or at it, with replacement) */
    int i = (int)r - 1;
    while (i >= 0 && cur[i] == (wr ? n - 1 : n - r + i)) i--;
    if (i < 0)   /* fewer rows than counted: the count was wrong */
      return ltl_error(L, "combinations", "only %I of %I rows", (lua_Integer)(row + 1), count);
    cur[i]++;
    for (int j = i + 1; j < r; j++) cur[j] = wr ? cur[j - 1] : cur[j - 1] + 1;
  }
  return 1;
}

const ltl_reg ltl_reg_combos[] = {
  {"_combinations_index", l_combinations_index, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
