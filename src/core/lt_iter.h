/*
 * lt_iter.h -- TensorIterator for elementwise ops and the plan of reductions (Lua-free).
 *
 * lt_iter_ew does an elementwise op's whole build and run in one call
 * (below); the stages it goes through, usable alone for custom walks:
 *   1. lt_broadcast_shape: the common shape of the inputs (infer_size);
 *   2. the caller picks dtypes (lt_promote.h); outputs are laid out like
 *      the inputs (lt_iter_out_strides gives their strides);
 *   3. lt_iter_init: operands (outputs first, then inputs), each with the
 *      dtype the kernel wants; dims are reordered by stride and coalesced;
 *   4. lt_iter_run: calls the inner loop over runs of the innermost dim,
 *      casting operands whose dtype differs from the kernel's chunk by chunk
 *      through small stack buffers, and splitting large work across the
 *      state's pool (lt_parallel.h; grain it->grain, LT_GRAIN by default).
 *
 * The inner loop has one signature for every op and dtype:
 *   void loop(char **data, const int64_t *strides, int64_t n, void *ctx)
 * data[i]/strides[i] (bytes) per operand, outputs first.
 */
#ifndef LT_ITER_H
#define LT_ITER_H

#include <stdatomic.h>
#include <string.h>
#include "lt_tensor.h"
#include "lt_parallel.h"

#define LT_ITER_MAX_OPS 4

typedef void (*lt_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Context every kernel receives: scalar parameters and an error flag that
   kernels raise (integer division by zero) instead of trapping. */
typedef struct lt_kctx {
  int64_t i1, i2;          /* integral parameters (alpha, clamp bounds) */
  double f1, f2;           /* floating parameters */
  lt_cdouble c1;           /* complex parameter */
  int has1, has2;          /* which optional bounds are present (clamp) */
  int mode;                /* op variant */
  int heavy;               /* compute-bound kernel: counts 2 units of work per element */
  atomic_int err;          /* set by a kernel: LT_KERR_* */
} lt_kctx;
enum { LT_KERR_NONE = 0, LT_KERR_ZERODIV = 1 };

typedef struct lt_iter {
  int nops, nout;
  int ndim;                                   /* after coalescing; dim 0 is innermost */
  int64_t shape[LT_MAX_DIMS];
  int64_t strides[LT_ITER_MAX_OPS][LT_MAX_DIMS];  /* bytes */
  char *data[LT_ITER_MAX_OPS];
  ltensor_dtype dtype[LT_ITER_MAX_OPS];       /* storage dtype */
  ltensor_dtype kdtype[LT_ITER_MAX_OPS];      /* dtype the loop sees */
  ltensor_dtype via[LT_ITER_MAX_OPS];         /* inputs: rounded through this dtype on the way
                                                 (= kdtype: no intermediate) */
  int needs_cast;
  int64_t numel;
  int64_t grain;           /* elements per thread before a split (LT_GRAIN unless set) */
  lt_pool *pool;           /* the state's pool (lt_parallel.h); NULL: one thread */
} lt_iter;

/* ---- build checks of a written-to tensor (out=, in-place, copy_) -------
   Return codes, never errors: the binding words the message. */
enum { LT_OUT_OK = 0, LT_OUT_SHAPE = 1, LT_OUT_OVERLAP = 2 };
/* out must have the broadcast shape (LT_OUT_SHAPE) and must not reach one
   element through two indices (LT_OUT_OVERLAP: an expanded view). */
int lt_iter_check_out(const lt_tensor *out, int ndim, const int64_t *shape);
/* true if input in may share bytes with out (lt_may_overlap) without being
   the very same view: it must then be read through a temporary copy (the
   same view is safe: each element is read before it is written; disjoint
   slices of one buffer need no copy). */
bool lt_iter_input_aliases(const lt_tensor *in, const lt_tensor *out);

/* Element strides for a new output of the given shape whose dim order
   follows the inputs' strides (a transposed input gives a transposed
   output). */
void lt_iter_out_strides(const lt_tensor *const *ins, int nin, int ndim, const int64_t *shape,
                         int64_t *stride);

/* ---- the whole build of an elementwise op: lt_iter_ew ------------------
   One call does what PyTorch's TensorIterator build does: the broadcast
   shape of the inputs, the checks of a written-to tensor (safe cast, shape,
   internal overlap), a new output laid out like the inputs (allocated
   through the caller's callback), temporaries for inputs that alias the
   output, the casting stage (with the rounding to a 16-bit common dtype),
   dims reordered and coalesced, the small-operand fast path, the split over
   the pool, and the kernel's error flag.  It returns a status code and
   never raises; the binding words the message (`ltensor.<f>: ...`).

   Allocation: alloc(ud, dtype, ndim, shape, stride) returns a new tensor
   of that shape with the given element strides (a permutation of a dense
   layout; stride NULL: contiguous), or NULL when out of memory.  The
   binding's callback may instead not return (a Lua error): the build holds
   no resources of its own when it calls it, so nothing leaks. */
typedef lt_tensor *(*lt_iter_alloc_fn)(void *ud, ltensor_dtype dt, int ndim, const int64_t *shape,
                                      const int64_t *stride);

enum {
  LT_ITER_OK = 0,
  LT_ITER_BROADCAST,     /* inputs do not broadcast: err.a, err.b, err.dim (1-based) */
  LT_ITER_OUT_CAST,      /* the result dtype cannot be cast to out's (err.from, err.to) */
  LT_ITER_OUT_SHAPE,     /* out lacks the broadcast shape (err.ndim, err.shape) */
  LT_ITER_OUT_OVERLAP,   /* out reaches one element through two indices */
  LT_ITER_NOMEM,         /* the allocation callback returned NULL */
  LT_ITER_ZERODIV        /* the kernel raised integer division by zero */
};

typedef struct lt_iter_err {
  int64_t a, b;                  /* LT_ITER_BROADCAST: the conflicting sizes */
  int dim;                       /* ... and the 1-based result dim */
  ltensor_dtype from, to;        /* LT_ITER_OUT_CAST */
  int ndim;                      /* LT_ITER_OUT_SHAPE: the broadcast shape */
  int64_t shape[LT_MAX_DIMS];
} lt_iter_err;

typedef struct lt_iter_config {
  lt_tensor *out;                /* the written-to tensor (out=, in-place), or NULL: a new
                                    one, returned here */
  ltensor_dtype out_dtype;       /* the result dtype: a new output's, or the one checked
                                    castable to out's */
  ltensor_dtype kout;            /* the dtype the loop writes */
  int nin;                       /* inputs, at most LT_ITER_MAX_OPS - 1 */
  const lt_tensor *in[LT_ITER_MAX_OPS - 1];   /* weak scalars: 0-dim tensors, already
                                                 of their loop dtype */
  ltensor_dtype kin[LT_ITER_MAX_OPS - 1];     /* the dtype the loop reads for each */
  int round_to;                  /* a 16-bit common dtype computed in float32 (or
                                    complex32 in complex64): inputs are rounded
                                    through it (lt_iter_round_inputs); -1: none */
  lt_iter_alloc_fn alloc;
  void *alloc_ud;
  lt_pool *pool;
} lt_iter_config;

/* Build and run: fn(ctx) over the broadcast shape.  ctx->heavy picks the
   grain (a compute-bound element counts as two units).  On success
   cfg->out is the output (written to, its version bumped when it was
   given); inputs replaced by temporaries are replaced in cfg->in. */
int lt_iter_ew(lt_iter_config *cfg, lt_loop_fn fn, lt_kctx *ctx, lt_iter_err *err);

/* ops[0..nout-1] outputs (already of the full shape), then inputs (they
   broadcast to it).  kdt[i] is the dtype the loop reads/writes for op i. */
void lt_iter_init(lt_iter *it, const lt_tensor *const *ops, int nout, int nin,
                  const ltensor_dtype *kdt, int ndim, const int64_t *shape, lt_pool *pool);

void lt_iter_run(lt_iter *it, lt_loop_fn fn, void *ctx);

/* The casting stage's rounding to the common dtype: every input whose loop
   dtype is common's compute dtype and whose storage dtype is not common is
   cast storage -> common -> loop dtype (PyTorch casts inputs to the common
   dtype; with float16/bfloat16/complex32 computed in float32 that rounding
   changes results). */
void lt_iter_round_inputs(lt_iter *it, ltensor_dtype common);

/* Copy src into dst, broadcasting src to dst's shape and converting the
   dtype, through the iterator (dims reordered and coalesced, transposed
   copies in tiles).  The caller checked that the shapes broadcast; overlap
   between dst and src is the caller's (copy through a temporary). */
void lt_copy_into(lt_tensor *dst, const lt_tensor *src);
/* The same on the state's pool (NULL: one thread); the values do not depend
   on the split. */
void lt_copy_into_pool(lt_tensor *dst, const lt_tensor *src, lt_pool *pool);

/* Fill every element of dst with one value given in canonical form (a
   copy from a 0-dim source). */
void lt_fill_f64(lt_tensor *dst, double v);
void lt_fill_i64(lt_tensor *dst, int64_t v);
void lt_fill_c128(lt_tensor *dst, lt_cdouble v);

/* ---- the reduction mode of the planner ---------------------------------
   A reduction over the dims in `mask` (or a scan / softmax over one dim)
   walks two groups of in's dims: the kept ones (one output element each)
   and the reduced ones.  lt_iter_reduce_plan splits in's dims into the two
   groups, each kept in in's dim order (row-major: a running counter over
   the reduced group is the flat position argmax returns, and a new output
   holds the kept dims in row-major order), drops size-1 dims and coalesces
   neighbours that step through both operands as one dim.  Strides are in
   elements: 0 = in, 1 = the output (out_str: its strides over in's shape,
   0 on reduced dims; NULL: a contiguous output of the kept dims).  An
   empty group is one virtual dim of size 1. */
typedef struct lt_iter_red {
  int nout_d, nred_d;                         /* kept / reduced dims (>= 1 each) */
  int64_t oshape[LT_MAX_DIMS], ostr0[LT_MAX_DIMS], ostr1[LT_MAX_DIMS];  /* kept */
  int64_t ishape[LT_MAX_DIMS], istr0[LT_MAX_DIMS], istr1[LT_MAX_DIMS];  /* reduced */
  int64_t nout, nred;                         /* output elements; reduced ones per output */
} lt_iter_red;
void lt_iter_reduce_plan(lt_iter_red *p, const lt_tensor *in, const int64_t *out_str, uint32_t mask);

/* The split of a reduction over the pool, by the one grain policy (work:
   nout * nred elements, `grain` of them per thread).  Returns the parts.
   *pieces = 1: the parts cut the outputs, each output computed whole in
   one part (results do not depend on the thread count).  When the caller
   can cut a reduced run (can_cut) and there are fewer outputs than parts,
   *pieces = LT_ITER_RED_PIECES: each output's run is cut into that many
   pieces (unit u = output u / pieces, piece u % pieces) whose partial
   results the caller combines in order. */
#define LT_ITER_RED_PIECES 16
int lt_iter_reduce_parts(const lt_iter_red *p, lt_pool *pool, int64_t grain, int can_cut, int *pieces);

/* ---- the ordered walk -------------------------------------------------
   Walks whose order is part of the result (nonzero, masked_select, the
   index/gather/scatter families, where a later write to one place wins)
   cannot reorder or split dims: a row-major odometer over one shape
   carrying up to three offset streams (element strides, set by the caller
   in stride[k]; off[k] is the current offset).  Use:
     lt_odo o; lt_odo_init(&o, nd, shape); o.stride[0][d] = ...;
     if (numel > 0) do { ... o.off[k] ... } while (lt_odo_next(&o)); */
typedef struct lt_odo {
  int nd;
  int64_t shape[LT_MAX_DIMS], idx[LT_MAX_DIMS];
  int64_t stride[3][LT_MAX_DIMS];
  int64_t off[3];
} lt_odo;

static inline void lt_odo_init(lt_odo *o, int nd, const int64_t *shape) {
  memset(o, 0, sizeof *o);
  o->nd = nd;
  memcpy(o->shape, shape, sizeof(int64_t) * (size_t)nd);
}
/* The same walk over the caller's stride arrays (up to three streams, NULL
   for one not used): writes only the nd dims walked, so that a kernel can
   start one per row block.  The reduction, scan and batched-matrix walks
   use it over a plan's kept or reduced dims. */
static inline void lt_odo_init_str(lt_odo *o, int nd, const int64_t *shape, const int64_t *s0,
                                   const int64_t *s1, const int64_t *s2) {
  const int64_t *s[3] = {s0, s1, s2};
  o->nd = nd;
  for (int i = 0; i < nd; i++) {
    o->shape[i] = shape[i];
    o->idx[i] = 0;
    for (int k = 0; k < 3; k++) o->stride[k][i] = s[k] ? s[k][i] : 0;
  }
  o->off[0] = o->off[1] = o->off[2] = 0;
}
/* Jump to row-major position pos (0 <= pos < numel): a part of a split
   walk starts where its range does. */
static inline void lt_odo_seek(lt_odo *o, int64_t pos) {
  o->off[0] = o->off[1] = o->off[2] = 0;
  for (int i = o->nd - 1; i >= 0; i--) {
    int64_t n = o->shape[i], q = n > 0 ? pos % n : 0;
    pos = n > 0 ? pos / n : 0;
    o->idx[i] = q;
    for (int k = 0; k < 3; k++) o->off[k] += q * o->stride[k][i];
  }
}
/* Advance to the next index in row-major order; 0 after the last (the
   walk is then back at position 0 and can run again). */
static inline int lt_odo_next(lt_odo *o) {
  for (int i = o->nd - 1; i >= 0; i--) {
    if (++o->idx[i] < o->shape[i]) {
      for (int k = 0; k < 3; k++) o->off[k] += o->stride[k][i];
      return 1;
    }
    o->idx[i] = 0;
    for (int k = 0; k < 3; k++) o->off[k] -= o->stride[k][i] * (o->shape[i] - 1);
  }
  return 0;
}

/* ---- kernel tables (lt_k_*.c), indexed by compute dtype; NULL where the
   op does not exist for that dtype ------------------------------------- */
typedef const lt_loop_fn lt_ktable[LTENSOR_NUM_DTYPES];

/* binary, same dtype in and out */
extern lt_ktable lt_k_add, lt_k_sub, lt_k_add_alpha, lt_k_mul, lt_k_div, lt_k_div_trunc,
  lt_k_div_floor, lt_k_remainder, lt_k_fmod, lt_k_pow, lt_k_atan2, lt_k_maximum, lt_k_minimum,
  lt_k_bitwise_and, lt_k_bitwise_or, lt_k_bitwise_xor, lt_k_lshift, lt_k_rshift,
  lt_k_hypot, lt_k_copysign, lt_k_logaddexp, lt_k_logaddexp2, lt_k_xlogy;
/* binary, bool out */
extern lt_ktable lt_k_eq, lt_k_ne, lt_k_lt, lt_k_le, lt_k_gt, lt_k_ge, lt_k_logical_and,
  lt_k_logical_or, lt_k_logical_xor;
/* ternary */
extern lt_ktable lt_k_where;   /* (out T, cond bool, a T, b T) */
extern lt_ktable lt_k_lerp;    /* (out T, a T, b T, w T) */
/* unary, same dtype */
extern lt_ktable lt_k_neg, lt_k_abs, lt_k_sign, lt_k_reciprocal, lt_k_square, lt_k_sqrt,
  lt_k_rsqrt, lt_k_exp, lt_k_exp2, lt_k_expm1, lt_k_log, lt_k_log2, lt_k_log10, lt_k_log1p,
  lt_k_sin, lt_k_cos, lt_k_tan, lt_k_asin, lt_k_acos, lt_k_atan, lt_k_sinh, lt_k_cosh,
  lt_k_tanh, lt_k_sigmoid, lt_k_relu, lt_k_gelu, lt_k_gelu_tanh, lt_k_silu, lt_k_erf,
  lt_k_floor, lt_k_ceil, lt_k_round, lt_k_round_dec, lt_k_trunc, lt_k_bitwise_not, lt_k_clamp, lt_k_conj,
  lt_k_asinh, lt_k_acosh, lt_k_atanh, lt_k_erfc, lt_k_deg2rad, lt_k_rad2deg, lt_k_sinc, lt_k_frac,
  lt_k_sgn, lt_k_nan_to_num, lt_k_logit;
/* unary, bool out */
extern lt_ktable lt_k_logical_not, lt_k_isnan, lt_k_isinf, lt_k_isfinite, lt_k_signbit, lt_k_isposinf,
  lt_k_isneginf;
/* unary complex -> real (indexed by the complex dtype) */
extern lt_ktable lt_k_cabs, lt_k_angle;
/* unary real -> real angle (0 or pi) */
extern lt_ktable lt_k_angle_real;

#endif
