/* l_grad_linear.c -- the fused linear layer: T._linear(x, w [, b]) for
   nn.Linear / F.linear on 2-D float32/float64 inputs, y = x w^T + b as one
   gemm (the bias rows written into y first, the product added with beta =
   1; w^T passed to BLAS as a transpose flag, never copied), and its rule in
   C (backward: gx = g w, gw = g^T x, gb = the column sums of g; no
   transposed copies).  F.linear calls it only for the forms it takes; any
   other goes through matmul + add as before. */
#include "l_autograd.h"
#include "lt_mv_split.h"
#include "lt_blas.h"
#include "lt_iter.h"

/* operand usable by BLAS as is (a transpose is a flag), else a contiguous copy
   left on the stack */
static lt_tensor *blas_operand(lua_State *L, int idx) {
  lt_tensor *t = ltl_check(L, idx);
  if (lt_blas_layout_ok(t->shape[0], t->shape[1], t->stride[0], t->stride[1])) return t;
  return ltl_push_clone(L, t);
}

/* ---- dtype mismatch, named for the layer ----------------------------------
   F.linear (and so nn.Linear) runs any input it cannot fuse through
   matmul, whose dtype error is PyTorch's "expected scalar type Long but
   found Float": true, but it names neither the layer nor the fix.  On that
   error path only, matmul asks here whether its caller is F.linear (found
   by identity on the stack, so wherever the Lua file lives) and raises a
   message about the layer instead. */
static int is_functional_linear(lua_State *L, int fn_idx) {
  int found = 0;
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "ltensor") == LUA_TTABLE && lua_getfield(L, -1, "nn") == LUA_TTABLE &&
      lua_getfield(L, -1, "functional") == LUA_TTABLE && lua_getfield(L, -1, "linear") == LUA_TFUNCTION)
    found = lua_rawequal(L, -1, fn_idx);
  lua_settop(L, fn_idx - 1);
  return found;
}

static void linear_dtype_message(lua_State *L, ltensor_dtype x, ltensor_dtype w) {
  const char *xs = lt_dtypes[x].name, *ws = lt_dtypes[w].name;
  if (lt_is_floating(w))
    ltl_error(L, "nn.functional.linear", "input is %s but the weight is %s: convert the input (x:%s() or x:to(T.%s))",
              xs, ws, w == LTENSOR_FLOAT64 ? "double" : w == LTENSOR_FLOAT32 ? "float" : "to", ws);
  ltl_error(L, "nn.functional.linear", "input is %s but the weight is %s: convert one of them to the other's dtype "
            "(x:to(w.dtype))", xs, ws);
}

void ltl_linear_dtype_check(lua_State *L, ltensor_dtype a, ltensor_dtype b) {
  lua_Debug ar;
  for (int level = 1; level <= 4 && lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "f", &ar);
    if (is_functional_linear(L, lua_gettop(L))) linear_dtype_message(L, a, b);
  }
}

/* T._linear(x, w [, b]) */
int ltl_linear_fn(lua_State *L) {
  const char *fn = "_linear";
  lt_tensor *x = ltl_check(L, 1), *w = ltl_check(L, 2);
  lt_tensor *b = lua_isnoneornil(L, 3) ? NULL : ltl_check(L, 3);
  if (!x->storage || !w->storage || (b && !b->storage)) return ltl_error(L, fn, "a tensor argument was freed");
  ltensor_dtype dt = x->dtype;
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return ltl_error(L, fn, "expected a float32 or float64 input");
  if (w->dtype != dt) linear_dtype_message(L, dt, w->dtype);
  if (b && b->dtype != dt) return ltl_error(L, fn, "input, weight and bias must have the same dtype");
  if (x->ndim != 2 || w->ndim != 2 || (b && b->ndim != 1)) return ltl_error(L, fn, "expected a 2-D input and weight, a 1-D bias");
  int64_t N = x->shape[0], K = x->shape[1], O = w->shape[0];
  if (w->shape[1] != K)
    return ltl_error(L, fn, "mat1 and mat2 shapes cannot be multiplied (%Ix%I and %Ix%I)", (lua_Integer)N,
                     (lua_Integer)K, (lua_Integer)w->shape[1], (lua_Integer)O);
  if (b && b->shape[0] != O) return ltl_error(L, fn, "bias of size %I for %I outputs", (lua_Integer)b->shape[0], (lua_Integer)O);
  x = blas_operand(L, 1);
  w = blas_operand(L, 2);
  int64_t shape[2] = {N, O};
  lt_tensor *y = ltl_push_new(L, dt, 2, shape);
  char *py = lt_data(y);
  size_t sz = lt_itemsize(dt);
  if (N == 0 || O == 0) return 1;
  if (b) {
    const char *pb = lt_data(b);
    int64_t bs = b->stride[0];
    for (int64_t j = 0; j < O; j++) memcpy(py + j * (int64_t)sz, pb + j * bs * (int64_t)sz, sz);
    for (int64_t i = 1; i < N; i++) memcpy(py + i * O * (int64_t)sz, py, (size_t)O * sz);
  }
  /* y (+)= x @ w^T: B = w^T is (K x O) with strides (w.stride[1], w.stride[0]); at batch 1 over the pool */
  lt_pool *pool = ltl_settings_of(L)->pool;
  if (lt_mv_split(pool, dt, b != NULL, N, O, K, lt_data(x), x->stride[0], x->stride[1], lt_data(w), w->stride[1],
                  w->stride[0], py, O, 1))
    return 1;
  if (b)
    (ltl_one_thread(L) ? lt_mm_acc_1t : lt_mm_acc)(dt, N, O, K, lt_data(x), x->stride[0], x->stride[1], lt_data(w),
                                                    w->stride[1], w->stride[0], py, O);
  else
    (ltl_one_thread(L) ? lt_mm_1t : lt_mm)(dt, N, O, K, lt_data(x), x->stride[0], x->stride[1], lt_data(w),
                                            w->stride[1], w->stride[0], py, O, 1);
  return 1;
}
