/*
 * l_struct.c -- structural ops that need strided views or copies in C
 * (the rest of the structural surface is composed in lua/ltensor/tensor/
 * from differentiable ops).
 *
 *   diagonal(t [, offset [, dim1, dim2]])        a view (no copy)
 *   diag_embed(t [, offset [, dim1, dim2]])      zeros with t on a diagonal
 *   _diagonal_scatter(g, shape, offset, d1, d2)  zeros(shape) with g on the diagonal (diagonal's backward)
 *   flip(t, dims...)                             a copy through a negative-stride view
 *   tril(t [, k]), triu(t [, k])                 a copy with a triangle zeroed per row
 *   _roll_dims(t, shifts, dims)                  at most 2^k block copies (roll's core)
 *   complex(re, im), view_as_real(t), view_as_complex(t)
 *   cat(tensors [, dim]), stack(tensors [, dim])  copies into one new tensor
 *
 * Every element loop runs through lt_copy_into (the strided copy) or a
 * typed row loop; no per-element Lua.
 */
#include <math.h>
#include <string.h>
#include "l_view.h"

/* A diagonal offset: any integer (past the corner the diagonal is empty),
   clamped so that offset arithmetic on sizes cannot overflow. */
static int64_t opt_offset(lua_State *L, int idx, const char *fname) {
  if (lua_isnoneornil(L, idx) || lua_type(L, idx) == LUA_TTABLE) return 0;
  if (!lua_isinteger(L, idx))
    return ltl_error(L, fname, "offset must be an integer (got %s)", luaL_typename(L, idx));
  lua_Integer v = lua_tointeger(L, idx);
  const lua_Integer lim = (lua_Integer)1 << 62;
  return v > lim ? lim : v < -lim ? -lim : v;
}

/* The diagonal of t (0-based d1 != d2) as a tensor struct (not pushed). */
static void diag_struct(lt_tensor *v, const lt_tensor *t, int64_t offset, int d1, int d2) {
  int64_t n1 = t->shape[d1], n2 = t->shape[d2], len;
  int64_t off = t->offset;
  if (offset >= 0) {
    len = n1 < n2 - offset ? n1 : n2 - offset;
    if (len > 0) off += offset * t->stride[d2];
  } else {
    len = n1 + offset < n2 ? n1 + offset : n2;
    if (len > 0) off += -offset * t->stride[d1];
  }
  if (len < 0) len = 0;
  *v = *t;
  int k = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == d1 || i == d2) continue;
    v->shape[k] = t->shape[i];
    v->stride[k] = t->stride[i];
    k++;
  }
  v->shape[k] = len;
  v->stride[k] = t->stride[d1] + t->stride[d2];
  v->ndim = t->ndim - 1;
  v->offset = len > 0 ? off : t->offset;
}

/* the dim option on the stack top: an integer (a string or 1.5 is a slip) */
static lua_Integer opt_dim(lua_State *L, const char *fname, const char *key) {
  if (!lua_isinteger(L, -1))
    ltl_error(L, fname, "option '%s' must be an integer (got %s)", key,
              lua_type(L, -1) == LUA_TNUMBER ? "a non-integer number" : luaL_typename(L, -1));
  return lua_tointeger(L, -1);
}

static void diag_dims(lua_State *L, const char *fname, int ndim, int first, int64_t *offset, int *d1, int *d2,
                      lua_Integer def1, lua_Integer def2) {
  *offset = opt_offset(L, first, fname);
  lua_Integer a = def1, b = def2;
  /* dim1, dim2 positionally: integers (a string or 1.5 is a slip, never
     the default), or the options table */
  int opts = 0;
  for (int k = first; k <= first + 3; k++)
    if (lua_type(L, k) == LUA_TTABLE) { opts = k; break; }
  ltl_check_nargs(L, opts ? opts : first + 2);   /* nothing after the options, or past dim2 */
  for (int k = first + 1; k <= first + 2 && (!opts || k < opts); k++) {
    int ty = lua_type(L, k);
    if (ty != LUA_TNONE && ty != LUA_TNIL && !lua_isinteger(L, k))
      ltl_error(L, fname, "%s must be an integer (got %s)", k == first + 1 ? "dim1" : "dim2",
                ty == LUA_TNUMBER ? "a non-integer number" : luaL_typename(L, k));
  }
  if (lua_isinteger(L, first + 1)) a = lua_tointeger(L, first + 1);
  if (lua_isinteger(L, first + 2)) b = lua_tointeger(L, first + 2);
  if (opts) {
    static const char *const DIAG_OPTS[] = {"offset", "dim1", "dim2", NULL};
    ltl_check_opts(L, opts, fname, DIAG_OPTS);
    if (ltl_getopt(L, opts, "offset") != LUA_TNIL) *offset = opt_offset(L, -1, fname);
    lua_pop(L, 1);
    if (ltl_getopt(L, opts, "dim1") != LUA_TNIL) a = opt_dim(L, fname, "dim1");
    lua_pop(L, 1);
    if (ltl_getopt(L, opts, "dim2") != LUA_TNIL) b = opt_dim(L, fname, "dim2");
    lua_pop(L, 1);
  }
  *d1 = ltl_checkdim(L, a, ndim, fname);
  *d2 = ltl_checkdim(L, b, ndim, fname);
  if (*d1 == *d2)
    ltl_error(L, fname, "diagonal dimensions cannot be identical %d, %d", (int)a, (int)b);
}

/* diagonal(t, offset=0, dim1=1, dim2=2) */
static int l_diagonal(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim < 2) return ltl_error(L, "diagonal", "diagonal dimensions requires ndim larger than 1 (got %d)", t->ndim);
  int64_t offset;
  int d1, d2;
  diag_dims(L, "diagonal", t->ndim, 2, &offset, &d1, &d2, 1, 2);
  lt_tensor v;
  diag_struct(&v, t, offset, d1, d2);
  lua_settop(L, 1);
  ltl_push_view(L, t, v.ndim, v.shape, v.stride, v.offset);
  return 1;
}

/* diag_embed(t, offset=0, dim1=-2, dim2=-1) */
static int l_diag_embed(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int nd = t->ndim + 1;
  if (nd > LT_MAX_DIMS) return ltl_error(L, "diag_embed", "too many dimensions");
  if (t->ndim == 0) return ltl_error(L, "diag_embed", "diag_embed(): input must be at least 1-dimensional");
  int64_t offset;
  int d1, d2;
  diag_dims(L, "diag_embed", nd, 2, &offset, &d1, &d2, -2, -1);
  if (offset > ((int64_t)1 << 31) || offset < -((int64_t)1 << 31))
    return ltl_error(L, "diag_embed", "offset %I gives a tensor too large", (lua_Integer)offset);
  int64_t n = t->shape[t->ndim - 1] + (offset < 0 ? -offset : offset);
  int64_t shape[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < nd; i++) {
    if (i == d1 || i == d2) shape[i] = n;
    else shape[i] = t->shape[k++];
  }
  lt_tensor *out = ltl_push_new(L, t->dtype, nd, shape);
  lt_fill_i64(out, 0);
  lt_tensor v;
  diag_struct(&v, out, offset, d1, d2);
  lt_copy_into(&v, t);
  return 1;
}

/* _diagonal_scatter(g, shape, offset, d1, d2): zeros of shape with g on the
   diagonal (d1, d2 1-based, already normalised by the caller) */
static int l_diagonal_scatter(lua_State *L) {
  lt_tensor *g = ltl_check(L, 1);
  int64_t shape[LT_MAX_DIMS];
  int nd = ltl_checksize(L, 2, 2, shape, "diagonal");
  int64_t offset = ltl_checkinteger(L, 3);
  int d1 = ltl_checkdim(L, ltl_checkinteger(L, 4), nd, "diagonal");
  int d2 = ltl_checkdim(L, ltl_checkinteger(L, 5), nd, "diagonal");
  lt_tensor *out = ltl_push_new(L, g->dtype, nd, shape);
  lt_fill_i64(out, 0);
  lt_tensor v;
  diag_struct(&v, out, offset, d1, d2);
  if (v.ndim != g->ndim || memcmp(v.shape, g->shape, sizeof(int64_t) * (size_t)g->ndim) != 0)
    return ltl_error(L, "diagonal", "gradient has the wrong shape");
  lt_copy_into(&v, g);
  return 1;
}

/* flip(t, dims) with dims a table or varargs */
static int l_flip(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t dims[LT_MAX_DIMS];
  int n;
  if (lua_istable(L, 2)) {
    ltl_check_nargs(L, 2);   /* flip(t, {dims}): nothing after the list */
    n = (int)lua_rawlen(L, 2);
    if (n > LT_MAX_DIMS) return ltl_error(L, "flip", "too many dims");
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, 2, i + 1);
      if (!lua_isinteger(L, -1)) return ltl_error(L, "flip", "dims must be integers");
      dims[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else {
    n = lua_gettop(L) - 1;
    if (n > LT_MAX_DIMS) return ltl_error(L, "flip", "too many dims");
    for (int i = 0; i < n; i++) {
      if (!lua_isinteger(L, i + 2)) return ltl_error(L, "flip", "dims must be integers");
      dims[i] = lua_tointeger(L, i + 2);
    }
  }
  lt_tensor v = *t;
  int seen[LT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int d = ltl_checkdim(L, dims[i], t->ndim, "flip");
    if (t->ndim == 0) continue;
    if (seen[d]) return ltl_error(L, "flip", "dim %d appears multiple times in the list of dims", d + 1);
    seen[d] = 1;
    if (t->shape[d] > 1) {
      v.offset += (t->shape[d] - 1) * t->stride[d];
      v.stride[d] = -t->stride[d];
    }
  }
  lt_tensor *out = ltl_push_new(L, t->dtype, t->ndim, t->shape);
  lt_copy_into(out, &v);
  return 1;
}

/* tril / triu (t [, diagonal]): a contiguous copy with the other triangle
   of every matrix zeroed row by row (all-zero bytes are 0 in every dtype). */
static int tri_common(lua_State *L, const char *fname, int lower) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 2);   /* (t [, diagonal | opts]) */
  lua_Integer k = 0;
  if (lua_isinteger(L, 2)) k = lua_tointeger(L, 2);
  else if (lua_istable(L, 2)) {
    static const char *const TRI_OPTS[] = {"diagonal", NULL};
    ltl_check_opts(L, 2, fname, TRI_OPTS);
    if (ltl_getopt(L, 2, "diagonal") != LUA_TNIL) {
      if (!lua_isinteger(L, -1)) return ltl_error(L, fname, "diagonal must be an integer");
      k = lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
  } else if (!lua_isnoneornil(L, 2))
    return ltl_error(L, fname, "diagonal must be an integer (got %s)", luaL_typename(L, 2));
  if (t->ndim < 2) {
    int n = t->ndim > 0 ? t->ndim : 1;
    return ltl_error(L, fname, "dimension out of range (expected to be in range of [%d, %d], but got -2)", -n, n);
  }
  lt_tensor *out = ltl_push_new(L, t->dtype, t->ndim, t->shape);
  int64_t n = lt_numel(out);
  if (n == 0) return 1;
  lt_copy_into(out, t);
  int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
  int64_t batch = n / (r * c);
  size_t isz = lt_itemsize(t->dtype);
  char *base = lt_data(out);
  /* clamp k so that i + k cannot overflow */
  if (k > c) k = c;
  if (k < -r - 1) k = -r - 1;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < r; i++) {
      int64_t j0, j1; /* zero [j0, j1) */
      if (lower) { j0 = i + k + 1; j1 = c; }
      else { j0 = 0; j1 = i + k; }
      if (j0 < 0) j0 = 0;
      if (j1 > c) j1 = c;
      if (j1 > j0) memset(base + ((b * r + i) * c + j0) * (int64_t)isz, 0, (size_t)(j1 - j0) * isz);
    }
  return 1;
}
static int l_tril(lua_State *L) { return tri_common(L, "tril", 1); }
static int l_triu(lua_State *L) { return tri_common(L, "triu", 0); }

/* _roll_dims(t, shifts, dims): shifts and 1-based dims as equal-length
   tables (checked by the Lua wrapper); each rolled dim splits the copy in
   two blocks, so at most 2^k strided copies for k dims. */
static void roll_blocks(lt_tensor *dst, lt_tensor *src, const int64_t *shift, int d, int ndim) {
  while (d < ndim && shift[d] == 0) d++;
  if (d == ndim) { lt_copy_into(dst, src); return; }
  int64_t n = src->shape[d], s = shift[d];
  lt_tensor a = *src, b = *dst;
  /* src [0, n - s) -> dst [s, n) */
  a.shape[d] = n - s;
  b.shape[d] = n - s;
  b.offset = dst->offset + s * dst->stride[d];
  roll_blocks(&b, &a, shift, d + 1, ndim);
  /* src [n - s, n) -> dst [0, s) */
  a = *src; b = *dst;
  a.shape[d] = s;
  a.offset = src->offset + (n - s) * src->stride[d];
  b.shape[d] = s;
  roll_blocks(&b, &a, shift, d + 1, ndim);
}
static int l_roll_dims(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_checktype(L, 2, LUA_TTABLE);
  ltl_checktype(L, 3, LUA_TTABLE);
  int k = (int)lua_rawlen(L, 2);
  if (k != (int)lua_rawlen(L, 3)) return ltl_error(L, "roll", "shifts and dimensions must align");
  int64_t shift[LT_MAX_DIMS] = {0};
  for (int i = 0; i < k; i++) {
    lua_rawgeti(L, 2, i + 1);
    lua_rawgeti(L, 3, i + 1);
    if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1)) return ltl_error(L, "roll", "shifts and dims must be integers");
    lua_Integer s = lua_tointeger(L, -2);
    int d = ltl_checkdim(L, lua_tointeger(L, -1), t->ndim, "roll");
    lua_pop(L, 2);
    if (t->ndim == 0) continue;
    int64_t n = t->shape[d];
    if (n > 0) {
      int64_t m = (int64_t)(s % n);
      if (m < 0) m += n;
      shift[d] = (shift[d] + m) % n;
    }
  }
  lt_tensor *out = ltl_push_new(L, t->dtype, t->ndim, t->shape);
  if (lt_numel(out) == 0) return 1;
  lt_tensor src = *t, dst = *out;
  roll_blocks(&dst, &src, shift, 0, t->ndim);
  return 1;
}

/* ---- complex construction and dtype views ------------------------------ */
static void real_part_struct(lt_tensor *v, const lt_tensor *c, int imag) {
  *v = *c;
  v->dtype = lt_to_real(c->dtype);
  v->offset = c->offset * 2 + imag;
  for (int i = 0; i < c->ndim; i++) v->stride[i] = c->stride[i] * 2;
}

static int l_complex(lua_State *L) {
  lt_tensor *re = ltl_check(L, 1), *im = ltl_check(L, 2);
  ltl_check_nargs(L, 2);
  if (!lt_is_floating(re->dtype) || !lt_is_floating(im->dtype) || re->dtype == LTENSOR_BFLOAT16 ||
      im->dtype == LTENSOR_BFLOAT16)
    return ltl_error(L, "complex", "Expected both inputs to be Half, Float or Double tensors but got %s and %s",
                    lt_dtypes[re->dtype].name, lt_dtypes[im->dtype].name);
  if (re->dtype != im->dtype)
    return ltl_error(L, "complex", "Expected object of scalar type %s but got scalar type %s for second argument",
                    lt_dtypes[re->dtype].name, lt_dtypes[im->dtype].name);
  const lt_tensor *ts[2] = {re, im};
  int nd;
  int64_t shape[LT_MAX_DIMS], ba, bb;
  int bd;
  if (lt_broadcast_shape(ts, 2, &nd, shape, &ba, &bb, &bd) != 0)
    return ltl_error(L, "complex", "the size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d",
                    (int)ba, (int)bb, bd);
  lt_tensor *out = ltl_push_new(L, lt_to_complex(re->dtype), nd, shape);
  lt_tensor v;
  real_part_struct(&v, out, 0);
  lt_copy_into(&v, re);
  real_part_struct(&v, out, 1);
  lt_copy_into(&v, im);
  return 1;
}

static int l_view_as_real(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (!lt_is_complex(t->dtype))
    return ltl_error(L, "view_as_real", "view_as_real is only supported for complex tensors");
  if (t->ndim + 1 > LT_MAX_DIMS) return ltl_error(L, "view_as_real", "too many dimensions");
  int64_t shape[LT_MAX_DIMS], stride[LT_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) { shape[i] = t->shape[i]; stride[i] = t->stride[i] * 2; }
  shape[t->ndim] = 2;
  stride[t->ndim] = 1;
  lua_settop(L, 1);
  lt_tensor *v = ltl_push_view(L, t, t->ndim + 1, shape, stride, t->offset * 2);
  v->dtype = lt_to_real(t->dtype);
  return 1;
}

static int l_view_as_complex(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->dtype != LTENSOR_FLOAT32 && t->dtype != LTENSOR_FLOAT64 && t->dtype != LTENSOR_FLOAT16)
    return ltl_error(L, "view_as_complex", "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: %s",
                    lt_dtypes[t->dtype].name);
  if (t->ndim == 0 || t->shape[t->ndim - 1] != 2)
    return ltl_error(L, "view_as_complex", "Tensor must have a last dimension of size 2");
  if (t->stride[t->ndim - 1] != 1)
    return ltl_error(L, "view_as_complex", "Tensor must have a last dimension with stride 1");
  for (int i = 0; i < t->ndim - 1; i++)
    if (t->stride[i] % 2 != 0)
      return ltl_error(L, "view_as_complex", "Tensor must have a stride divisible by 2 for all but last dimension");
  if (t->offset % 2 != 0)
    return ltl_error(L, "view_as_complex", "Tensor must have a storage_offset divisible by 2");
  int64_t shape[LT_MAX_DIMS], stride[LT_MAX_DIMS];
  for (int i = 0; i < t->ndim - 1; i++) { shape[i] = t->shape[i]; stride[i] = t->stride[i] / 2; }
  lua_settop(L, 1);
  lt_tensor *v = ltl_push_view(L, t, t->ndim - 1, shape, stride, t->offset / 2);
  v->dtype = lt_to_complex(t->dtype);
  return 1;
}

/* ====================================================================== */
/* cat / stack                                                            */
/* ====================================================================== */
static lt_tensor *list_elem(lua_State *L, int list, int i, const char *fname) {
  lua_rawgeti(L, list, i);
  lt_tensor *t = ltl_test(L, -1);
  if (!t) ltl_error(L, fname, "expected a list of tensors (element %d is %s)", i, luaL_typename(L, -1));
  if (!t->storage) ltl_error(L, fname, "tensor %d in the list was freed", i);
  lua_pop(L, 1);   /* the list anchors it */
  return t;
}

static ltensor_dtype list_dtype(lua_State *L, int list, int n, const char *fname) {
  ltl_settings *S = ltl_settings_of(L);
  ltensor_dtype dt = list_elem(L, list, 1, fname)->dtype;
  for (int i = 2; i <= n; i++)
    dt = lt_promote_types(S->promotion, dt, list_elem(L, list, i, fname)->dtype, S->default_dtype);
  return dt;
}

/* cat/stack's arguments (tensors [, dim]): the list's length (an empty
   list raises `empty`), the dim as given, the promoted dtype */
static int list_args(lua_State *L, const char *fname, const char *empty, lua_Integer *dim, ltensor_dtype *dt) {
  ltl_checktype(L, 1, LUA_TTABLE);
  ltl_check_nargs(L, 2);
  *dim = ltl_optinteger(L, 2, 1);
  int n = (int)lua_rawlen(L, 1);
  if (n == 0) ltl_error(L, fname, "%s", empty);
  *dt = list_dtype(L, 1, n, fname);
  return n;
}

static int l_cat(lua_State *L) {
  lua_Integer dim;
  ltensor_dtype dt;
  int n = list_args(L, "cat", "expected a non-empty list of Tensors", &dim, &dt);
  /* 1-D tensors of size 0 are skipped (PyTorch's legacy rule) */
  const lt_tensor *ref = NULL;
  int refi = 0;
  for (int i = 1; i <= n; i++) {
    lt_tensor *x = list_elem(L, 1, i, "cat");
    if (x->ndim == 0)
      return ltl_error(L, "cat", "zero-dimensional tensor (at position %d) cannot be concatenated", i);
    if (!ref && !(x->ndim == 1 && x->shape[0] == 0)) { ref = x; refi = i; }
  }
  if (!ref) {
    int64_t zero = 0;
    ltl_push_new(L, dt, 1, &zero);
    return 1;
  }
  int d = ltl_checkdim(L, dim, ref->ndim, "cat");
  int64_t shape[LT_MAX_DIMS];
  memcpy(shape, ref->shape, sizeof shape);
  shape[d] = 0;
  for (int i = 1; i <= n; i++) {
    lt_tensor *x = list_elem(L, 1, i, "cat");
    if (x->ndim == 1 && x->shape[0] == 0) continue;
    if (x->ndim != ref->ndim)
      return ltl_error(L, "cat", "Tensors must have same number of dimensions: got %d and %d", ref->ndim, x->ndim);
    for (int k = 0; k < ref->ndim; k++)
      if (k != d && x->shape[k] != ref->shape[k])
        return ltl_error(L, "cat", "Sizes of tensors must match except in dimension %d. Expected size %I but got size "
                        "%I for tensor number %d in the list", d + 1, (lua_Integer)ref->shape[k],
                        (lua_Integer)x->shape[k], i);
    /* expanded inputs are cheap: four of size 2^62 wrapped the sum to 0 and
       the copies overran the result */
    if (x->shape[d] > INT64_MAX - shape[d])
      return ltl_error(L, "cat", "tensor too large (the sizes along dimension %d overflow int64)", d + 1);
    shape[d] += x->shape[d];
  }
  (void)refi;
  lt_tensor *out = ltl_push_new(L, dt, ref->ndim, shape);
  int64_t pos = 0;
  for (int i = 1; i <= n; i++) {
    lt_tensor *x = list_elem(L, 1, i, "cat");
    if (x->ndim == 1 && x->shape[0] == 0) continue;
    lt_tensor part = *out;
    part.shape[d] = x->shape[d];
    part.offset = pos * out->stride[d];
    lt_copy_into(&part, x);
    pos += x->shape[d];
  }
  return 1;
}

static int l_stack(lua_State *L) {
  lua_Integer dim;
  ltensor_dtype dt;
  int n = list_args(L, "stack", "stack expects a non-empty TensorList", &dim, &dt);
  const lt_tensor *ref = list_elem(L, 1, 1, "stack");
  for (int i = 2; i <= n; i++) {
    lt_tensor *x = list_elem(L, 1, i, "stack");
    if (x->ndim != ref->ndim || memcmp(x->shape, ref->shape, sizeof(int64_t) * (size_t)x->ndim) != 0) {
      char b1[SHAPE_BUF], b2[SHAPE_BUF];
      return ltl_error(L, "stack", "stack expects each tensor to be equal size, but got %s at entry 1 and %s at "
                      "entry %d", shape_str(b1, sizeof b1, ref->ndim, ref->shape),
                      shape_str(b2, sizeof b2, x->ndim, x->shape), i);
    }
  }
  if (ref->ndim >= LT_MAX_DIMS) return ltl_error(L, "stack", "too many dimensions (more than %d)", LT_MAX_DIMS);
  int d = ltl_checkdim(L, dim, ref->ndim + 1, "stack");
  int64_t shape[LT_MAX_DIMS];
  for (int i = 0, j = 0; i <= ref->ndim; i++) shape[i] = i == d ? n : ref->shape[j++];
  lt_tensor *out = ltl_push_new(L, dt, ref->ndim + 1, shape);
  for (int i = 1; i <= n; i++) {
    lt_tensor *x = list_elem(L, 1, i, "stack");
    lt_tensor part = *out;
    part.ndim = ref->ndim;
    for (int k = 0, j = 0; k <= ref->ndim; k++)
      if (k != d) { part.shape[j] = out->shape[k]; part.stride[j++] = out->stride[k]; }
    part.offset = (i - 1) * out->stride[d];
    lt_copy_into(&part, x);
  }
  return 1;
}

const ltl_reg ltl_reg_struct[] = {
  {"cat", l_cat, LT_MODULE | LT_DIFF, "cat"},
  {"concat", l_cat, LT_MODULE | LT_DIFF, "cat"},
  {"stack", l_stack, LT_MODULE | LT_DIFF, "stack"},
  {"diagonal", l_diagonal, LT_BOTH | LT_DIFF, "diagonal"},
  {"diag_embed", l_diag_embed, LT_BOTH | LT_DIFF, "diag_embed"},
  {"_diagonal_scatter", l_diagonal_scatter, LT_MODULE | LT_DIFF, "_diagonal_scatter"},
  {"flip", l_flip, LT_BOTH | LT_DIFF, "flip"},
  {"tril", l_tril, LT_BOTH | LT_DIFF, "tril"},
  {"triu", l_triu, LT_BOTH | LT_DIFF, "triu"},
  {"_roll_dims", l_roll_dims, LT_MODULE | LT_DIFF, "_roll_dims"},
  {"complex", l_complex, LT_MODULE | LT_DIFF, "complex"},
  {"view_as_real", l_view_as_real, LT_BOTH | LT_DIFF, "view_as_real"},
  {"view_as_complex", l_view_as_complex, LT_BOTH | LT_DIFF, "view_as_complex"},
  {NULL, NULL, 0, NULL}
};
