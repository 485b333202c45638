/* l_view.c -- views (view, reshape, transpose, expand, narrow, select,
   split, ...).  Indexing is l_index.c, gather/scatter l_scatter.c, cat/stack
   (copies) l_struct.c.

   Views never copy: they push a new userdata sharing the storage with new
   (shape, stride, offset).  Dims and indices are 1-based at the boundary,
   negative from the end; everything below works 0-based. */
#include <limits.h>
#include "l_view.h"

/* ====================================================================== */
/* view / reshape / flatten                                               */
/* ====================================================================== */
/* Push t seen with shape (nd, shape): a view when strides allow, else a
   copy when allow_copy, else PyTorch's view error. */
static void push_reshaped(lua_State *L, const char *fname, lt_tensor *t, int nd, const int64_t *shape,
                          int allow_copy) {
  int64_t st[LT_MAX_DIMS];
  if (lt_view_compute_stride(t->ndim, t->shape, t->stride, nd, shape, st)) {
    ltl_push_view(L, t, nd, shape, st, t->offset);
    return;
  }
  if (!allow_copy)
    ltl_error(L, fname, "view size is not compatible with input tensor's size and stride (at least one "
             "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  lt_tensor *tmp = ltl_push_clone(L, t);
  lt_contiguous_strides(nd, shape, st);
  ltl_push_view(L, tmp, nd, shape, st, 0);
  lua_remove(L, -2);
}

static int reshape_common(lua_State *L, const char *fname, int allow_copy) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t shape[LT_MAX_DIMS];
  int nd = get_sizes(L, 2, shape, fname);
  infer_size(L, fname, lt_numel(t), nd, shape);
  ltl_check_shape(L, fname, nd, shape);   /* before any stride arithmetic */
  push_reshaped(L, fname, t, nd, shape, allow_copy);
  return 1;
}
static int l_view(lua_State *L) { return reshape_common(L, "view", 0); }
static int l_reshape(lua_State *L) { return reshape_common(L, "reshape", 1); }

static int as_common(lua_State *L, const char *name) {
  ltl_check(L, 1);
  lt_tensor *o = ltl_check(L, 2);
  ltl_check_nargs(L, 2);   /* lua_settop below would drop the rest */
  lua_settop(L, 1);
  lua_createtable(L, o->ndim, 0);
  for (int i = 0; i < o->ndim; i++) { lua_pushinteger(L, o->shape[i]); lua_rawseti(L, -2, i + 1); }
  call_method(L, 1, name, 1, 1);
  return 1;
}
static int l_view_as(lua_State *L) { return as_common(L, "view"); }
static int l_reshape_as(lua_State *L) { return as_common(L, "reshape"); }
static int l_expand_as(lua_State *L) { return as_common(L, "expand"); }

static int l_flatten(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim == 0) {
    int64_t one = 1;
    push_reshaped(L, "flatten", t, 1, &one, 1);
    return 1;
  }
  int s = ltl_checkdim(L, ltl_optinteger(L, 2, 1), t->ndim, "flatten");
  int e = ltl_checkdim(L, ltl_optinteger(L, 3, -1), t->ndim, "flatten");
  if (s > e) return ltl_error(L, "flatten", "flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) { push_alias(L, t); return 1; }
  int64_t shape[LT_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < s; i++) shape[nd++] = t->shape[i];
  int64_t p = 1;
  for (int i = s; i <= e; i++) p *= t->shape[i];
  shape[nd++] = p;
  for (int i = e + 1; i < t->ndim; i++) shape[nd++] = t->shape[i];
  push_reshaped(L, "flatten", t, nd, shape, 1);
  return 1;
}

/* ====================================================================== */
/* transpose / t / permute / movedim                                      */
/* ====================================================================== */
static void push_transposed(lua_State *L, lt_tensor *t, int a, int b) {
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->stride, sizeof st);
  int64_t x = sh[a]; sh[a] = sh[b]; sh[b] = x;
  x = st[a]; st[a] = st[b]; st[b] = x;
  ltl_push_view(L, t, t->ndim, sh, st, t->offset);
}

static int l_transpose(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int a = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "transpose");
  int b = ltl_checkdim(L, ltl_checkinteger(L, 3), t->ndim, "transpose");
  push_transposed(L, t, a, b);
  return 1;
}

static int l_t(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 1);
  if (t->ndim > 2)
    return ltl_error(L, "t", "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
  if (t->ndim < 2) push_alias(L, t);
  else push_transposed(L, t, 0, 1);
  return 1;
}

static int l_permute(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t dims[LT_MAX_DIMS];
  int n = get_sizes(L, 2, dims, "permute");
  if (n != t->ndim) return ltl_error(L, "permute", "number of dims don't match in permute");
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  int seen[LT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int d = ltl_checkdim(L, dims[i], t->ndim, "permute");
    if (seen[d]) return ltl_error(L, "permute", "duplicate dims are not allowed");
    seen[d] = 1;
    sh[i] = t->shape[d];
    st[i] = t->stride[d];
  }
  ltl_push_view(L, t, n, sh, st, t->offset);
  return 1;
}

/* movedim(source, destination): ints or tables of ints */
static int l_movedim(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t src[LT_MAX_DIMS], dst[LT_MAX_DIMS];
  int ns, ndst;
  if (lua_type(L, 2) == LUA_TTABLE) ns = get_sizes(L, 2, src, "movedim");
  else { src[0] = ltl_checkinteger(L, 2); ns = 1; }
  if (lua_type(L, 3) == LUA_TTABLE) ndst = get_sizes(L, 3, dst, "movedim");
  else { dst[0] = ltl_checkinteger(L, 3); ndst = 1; }
  if (ns != ndst)
    return ltl_error(L, "movedim", "Invalid source or destination dims: source (%d dims) should contain the same "
                    "number of dims as destination (%d dims)", ns, ndst);
  int nd = t->ndim, order[LT_MAX_DIMS], used_src[LT_MAX_DIMS] = {0}, used_dst[LT_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) order[i] = -1;
  for (int i = 0; i < ns; i++) {
    int s = ltl_checkdim(L, src[i], nd, "movedim"), d = ltl_checkdim(L, dst[i], nd, "movedim");
    if (used_src[s]) return ltl_error(L, "movedim", "repeated dim in `source`");
    if (used_dst[d]) return ltl_error(L, "movedim", "repeated dim in `destination`");
    used_src[s] = used_dst[d] = 1;
    if (nd > 0) order[d] = s;
  }
  int next = 0;
  for (int i = 0; i < nd; i++) {
    if (order[i] >= 0) continue;
    while (used_src[next]) next++;
    order[i] = next++;
  }
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) { sh[i] = t->shape[order[i]]; st[i] = t->stride[order[i]]; }
  ltl_push_view(L, t, nd, sh, st, t->offset);
  return 1;
}

/* ====================================================================== */
/* expand / squeeze / unsqueeze                                           */
/* ====================================================================== */
static int l_expand(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t sizes[LT_MAX_DIMS], sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  int n = get_sizes(L, 2, sizes, "expand");
  char b1[SHAPE_BUF], b2[SHAPE_BUF];
  if (n < t->ndim)
    return ltl_error(L, "expand", "the number of sizes provided (%d) must be greater or equal to the number of "
                    "dimensions in the tensor (%d)", n, t->ndim);
  /* PyTorch's inferExpandGeometry */
  for (int i = n - 1; i >= 0; i--) {
    int d = t->ndim - n + i;
    int64_t size = d >= 0 ? t->shape[d] : 1;
    int64_t stride = d >= 0 ? t->stride[d] : (i + 1 < n ? sh[i + 1] * st[i + 1] : 1);
    int64_t target = sizes[i];
    if (target == -1) {
      if (d < 0)
        return ltl_error(L, "expand", "the expanded size of the tensor (-1) isn't allowed in a leading, "
                        "non-existing dimension %d", i + 1);
      target = size;
    }
    if (target < 0)
      return ltl_error(L, "expand", "the expanded size of the tensor (%I) isn't allowed (sizes must be "
                      "non-negative or -1)", (lua_Integer)target);
    if (size != target) {
      if (size != 1)
        return ltl_error(L, "expand", "the expanded size of the tensor (%I) must match the existing size (%I) at "
                        "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s", (lua_Integer)target,
                        (lua_Integer)size, i + 1, shape_str(b1, sizeof b1, n, sizes),
                        shape_str(b2, sizeof b2, t->ndim, t->shape));
      size = target;
      stride = 0;
    }
    sh[i] = size;
    st[i] = stride;
  }
  ltl_push_view(L, t, n, sh, st, t->offset);
  return 1;
}

static int l_squeeze(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  int nd = 0;
  if (lua_isnoneornil(L, 2)) {
    for (int i = 0; i < t->ndim; i++)
      if (t->shape[i] != 1) { sh[nd] = t->shape[i]; st[nd++] = t->stride[i]; }
  } else {
    int drop[LT_MAX_DIMS] = {0};
    ltl_check_nargs(L, 2);
    if (lua_type(L, 2) == LUA_TTABLE && !ltl_test(L, 2)) {
      /* a list of dims, as PyTorch 2's squeeze(dims): each an integer, none
         twice (dim_list_to_bitset's rule); a key that is not a list index
         is an options table, which squeeze does not take */
      lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
      lua_pushnil(L);
      while (lua_next(L, 2)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
          ltl_error(L, "squeeze", "dim must be an integer or a list of integers (got a %s key%s%s%s)",
                    luaL_typename(L, -1), lua_type(L, -1) == LUA_TSTRING ? " '" : "",
                    lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "",
                    lua_type(L, -1) == LUA_TSTRING ? "': squeeze takes no options" : "");
      }
      for (lua_Integer i = 1; i <= n; i++) {
        int isnum;
        lua_rawgeti(L, 2, i);
        lua_Integer v = lua_tointegerx(L, -1, &isnum);
        if (!isnum || lua_type(L, -1) != LUA_TNUMBER)
          ltl_error(L, "squeeze", "dim must be an integer or a list of integers (element %d is %s)", (int)i,
                    luaL_typename(L, -1));
        lua_pop(L, 1);
        int d = ltl_checkdim(L, v, t->ndim, "squeeze");
        if (drop[d]) ltl_error(L, "squeeze", "dim %d appears multiple times in the list of dims", d + 1);
        drop[d] = 1;
      }
    } else {
      if (lua_type(L, 2) != LUA_TNUMBER)
        ltl_error(L, "squeeze", "dim must be an integer or a list of integers (got %s)",
                  ltl_test(L, 2) ? "a tensor" : luaL_typename(L, 2));
      drop[ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "squeeze")] = 1;
    }
    for (int i = 0; i < t->ndim; i++)
      if (!(drop[i] && t->shape[i] == 1)) { sh[nd] = t->shape[i]; st[nd++] = t->stride[i]; }
  }
  ltl_push_view(L, t, nd, sh, st, t->offset);
  return 1;
}

static int l_unsqueeze(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim >= LT_MAX_DIMS) return ltl_error(L, "unsqueeze", "too many dimensions (more than %d)", LT_MAX_DIMS);
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim + 1, "unsqueeze");
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  for (int i = 0, j = 0; i <= t->ndim; i++) {
    if (i == d) {
      sh[i] = 1;
      st[i] = d >= t->ndim ? 1 : t->shape[d] * t->stride[d];
    } else { sh[i] = t->shape[j]; st[i] = t->stride[j]; j++; }
  }
  ltl_push_view(L, t, t->ndim + 1, sh, st, t->offset);
  return 1;
}

/* ====================================================================== */
/* narrow / select / unfold / split / chunk / unbind                      */
/* ====================================================================== */
/* narrow/select: dim (argument 2) of t, which has dims, and the 1-based
   position (argument 3, negative from the end) made 0-based, not yet
   checked against the dim's size */
static int64_t dim_and_pos(lua_State *L, const lt_tensor *t, const char *fname, const char *what, int *d,
                           lua_Integer *pos) {
  if (t->ndim == 0) ltl_error(L, fname, "%s() cannot be applied to a 0-dim tensor", fname);
  *d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, fname);
  *pos = check_int(L, 3, fname, what);
  int64_t n = t->shape[*d];
  return *pos < 0 ? *pos + n : *pos - 1;
}

static int l_narrow(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int d;
  lua_Integer start;
  int64_t s0 = dim_and_pos(L, t, "narrow", "start", &d, &start);
  lua_Integer len = check_int(L, 4, "narrow", "length");
  int64_t n = t->shape[d];
  if (start == 0 || s0 < 0 || s0 > n)
    return ltl_error(L, "narrow", "start out of range (expected to be in range of [%I, %I], but got %I)%s",
                    (lua_Integer)-n, (lua_Integer)(n + 1), start,
                    start == 0 ? " (positions are 1-based: 1 is the first, -1 the last)" : "");
  if (len < 0) return ltl_error(L, "narrow", "narrow(): length must be non-negative");
  if (len > n - s0)   /* not s0 + len > n: that sum can overflow */
    return ltl_error(L, "narrow", "start (%I) + length (%I) exceeds dimension size (%I)", start, len,
                    (lua_Integer)n);
  int64_t sh[LT_MAX_DIMS];
  memcpy(sh, t->shape, sizeof sh);
  sh[d] = len;
  ltl_push_view(L, t, t->ndim, sh, t->stride, t->offset + s0 * t->stride[d]);
  return 1;
}

static int l_select(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int d;
  lua_Integer i;
  int64_t w = dim_and_pos(L, t, "select", "index", &d, &i);
  int64_t n = t->shape[d];
  if (i == 0 || w < 0 || w >= n) {
    char b[SHAPE_BUF];
    return ltl_error(L, "select", "index %I out of range for tensor of size %s at dimension %d%s", i,
                    shape_str(b, sizeof b, t->ndim, t->shape), d + 1,
                    i == 0 ? " (indices are 1-based: 1 is the first, -1 the last)" : "");
  }
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  for (int k = 0, j = 0; k < t->ndim; k++)
    if (k != d) { sh[j] = t->shape[k]; st[j++] = t->stride[k]; }
  ltl_push_view(L, t, t->ndim - 1, sh, st, t->offset + w * t->stride[d]);
  return 1;
}

static int l_unfold(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "unfold");
  lua_Integer size = ltl_checkinteger(L, 3), step = ltl_checkinteger(L, 4);
  int64_t maxsize = t->ndim == 0 ? 1 : t->shape[d];
  if (size > maxsize)
    return ltl_error(L, "unfold", "maximum size for tensor at dimension %d is %I but size is %I", d + 1,
                    (lua_Integer)maxsize, size);
  if (size < 0) return ltl_error(L, "unfold", "size is %I but must be >= 0", size);
  if (step <= 0) return ltl_error(L, "unfold", "step is %I but must be > 0", step);
  if (t->ndim >= LT_MAX_DIMS) return ltl_error(L, "unfold", "too many dimensions (more than %d)", LT_MAX_DIMS);
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->stride, sizeof st);
  int nd = t->ndim;
  sh[nd] = size;
  st[nd] = nd == 0 ? 1 : t->stride[d];
  if (nd > 0) {
    sh[d] = (t->shape[d] - size) / step + 1;
    /* one window: its stride is never used, and step * stride may overflow */
    st[d] = sh[d] > 1 ? step * t->stride[d] : t->stride[d];
  }
  ltl_push_view(L, t, nd + 1, sh, st, t->offset);
  return 1;
}

/* split(size_or_sizes [, dim]) -> a list of narrowed views */
static int l_split(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim == 0) return ltl_error(L, "split", "split expects at least a 1-dimensional tensor");
  lua_Integer dim = ltl_optinteger(L, 3, 1);
  int d = ltl_checkdim(L, dim, t->ndim, "split");
  int64_t n = t->shape[d];
  lua_newtable(L);
  int out = lua_gettop(L);
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_Integer k = (lua_Integer)lua_rawlen(L, 2), sum = 0;
    for (lua_Integer i = 1; i <= k; i++) {
      lua_rawgeti(L, 2, i);
      lua_Integer s = check_int(L, -1, "split", "split size");
      lua_pop(L, 1);
      if (s < 0) return ltl_error(L, "split", "split_with_sizes expects split_sizes have only non-negative entries, "
                                 "but got split_sizes=%I at position %I", s, i);
      if (__builtin_add_overflow(sum, s, &sum)) sum = LUA_MAXINTEGER;   /* cannot equal n */
    }
    if (sum != n)
      return ltl_error(L, "split", "split_with_sizes expects split_sizes to sum exactly to %I (input tensor's size "
                      "at dimension %d), but got sum %I", (lua_Integer)n, d + 1, sum);
    lua_Integer pos = 1;
    for (lua_Integer i = 1; i <= k; i++) {
      lua_rawgeti(L, 2, i);
      lua_Integer s = lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_pushinteger(L, d + 1); lua_pushinteger(L, pos); lua_pushinteger(L, s);
      call_method(L, 1, "narrow", 3, 1);
      lua_rawseti(L, out, i);
      pos += s;
    }
    return 1;
  }
  lua_Integer s = check_int(L, 2, "split", "split size");
  if (s < 0) return ltl_error(L, "split", "split expects split_size be non-negative, but got split_size=%I", s);
  if (s == 0 && n != 0)
    return ltl_error(L, "split", "split_size can only be 0 if dimension size is 0, but got dimension size of %I",
                    (lua_Integer)n);
  lua_Integer k = s == 0 ? 1 : n / s + (n % s != 0);   /* ceil without overflowing n + s */
  if (k == 0) k = 1;
  /* the pieces come back in one Lua table, whose length is an int (as unbind) */
  if (k > INT_MAX) return ltl_error(L, "split", "too many pieces (%I) to return in a table", k);
  for (lua_Integer i = 0; i < k; i++) {
    lua_Integer len = n - i * s < s ? n - i * s : s;   /* i < k, so i * s < n */
    lua_pushinteger(L, d + 1); lua_pushinteger(L, i * s + 1); lua_pushinteger(L, len);
    call_method(L, 1, "narrow", 3, 1);
    lua_rawseti(L, out, i + 1);
  }
  return 1;
}

/* chunk(n [, dim]): pieces of ceil(size / n) */
static int l_chunk(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim == 0) return ltl_error(L, "chunk", "chunk expects at least a 1-dimensional tensor");
  lua_Integer chunks = ltl_checkinteger(L, 2);
  if (chunks <= 0) return ltl_error(L, "chunk", "chunk expects `chunks` to be greater than 0, got: %I", chunks);
  int d = ltl_checkdim(L, ltl_optinteger(L, 3, 1), t->ndim, "chunk");
  int64_t n = t->shape[d];
  lua_Integer s = n / chunks + (n % chunks != 0);
  if (s > 0 && n / s + (n % s != 0) > INT_MAX)
    return ltl_error(L, "chunk", "too many pieces (%I) to return in a table", n / s + (n % s != 0));
  lua_settop(L, 1);
  lua_pushinteger(L, s);
  lua_pushinteger(L, d + 1);
  return l_split(L);
}

/* unbind([dim]) -> list of selects */
static int l_unbind(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  if (t->ndim == 0) return ltl_error(L, "unbind", "dimension specified as 1 but tensor has no dimensions");
  int d = ltl_checkdim(L, ltl_optinteger(L, 2, 1), t->ndim, "unbind");
  int64_t n = t->shape[d];
  /* the slices come back in one Lua table, whose length is an int */
  if (n > INT_MAX) return ltl_error(L, "unbind", "too many slices (%I) to return in a table", (lua_Integer)n);
  lua_settop(L, 1);
  lua_createtable(L, (int)(n < 1 << 20 ? n : 0), 0);
  for (int64_t i = 0; i < n; i++) {
    lua_pushinteger(L, d + 1); lua_pushinteger(L, i + 1);
    call_method(L, 1, "select", 2, 1);
    lua_rawseti(L, 2, i + 1);
  }
  return 1;
}

#define VIEWOP(name, fn) {name, fn, LT_BOTH | LT_DIFF, name}
const ltl_reg ltl_reg_view[] = {
  VIEWOP("view", l_view),
  VIEWOP("reshape", l_reshape),
  VIEWOP("flatten", l_flatten),
  VIEWOP("t", l_t),
  VIEWOP("transpose", l_transpose),
  {"swapaxes", l_transpose, LT_BOTH | LT_DIFF, "transpose"},
  {"swapdims", l_transpose, LT_BOTH | LT_DIFF, "transpose"},
  VIEWOP("permute", l_permute),
  VIEWOP("movedim", l_movedim),
  {"moveaxis", l_movedim, LT_BOTH | LT_DIFF, "movedim"},
  VIEWOP("expand", l_expand),
  VIEWOP("squeeze", l_squeeze),
  VIEWOP("unsqueeze", l_unsqueeze),
  VIEWOP("narrow", l_narrow),
  VIEWOP("select", l_select),
  VIEWOP("unfold", l_unfold),
  {"view_as", l_view_as, LT_BOTH, NULL},
  {"reshape_as", l_reshape_as, LT_BOTH, NULL},
  {"expand_as", l_expand_as, LT_BOTH, NULL},
  {"split", l_split, LT_BOTH, NULL},
  {"chunk", l_chunk, LT_BOTH, NULL},
  {"unbind", l_unbind, LT_BOTH, NULL},
  {NULL, NULL, 0, NULL}
};
