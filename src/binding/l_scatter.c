/* l_scatter.c -- indexed reads and writes along one dim: gather, scatter,
   scatter_add, index_add, index_copy, index_fill. */
#include "l_view.h"

/* ====================================================================== */
/* gather / scatter                                                       */
/* ====================================================================== */
static void check_gs_index(lua_State *L, const char *fname, const lt_tensor *t, int d, const lt_tensor *idx,
                           const lt_tensor *src) {
  if (idx->dtype != LTENSOR_INT64)
    ltl_error(L, fname, "%s(): Expected dtype int64 for index (got %s)", fname, lt_dtypes[idx->dtype].name);
  int tn = t->ndim ? t->ndim : 1, in = idx->ndim ? idx->ndim : 1;
  if (tn != in) ltl_error(L, fname, "Index tensor must have the same number of dimensions as %s tensor",
                         src ? "self" : "input");
  if (src && (src->ndim ? src->ndim : 1) != in)
    ltl_error(L, fname, "Index tensor must have the same number of dimensions as src tensor");
  /* a 0-dim tensor counts as shape {1}: a 0-dim index with an empty 1-D src
     read past src (the long fuzz run's seed 901 #163446, ASan) */
  static const int64_t one = 1;
  const int64_t *ishape = idx->ndim ? idx->shape : &one, *sshape = src && src->ndim ? src->shape : &one;
  if (src) {
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    for (int i = 0; i < in; i++)
      if (ishape[i] > sshape[i])
        ltl_error(L, fname, "Expected index %s to be smaller than self %s apart from dimension %d and to be smaller "
                 "size than src %s", shape_str(b1, sizeof b1, idx->ndim, idx->shape),
                 shape_str(b2, sizeof b2, t->ndim, t->shape), d + 1,
                 shape_str((char[SHAPE_BUF]){0}, SHAPE_BUF, src->ndim, src->shape));
  }
  for (int i = 0; i < idx->ndim; i++) {
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    if (i != d && t->ndim && idx->shape[i] > t->shape[i])
      ltl_error(L, fname, "Size does not match at dimension %d expected index %s to be smaller than self %s apart "
               "from dimension %d", i + 1, shape_str(b1, sizeof b1, idx->ndim, idx->shape),
               shape_str(b2, sizeof b2, t->ndim, t->shape), d + 1);
  }
}

/* gather(t, dim, index [, {sparse_grad, out}]) */
static const char *const GATHER_OPTS[] = {"sparse_grad", "out", NULL};
static void gather_into(lua_State *L, lt_tensor *t, int d, lt_tensor *idx, lt_tensor *out);
static int l_gather(lua_State *L) {
  ltl_check_nargs(L, 4);
  lt_tensor *t = ltl_check(L, 1);
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "gather");
  lt_tensor *idx = ltl_check(L, 3);
  int out_idx = ltl_opt_out(L, "gather", 4, GATHER_OPTS);
  check_gs_index(L, "gather", t, d, idx, NULL);
  gather_into(L, t, d, idx, ltl_push_new(L, t->dtype, idx->ndim, idx->shape));
  ltl_into_out(L, "gather", out_idx, t->dtype);
  return 1;
}
static void gather_into(lua_State *L, lt_tensor *t, int d, lt_tensor *idx, lt_tensor *out) {
  int64_t n = lt_numel(out);
  if (n == 0) return;
  size_t isz = lt_itemsize(t->dtype), xsz = lt_itemsize(idx->dtype);
  int64_t size_d = t->ndim ? t->shape[d] : 1, stride_d = t->ndim ? t->stride[d] : 0;
  odo o;
  odo_init(&o, idx->ndim, idx->shape);
  memcpy(o.stride[0], idx->stride, sizeof(int64_t) * (size_t)idx->ndim);
  if (t->ndim) memcpy(o.stride[1], t->stride, sizeof(int64_t) * (size_t)t->ndim);
  if (idx->ndim) o.stride[1][d] = 0;
  const char *ib = lt_data(idx), *tb = t->storage->data;
  char *ob = lt_data(out);
  int64_t k = 0;
  do {
    int64_t v = *(const int64_t *)(ib + o.off[0] * (int64_t)xsz);
    int64_t w = wrap_index(L, "gather", v, size_d, d);
    memcpy(ob + (k++) * (int64_t)isz, tb + (t->offset + o.off[1] + w * stride_d) * (int64_t)isz, isz);
  } while (odo_next(&o));
}

/* *dp += alpha * *sp for one element of dtype dt (scatter_add's alpha is 1;
   af is alpha as a double, ai as an integer: bool ors, integers wrap) */
static void add_elem(ltensor_dtype dt, char *dp, const char *sp, double af, int64_t ai) {
  if (lt_is_complex(dt)) lt_store_c128(dt, dp, lt_load_c128(dt, dp) + af * lt_load_c128(dt, sp));
  else if (lt_is_floating(dt)) lt_store_f64(dt, dp, lt_load_f64(dt, dp) + af * lt_load_f64(dt, sp));
  else if (dt == LTENSOR_BOOL) *(uint8_t *)dp = *(uint8_t *)dp || (ai && *(const uint8_t *)sp);
  else lt_store_i64(dt, dp, (int64_t)((uint64_t)lt_load_i64(dt, dp) + (uint64_t)ai * (uint64_t)lt_load_i64(dt, sp)));
}

/* scatter into dst (in place): src tensor or a scalar at slot vidx;
   reduce 0 = replace, 1 = add */
static void scatter_into(lua_State *L, const char *fname, lt_tensor *dst, int d, const lt_tensor *idx, int vidx,
                         int reduce) {
  lt_tensor *src = ltl_test(L, vidx);
  char sbuf[32];
  /* a freed src has no storage to read (it crashed) */
  if (src && !src->storage) ltl_argerror(L, vidx, "tensor was freed");
  if (src) {
    if (src->dtype != dst->dtype)
      ltl_error(L, fname, "%s(): Expected self.dtype to be equal to src.dtype (got %s and %s)", fname,
               lt_dtypes[dst->dtype].name, lt_dtypes[src->dtype].name);
  } else {
    int ty = lua_type(L, vidx);
    if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN) ltl_typeerror(L, vidx, "tensor, number or boolean");
    ltl_store_lua(L, vidx, dst->dtype, sbuf);
  }
  check_gs_index(L, fname, dst, d, idx, src);
  ltl_check_overlap(L, fname, dst, lt_numel(dst));
  if (src && lt_may_overlap(src, dst)) src = ltl_push_clone(L, src);
  int64_t n = lt_numel(idx);
  if (n > 0) {
    size_t isz = lt_itemsize(dst->dtype);
    int64_t size_d = dst->ndim ? dst->shape[d] : 1, stride_d = dst->ndim ? dst->stride[d] : 0;
    odo o;
    odo_init(&o, idx->ndim, idx->shape);
    memcpy(o.stride[0], idx->stride, sizeof(int64_t) * (size_t)idx->ndim);
    if (dst->ndim) memcpy(o.stride[1], dst->stride, sizeof(int64_t) * (size_t)dst->ndim);
    if (idx->ndim) o.stride[1][d] = 0;
    if (src && src->ndim) memcpy(o.stride[2], src->stride, sizeof(int64_t) * (size_t)src->ndim);
    const char *ib = lt_data(idx);
    const char *sb = src ? lt_data(src) : sbuf;
    char *db = dst->storage->data;
    ltensor_dtype dt = dst->dtype;
    do {
      int64_t v = *(const int64_t *)(ib + o.off[0] * 8);
      int64_t w = wrap_index(L, fname, v, size_d, d);
      char *dp = db + (dst->offset + o.off[1] + w * stride_d) * (int64_t)isz;
      const char *sp = src ? sb + o.off[2] * (int64_t)isz : sb;
      if (!reduce) memcpy(dp, sp, isz);
      else add_elem(dt, dp, sp, 1.0, 1);
    } while (odo_next(&o));
  }
  lt_bump_version(dst);
}

/* The arguments (self, dim, index, value ...) the writers begin with: self,
   the dim (1-based in Lua) into *d, the index into *idx; a value at 4. */
static lt_tensor *check_write_args(lua_State *L, const char *fname, int *d, lt_tensor **idx) {
  lt_tensor *t = ltl_check(L, 1);
  *d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, fname);
  *idx = ltl_check(L, 3);
  ltl_checkany(L, 4);
  return t;
}

static int scatter_common(lua_State *L, const char *fname, int inplace, int reduce) {
  int d;
  lt_tensor *idx;
  lt_tensor *t = check_write_args(L, fname, &d, &idx);
  if (lua_type(L, 5) == LUA_TTABLE || lua_type(L, 5) == LUA_TSTRING) {
    const char *r = lua_type(L, 5) == LUA_TSTRING ? lua_tostring(L, 5) : NULL;
    static const char *const SCATTER_OPTS[] = {"reduce", NULL};
    if (!r) ltl_check_opts(L, 5, fname, SCATTER_OPTS);
    if (!r) { ltl_getopt(L, 5, "reduce"); r = lua_tostring(L, -1); lua_pop(L, 1); }
    if (r && strcmp(r, "add") == 0) reduce = 1;
    else if (r) ltl_error(L, fname, "reduce argument must be either add (got %s)", r);
  }
  lt_tensor *dst = inplace ? t : ltl_push_clone(L, t);
  scatter_into(L, fname, dst, d, idx, 4, reduce);
  if (inplace) lua_settop(L, 1);
  return 1;
}
static int l_scatter(lua_State *L) { return scatter_common(L, "scatter", 0, 0); }
static int l_scatter_(lua_State *L) { return scatter_common(L, "scatter_", 1, 0); }
static int l_scatter_add(lua_State *L) { return scatter_common(L, "scatter_add", 0, 1); }
static int l_scatter_add_(lua_State *L) { return scatter_common(L, "scatter_add_", 1, 1); }

/* ====================================================================== */
/* index_add / index_copy / index_fill                                    */
/* ====================================================================== */
enum { IW_COPY = 0, IW_ADD = 1, IW_FILL = 2 };

/* dst[..., index[i], ...] (along d) = / += alpha * src[..., i, ...], or = the
   value at slot vidx for IW_FILL.  Duplicated indices accumulate for add. */
static void index_write(lua_State *L, const char *fname, lt_tensor *dst, int d, const lt_tensor *index, int vidx,
                        int mode, int aidx) {
  char b1[SHAPE_BUF], b2[SHAPE_BUF], fill[32];
  if (index->ndim > 1) ltl_error(L, fname, "Index should have dimension 1 or 0 (got %d)", index->ndim);
  if (index->dtype != LTENSOR_INT64 && index->dtype != LTENSOR_INT32)
    ltl_error(L, fname, "Expected dtype int32 or int64 for index (got %s)", lt_dtypes[index->dtype].name);
  int64_t nidx = lt_numel(index);
  int nd = dst->ndim;
  lt_tensor *src = NULL;
  int64_t shape[LT_MAX_DIMS];
  memcpy(shape, dst->shape, sizeof shape);
  if (nd) shape[d] = nidx;
  if (mode == IW_FILL) {
    lt_tensor *vt = ltl_test(L, vidx);
    if (vt) {
      if (!vt->storage) ltl_argerror(L, vidx, "tensor was freed");
      if (vt->ndim != 0)
        ltl_error(L, fname, "only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)", vt->ndim);
      lt_cast_kernel(vt->dtype, dst->dtype)(lt_data(vt), 0, fill, 0, 1);
    } else {
      int ty = lua_type(L, vidx);
      if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN) ltl_typeerror(L, vidx, "number, boolean or 0-dim tensor");
      ltl_store_lua(L, vidx, dst->dtype, fill);
    }
  } else {
    src = ltl_check(L, vidx);
    if (src->dtype != dst->dtype)
      ltl_error(L, fname, "self (%s) and source (%s) must have the same scalar type", lt_dtypes[dst->dtype].name,
               lt_dtypes[src->dtype].name);
    int sn = src->ndim ? src->ndim : 1, dn = nd ? nd : 1;
    int ok = sn == dn;
    for (int k = 0; ok && k < src->ndim && nd; k++) ok = k == d || src->shape[k] == dst->shape[k];
    if (!ok)
      ltl_error(L, fname, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
               "self.shape = %s source.shape = %s", shape_str(b1, sizeof b1, nd, dst->shape),
               shape_str(b2, sizeof b2, src->ndim, src->shape));
    int64_t ssz = src->ndim ? src->shape[d] : 1;
    if (ssz != nidx)
      ltl_error(L, fname, "Number of indices (%I) should be equal to source.size(dim) (%I)", (lua_Integer)nidx,
               (lua_Integer)ssz);
    if (lt_may_overlap(src, dst)) src = ltl_push_clone(L, src);
  }
  ltl_check_overlap(L, fname, dst, lt_numel(dst));
  double af = 1.0;
  int64_t ai = 1;
  if (mode == IW_ADD && aidx && lua_type(L, aidx) == LUA_TTABLE) {
    ltl_getopt(L, aidx, "alpha");
    if (!lua_isnil(L, -1)) {
      if (!lt_is_floating(dst->dtype) && !lt_is_complex(dst->dtype) && !lua_isinteger(L, -1))
        ltl_error(L, fname, "For integral input tensors, argument alpha must not be a floating point number.");
      af = lua_tonumber(L, -1);
      ai = lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
  }
  int64_t total = 1;
  for (int k = 0; k < nd; k++) total *= shape[k];
  if (nd == 0) total = nidx;
  if (total > 0) {
    size_t isz = lt_itemsize(dst->dtype), xsz = lt_itemsize(index->dtype);
    int64_t size_d = nd ? dst->shape[d] : 1, stride_d = nd ? dst->stride[d] : 0;
    int64_t istride = index->ndim ? index->stride[0] : 0;
    ltensor_dtype dt = dst->dtype;
    odo o;
    odo_init(&o, nd, shape);
    if (nd) {
      memcpy(o.stride[0], dst->stride, sizeof(int64_t) * (size_t)nd);
      o.stride[0][d] = 0;
      if (src && src->ndim) memcpy(o.stride[1], src->stride, sizeof(int64_t) * (size_t)nd);
    }
    const char *ib = lt_data(index);
    char *db = dst->storage->data;
    do {
      int64_t i = nd ? o.idx[d] : 0;
      const char *ip = ib + i * istride * (int64_t)xsz;
      int64_t w = wrap_index(L, fname, lt_load_i64(index->dtype, ip), size_d, d);
      char *dp = db + (dst->offset + o.off[0] + w * stride_d) * (int64_t)isz;
      if (mode == IW_FILL) { memcpy(dp, fill, isz); continue; }
      const char *sp = lt_data(src) + o.off[1] * (int64_t)isz;
      if (mode == IW_COPY) memcpy(dp, sp, isz);
      else add_elem(dt, dp, sp, af, ai);
    } while (odo_next(&o));
  }
  lt_bump_version(dst);
}

static int index_write_common(lua_State *L, const char *fname, int inplace, int mode) {
  int d;
  lt_tensor *index;
  lt_tensor *t = check_write_args(L, fname, &d, &index);
  lt_tensor *dst = inplace ? t : ltl_push_clone(L, t);
  static const char *const ALPHA_OPTS[] = {"alpha", NULL}, *const NO_OPTS[] = {NULL};
  if (lua_type(L, 5) == LUA_TTABLE) ltl_check_opts(L, 5, fname, mode == IW_ADD ? ALPHA_OPTS : NO_OPTS);
  int top = lua_gettop(L);
  index_write(L, fname, dst, d, index, 4, mode, mode == IW_ADD ? 5 : 0);
  lua_settop(L, inplace ? 1 : top);
  return 1;
}
static int l_index_add(lua_State *L) { return index_write_common(L, "index_add", 0, IW_ADD); }
static int l_index_add_(lua_State *L) { return index_write_common(L, "index_add_", 1, IW_ADD); }
static int l_index_copy(lua_State *L) { return index_write_common(L, "index_copy", 0, IW_COPY); }
static int l_index_copy_(lua_State *L) { return index_write_common(L, "index_copy_", 1, IW_COPY); }
static int l_index_fill(lua_State *L) { return index_write_common(L, "index_fill", 0, IW_FILL); }
static int l_index_fill_(lua_State *L) { return index_write_common(L, "index_fill_", 1, IW_FILL); }


#define VIEWOP(name, fn) {name, fn, LT_BOTH | LT_DIFF, name}
const ltl_reg ltl_reg_scatter[] = {
  VIEWOP("gather", l_gather),
  VIEWOP("index_add", l_index_add),
  VIEWOP("index_add_", l_index_add_),
  VIEWOP("index_copy", l_index_copy),
  VIEWOP("index_copy_", l_index_copy_),
  VIEWOP("index_fill", l_index_fill),
  VIEWOP("index_fill_", l_index_fill_),
  VIEWOP("scatter", l_scatter),
  VIEWOP("scatter_", l_scatter_),
  VIEWOP("scatter_add", l_scatter_add),
  VIEWOP("scatter_add_", l_scatter_add_),
  {NULL, NULL, 0, NULL}
};
