/* l_index.c -- indexing: t[i], t[{...}], masks and index tensors (and their
   assignment), index_select, masked_select/masked_fill, nonzero. */
#include "l_view.h"

/* ====================================================================== */
/* indexing plans                                                         */
/* ====================================================================== */
/* A key is applied left to right: integers select (drop a dim), ranges
   narrow, booleans add a dim; index tensors (and masks, turned into index
   tensors) are collected and applied afterwards as PyTorch's advanced
   indexing on the resulting view. */
typedef struct {
  lt_tensor v;                            /* the basic view; borrows t's storage */
  int user_ndim;                          /* t's ndim, for messages */
  int vd, od;                             /* cursor: view dim, user dim */
  int nadv;
  int advdim[LT_MAX_DIMS];                /* view dim each index tensor applies to */
  int advorig[LT_MAX_DIMS];               /* user dim, for messages */
  const lt_tensor *advt[LT_MAX_DIMS];     /* integer index tensors (1-based values) */
} iplan;

static void ip_init(iplan *p, const lt_tensor *t) {
  p->v = *t;
  p->user_ndim = t->ndim;
  p->vd = p->od = p->nadv = 0;
}

static void ip_need_dims(lua_State *L, iplan *p, const char *fname, int k) {
  if (p->vd + k > p->v.ndim) ltl_error(L, fname, "too many indices for tensor of dimension %d", p->user_ndim);
}

static void ip_remove(iplan *p, int d) {
  for (int i = d; i < p->v.ndim - 1; i++) { p->v.shape[i] = p->v.shape[i + 1]; p->v.stride[i] = p->v.stride[i + 1]; }
  p->v.ndim--;
}

static void ip_insert(lua_State *L, iplan *p, const char *fname, int d, int64_t size) {
  if (p->v.ndim >= LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (more than %d)", LT_MAX_DIMS);
  for (int i = p->v.ndim; i > d; i--) { p->v.shape[i] = p->v.shape[i - 1]; p->v.stride[i] = p->v.stride[i - 1]; }
  p->v.shape[d] = size;
  p->v.stride[d] = 0;
  p->v.ndim++;
}

static void ip_int(lua_State *L, iplan *p, const char *fname, lua_Integer i) {
  if (p->user_ndim == 0 && p->v.ndim == 0)
    ltl_error(L, fname, "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor to a number");
  ip_need_dims(L, p, fname, 1);
  int64_t w = wrap_index(L, fname, i, p->v.shape[p->vd], p->od);
  p->v.offset += w * p->v.stride[p->vd];
  ip_remove(p, p->vd);
  p->od++;
}

/* {} whole dim, {a} the single index a keeping the dim, {a, b} inclusive,
   {a, b, step}; range ends are clamped like Python slices */
static void ip_range(lua_State *L, iplan *p, const char *fname, int idx) {
  ip_need_dims(L, p, fname, 1);
  int64_t n = p->v.shape[p->vd];
  lua_Integer len = (lua_Integer)lua_rawlen(L, idx), a = 1, b = -1, step = 1;
  if (len > 3) ltl_error(L, fname, "a range has at most 3 entries {first, last, step} (got %I)", len);
  if (len >= 1) { lua_rawgeti(L, idx, 1); a = check_int(L, -1, fname, "range start"); lua_pop(L, 1); }
  if (len >= 2) { lua_rawgeti(L, idx, 2); b = check_int(L, -1, fname, "range end"); lua_pop(L, 1); }
  if (len >= 3) { lua_rawgeti(L, idx, 3); step = check_int(L, -1, fname, "range step"); lua_pop(L, 1); }
  int64_t start, stop;   /* 0-based, stop exclusive */
  if (len == 1) {
    start = wrap_index(L, fname, a, n, p->od);
    stop = start + 1;
  } else {
    if (step <= 0) ltl_error(L, fname, "range step must be greater than zero (got %I)", step);
    /* ends are clamped like Python slices, but a start of 0 is a 0-based
       habit (x[{{0, 2}}] for x[0:2]), not a position: say so.  An end of 0
       stays an empty range ({1, k} with k = 0) */
    if (a == 0)
      ltl_error(L, fname, "range start 0 for dimension %d (indices are 1-based: 1 is the first, -1 the last; "
                          "{1, 2} is the first two)", p->od + 1);
    start = a < 0 ? a + n : a - 1;
    stop = b < 0 ? b + n + 1 : b;
    if (start < 0) start = 0;
    if (start > n) start = n;
    if (stop > n) stop = n;
    if (stop < start) stop = start;
  }
  p->v.offset += start * p->v.stride[p->vd];
  int64_t span = stop - start;
  p->v.shape[p->vd] = span > 0 ? span / step + (span % step != 0) : 0;
  if (p->v.shape[p->vd] > 1) p->v.stride[p->vd] *= step;   /* one element: step unused, may overflow */
  p->vd++;
  p->od++;
}

/* Lua boolean or 0-dim bool tensor: a new dim of size 1 (true) or 0 */
static void ip_bool(lua_State *L, iplan *p, const char *fname, int b) {
  ip_insert(L, p, fname, p->vd, b ? 1 : 0);
  p->vd++;
}

/* a bool mask covering k dims from the cursor -> k index tensors pushed on
   the stack (1-based coordinates of its true elements) */
static void ip_mask(lua_State *L, iplan *p, const char *fname, const lt_tensor *m) {
  int k = m->ndim;
  ip_need_dims(L, p, fname, k);
  for (int j = 0; j < k; j++)
    if (m->shape[j] != p->v.shape[p->vd + j]) {
      char b1[SHAPE_BUF], b2[SHAPE_BUF];
      ltl_error(L, fname, "the shape of the mask %s at index %d does not match the shape of the indexed tensor %s "
               "at index %d", shape_str(b1, sizeof b1, k, m->shape), j + 1,
               shape_str(b2, sizeof b2, p->v.ndim, p->v.shape), p->vd + j + 1);
    }
  if (p->nadv + k > LT_MAX_DIMS) ltl_error(L, fname, "too many index tensors");
  int64_t cnt = 0, n = lt_numel(m);
  size_t isz = lt_itemsize(m->dtype);
  const char *base = lt_data(m);
  odo o;
  odo_init(&o, k, m->shape);
  memcpy(o.stride[0], m->stride, sizeof(int64_t) * (size_t)k);
  if (n > 0) do { cnt += *(const uint8_t *)(base + o.off[0] * (int64_t)isz) != 0; } while (odo_next(&o));
  luaL_checkstack(L, k + 4, "ltensor.index");
  int64_t *cols[LT_MAX_DIMS];
  for (int j = 0; j < k; j++) {
    lt_tensor *it = ltl_push_new(L, LTENSOR_INT64, 1, &cnt);
    cols[j] = (int64_t *)lt_data(it);
    p->advdim[p->nadv] = p->vd + j;
    p->advorig[p->nadv] = p->od + j;
    p->advt[p->nadv++] = it;
  }
  odo_init(&o, k, m->shape);
  memcpy(o.stride[0], m->stride, sizeof(int64_t) * (size_t)k);
  int64_t r = 0;
  if (n > 0) do {
      if (*(const uint8_t *)(base + o.off[0] * (int64_t)isz) != 0) {
        for (int j = 0; j < k; j++) cols[j][r] = o.idx[j] + 1;
        r++;
      }
    } while (odo_next(&o));
  p->vd += k;
  p->od += k;
}

static void ip_tensor(lua_State *L, iplan *p, const char *fname, const lt_tensor *k) {
  /* uint8 index tensors are masks too, as in PyTorch 1.13 (deprecated there) */
  if (k->dtype == LTENSOR_BOOL || k->dtype == LTENSOR_UINT8) {
    if (k->ndim == 0) { ip_bool(L, p, fname, *(const uint8_t *)lt_data(k) != 0); return; }
    ip_mask(L, p, fname, k);
    return;
  }
  if (lt_kind(k->dtype) != LT_KIND_INT)
    ltl_error(L, fname, "tensors used as indices must be long, int, byte or bool tensors (got %s)",
             lt_dtypes[k->dtype].name);
  ip_need_dims(L, p, fname, 1);
  if (p->nadv >= LT_MAX_DIMS) ltl_error(L, fname, "too many index tensors");
  p->advdim[p->nadv] = p->vd;
  p->advorig[p->nadv] = p->od;
  p->advt[p->nadv++] = k;
  p->vd++;
  p->od++;
}

/* Apply the key at slot key to the plan (t is p->v on entry). */
static void ip_key(lua_State *L, iplan *p, const char *fname, int key) {
  switch (lua_type(L, key)) {
  case LUA_TNUMBER: {
    int ok;
    lua_Integer i = lua_tointegerx(L, key, &ok);
    if (!ok) ltl_error(L, fname, "invalid index %f (expected an integer)", lua_tonumber(L, key));
    ip_int(L, p, fname, i);
    return;
  }
  case LUA_TBOOLEAN: ip_bool(L, p, fname, lua_toboolean(L, key)); return;
  case LUA_TUSERDATA: {
    lt_tensor *k = ltl_test(L, key);
    if (!k) break;
    if (!k->storage) ltl_error(L, fname, "index tensor was freed");
    ip_tensor(L, p, fname, k);
    return;
  }
  case LUA_TTABLE: {
    lua_Integer n = (lua_Integer)lua_rawlen(L, key);
    luaL_checkstack(L, 8, "ltensor.index");
    for (lua_Integer i = 1; i <= n; i++) {
      int ty = lua_rawgeti(L, key, i);
      int e = lua_gettop(L);
      if (ty == LUA_TNUMBER) {
        int ok;
        lua_Integer v = lua_tointegerx(L, e, &ok);
        if (!ok) ltl_error(L, fname, "invalid index %f at position %I (expected an integer)", lua_tonumber(L, e), i);
        ip_int(L, p, fname, v);
      } else if (ty == LUA_TTABLE && !ltl_test(L, e)) {
        ip_range(L, p, fname, e);
      } else if (ty == LUA_TBOOLEAN) {
        ip_bool(L, p, fname, lua_toboolean(L, e));
      } else if (ltl_test(L, e)) {
        lt_tensor *k = ltl_test(L, e);
        if (!k->storage) ltl_error(L, fname, "index tensor at position %I was freed", i);
        ip_tensor(L, p, fname, k);
      } else {
        ltl_error(L, fname, "invalid index of type %s at position %I", luaL_typename(L, e), i);
      }
      /* the key table anchors e; mask-derived tensors pushed above it stay */
      lua_remove(L, e);
    }
    return;
  }
  default: break;
  }
  ltl_error(L, fname, "invalid index of type %s (expected an integer, a table, or a tensor)", luaL_typename(L, key));
}

/* Layout of an advanced-indexing result: index tensors broadcast to B;
   their dims go where the first one was when they are adjacent, else first
   (PyTorch's rule). offs[b] is the view-element offset for flat b. */
typedef struct {
  int nd;
  int64_t shape[LT_MAX_DIMS];
  int64_t vstride[LT_MAX_DIMS];   /* view stride of non-indexed dims, 0 on B dims */
  int64_t bstride[LT_MAX_DIMS];   /* contiguous stride in B on B dims, 0 elsewhere */
  const int64_t *offs;
} adv_layout;

static void adv_prepare(lua_State *L, const char *fname, const iplan *p, adv_layout *a) {
  int bnd = 0;
  int64_t bshape[LT_MAX_DIMS];
  for (int j = 0; j < p->nadv; j++) {
    if (lt_broadcast_into(&bnd, bshape, p->advt[j]->ndim, p->advt[j]->shape) >= 0) {
      luaL_Buffer b;
      char sb[SHAPE_BUF];
      luaL_buffinit(L, &b);
      for (int k = 0; k < p->nadv; k++) {
        if (k) luaL_addstring(&b, ", ");
        luaL_addstring(&b, shape_str(sb, sizeof sb, p->advt[k]->ndim, p->advt[k]->shape));
      }
      luaL_pushresult(&b);
      ltl_error(L, fname, "shape mismatch: indexing tensors could not be broadcast together with shapes %s",
               lua_tostring(L, -1));
    }
  }
  int adjacent = 1;
  for (int j = 1; j < p->nadv; j++) if (p->advdim[j] != p->advdim[0] + j) adjacent = 0;
  int isadv[LT_MAX_DIMS] = {0};
  for (int j = 0; j < p->nadv; j++) isadv[p->advdim[j]] = 1;
  int nrest = 0;
  for (int i = 0; i < p->v.ndim; i++) nrest += !isadv[i];
  if (bnd + nrest > LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (more than %d)", LT_MAX_DIMS);
  int pos = adjacent ? p->advdim[0] : 0, nd = 0;
  for (int i = 0; i < p->v.ndim && i < pos; i++)
    if (!isadv[i]) { a->shape[nd] = p->v.shape[i]; a->vstride[nd] = p->v.stride[i]; a->bstride[nd++] = 0; }
  int bfirst = nd;
  for (int i = 0; i < bnd; i++) { a->shape[nd] = bshape[i]; a->vstride[nd] = 0; a->bstride[nd++] = 0; }
  for (int i = pos; i < p->v.ndim; i++)
    if (!isadv[i]) { a->shape[nd] = p->v.shape[i]; a->vstride[nd] = p->v.stride[i]; a->bstride[nd++] = 0; }
  a->nd = nd;
  /* Index tensors are bounded one by one, but broadcasting expanded ones
     ([2^60+1, 1] with [1, 16]) can make a shape whose element count wraps:
     bound the result as any new tensor (lt_check_shape), so that the
     contiguous strides and the count of index positions below fit. */
  char sb[SHAPE_BUF];
  if (lt_check_shape(nd, a->shape, NULL, 0) != 0)
    ltl_error(L, fname, "tensor too large (size %s overflows int64)", shape_str(sb, sizeof sb, nd, a->shape));
  int64_t total = 1, nb = 1;
  for (int i = 0; i < nd; i++) total *= a->shape[i];   /* fits: checked above */
  for (int i = 0; i < bnd; i++) nb *= bshape[i];
  if (total > INT64_MAX / 64) ltl_error(L, fname, "tensor too large (size %s)", shape_str(sb, sizeof sb, nd, a->shape));
  int64_t bstr[LT_MAX_DIMS];
  lt_contiguous_strides(bnd, bshape, bstr);
  for (int i = 0; i < bnd; i++) a->bstride[bfirst + i] = bstr[i];
  /* offsets of every broadcast index position, checking each index; an
     empty result reads no index (PyTorch: zeros(0, 3)[:, tensor([5])] is
     an empty tensor), so it needs none */
  if (total == 0) nb = 0;
  int64_t *offs = (int64_t *)lua_newuserdatauv(L, sizeof(int64_t) * (size_t)(nb > 0 ? nb : 1), 0);
  a->offs = offs;
  if (nb == 0) return;
  for (int64_t b = 0; b < nb; b++) offs[b] = 0;
  for (int j = 0; j < p->nadv; j++) {
    const lt_tensor *it = p->advt[j];
    int64_t n = p->v.shape[p->advdim[j]], vs = p->v.stride[p->advdim[j]];
    size_t isz = lt_itemsize(it->dtype);
    const char *base = lt_data(it);
    odo o;
    odo_init(&o, bnd, bshape);
    lt_broadcast_strides(it, bnd, bshape, o.stride[0]);
    int64_t b = 0;
    do {
      const char *ep = base + o.off[0] * (int64_t)isz;
      int64_t v = it->dtype == LTENSOR_UINT64 ? (int64_t) * (const uint64_t *)ep : lt_load_i64(it->dtype, ep);
      offs[b++] += wrap_index(L, fname, v, n, p->advorig[j]) * vs;
    } while (odo_next(&o));
  }
}

/* Result of a plan: a view when there are no index tensors, else a copy. */
static void ip_push_result(lua_State *L, const char *fname, const iplan *p) {
  if (p->nadv == 0) { push_alias(L, &p->v); return; }
  adv_layout a;
  adv_prepare(L, fname, p, &a);
  lt_tensor *out = ltl_push_new(L, p->v.dtype, a.nd, a.shape);
  int64_t n = lt_numel(out);
  if (n == 0) { lua_remove(L, -2); return; }
  size_t isz = lt_itemsize(p->v.dtype);
  const char *src = p->v.storage->data;
  char *dst = lt_data(out);
  odo o;
  odo_init(&o, a.nd, a.shape);
  memcpy(o.stride[0], a.vstride, sizeof a.vstride);
  memcpy(o.stride[1], a.bstride, sizeof a.bstride);
  int64_t k = 0;
  do {
    memcpy(dst + (k++) * (int64_t)isz, src + (p->v.offset + o.off[0] + a.offs[o.off[1]]) * (int64_t)isz, isz);
  } while (odo_next(&o));
  lua_remove(L, -2);   /* the offsets */
}

/* Write the tensor value (broadcast) into the plan's selection. */
static void ip_assign(lua_State *L, const char *fname, lt_tensor *t, const iplan *p, const lt_tensor *val) {
  if (p->nadv == 0) {
    lt_tensor v = p->v;
    ltl_copy(L, fname, &v, val);
    return;
  }
  adv_layout a;
  adv_prepare(L, fname, p, &a);
  /* PyTorch's index_put_: value must broadcast to the indexing result */
  int ok = val->ndim <= a.nd;
  for (int i = 0; ok && i < val->ndim; i++) {
    int64_t s = val->shape[val->ndim - 1 - i], r = a.shape[a.nd - 1 - i];
    if (s != 1 && s != r) ok = 0;
  }
  if (!ok) {
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    ltl_error(L, fname, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
             shape_str(b1, sizeof b1, val->ndim, val->shape), shape_str(b2, sizeof b2, a.nd, a.shape));
  }
  int64_t n = 1;
  for (int i = 0; i < a.nd; i++) n *= a.shape[i];   /* fits: adv_prepare bounds the shape */
  ltl_check_overlap(L, fname, t, n);
  if (n == 0) { lua_pop(L, 1); lt_bump_version(t); return; }
  if (lt_may_overlap(val, t)) val = ltl_push_clone(L, val);   /* it may alias what we overwrite */
  lt_cast_fn cast = lt_cast_kernel(val->dtype, t->dtype);
  size_t dsz = lt_itemsize(t->dtype), ssz = lt_itemsize(val->dtype);
  char *dst = p->v.storage->data;
  const char *src = lt_data(val);
  odo o;
  odo_init(&o, a.nd, a.shape);
  memcpy(o.stride[0], a.vstride, sizeof a.vstride);
  memcpy(o.stride[1], a.bstride, sizeof a.bstride);
  lt_broadcast_strides(val, a.nd, a.shape, o.stride[2]);
  do {
    cast(src + o.off[2] * (int64_t)ssz, 0, dst + (p->v.offset + o.off[0] + a.offs[o.off[1]]) * (int64_t)dsz, 0, 1);
  } while (odo_next(&o));
  lt_bump_version(t);
}

/* T.index(t, key) / t[key] */
static int l_index(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_checkany(L, 2);
  lua_settop(L, 2);
  iplan p;
  ip_init(&p, t);
  ip_key(L, &p, "index", 2);
  ip_push_result(L, "index", &p);
  return 1;
}

/* T.setindex(t, key, value) / t[key] = value */
static int l_setindex(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_checkany(L, 2);
  ltl_checkany(L, 3);
  lua_settop(L, 3);
  lt_tensor *val = ltl_test(L, 3);
  if (!val) {
    int ty = lua_type(L, 3);
    if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN && !(ty == LUA_TTABLE && lt_is_complex(t->dtype)))
      return ltl_error(L, "setindex", "value must be a number, a boolean or a tensor (got %s)", luaL_typename(L, 3));
    val = ltl_push_scalar(L, t->dtype, 3);
    lua_replace(L, 3);
  } else if (!val->storage) {
    return ltl_error(L, "setindex", "value tensor was freed");
  }
  /* leading size-1 dims of the value are dropped, as PyTorch's setitem does,
     so t[1] = x:view(1, 3) writes a row */
  lt_tensor vs = *val;
  while (vs.ndim > 0 && vs.shape[0] == 1) {
    memmove(vs.shape, vs.shape + 1, sizeof(int64_t) * (size_t)(vs.ndim - 1));
    memmove(vs.stride, vs.stride + 1, sizeof(int64_t) * (size_t)(vs.ndim - 1));
    vs.ndim--;
  }
  val = &vs;
  iplan p;
  ip_init(&p, t);
  ip_key(L, &p, "setindex", 2);
  ip_assign(L, "setindex", t, &p, val);
  lua_settop(L, 1);
  return 0;
}

int ltl_index(lua_State *L) { return l_index(L); }
int ltl_newindex(lua_State *L) { return l_setindex(L); }

/* ====================================================================== */
/* index_select / masked_select / masked_fill / nonzero                   */
/* ====================================================================== */
static const char *const INDEX_SELECT_OPTS[] = {"out", NULL};
static int l_index_select(lua_State *L) {
  ltl_check_nargs(L, 4);
  lt_tensor *t = ltl_check(L, 1);
  int d = ltl_checkdim(L, ltl_checkinteger(L, 2), t->ndim, "index_select");
  lt_tensor *idx = ltl_check(L, 3);
  int out_idx = ltl_opt_out(L, "index_select", 4, INDEX_SELECT_OPTS);
  if (idx->ndim > 1) return ltl_error(L, "index_select", "index_select(): Index is supposed to be a vector");
  if (idx->dtype != LTENSOR_INT64 && idx->dtype != LTENSOR_INT32)
    return ltl_error(L, "index_select", "index_select(): Expected dtype int32 or int64 for index (got %s)",
                    lt_dtypes[idx->dtype].name);
  lt_tensor one = *idx;
  if (idx->ndim == 0) { one.ndim = 1; one.shape[0] = 1; one.stride[0] = 0; }
  iplan p;
  ip_init(&p, t);
  if (t->ndim == 0) ip_insert(L, &p, "index_select", 0, 1);  /* a scalar selects like a 1-element vector */
  p.advdim[0] = d;
  p.advorig[0] = d;
  p.advt[0] = &one;
  p.nadv = 1;
  ip_push_result(L, "index_select", &p);
  if (t->ndim == 0) {  /* back to 0-dim */
    lt_tensor *r = ltl_check(L, -1);
    if (lt_numel(r) == 1) r->ndim = 0;
  }
  ltl_into_out(L, "index_select", out_idx, t->dtype);
  return 1;
}

/* t and mask broadcast together (expanded views as structs) */
static void bcast_pair(lua_State *L, const char *fname, const lt_tensor *t, const lt_tensor *m, lt_tensor *te,
                       lt_tensor *me) {
  const lt_tensor *ts[2] = {t, m};
  int nd, bd;
  int64_t shape[LT_MAX_DIMS], sa, sb;
  if (lt_broadcast_shape(ts, 2, &nd, shape, &sa, &sb, &bd) != 0)
    ltl_error(L, fname, "the size of tensor a (%I) must match the size of tensor b (%I) at non-singleton "
             "dimension %d", (lua_Integer)sa, (lua_Integer)sb, bd);
  *te = *t;
  *me = *m;
  te->ndim = me->ndim = nd;
  memcpy(te->shape, shape, sizeof shape);
  memcpy(me->shape, shape, sizeof shape);
  lt_broadcast_strides(t, nd, shape, te->stride);
  lt_broadcast_strides(m, nd, shape, me->stride);
}

static lt_tensor *check_mask(lua_State *L, int idx, const char *fname) {
  lt_tensor *m = ltl_check(L, idx);
  if (m->dtype != LTENSOR_BOOL)
    ltl_error(L, fname, "%s only supports boolean masks, but got mask with dtype %s", fname, lt_dtypes[m->dtype].name);
  return m;
}

static int l_masked_select(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  lt_tensor *m = check_mask(L, 2, "masked_select");
  lt_tensor te, me;
  bcast_pair(L, "masked_select", t, m, &te, &me);
  if (te.ndim == 0) {   /* a 0-dim pair gives 1 or 0 elements */
    int64_t cnt = *(const uint8_t *)lt_data(&me) != 0;
    lt_tensor *out = ltl_push_new(L, t->dtype, 1, &cnt);
    if (cnt) lt_copy_into(out, &te);
    return 1;
  }
  iplan p;
  ip_init(&p, &te);
  ip_mask(L, &p, "masked_select", &me);
  ip_push_result(L, "masked_select", &p);
  return 1;
}

/* fill the elements of dst (shape S) where mask (broadcast to S) is true */
static void masked_fill_into(lua_State *L, const char *fname, lt_tensor *dst, const lt_tensor *m, int vidx) {
  char buf[32];
  lt_tensor *vt = ltl_test(L, vidx);
  if (vt) {
    if (vt->ndim != 0)
      ltl_error(L, fname, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)",
               vt->ndim);
    lt_cast_kernel(vt->dtype, dst->dtype)(lt_data(vt), 0, buf, 0, 1);
  } else {
    int ty = lua_type(L, vidx);
    if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN && !(ty == LUA_TTABLE && lt_is_complex(dst->dtype)))
      ltl_typeerror(L, vidx, "number, boolean or 0-dim tensor");
    ltl_store_lua(L, vidx, dst->dtype, buf);
  }
  int64_t n = lt_numel(dst);
  if (n == 0) return;
  size_t dsz = lt_itemsize(dst->dtype);
  char *db = lt_data(dst);
  const char *mb = lt_data(m);
  odo o;
  odo_init(&o, dst->ndim, dst->shape);
  memcpy(o.stride[0], dst->stride, sizeof(int64_t) * (size_t)dst->ndim);
  lt_broadcast_strides(m, dst->ndim, dst->shape, o.stride[1]);
  do {
    if (mb[o.off[1]]) memcpy(db + o.off[0] * (int64_t)dsz, buf, dsz);
  } while (odo_next(&o));
}

/* masked_fill_ (inplace) and masked_fill: (self, mask, value); a 4th
   argument is a slip, as in PyTorch */
static int masked_fill(lua_State *L, const char *fname, int inplace) {
  lt_tensor *t = ltl_check(L, 1);
  lt_tensor *m = check_mask(L, 2, fname);
  ltl_checkany(L, 3);
  ltl_check_nargs(L, 3);
  lt_tensor *v = ltl_test(L, 3);   /* the value: a number or a 0-dim tensor */
  if (v && !v->storage) ltl_argerror(L, 3, "tensor was freed");
  lt_tensor te, me;
  bcast_pair(L, fname, t, m, &te, &me);
  if (!inplace) {
    lt_tensor *out = ltl_push_new(L, t->dtype, te.ndim, te.shape);
    lt_copy_into(out, &te);
    masked_fill_into(L, fname, out, &me, 3);
    return 1;
  }
  if (te.ndim != t->ndim || memcmp(te.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) != 0) {
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    return ltl_error(L, fname, "mask of shape %s cannot be broadcast to the shape %s of the tensor",
                    shape_str(b1, sizeof b1, m->ndim, m->shape), shape_str(b2, sizeof b2, t->ndim, t->shape));
  }
  ltl_check_overlap(L, fname, t, lt_numel(t));
  masked_fill_into(L, fname, t, &me, 3);
  lt_bump_version(t);
  lua_settop(L, 1);
  return 1;
}
static int l_masked_fill_(lua_State *L) { return masked_fill(L, "masked_fill_", 1); }
static int l_masked_fill(lua_State *L) { return masked_fill(L, "masked_fill", 0); }

/* nonzero([opts]) -> int64 [n, ndim] of 1-based indices, or with
   {as_tuple = true} a list of ndim 1-D tensors (usable as an index key) */
int ltl_nonzero(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  ltl_check_nargs(L, 2);   /* (t [, opts]) */
  if (!lua_isnoneornil(L, 2) && (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2))) ltl_typeerror(L, 2, "options table");
  static const char *const NONZERO_OPTS[] = {"as_tuple", NULL};
  ltl_check_opts(L, 2, "nonzero", NONZERO_OPTS);
  int as_tuple = ltl_opt_bool(L, 2, "as_tuple", 0);
  int nd = t->ndim;
  int64_t n = lt_numel(t), cnt = 0;
  size_t isz = lt_itemsize(t->dtype);
  const char *base = lt_data(t);
  odo o;
  odo_init(&o, nd, t->shape);
  memcpy(o.stride[0], t->stride, sizeof(int64_t) * (size_t)nd);
  if (n > 0) do { cnt += is_nonzero(t->dtype, base + o.off[0] * (int64_t)isz); } while (odo_next(&o));
  int64_t shape[2] = {cnt, nd};
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 2, shape);
  int64_t *r = (int64_t *)lt_data(out);
  odo_init(&o, nd, t->shape);
  memcpy(o.stride[0], t->stride, sizeof(int64_t) * (size_t)nd);
  if (n > 0) do {
      if (is_nonzero(t->dtype, base + o.off[0] * (int64_t)isz))
        for (int j = 0; j < nd; j++) *r++ = o.idx[j] + 1;
    } while (odo_next(&o));
  if (!as_tuple) return 1;
  int outi = lua_gettop(L);
  lua_createtable(L, nd > 0 ? nd : 1, 0);
  if (nd == 0) {   /* PyTorch: a 0-dim input gives one tensor of size n */
    lt_tensor *c = ltl_push_new(L, LTENSOR_INT64, 1, &cnt);
    for (int64_t i = 0; i < cnt; i++) ((int64_t *)lt_data(c))[i] = 1;
    lua_rawseti(L, -2, 1);
    return 1;
  }
  for (int j = 0; j < nd; j++) {
    lt_tensor *src = ltl_check(L, outi);
    int64_t st = src->stride[0];
    ltl_push_view(L, src, 1, &cnt, &st, j);   /* column j of the [n, ndim] result */
    lua_rawseti(L, -2, j + 1);
  }
  return 1;
}


#define VIEWOP(name, fn) {name, fn, LT_BOTH | LT_DIFF, name}
const ltl_reg ltl_reg_index[] = {
  {"index", l_index, LT_MODULE | LT_DIFF, "index"},
  {"setindex", l_setindex, LT_MODULE | LT_DIFF, "setindex"},
  VIEWOP("index_select", l_index_select),
  VIEWOP("masked_select", l_masked_select),
  VIEWOP("masked_fill", l_masked_fill),
  VIEWOP("masked_fill_", l_masked_fill_),
  {"nonzero", ltl_nonzero, LT_BOTH, NULL},
  {NULL, NULL, 0, NULL}
};
