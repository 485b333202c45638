/*
 * lt_reduce_common.h -- the machinery shared by the reduction (lt_reduce.c),
 * scan and softmax (lt_scan.c) and sort (lt_sort.c) kernels; Lua-free,
 * private to those three files.
 *
 * The plan (the iterator planner's reduction mode), the walks of the kept
 * dims, the split over the pool, the accumulator every op starts from, and
 * the column-block runner.  Helpers are static inline: each of the three
 * files compiles the ones it uses, as when they were one file.  Including
 * this header also sets the optimisation pragma below for the rest of the
 * including file (the three files were compiled with it as one).
 */
#ifndef LT_REDUCE_COMMON_H
#define LT_REDUCE_COMMON_H

#include <math.h>
#include <string.h>
#include "lt_tensor.h"
#include "lt_parallel.h"
#include "lt_vmath.h"
#include "lt_iter.h"
#include "lt_cpu.h"


/* The build's -O2 only vectorises loops the "very cheap" cost model accepts
   (no epilogues, no if-conversion of float compares).  The fast paths below
   are written as plain lane loops for the vectoriser: ask for -O3's here;
   no-trapping-math lets it if-convert compares (results are unchanged: it
   only drops the assumption that FP exceptions trap); fp-contract=fast lets
   the AVX2+FMA variants below fuse multiply-adds (it changes nothing where
   the target has no FMA, and fused results are never less accurate). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=fast")
#endif

#define CHUNK_BYTES 4096

/* The plan of every reduction is the iterator planner's reduction mode
   (lt_iter.h): kept and reduced dim groups, coalesced. */
typedef lt_iter_red plan;
static inline void plan_init(plan *p, const lt_tensor *in, const int64_t *str1, uint32_t mask) {
  lt_iter_reduce_plan(p, in, str1, mask);
}
/* The plan of a reduction over the dims in mask, into a contiguous output. */
static inline void reduce_plan(plan *p, const lt_tensor *in, uint32_t mask) {
  lt_iter_reduce_plan(p, in, NULL, mask);
}

/* ---- walking the kept ("outer") and reduced dims ------------------------
   Both are lt_odo walks (lt_iter.h) over the plan.  The kept dims' walk
   (the first nd of them) carries the input offset in off[0] and the output
   offset in off[1]; the reduced dims' walk carries the input offset in
   off[0].  Every kept position o is row-major: lt_odo_seek(o) starts a
   part of a split there. */
static inline void outer_odo(lt_odo *o, const plan *p, int nd) {
  lt_odo_init_str(o, nd, p->oshape, p->ostr0, p->ostr1, NULL);
}
static inline void red_odo(lt_odo *o, const plan *p, int nd) {
  lt_odo_init_str(o, nd, p->ishape, p->istr0, NULL, NULL);
}

/* fn(ctx, pointer to the row's first input element, output element offset) */
typedef void (*row_fn)(void *ctx, const char *in, int64_t o);
static inline void run_rows_part(const plan *p, const lt_tensor *in, row_fn fn, void *ctx, int64_t s, int64_t e) {
  int64_t isz = (int64_t)lt_itemsize(in->dtype);
  const char *ibase = lt_data(in);
  lt_odo w;
  if (s >= e) return;
  outer_odo(&w, p, p->nout_d);
  lt_odo_seek(&w, s);
  for (int64_t o = s; o < e; o++) {
    fn(ctx, ibase + w.off[0] * isz, w.off[1]);
    lt_odo_next(&w);
  }
}
static inline void run_rows(const plan *p, const lt_tensor *in, row_fn fn, void *ctx) {
  run_rows_part(p, in, fn, ctx, 0, p->nout);
}

/* ---- threads ----------------------------------------------------------------
   Large reductions are split into contiguous ranges of independent units
   (output rows, column blocks, or pieces of one long run) run on the
   state's pool (lt_parallel.h).  Workers only read the input and write
   disjoint parts of outputs allocated before the split.  Grain: the generic
   paths and softmax spend about one unit (a nanosecond) per element; the
   vectorised sum/max/cumsum passes about an eighth of one (VEC_GRAIN). */
#define VEC_GRAIN (8 * (int64_t)LT_GRAIN)

/* Independent output units (rows, column blocks) on `parts` threads, cut
   into up to 4 chunks per thread claimed dynamically (lt_pool_run): a
   worker the scheduler starts late on a busy machine finds fewer chunks
   left, instead of the caller waiting for its fixed half.  Each output is
   computed inside one chunk, so results do not depend on the cut.  fn's
   part argument is the chunk number: not for per-part scratch. */
typedef struct split { lt_range_fn fn; void *ctx; int64_t n, k; } split;
static inline void split_chunk(void *v, int64_t c) {
  split *r = v;
  r->fn(r->ctx, r->n * c / r->k, r->n * (c + 1) / r->k, (int)c);
}
static inline void run_split(lt_pool *pool, int parts, int64_t n, lt_range_fn fn, void *ctx) {
  if (parts <= 1 || n <= 1) { fn(ctx, 0, n, 0); return; }
  split r = {fn, ctx, n, 4 * (int64_t)parts < n ? 4 * (int64_t)parts : n};
  lt_pool_run(pool, parts, r.k, split_chunk, &r);
}


enum { CLS_I, CLS_U, CLS_F, CLS_C };

typedef struct acc {
  const plan *p;
  ltensor_dtype idt, bdt;
  int cls, flag, have, done, mode;
  double f, param, corr;
  uint64_t i;
  lt_cdouble c, cparam;
  union { double f; int64_t i; uint64_t u; } best;
  int64_t bpos;
  char *out; ltensor_dtype odt; int64_t osz;
  char *out2;           /* indices (int64) */
} acc;
static inline void acc_out(acc *c, lt_tensor *out) {
  c->out = lt_data(out);
  c->odt = out->dtype;
  c->osz = (int64_t)lt_itemsize(out->dtype);
}

static inline int cls_of(ltensor_dtype d) {
  switch (lt_kind(d)) {
  case LT_KIND_COMPLEX: return CLS_C;
  case LT_KIND_FLOAT: return CLS_F;
  default: return d == LTENSOR_UINT64 ? CLS_U : CLS_I;
  }
}
static inline ltensor_dtype cls_dtype(int cls) {
  switch (cls) {
  case CLS_C: return LTENSOR_COMPLEX128;
  case CLS_F: return LTENSOR_FLOAT64;
  case CLS_U: return LTENSOR_UINT64;
  default: return LTENSOR_INT64;
  }
}

/* The common start of every op: an accumulator over plan p reading in and
   writing out (NULL: none), computing in class cls (CLS_U is folded into
   CLS_I where the op wraps like int64) with cls's buffer dtype. */
static inline void acc_start(acc *c, const plan *p, const lt_tensor *in, lt_tensor *out, int cls, int mode) {
  memset(c, 0, sizeof *c);
  c->p = p; c->idt = in->dtype; c->mode = mode; c->cls = cls;
  c->bdt = cls_dtype(cls);
  if (out) acc_out(c, out);
}
static inline int wrap_cls(ltensor_dtype d) { int k = cls_of(d); return k == CLS_U ? CLS_I : k; }

/* ---- threaded generic rows ------------------------------------------------ */
typedef struct rows_par { const plan *p; const lt_tensor *in; row_fn fn; const acc *proto; } rows_par;
static inline void rows_part(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  rows_par *r = v;
  acc c = *r->proto;   /* the callbacks keep running state in the acc: one per thread */
  run_rows_part(r->p, r->in, r->fn, &c, s, e);
}
static inline void run_rows_acc(const plan *p, const lt_tensor *in, row_fn fn, acc *c, lt_pool *pool) {
  int pieces, nt = lt_iter_reduce_parts(p, pool, LT_GRAIN, 0, &pieces);
  if (nt <= 1) { run_rows(p, in, fn, c); return; }
  rows_par r = {p, in, fn, c};
  run_split(pool, nt, p->nout, rows_part, &r);
}


/* ---- fast paths: float32/float64 in and out, unit-stride runs ---------------
   Contiguous runs are reduced in LANES independent accumulators (plain lane
   loops the compiler turns into vector code).  Float sums are blocked: a
   block of BLOCK elements is summed in T lanes (each lane adding at most
   BLOCK/LANES terms), block sums are added in double, so float32 keeps
   PyTorch-level accuracy and 2^24+ ones still sum exactly.  When the
   reduced dims are strided but the kept unit-stride dim is not ("columns"),
   up to CW adjacent outputs are accumulated at once from contiguous row
   segments, in T for CFLUSH rows at a time, then in double. */
#define LANES 16
#define BLOCK 512
/* GCC fully unrolls a constant 16-lane loop early and then fails to
   if-convert the unrolled selects (scalar compares and cmovs); kept as a
   loop it is vectorised.  Sums vectorise either way and keep the unroll. */
#if defined(__GNUC__) && !defined(__clang__)
#define LANE_LOOP _Pragma("GCC unroll 1")
#else
#define LANE_LOOP
#endif
#define CW 1024
#define CFLUSH 64

/* sticky NaN: a NaN candidate always wins, nothing beats a NaN */

#define BETTER_MAX(v, a) (((v) > (a)) | ((v) != (v)))
#define BETTER_MIN(v, a) (((v) < (a)) | ((v) != (v)))

/* exp for the softmax/logsumexp passes (arguments <= 0): lt_vmath.h's */
static inline __attribute__((always_inline)) float exp_f32(float x) { return lt_expf_nonpos(x); }
static inline double exp_f64(double x) { return exp(x); }

/* Explicit vectors (GCC and clang vector extensions, see lt_reduce.c):
   LT_VEC where they are available (not with -DLT_NO_VEC), LT_VEC_AVX2 where
   an AVX2+FMA clone is compiled beside the baseline one. */
#if defined(__GNUC__) && !defined(LT_NO_VEC)
#define LT_VEC 1
#if defined(__x86_64__) || defined(__i386__)
#define LT_VEC_AVX2 1
#endif
#endif
#ifdef LT_VEC_AVX2
/* lt_cpu.h reads what libgcc/compiler-rt detected at load.
   (An AVX-512 clone of these was slower here: rows of ~100 are too short
   for 16 lanes, and the sums and extremes are memory-bound.) */
#define HAVE_AVX2() lt_cpu_has_avx2_fma()
#define PICK(NAME, S) (HAVE_AVX2() ? NAME##_x##S : NAME##_b##S)
#else
#define HAVE_AVX2() 0
#define PICK(NAME, S) NAME##_b##S
#endif

static inline int fast_dtype(ltensor_dtype d) { return d == LTENSOR_FLOAT32 || d == LTENSOR_FLOAT64; }


/* Column blocks: when the input's unit-stride dim is kept (sum over dim 1
   of a row-major matrix, say), walking each output's reduced elements would
   stride through memory.  Instead a block of up to `cap` adjacent outputs is
   accumulated at once, reading contiguous row segments. */
typedef void (*cols_fn)(acc *c, void *accum, const void *buf, int64_t w);
static inline void cols_add_f(acc *c, void *a, const void *b, int64_t w) {
  double *x = a; const double *y = b;
  if (c->mode == 2) for (int64_t i = 0; i < w; i++) x[i] *= y[i];
  else for (int64_t i = 0; i < w; i++) x[i] += y[i];
}
static inline void cols_add_i(acc *c, void *a, const void *b, int64_t w) {
  uint64_t *x = a; const int64_t *y = b;
  if (c->mode == 2) for (int64_t i = 0; i < w; i++) x[i] *= (uint64_t)y[i];
  else for (int64_t i = 0; i < w; i++) x[i] += (uint64_t)y[i];
}
static inline void cols_add_c(acc *c, void *a, const void *b, int64_t w) {
  lt_cdouble *x = a; const lt_cdouble *y = b;
  if (c->mode == 2) for (int64_t i = 0; i < w; i++) x[i] *= y[i];
  else for (int64_t i = 0; i < w; i++) x[i] += y[i];
}

static inline int columns_apply(const plan *p, const lt_tensor *in) {
  int lo = p->nout_d - 1, li = p->nred_d - 1;
  return p->nout > 0 && p->nred > 0 && p->ostr0[lo] == 1 && p->ostr1[lo] == 1 &&
         p->istr0[li] != 1 && p->oshape[lo] >= 8 && in->ndim > 0;
}

/* The generic column walks (any dtype): element sizes, the casts into and
   out of the compute dtype, the combining step. */
typedef struct colgen {
  int64_t isz, bsz, cap;
  lt_cast_fn load, save;
  cols_fn add;
} colgen;
static inline colgen colgen_of(const acc *c) {
  colgen g;
  g.isz = (int64_t)lt_itemsize(c->idt);
  g.bsz = (int64_t)lt_itemsize(c->bdt);
  g.cap = CHUNK_BYTES / g.bsz;
  g.load = lt_cast_kernel(c->idt, c->bdt);
  g.save = lt_cast_kernel(c->bdt, c->odt);
  g.add = c->cls == CLS_F ? cols_add_f : c->cls == CLS_C ? cols_add_c : cols_add_i;
  return g;
}

/* ---- column blocks ----------------------------------------------------------
   When the reduced (or scanned) dims are strided but the kept innermost dim
   is unit-stride, blocks of up to CW adjacent outputs are worked at once
   from contiguous row segments.  Unit u is (outer position over the kept
   dims but the last, block u % nblk of bw columns); blocks are as wide as
   CW allows (whole rows stream through the prefetchers) and narrowed only
   so that every thread of the pool gets one. */
typedef struct colrun colrun;
/* one column block: input offset o0, output offset o1, w columns; c is the
   part's copy of the op's acc (softmax's fallback rows keep running state) */
typedef void (*col_unit_fn)(const colrun *r, acc *c, int64_t o0, int64_t o1, int64_t w);
struct colrun {
  const plan *p;
  const lt_tensor *in;
  const struct acc *proto;   /* softmax, cumsum: the op's settings */
  struct fastv *f;           /* value reductions */
  col_unit_fn unit;          /* value reduction, softmax or cumsum */
  int64_t width, bw, nblk;
};

/* the one column-block runner: value reductions, softmax, cumsum.  Unit u
   is block u % nblk of the columns at position u / nblk of the kept dims
   before the last (walk w). */
static inline void cols_part(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  colrun *r = v;
  acc c = {0};
  lt_odo w;
  if (r->proto) c = *r->proto;   /* softmax's fallback rows keep running state in it */
  if (s >= e) return;
  outer_odo(&w, r->p, r->p->nout_d - 1);
  lt_odo_seek(&w, s / r->nblk);
  for (int64_t u = s; u < e; u++) {
    int64_t j = (u % r->nblk) * r->bw, bw = r->width - j < r->bw ? r->width - j : r->bw;
    r->unit(r, &c, w.off[0] + j, w.off[1] + j, bw);
    if ((u + 1) % r->nblk == 0) lt_odo_next(&w);
  }
}
static inline void run_cols(colrun *r, lt_pool *pool, int64_t grain) {
  const plan *p = r->p;
  r->width = p->oshape[p->nout_d - 1];
  int64_t outer = p->nout / r->width, vec = (r->width + 15) / 16;
  int parts = lt_parallel_parts(pool, p->nout * p->nred, grain, outer * vec);
  int64_t nblk = (r->width + CW - 1) / CW;
  /* a few blocks per thread (each at least 64 columns): the threads claim
     them as they go, so a thread the scheduler runs late (or on the
     caller's core) leaves its blocks to the others instead of making them
     wait */
  int64_t want = 4 * (int64_t)parts, maxblk = (r->width + 63) / 64;
  if (want > maxblk) want = maxblk;
  if (parts > 1 && outer * nblk < want) nblk = (want + outer - 1) / outer;
  r->bw = ((r->width + nblk - 1) / nblk + 15) / 16 * 16;
  r->nblk = (r->width + r->bw - 1) / r->bw;
  int64_t units = outer * r->nblk;
  run_split(pool, parts < units ? parts : (int)units, units, cols_part, r);
}

/* softmax / log_softmax of one contiguous float32/float64 row (lt_reduce.c,
   beside the max and exp-sum kernels it shares with amax and logsumexp);
   0 (nothing written) when the row's max is not finite. */
int lt_softmax_row_f32(const float *x, float *y, int64_t n, int is_log);
int lt_softmax_row_f64(const double *x, double *y, int64_t n, int is_log);

#endif
