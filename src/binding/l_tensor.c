/* l_tensor.c -- the Tensor userdata: allocation (inline or in a storage
   box), views, external memory, the collector's bookkeeping, freeing, and
   elements <-> Lua values. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "l_lua.h"
#include "ltensor.h"

/* Compare metatable identity instead of luaL_testudata's registry lookup by
   name (which interns the name with a strcmp on every call): operands are
   tested several times per op, and this is on the 1-element fast path. */
lt_tensor *ltl_test(lua_State *L, int idx) {
  void *p = lua_touserdata(L, idx);
  if (!p || lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return NULL;
  const void *mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  return mt == ltl_settings_of(L)->tensor_mt ? (lt_tensor *)p : NULL;
}

lt_tensor *ltl_check(lua_State *L, int idx) {
  lt_tensor *t = ltl_test(L, idx);
  if (!t) {
    /* x.sum() for x:sum(): self is missing.  The usual slip of a newcomer
       to Lua; say what to write (the name is the registered one) */
    if ((idx == 1 && lua_type(L, 1) == LUA_TNONE) || ltl_dot_called(L, idx)) {
      const char *got = lua_type(L, idx) == LUA_TNONE ? "no value" : luaL_typename(L, idx);
      const char *f = ltl_running_name(L);   /* pushes: read the argument first */
      ltl_argerror(L, idx, lua_pushfstring(L, "ltensor.Tensor expected, got %s; a method is called with "
                                              "':', as x:%s(...)", got, f));
    }
    ltl_typeerror(L, idx, "ltensor.Tensor");
  }
  if (!t->storage) ltl_argerror(L, idx, "tensor was freed");
  return t;
}

/* Memory layout.  A tensor is a userdata holding lt_tensor with two user
   values: 1 = autograd table (l_core's _meta), 2 = the owner of its storage.
   Tensors have no finalizer: a finalizer costs a call per collected object
   and keeps everything the object references alive one more GC cycle.
   - small data (<= LT_INLINE_MAX bytes) sits inside the tensor's own
     userdata, after an inline lt_storage: one allocation, no owner;
   - larger data is owned by a storage box (a userdata holding lt_storage,
     metatable with __gc) that frees the heap block or calls the host's
     release; the tensor's user value 2 keeps the box alive;
   - a view's user value 2 is the owner of its base (the box, or the base
     tensor itself when the data is inline), so storage lives exactly as
     long as some tensor can reach it. */
#define LT_INLINE_MAX 256

static lt_tensor *new_udata(lua_State *L, size_t extra) {
  lt_tensor *t = (lt_tensor *)lua_newuserdatauv(L, sizeof(lt_tensor) + extra, 2);
  t->storage = NULL;
  t->offset = 0;
  t->ndim = 0;
  t->dtype = LTENSOR_FLOAT32;
  t->requires_grad = false;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_tensor_mt);
  lua_setmetatable(L, -2);
  return t;
}

int ltl_storage_box_gc(lua_State *L) {
  lt_storage *s = (lt_storage *)lua_touserdata(L, 1);
  if (s) lt_storage_release(s);   /* large blocks go back to the state's allocator cache */
  return 0;
}

/* Pushes a storage box with its metatable set and no memory yet, so that a
   failure after this point can never leak what is attached later. */
static lt_storage *ltl_push_storage_box(lua_State *L) {
  lt_storage *s = (lt_storage *)lua_newuserdatauv(L, sizeof(lt_storage), 1);
  lt_storage_init(s, NULL, 0);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_storage_mt);
  lua_setmetatable(L, -2);
  /* the box may hand its block to the settings' cache: keep them alive */
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_settings);
  lua_setiuservalue(L, -2, 1);
  return s;
}

/* ---- the collector and tensor memory ------------------------------------
   Lua counts only the bytes of its own allocator calls, so it cannot see
   heap blocks; without help a loop of large temporaries grows until
   something else triggers a cycle.  The state's allocator (lt_alloc.h)
   keeps released blocks for reuse.  When it has none of the size asked
   for, one basic GC step comes first (lt_alloc_should_step: in
   generational mode a young collection of a few microseconds, which frees
   the temporaries of the last ops, so a loop reuses one warm block instead
   of faulting in 64 MB of cold ones between full collections).  When that
   gave nothing back and enough was handed out since the last collection
   (lt_alloc_should_collect: the larger of 64 MB, the live bytes and the Lua
   heap), one full collection runs first: the temporaries it finds dead give
   their blocks back, and the request takes one of them.  A full collection,
   not a step: the generational collector (lua5.4's default) promotes a
   temporary kept alive by a calling frame to old, and only a major
   collection frees old objects.  Its cost (proportional to the Lua heap) is
   spread over at least 64 MB of blocks.  Blocks under 64 KB are many and
   cheap: for them Lua's own collector also gets a step per 256 KB, as its
   own allocations would. */
static void collect(lua_State *L, ltl_settings *S) {
  lua_gc(L, LUA_GCCOLLECT);
  size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  lt_alloc_collected(&S->alloc, heap);
}

/* The end of every collection cycle: a userdata that nothing references,
   whose finalizer ages the cache (blocks unused for a whole cycle are given
   back: collectgarbage() returns idle memory) and makes the next one. */
static const char sentinel_key = 'g';
static void arm_sentinel(lua_State *L, ltl_settings *S);
static int sentinel_gc(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  S->sentinel_armed = 0;
  if (S->alloc.closed) return 0;
  /* a step of alloc_block (a young collection, many per second) is not the
     end of a cycle: ageing there would give back blocks the next ops want
     (alloc_block makes the next sentinel after the step) */
  if (S->alloc.stepping || S->alloc.pacing) return 0;
  lt_alloc_age(&S->alloc);
  /* live blocks too: the finalizers of one cycle run in no set order, and
     a storage finalized after this one caches its block then */
  if (S->alloc.n > 0 || S->alloc.live > 0) arm_sentinel(L, S);   /* re-armed by the next heap tensor otherwise */
  return 0;
}
static void arm_sentinel(lua_State *L, ltl_settings *S) {
  if (!lua_checkstack(L, 3)) return;
  lua_newuserdatauv(L, 1, 0);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &sentinel_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_settings);
    lua_pushcclosure(L, sentinel_gc, 1);   /* upvalue 1: the settings, as every ltensor function */
    lua_setfield(L, -2, "__gc");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &sentinel_key);
  }
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  S->sentinel_armed = 1;
}

/* Large blocks bypass the state's lua_Alloc (mmap'd, 2 MB-aligned, huge
   pages) only when it is Lua's default allocator -- plain realloc/free, so
   no host accounting is lost -- recognised as the allocator of a fresh
   luaL_newstate.  Under AddressSanitizer every block goes through lua_Alloc
   (malloc), where ASan sees overflows. */
void ltl_alloc_open(lua_State *L, ltl_settings *S) {
  int use_mmap = 0;
#if !defined(__SANITIZE_ADDRESS__)
  lua_State *probe = luaL_newstate();
  if (probe) {
    void *ud;
    use_mmap = lua_getallocf(probe, &ud) == S->allocf && ud == S->alloc_ud;
    lua_close(probe);
  }
#endif
  (void)L;
  lt_alloc_init(&S->alloc, S->allocf, S->alloc_ud, use_mmap);
}

/* The name an allocation error gives: the function ltensor registered and
   is running (ltl_push_new has no fname parameter). */
static int push_new_fail(lua_State *L, const char *fmt, ...) {
  const char *fname = ltl_running_name(L);   /* a metamethod: the op's name (l_args.c) */
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return ltl_error(L, fname, "%s", msg);
}

/* A block for s: the cache, then (after a collection, when one is due) new
   memory; under pressure (no memory, or the limit): trim the cache, collect
   once and retry.  Raises "not enough memory". */
static void alloc_block(lua_State *L, ltl_settings *S, lt_storage *s, size_t nbytes) {
  lt_alloc *A = &S->alloc;
  A->stepping = A->pacing = 0;   /* a finalizer that raised inside a step below (Lua 5.1 propagates them) left them set */
  if (!S->sentinel_armed) arm_sentinel(L, S);
  int rc = lt_storage_alloc(s, A, nbytes, 1);
  size_t bsize = lt_alloc_block_size(A, nbytes);
  if (rc == LT_ALLOC_NOMEM) {   /* a miss */
    /* (a block under LT_ALLOC_COUNTED is not counted by the pacing, and its
       miss says little about garbage: a due collection run for it came once
       per batch-1 resnet18 pass, for a 512-byte tensor) */
    if (bsize >= LT_ALLOC_COUNTED && (lt_alloc_should_step(A, bsize) || lt_alloc_should_collect(A))) {
#ifdef LUA_GCISRUNNING
      int running = lua_gc(L, LUA_GCISRUNNING);   /* collectgarbage("stop") is respected */
#else
      int running = 1;
#endif
      if (running && lt_alloc_should_step(A, bsize)) {   /* lt_alloc.h: a young collection, cheaper than new pages */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        A->stepping = 1;
        lua_gc(L, LUA_GCSTEP, 0);
        A->stepping = 0;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (!S->sentinel_armed) arm_sentinel(L, S);
        rc = lt_storage_alloc(s, A, nbytes, 1);
        lt_alloc_stepped(A, rc == LT_ALLOC_OK,
                         (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
      }
      if (running && rc == LT_ALLOC_NOMEM && lt_alloc_should_collect(A)) {
        /* this cycle looks for dead blocks, it does not mean the cached ones
           are idle: no ageing at its end (lt_alloc.h, Retention) */
        A->pacing = 1;
        collect(L, S);
        A->pacing = 0;
        if (!S->sentinel_armed) arm_sentinel(L, S);
      }
    }
    if (rc == LT_ALLOC_NOMEM) rc = lt_storage_alloc(s, A, nbytes, 0);
  }
  if (rc != LT_ALLOC_OK) {
    collect(L, S);   /* dead tensors give their blocks (and live bytes) back */
    rc = lt_storage_alloc(s, A, nbytes, 1);   /* one of this size class, maybe */
    if (rc != LT_ALLOC_OK) {
      lt_alloc_trim(A, 0);   /* the others go to the system */
      rc = lt_storage_alloc(s, A, nbytes, 0);
    }
  }
  if (rc == LT_ALLOC_OK && s->block_size < LT_ALLOC_PACED) {
    /* small blocks (cached from 8 KB, but many and cheap): Lua's collector
       is told, batched per 256 KB (a step in generational mode is a cheap
       minor collection that frees them young), as it was before they were
       cached -- without it a training step of 16-32 KB activations ran 25%
       slower */
    S->gc_debt += s->block_size;
    if (S->gc_debt >= (256u << 10)) {
      int kb = (int)(S->gc_debt >> 10);
      S->gc_debt = 0;
      lua_gc(L, LUA_GCSTEP, kb);
    }
    return;
  }
  if (rc == LT_ALLOC_OVER_LIMIT)
    push_new_fail(L, "not enough memory (%I bytes requested, limit %I bytes, %I in use)",
                  (lua_Integer)lt_alloc_block_size(A, nbytes), (lua_Integer)A->limit, (lua_Integer)A->live);
  if (rc != LT_ALLOC_OK)
    push_new_fail(L, "not enough memory (%I bytes requested)", (lua_Integer)lt_alloc_block_size(A, nbytes));
}

/* Shape bounds (lt_check_shape), raised in the running function's name. */
static void check_shape(lua_State *L, int ndim, const int64_t *shape, const int64_t *stride, int64_t offset) {
  if (lt_check_shape(ndim, shape, stride, offset) == 0) return;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) push_new_fail(L, "negative dimension %I", (lua_Integer)shape[i]);
  char buf[LT_SHAPE_STR_MAX];
  push_new_fail(L, "tensor too large (size %s overflows int64%s)", lt_shape_str(buf, sizeof buf, ndim, shape, "[]"),
                stride ? " with its strides" : "");
}

void ltl_check_shape(lua_State *L, const char *fname, int ndim, const int64_t *shape) {
  if (lt_check_shape(ndim, shape, NULL, 0) == 0) return;
  char buf[LT_SHAPE_STR_MAX];
  ltl_error(L, fname, "tensor too large (size %s overflows int64)", lt_shape_str(buf, sizeof buf, ndim, shape, "[]"));
}

lt_tensor *ltl_push_new(lua_State *L, ltensor_dtype dt, int ndim, const int64_t *shape) {
  ltl_settings *S = ltl_settings_of(L);
  check_shape(L, ndim, shape, NULL, 0);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];   /* fits: checked above */
  if (n > INT64_MAX / 64) {
    char buf[LT_SHAPE_STR_MAX];
    push_new_fail(L, "tensor too large (size %s)", lt_shape_str(buf, sizeof buf, ndim, shape, "[]"));
  }
  int64_t sh[LT_MAX_DIMS];   /* a copy: shape may be NULL (0-dim) or belong to an
                                unreachable tensor that the allocation below collects */
  if (ndim > 0) memcpy(sh, shape, sizeof(int64_t) * (size_t)ndim);
  size_t nbytes = (size_t)n * lt_itemsize(dt);
  lt_tensor *t;
  if (nbytes <= LT_INLINE_MAX) {
    size_t head = (sizeof(lt_tensor) + sizeof(lt_storage) + 15) & ~(size_t)15;
    t = new_udata(L, head - sizeof(lt_tensor) + nbytes);
    lt_storage *s = (lt_storage *)(t + 1);
    lt_storage_init(s, (char *)t + head, nbytes);
    t->storage = s;
  } else {
    lt_storage *s = ltl_push_storage_box(L);
    alloc_block(L, S, s, nbytes);
    t = new_udata(L, 0);
    t->storage = s;
    lua_insert(L, -2);              /* tensor, box */
    lua_setiuservalue(L, -2, 2);    /* tensor.uv2 = box */
  }
  t->dtype = dt;
  t->ndim = ndim;
  memcpy(t->shape, sh, sizeof(int64_t) * (size_t)ndim);
  lt_contiguous_strides(ndim, sh, t->stride);
  return t;
}

lt_tensor *ltl_push_new_preserve(lua_State *L, const lt_tensor *t, ltensor_dtype dt) {
  lt_tensor *out = ltl_push_new(L, dt, t->ndim, t->shape);
  if (lt_numel(t) > 1 && !lt_is_contiguous(t) && lt_is_dense(t))
    memcpy(out->stride, t->stride, sizeof(int64_t) * (size_t)t->ndim);
  return out;
}

lt_tensor *ltl_push_new_like(lua_State *L, const lt_tensor *t, ltensor_dtype dt) {
  int64_t shape[LT_MAX_DIMS];
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  return ltl_push_new(L, dt, t->ndim, shape);
}

lt_tensor *ltl_push_clone(lua_State *L, const lt_tensor *t) {
  lt_tensor *c = ltl_push_new_like(L, t, t->dtype);
  lt_copy_into_pool(c, t, ltl_settings_of(L)->pool);
  return c;
}

/* Push the owner of t's storage: its user value 2, or t itself when the
   data is inline.  t must be at stack index idx. */
static void push_owner(lua_State *L, int idx) {
  if (lua_getiuservalue(L, idx, 2) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
  }
}

/* The stack index of a tensor using storage s (views are made from a tensor
   that an argument or a local of the running C function holds, or from a
   struct copied from one; every tensor on s has the same owner). */
static int find_on_stack(lua_State *L, const lt_tensor *base) {
  for (int i = lua_gettop(L); i >= 1; i--)
    if (lua_touserdata(L, i) == base && lua_type(L, i) == LUA_TUSERDATA) return i;
  for (int i = lua_gettop(L); i >= 1; i--) {
    lt_tensor *x = ltl_test(L, i);
    if (x && x->storage == base->storage) return i;
  }
  return 0;
}

lt_tensor *ltl_push_view(lua_State *L, const lt_tensor *base, int ndim, const int64_t *shape,
                        const int64_t *stride, int64_t offset) {
  int base_idx = find_on_stack(L, base);
  if (!base_idx) luaL_error(L, "ltensor: internal error: the base of a view must be on the stack");
  check_shape(L, ndim, shape, stride, offset);
  lt_storage *s = base->storage;
  ltensor_dtype dt = base->dtype;
  int64_t sh[LT_MAX_DIMS], st[LT_MAX_DIMS];   /* shape/stride may point into base */
  if (ndim > 0) {   /* shape/stride may be NULL for a 0-dim view */
    memcpy(sh, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(st, stride, sizeof(int64_t) * (size_t)ndim);
  }
  luaL_checkstack(L, 3, "view");
  lt_tensor *t = new_udata(L, 0);
  push_owner(L, base_idx);
  lua_setiuservalue(L, -2, 2);
  lt_storage_retain(s);
  t->storage = s;
  t->dtype = dt;
  t->offset = offset;
  t->ndim = ndim;
  memcpy(t->shape, sh, sizeof(int64_t) * (size_t)ndim);
  memcpy(t->stride, st, sizeof(int64_t) * (size_t)ndim);
  return t;
}

/* Like ltensor_push_external, for the embedding layer: a tensor over host
   memory whose release runs when the last tensor viewing it is collected.
   The box is created (with its finalizer) before anything else can fail,
   and only then takes ownership of release. */
lt_tensor *ltl_push_external(lua_State *L, void *data, size_t nbytes, void (*release)(void *), void *ud,
                            int *attached) {
  lt_storage *s = ltl_push_storage_box(L);
  lt_storage_set_external(s, data, nbytes, release, ud);
  *attached = 1;
  lt_tensor *t = new_udata(L, 0);
  t->storage = s;
  lua_insert(L, -2);
  lua_setiuservalue(L, -2, 2);
  return t;
}

lt_tensor *ltl_push_scalar(lua_State *L, ltensor_dtype dt, int value_idx) {
  value_idx = lua_absindex(L, value_idx);
  lt_tensor *t = ltl_push_new(L, dt, 0, NULL);
  ltl_store_lua(L, value_idx, dt, lt_data(t));
  return t;
}

void ltl_set_requires_grad(lua_State *L, lt_tensor *t, bool b) {
  t->requires_grad = b;
  if (b) ltl_settings_of(L)->any_requires_grad = 1;
}

/* The scratch tensors a C function pushed above stack index `keep` (never
   returned, never seen by Lua): their blocks go back to the allocator's
   cache now, and the stack is cut to `keep`.  Left to the collector, a
   call's scratch (a conv's im2col or Winograd buffers: megabytes) stays
   held until a collection finds it, so the next call's request misses the
   cache; released here, a loop of convolutions reuses one warm block. */
void ltl_drop_scratch(lua_State *L, int keep) {
  for (int i = lua_gettop(L); i > keep; i--) {
    lt_tensor *t = ltl_test(L, i);
    if (!t || !t->storage || !t->storage->block || atomic_load(&t->storage->refcount) != 1) continue;
    lt_storage *s = t->storage;
    t->storage = NULL;
    lt_alloc_returned(s->pool, s->block_size);
    lt_storage_release(s);
    lua_pushnil(L);
    lua_setiuservalue(L, i, 2);
  }
  lua_settop(L, keep);
}

/* ---- elements <-> Lua values ---------------------------------------- */
void ltl_push_elem(lua_State *L, ltensor_dtype dt, const char *p) {
  switch (lt_kind(dt)) {
  case LT_KIND_BOOL: lua_pushboolean(L, *(const uint8_t *)p != 0); break;
  case LT_KIND_INT:
    if (dt == LTENSOR_UINT64) lua_pushinteger(L, (lua_Integer) * (const uint64_t *)p); /* wraps */
    else lua_pushinteger(L, lt_load_i64(dt, p));
    break;
  case LT_KIND_FLOAT: lua_pushnumber(L, lt_load_f64(dt, p)); break;
  default: { /* complex: {re, im} */
    lt_cdouble c = lt_load_c128(dt, p);
    lua_createtable(L, 2, 0);
    lua_pushnumber(L, creal(c)); lua_rawseti(L, -2, 1);
    lua_pushnumber(L, cimag(c)); lua_rawseti(L, -2, 2);
  }
  }
}

void ltl_store_lua(lua_State *L, int idx, ltensor_dtype dt, char *p) {
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN: lt_store_i64(dt, p, lua_toboolean(L, idx)); return;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) lt_store_i64(dt, p, lua_tointeger(L, idx));
    else lt_store_f64(dt, p, lua_tonumber(L, idx));
    return;
  case LUA_TTABLE: { /* {re, im} */
    lua_rawgeti(L, idx, 1); lua_rawgeti(L, idx, 2);
    double re = lua_tonumber(L, -2), im = lua_tonumber(L, -1);
    lua_pop(L, 2);
    lt_store_c128(dt, p, re + im * I);
    return;
  }
  default: {
    lt_tensor *t = ltl_test(L, idx);
    if (t && t->storage && lt_numel(t) == 1) {
      int64_t zero[LT_MAX_DIMS] = {0};
      lt_cast_kernel(t->dtype, dt)(lt_elem_ptr(t, zero), 0, p, 0, 1);
      return;
    }
    /* argerror, so that the message names the function and the argument */
    if (t && !t->storage) ltl_argerror(L, idx, "tensor was freed");
    if (t) ltl_argerror(L, idx, lua_pushfstring(L, "a Tensor with %I elements cannot be converted to Scalar",
                                                 (lua_Integer)lt_numel(t)));
    ltl_typeerror(L, idx, "number or boolean");
  }
  }
}

void ltl_new_requires_grad(lua_State *L, const char *fname, lt_tensor *t, int rg) {
  if (!rg) return;
  if (!lt_is_floating(t->dtype) && !lt_is_complex(t->dtype))
    ltl_error(L, fname, "only Tensors of floating point and complex dtype can require gradients");
  ltl_set_requires_grad(L, t, true);
}

/* ---- copy with checks ------------------------------------------------ */
void ltl_check_overlap(lua_State *L, const char *fname, const lt_tensor *t, int64_t n) {
  if (n > 1 && lt_has_internal_overlap(t))
    ltl_error(L, fname, "unsupported operation: some elements of the input tensor and the written-to tensor "
                       "refer to a single memory location. Please clone() the tensor before performing the operation.");
}
void ltl_copy(lua_State *L, const char *fname, lt_tensor *dst, const lt_tensor *src) {
  if (src->ndim > dst->ndim)
    ltl_error(L, fname, "the size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension 1",
             (int)(dst->ndim ? dst->shape[0] : 1), (int)src->shape[0]);
  for (int i = 0; i < src->ndim; i++) {
    int j = dst->ndim - src->ndim + i;
    if (src->shape[i] != 1 && src->shape[i] != dst->shape[j])
      ltl_error(L, fname, "the size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d",
               (int)dst->shape[j], (int)src->shape[i], j + 1);
  }
  ltl_check_overlap(L, fname, dst, lt_numel(dst));
  if (lt_iter_input_aliases(src, dst)) {   /* read through a temporary */
    lt_tensor *tmp = ltl_push_clone(L, src);
    lt_copy_into_pool(dst, tmp, ltl_settings_of(L)->pool);
    lua_pop(L, 1);
  } else {
    lt_copy_into_pool(dst, src, ltl_settings_of(L)->pool);
  }
  lt_bump_version(dst);
}


/* t:free(): release the storage now; later use raises "tensor was freed" */
static int l_free(lua_State *L) {
  /* a second free is a no-op, as closing a closed <close> variable is */
  lt_tensor *t = ltl_test(L, 1);
  if (t && !t->storage) return 0;
  ltl_check(L, 1);
  return ltl_tensor_free(L);
}

/* T._set_tostring(fn): the Lua printer (lua/ltensor/print.lua) installs itself */
static int l_set_tostring(lua_State *L) {
  if (!lua_isnil(L, 1)) ltl_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "ltensor.tostring");
  return 0;
}

/* T._clock(): monotonic wall time in seconds, for benchmarks (os.clock is CPU time) */
static int l_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
  return 1;
}

/* T._cache_info() -> blocks, bytes held by this state's block cache */
static int l_cache_info(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  lua_pushinteger(L, S->alloc.n);
  lua_pushinteger(L, (lua_Integer)S->alloc.cached);
  return 2;
}

static void set_int(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* T.memory_stats() -> {live, cached, peak, limit, ...}: tensor data in
   heap blocks (every tensor of more than 256 bytes), in bytes.  Smaller
   tensors keep their data inside their userdata, in the Lua heap
   (collectgarbage("count")); host memory (ltensor_push_external) is the
   host's. */
static int l_memory_stats(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  const lt_alloc *A = &S->alloc;
  int reset = 0;
  if (!lua_isnoneornil(L, 1)) {
    static const char *const known[] = {"reset_peak", NULL};
    ltl_checktype(L, 1, LUA_TTABLE);
    ltl_check_opts(L, 1, "memory_stats", known);
    reset = ltl_opt_bool(L, 1, "reset_peak", 0);
  }
  lua_createtable(L, 0, 12);
  set_int(L, "live", A->live);
  set_int(L, "cached", A->cached);
  set_int(L, "peak", A->peak);
  set_int(L, "limit", A->limit);
  set_int(L, "cached_blocks", (uint64_t)A->n);
  set_int(L, "cache_hits", A->hits);
  set_int(L, "cache_misses", A->misses);
  set_int(L, "collections", A->collections);
  set_int(L, "released", A->trimmed);
  set_int(L, "collect_at", A->collect_at);
  lua_pushboolean(L, A->use_mmap);
  lua_setfield(L, -2, "huge_pages");
  if (reset) S->alloc.peak = A->live;   /* after the report: it gives the peak so far */
  return 1;
}

/* T._physical_memory() -> the machine's memory in bytes, or nil when the
   system does not say: nn's constructors refuse parameters that could never
   fit (util.check_param_budget) instead of building them for hours. */
static int l_physical_memory(lua_State *L) {
  ltl_check_nargs(L, 0);
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psize <= 0) return 0;
  lua_pushinteger(L, (lua_Integer)pages * (lua_Integer)psize);
  return 1;
}

/* Limit the tensor memory of this state (lt_alloc.h: live + the new block;
   cached blocks are trimmed to stay within it).  0 or none: no limit. */
void ltensor_set_memory_limit(lua_State *L, size_t bytes) {
  ltl_settings *S = ltl_settings_slow(L);
  S->alloc.limit = bytes;
  if (bytes) lt_alloc_trim(&S->alloc, bytes > S->alloc.live ? bytes - S->alloc.live : 0);
}

/* T.set_memory_limit(bytes): nil or 0 removes the limit; returns the previous one (0: none) */
static int l_set_memory_limit(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  lua_Integer b = 0;
  if (!lua_isnoneornil(L, 1)) {
    b = ltl_checkinteger(L, 1);
    if (b < 0) ltl_argerror(L, 1, lua_pushfstring(L, "the limit must be >= 0 bytes, got %I", b));
  }
  lua_Integer prev = (lua_Integer)S->alloc.limit;
  ltensor_set_memory_limit(L, (size_t)b);
  lua_pushinteger(L, prev);
  return 1;
}

/* T._shape_fits(shape) -> true if a tensor of this shape passes the shape
   bounds (lt_check_shape), for the loaders' own messages.  shape: a
   sequence of non-negative integers, at most LT_MAX_DIMS of them. */
static int l_shape_fits(lua_State *L) {
  ltl_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  int64_t sh[LT_MAX_DIMS];
  int ok = n <= LT_MAX_DIMS;
  for (lua_Integer i = 1; ok && i <= n; i++) {
    lua_rawgeti(L, 1, i);
    int isint;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    ok = isint && v >= 0;
    if (ok) sh[i - 1] = v;
  }
  lua_pushboolean(L, ok && lt_check_shape((int)n, sh, NULL, 0) == 0);
  return 1;
}

static int l_is_tensor(lua_State *L) { ltl_check_nargs(L, 1); lua_pushboolean(L, ltl_test(L, 1) != NULL); return 1; }
/* T._is_freed(v): true for a tensor whose storage t:free() released (the Lua
   modules' argument checks, util.arg_checks, refuse it in their own name) */
static int l_is_freed(lua_State *L) {
  ltl_check_nargs(L, 1);
  lt_tensor *t = ltl_test(L, 1);
  lua_pushboolean(L, t && !t->storage);
  return 1;
}
static int l_data_ptr(lua_State *L) { lua_pushlightuserdata(L, lt_data(ltl_check(L, 1))); return 1; }


const ltl_reg ltl_reg_tensor[] = {
  {"free", l_free, LT_METHOD, NULL},
  {"is_tensor", l_is_tensor, LT_MODULE, NULL},
  {"_is_freed", l_is_freed, LT_MODULE, NULL},
  {"_clock", l_clock, LT_MODULE, NULL},
  {"_cache_info", l_cache_info, LT_MODULE, NULL},
  {"memory_stats", l_memory_stats, LT_MODULE, NULL},
  {"_physical_memory", l_physical_memory, LT_MODULE, NULL},
  {"_shape_fits", l_shape_fits, LT_MODULE, NULL},
  {"set_memory_limit", l_set_memory_limit, LT_MODULE, NULL},
  {"_set_tostring", l_set_tostring, LT_MODULE, NULL},
  {"data_ptr", l_data_ptr, LT_METHOD, NULL},
  {"__close", ltl_tensor_free, LT_META, NULL},
  {NULL, NULL, 0, NULL}
};
