/*
 * l_lua.h -- the binding layer's shared contract (only l_*.c include lua).
 *
 * Every area of the Lua API lives in its own l_<area>.c and exports one
 * registration array `const ltl_reg ltl_reg_<area>[]` ending in {NULL}; l_core.c
 * installs them all.  Each function is a C closure whose upvalue 1 is the
 * per-state settings (ltl_settings_of reads it), so no C global is mutable.
 *
 * Conventions
 *  - errors: ltl_error(L, "add", "fmt", ...) raises "ltensor.add: <msg>";
 *    argument errors use ltl_argerror / ltl_check* (never luaL_argerror or
 *    luaL_check*), which raise "ltensor.add: bad argument #1 (<msg>)".
 *  - dims and indices are 1-based at the Lua boundary, negative from the end;
 *    ltl_checkdim converts to 0-based.
 *  - never hold malloc'd memory across a call that can raise: allocate
 *    tensors with ltl_push_new (the GC owns them) before doing the work.
 */
#ifndef L_LUA_H
#define L_LUA_H

#include <lua.h>
#include <lauxlib.h>
#include "l_compat.h"   /* the 5.4 API on Lua 5.1-5.3 and LuaJIT */
#include "lt_tensor.h"
#include "lt_parallel.h"
#include "lt_iter.h"
#include "lt_promote.h"

#define LT_TENSOR_MT "ltensor.Tensor"
#define LT_DTYPE_MT "ltensor.dtype"
#define LT_SETTINGS_MAGIC 0x4c54454e53u

/* Per-lua_State settings (a userdata in the registry, upvalue 1 of every
   ltensor C function). */
typedef struct ltl_settings {
  uint64_t magic;
  ltensor_dtype default_dtype;   /* float32 unless set_default_dtype */
  int promotion;                 /* lt_promo_mode (lt_promote.h) */
  int grad_enabled;              /* autograd recording on/off */
  int num_threads;               /* T.set_num_threads; the pool's count (<= LT_MAX_THREADS) */
  lt_pool *pool;                 /* the one thread pool of this state (lt_parallel.h): pass
                                    it to lt_iter_init, lt_reduce_*, lt_parallel_for */
  size_t gc_debt;                /* bytes of small heap blocks since the last GC hint */
  lt_allocf allocf;              /* the state's allocator (lua_getallocf) */
  void *alloc_ud;
  uint64_t rng[8];               /* random generator state (l_random.c) */
  int has_autograd_hook;         /* a Lua autograd hook is installed */
  const void *tensor_mt;         /* identity of the Tensor metatable, for a cheap ltl_test */
  lt_alloc alloc;                /* tensor data blocks: the caching allocator (lt_alloc.h) */
  int sentinel_armed;            /* a collection-cycle sentinel exists (l_tensor.c) */
  int any_requires_grad;         /* some tensor of this state ever required grad: until then
                                    the autograd trampoline skips scanning arguments */
  volatile sig_atomic_t interrupt; /* set by the host (ltensor_interrupt_flag: a Ctrl-C handler)
                                    to stop the running op; long loops read it between chunks */
  int free_pending;              /* some t:free() waits for the running op to return (l_free.c) */
  int freed_guard_on;            /* the first free() installed ltensor.freed_guard (l_free.c) */
} ltl_settings;

ltl_settings *ltl_settings_slow(lua_State *L);
static inline ltl_settings *ltl_settings_of(lua_State *L) {
  ltl_settings *s = (ltl_settings *)lua_touserdata(L, lua_upvalueindex(1));
  if (s && s->magic == LT_SETTINGS_MAGIC) return s;
  return ltl_settings_slow(L);
}
/* 1 when this state runs on one thread (T.set_num_threads(1)): its matrix
   products then stay on the calling thread too (lt_mm_1t), since
   OpenBLAS's own thread count is the whole process's */
static inline int ltl_one_thread(lua_State *L) { return ltl_settings_of(L)->num_threads <= 1; }

/* ---- registration ------------------------------------------------------- */
enum {
  LT_MODULE = 1,        /* T.name */
  LT_METHOD = 2,        /* t:name() */
  LT_BOTH = 3,
  LT_META = 4,          /* metatable field (name is "__add" etc.) */
  LT_DIFF = 8           /* goes through the autograd trampoline */
};
typedef struct ltl_reg {
  const char *name;
  lua_CFunction fn;
  int flags;
  const char *grad_name;  /* name the autograd hook sees; NULL = name */
} ltl_reg;

/* ---- tensors ------------------------------------------------------------ */
lt_tensor *ltl_test(lua_State *L, int idx);                 /* NULL if not a tensor */
int ltl_nonzero(lua_State *L);                              /* T.nonzero(t [, opts]) (l_index.c) */
lt_tensor *ltl_check(lua_State *L, int idx);                /* argument error if not */
/* New contiguous tensor with uninitialised contents, pushed on the stack. */
lt_tensor *ltl_push_new(lua_State *L, ltensor_dtype dt, int ndim, const int64_t *shape);
/* New tensor with t's shape and, when t is dense (lt_is_dense), t's strides:
   PyTorch's memory_format=preserve_format (clone, *_like). */
lt_tensor *ltl_push_new_preserve(lua_State *L, const lt_tensor *t, ltensor_dtype dt);
/* New contiguous tensor with the same shape as t. */
lt_tensor *ltl_push_new_like(lua_State *L, const lt_tensor *t, ltensor_dtype dt);
/* A contiguous copy of t (same dtype), pushed */
lt_tensor *ltl_push_clone(lua_State *L, const lt_tensor *t);
/* A view of base's storage (no copy); requires_grad is not inherited.
   base, or another tensor on the same storage, must be on the Lua stack:
   the view keeps the storage's owner alive through its user value. */
lt_tensor *ltl_push_view(lua_State *L, const lt_tensor *base, int ndim, const int64_t *shape,
                        const int64_t *stride, int64_t offset);
/* Embedding: a tensor over host memory (shape/strides set by the caller);
   *attached becomes 1 once the finalizer owns release. */
lt_tensor *ltl_push_external(lua_State *L, void *data, size_t nbytes, void (*release)(void *), void *ud,
                            int *attached);
/* A 0-dim tensor holding one Lua number/boolean converted to dt. */
lt_tensor *ltl_push_scalar(lua_State *L, ltensor_dtype dt, int value_idx);
/* Shape bounds (lt_check_shape): raises "ltensor.<fname>: tensor too large
   (...)" when the element count or a stride (stride NULL: the contiguous
   ones) would overflow int64.  ltl_push_new / ltl_push_view check already;
   call it before computing strides for a new shape. */
void ltl_check_shape(lua_State *L, const char *fname, int ndim, const int64_t *shape);
/* Set the autograd flag (no checks); use this, not t->requires_grad = ... */
void ltl_set_requires_grad(lua_State *L, lt_tensor *t, bool b);
/* Copy src into dst with broadcasting; raises on a shape mismatch, on an
   overlapping (expanded) dst; copies through a temporary when they alias. */
/* PyTorch's refusal of an in-place write of n > 1 elements into t when
   elements of t share memory (an expanded view) */
void ltl_check_overlap(lua_State *L, const char *fname, const lt_tensor *t, int64_t n);
void ltl_copy(lua_State *L, const char *fname, lt_tensor *dst, const lt_tensor *src);
/* A tensor fname has just made requires grad when rg is set (its
   requires_grad option): only floating point and complex tensors can. */
void ltl_new_requires_grad(lua_State *L, const char *fname, lt_tensor *t, int rg);

/* ---- dtypes ------------------------------------------------------------- */
void ltl_pushdtype(lua_State *L, ltensor_dtype dt);
int ltl_testdtype(lua_State *L, int idx, ltensor_dtype *out);   /* dtype object or name string */
ltensor_dtype ltl_checkdtype(lua_State *L, int idx);
/* The options readers below take the options table's slot; slot 0 (never
   a valid index) or a slot holding no table means "no options". */
/* opts table at idx (or none/nil): its `dtype` field, else def */
ltensor_dtype ltl_opt_dtype(lua_State *L, int idx, ltensor_dtype def);
/* Push opts[k] read raw: an __index metamethod on an options table must not
   run in the middle of an op (it could free a tensor already checked). */
static inline int ltl_getopt(lua_State *L, int idx, const char *k) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, k);
  return lua_rawget(L, idx);
}
/* opts table at idx: boolean field, else def */
int ltl_opt_bool(lua_State *L, int idx, const char *field, int def);
/* Raises "ltensor.<fname>: unknown option 'dtpye' (did you mean 'dtype'?)"
   for a key of the options table at idx not in known (NULL-terminated);
   nothing if idx is not a table. */
void ltl_check_opts(lua_State *L, int idx, const char *fname, const char *const *known);
/* Raises "ltensor.<f>: bad argument #n (unexpected extra argument (got T))"
   for a non-nil argument beyond max (trailing nils pass). */
void ltl_check_nargs(lua_State *L, int max);

/* ---- arguments ---------------------------------------------------------- */
/* 1-based (negative from the end) dim -> 0-based; raises
   "ltensor.<fname>: dimension out of range (expected to be in range of [-n, n], but got d)". */
int ltl_checkdim(lua_State *L, lua_Integer dim, int ndim, const char *fname);
/* Sizes from stack slots first..last: integers, or one table of integers.
   Returns ndim; raises on negative sizes or more than LT_MAX_DIMS. */
int ltl_checksize(lua_State *L, int first, int last, int64_t *shape, const char *fname);
/* The name the running C function was registered under (else Lua's debug
   name, else "?"); pushes at most one string. */
const char *ltl_running_name(lua_State *L);
/* Raises "ltensor.<fname>: <formatted message>". */
int ltl_error(lua_State *L, const char *fname, const char *fmt, ...);
/* l_settings.c: raises "ltensor.<fname>: interrupted" (and clears the flag)
   when the host asked the running op to stop (ltensor_interrupt_flag). */
void ltl_check_interrupt(lua_State *L, ltl_settings *S, const char *fname);
/* Lua's argument checks in ltensor's error style: luaL_argerror's
   "bad argument #1 to 'add' (msg)" becomes "ltensor.add: bad argument #1
   (msg)", the name being the one the running function was registered under.
   Use these, never the luaL_ ones, in binding code. */
int ltl_argerror(lua_State *L, int arg, const char *msg);
/* 1 when the tensor expected at idx is missing or wrong because a method was
   called with '.' (x.size(1), x.add(y)): the errors then add
   "; a method is called with ':', as x:<name>(...)". */
int ltl_dot_called(lua_State *L, int idx);
int ltl_typeerror(lua_State *L, int arg, const char *tname);
void ltl_checktype(lua_State *L, int arg, int t);
void ltl_checkany(lua_State *L, int arg);
lua_Integer ltl_checkinteger(lua_State *L, int arg);
lua_Integer ltl_optinteger(lua_State *L, int arg, lua_Integer def);
lua_Number ltl_optnumber(lua_State *L, int arg, lua_Number def);
lua_Number ltl_checknumber(lua_State *L, int arg);
const char *ltl_checklstring(lua_State *L, int arg, size_t *len);
#define ltl_checkstring(L, arg) ltl_checklstring(L, (arg), NULL)
void *ltl_checkudata(lua_State *L, int arg, const char *tname);

/* Push a Lua value for one element: integer for integral dtypes, float for
   floating, boolean for bool, float (real part) for complex... complex gives
   a {re, im} pair only in totable (see l_core.c). */
void ltl_push_elem(lua_State *L, ltensor_dtype dt, const char *p);
/* Store the Lua number/boolean at idx into one element. */
void ltl_store_lua(lua_State *L, int idx, ltensor_dtype dt, char *p);

/* ---- areas (each defined in its own l_<area>.c) ------------------------- */
extern const ltl_reg ltl_reg_create[];    /* l_create.c: T.tensor, empty/zeros/ones/full, *_like, arange/linspace/eye */
extern const ltl_reg ltl_reg_attr[];      /* l_attr.c: size/stride/dim..., item, totable, get/set */
extern const ltl_reg ltl_reg_convert[];   /* l_convert.c: clone, copy_, fill_, to, type, t:float()... */
extern const ltl_reg ltl_reg_tensor[];    /* l_tensor.c: free, is_tensor, data_ptr, __close */
extern const ltl_reg ltl_reg_dtype[];     /* l_dtype.c: get/set_default_dtype */
extern const ltl_reg ltl_reg_trampoline[];/* l_trampoline.c: autograd plumbing for the Lua engine */
extern const ltl_reg ltl_reg_view[];      /* l_view.c: views, cat/stack */
extern const ltl_reg ltl_reg_index[];     /* l_index.c: t[key], index_select, masks, nonzero */
extern const ltl_reg ltl_reg_scatter[];   /* l_scatter.c: gather, scatter, index_add/copy/fill */
extern const ltl_reg ltl_reg_settings[];  /* l_settings.c: promotion mode, promote_types, threads */
extern const ltl_reg ltl_reg_ops[];       /* l_ops.c: elementwise ops, promotion, metamethods */
extern const ltl_reg ltl_reg_reduce[];    /* l_reduce.c: reductions, scans, softmax */
extern const ltl_reg ltl_reg_linalg[];    /* l_linalg.c: matmul family */
extern const ltl_reg ltl_reg_random[];    /* l_random.c: generators, rand/randn/randint/randperm */
extern const ltl_reg ltl_reg_samplers[];  /* l_samplers.c: in-place samplers, normal, poisson, ... */
extern const ltl_reg ltl_reg_embed[];     /* l_embed.c: C API helpers exposed to Lua, if any */
extern const ltl_reg ltl_reg_io[];        /* l_io.c: raw bytes <-> tensors for save/load */
extern const ltl_reg ltl_reg_backward[];  /* l_backward.c: the backward pass (_ag_run, _sum_to) */
extern const ltl_reg ltl_reg_autograd[];  /* l_autograd.c: graph nodes, recording hook, backward engine */
extern const ltl_reg ltl_reg_fs[];        /* l_fs.c: path facts and fsync for safe saves */
extern const ltl_reg ltl_reg_zip[];       /* l_zip.c: crc32, strided storage views (PyTorch checkpoints) */
extern const ltl_reg ltl_reg_image[];     /* l_image.c: PNG encode/decode (zlib) */
extern const ltl_reg ltl_reg_combos[];    /* l_combos.c: T.combinations' index walk */
extern const ltl_reg ltl_reg_struct[];    /* l_struct.c: diagonal/flip/complex views and copies, scan kernels */
extern const ltl_reg ltl_reg_search[];    /* l_search.c: searchsorted, bincount, histograms, mode kernels */
extern const ltl_reg ltl_reg_nnfused[];   /* l_nnfused.c: fused norm / cross-entropy kernels, relu backward */
extern const ltl_reg ltl_reg_attention[]; /* l_attention.c: fused scaled dot-product attention */
extern const ltl_reg ltl_reg_optim[];     /* l_optim.c: fused optimizer update kernels */
extern const ltl_reg ltl_reg_csv[];       /* l_csv.c: CSV parsing/formatting */
extern const ltl_reg ltl_reg_progress[];  /* l_progress.c: isatty, a monotonic clock (progress bars) */
extern const ltl_reg ltl_reg_lapack[];    /* l_lapack.c: LAPACK kernels behind T.linalg (linalg/) */
extern const ltl_reg ltl_reg_rnn[];       /* l_rnn.c: recurrent layers' step loop (nn/rnn.lua) */
extern const ltl_reg ltl_reg_conv[];     /* l_conv.c: convolution, pooling, resampling kernels */
extern const ltl_reg ltl_reg_args[];      /* l_args.c: T._check_opts (ltl_check_opts for the Lua modules) */

/* Indexing entry points used by the core's __index/__newindex (l_view.c):
   stack is (t, key) / (t, key, value). */
int ltl_index(lua_State *L);
int ltl_newindex(lua_State *L);

/* ---- shared by the core binding files only (l_core.c and its parts) ---- */
#define LT_STORAGE_MT "ltensor.Storage"
/* registry keys: the addresses of these bytes (defined in l_core.c) */
extern const char ltl_key_settings, ltl_key_dtypes, ltl_key_hook, ltl_key_tensor_mt, ltl_key_storage_mt,
  ltl_key_names,   /* closure -> registered name, for argument errors */
  ltl_key_methods; /* the Tensor methods table */
void ltl_open_dtypes(lua_State *L, int module);   /* l_dtype.c: T.float32 ... and aliases */
int ltl_storage_box_gc(lua_State *L);              /* l_tensor.c: the storage box's __gc */
void ltl_alloc_open(lua_State *L, ltl_settings *S); /* l_tensor.c: S->alloc set up (luaopen) */
int ltl_opt_out(lua_State *L, const char *fname, int opts_idx, const char *const *known);   /* l_out.c */
void ltl_into_out(lua_State *L, const char *fname, int out_idx, ltensor_dtype dtype);      /* l_out.c */
int ltl_tensor_free(lua_State *L);                 /* l_free.c: t:free() / __close */
/* Releases the scratch tensors above stack index keep to the block cache
   now (they must not have escaped) and sets the top to keep. */
void ltl_drop_scratch(lua_State *L, int keep);
int ltl_tensor_index(lua_State *L);                /* l_attr.c: __index (upvalues: settings, methods, T.index) */
int ltl_tensor_newindex(lua_State *L);             /* l_attr.c: __newindex (upvalues: settings, T.setindex) */
int ltl_trampoline(lua_State *L);                  /* l_trampoline.c: the LT_DIFF wrapper */

#endif
