/* l_conv.c -- the binding of the convolution, pooling and interpolation
 * kernels (lt_conv.h).
 *
 * These are the raw building blocks of T.nn.functional's conv*, *pool* and
 * interpolate (lua/ltensor/nn/conv.lua, nn/functional/), which check the user's arguments,
 * give PyTorch's messages and arrange 1-D and unbatched inputs as NCHW:
 *   T._conv_small(big, w, bias|nil, sh, sw, ph, pw, dh, dw, groups, Hs, Ws)
 *   T._conv_big(small, w, bias|nil, sh, sw, ph, pw, dh, dw, groups, Hb, Wb)
 *     (_conv_small/_conv_big: a 13th argument, for specs, forces the Winograd path where it
 *     applies (true) or the im2col one (false))
 *   T._conv_wgrad(big, small, kh, kw, sh, sw, ph, pw, dh, dw, groups)
 *   T._max_pool2d(x, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo [, want_idx = true]) -> out [, idx]
 *     (want_idx "codes", for 2x2 windows of stride 2 inside the input only: idx is a uint8 tensor
 *     of winning taps 0..3, what autograd keeps when the user did not ask for the indices)
 *   T._max_pool_bwd(gout, idx, Hi, Wi [, tiled]) (tiled: the windows were 2x2, stride 2, unpadded;
 *     uint8 idx: the codes, tiled only)
 *   T._avg_pool2d(x, kh, kw, sh, sw, ph, pw, Ho, Wo, count_include_pad, divisor)
 *   T._avg_pool2d_bwd(gout, Hi, Wi, kh, kw, sh, sw, ph, pw, count_include_pad, divisor)
 *   T._adaptive_avg_pool2d(x, Ho, Wo), T._adaptive_avg_pool2d_bwd(gout, Hi, Wi)
 *   T._adaptive_max_pool2d(x, Ho, Wo) -> out, idx
 *   T._interp(x, Ho, Wo, mode, align_corners, scale_h, scale_w [, copy]), T._interp_bwd(gout, Hi, Wi, ...)
 *     (mode 0 nearest, 1 linear, 2 bicubic, 3 nearest-exact; copy 1/2/3: the H/W/both axes are
 *     ones the caller added, of equal sizes, read in place)
 * Shapes given here are trusted to be consistent (lua/ltensor/nn/functional/ derives them);
 * they are still checked, so that a wrong call raises instead of reading out
 * of bounds.  The differentiable ones (LT_DIFF) get their backward rules in
 * lua/ltensor/nn/functional/.
 */
#include <limits.h>
#include <string.h>
#include "l_lua.h"
#include "lt_gemm_tiles.h"   /* LT_GEMM_SERIAL_MNK: the size above which K is cut by K alone */
#include "lt_conv.h"
#include "lt_parallel.h"

/* ---- parallel ranges ---------------------------------------------------------
   The one place that decides how conv/pool work is split: parts on the
   state's shared pool (lt_parallel.h), only for work large enough to pay
   for a hand-off. */
typedef lt_range_fn range_fn;
#define PAR_MIN_WORK 2000000.0  /* flops per extra part: ~20 us of gemm (below, the hand-off ate the gain) */
/* The weight gradient sums per-part partial results, so its part count
   changes the rounding: it keeps the threshold it always had, and a given
   thread count gives the same bits as before. */
#define WGRAD_MIN_WORK 4000000.0

static int par_threads_min(lua_State *L, int64_t n, double work, double min_work) {
  int nt = lt_pool_threads(ltl_settings_of(L)->pool);
  if ((double)nt > work / min_work) nt = (int)(work / min_work);
  if (nt > n) nt = (int)n;
  return nt < 1 ? 1 : nt;
}
static int par_threads(lua_State *L, int64_t n, double work) { return par_threads_min(L, n, work, PAR_MIN_WORK); }

/* parts for a memory-bound loop over n planes touching `elements` values
   (pooling, its backward): the library's grain policy (lt_parallel.h) */
static int par_threads_mem(lua_State *L, int64_t n, double elements) {
  return lt_parallel_parts(ltl_settings_of(L)->pool, (int64_t)elements, LT_GRAIN, n);
}

/* Parts for work that nt threads share when the parts are independent (no
   per-part partial sums): a few per thread, so that a worker which wakes
   late (it sleeps after 1 ms without work, and a wake-up on this VM can
   take longer than a part) still finds parts left instead of the caller
   doing all of them. */
#define PARTS_SCRATCH_MAX ((int64_t)1 << 26)   /* the extra parts' scratch stays under 64 MB */
static int parts_of(int nt, int64_t items, int64_t scratch_bytes) {
  if (nt <= 1) return 1;
  int64_t c = 4 * (int64_t)nt;
  if (scratch_bytes > 0 && c * scratch_bytes > PARTS_SCRATCH_MAX) c = PARTS_SCRATCH_MAX / scratch_bytes;
  if (c < nt) c = nt;
  return (int)(c < items ? c : items);
}

/* fn over [0, n) in nt parts (part t: [n*t/nt, n*(t+1)/nt)) */
static void par_run(lua_State *L, int nt, int64_t n, range_fn fn, void *ctx) {
  if (nt <= 1 || n <= 1) { fn(ctx, 0, n, 0); return; }
  lt_parallel_run(ltl_settings_of(L)->pool, nt, n, fn, ctx);
}

/* ---- argument helpers ---------------------------------------------------------- */
/* The float tensor at idx, contiguous (a copy replaces it on the stack). */
static lt_tensor *float_arg(lua_State *L, int idx, const char *fname, int ndim) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != LTENSOR_FLOAT32 && t->dtype != LTENSOR_FLOAT64)
    ltl_error(L, fname, "expected a float32 or float64 tensor, got %s", lt_dtypes[t->dtype].name);
  if (ndim && t->ndim != ndim) ltl_error(L, fname, "expected a %d-D tensor, got %d-D", ndim, t->ndim);
  if (!lt_is_contiguous(t)) {
    t = ltl_push_clone(L, t);   /* contiguous */
    lua_replace(L, idx);
  }
  return t;
}
static int64_t int_arg(lua_State *L, int idx, const char *fname, int64_t min) {
  lua_Integer v = ltl_checkinteger(L, idx);
  if (v < min || v > INT_MAX) ltl_error(L, fname, "bad argument #%d (%I out of range)", idx, v);
  return (int64_t)v;
}
static lt_tensor *push_zeros(lua_State *L, ltensor_dtype dt, int ndim, const int64_t *shape) {
  lt_tensor *t = ltl_push_new(L, dt, ndim, shape);
  memset(lt_data(t), 0, (size_t)lt_numel(t) * lt_itemsize(dt));
  return t;
}
/* BLAS takes 32-bit sizes: refuse anything a gemm dimension could overflow. */
static void blas_sizes(lua_State *L, const char *fname, const lt_conv_geom *g) {
  int64_t K = g->Cb * g->kh * g->kw, Ls = g->Hs * g->Ws, Lb = g->Hb * g->Wb;
  if (K > INT_MAX || Ls > INT_MAX || Lb > INT_MAX || g->Cs > INT_MAX)
    ltl_error(L, fname, "convolution too large for BLAS");
}

/* ---- convolution ----------------------------------------------------------------- */
typedef struct {
  const lt_conv_geom *g;
  const void *a, *w, *bias;
  void *out;
  char *scratch;
  size_t scratch_bytes;
  void *prep;   /* lt_conv_multi_prep's blocks, or NULL */
  int to_small;
} conv_job;
static void small_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  conv_job *j = (conv_job *)ctx;
  lt_conv_small(j->g, j->a, j->w, j->bias, j->out, j->prep, j->scratch + (size_t)tid * j->scratch_bytes, lo, hi);
}
static void multi_prep_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  conv_job *j = (conv_job *)ctx;
  (void)tid;
  lt_conv_multi_prep(j->g, j->to_small, j->a, j->prep, lo, hi);
}
static void big_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  conv_job *j = (conv_job *)ctx;
  lt_conv_big(j->g, j->a, j->w, j->bias, j->out, j->prep, j->scratch + (size_t)tid * j->scratch_bytes, lo, hi);
}

/* Reads (x, w, bias, sh, sw, ph, pw, dh, dw, groups, H, W) and fills the
   geometry; `to_small` says whether x is the big image. */
static void conv_args(lua_State *L, const char *fname, int to_small, lt_conv_geom *g, lt_tensor **x,
                      lt_tensor **w, lt_tensor **b) {
  *x = float_arg(L, 1, fname, 4);
  *w = float_arg(L, 2, fname, 4);
  *b = lua_isnoneornil(L, 3) ? NULL : float_arg(L, 3, fname, 1);
  int64_t sh = int_arg(L, 4, fname, 1), sw = int_arg(L, 5, fname, 1);
  int64_t ph = int_arg(L, 6, fname, 0), pw = int_arg(L, 7, fname, 0);
  int64_t dh = int_arg(L, 8, fname, 1), dw = int_arg(L, 9, fname, 1);
  int64_t G = int_arg(L, 10, fname, 1);
  int64_t H = int_arg(L, 11, fname, 0), W = int_arg(L, 12, fname, 0);
  lt_tensor *X = *x, *Wt = *w;
  if (X->dtype != Wt->dtype || (*b && (*b)->dtype != X->dtype))
    ltl_error(L, fname, "expected input, weight and bias of one dtype");
  if (Wt->shape[0] % G) ltl_error(L, fname, "weight's first dim is not divisible by groups");
  g->dt = X->dtype;
  g->N = X->shape[0];
  g->G = G;
  g->kh = Wt->shape[2];
  g->kw = Wt->shape[3];
  g->sh = sh; g->sw = sw; g->ph = ph; g->pw = pw; g->dh = dh; g->dw = dw;
  g->Cs = Wt->shape[0] / G;
  g->Cb = Wt->shape[1];
  if (to_small) {
    if (X->shape[1] != g->Cb * G) ltl_error(L, fname, "input channels do not match the weight");
    g->Hb = X->shape[2]; g->Wb = X->shape[3]; g->Hs = H; g->Ws = W;
  } else {
    if (X->shape[1] != g->Cs * G) ltl_error(L, fname, "input channels do not match the weight");
    g->Hs = X->shape[2]; g->Ws = X->shape[3]; g->Hb = H; g->Wb = W;
  }
  if (*b && (*b)->shape[0] != (to_small ? g->Cs : g->Cb) * G) ltl_error(L, fname, "bias has the wrong size");
  /* (im2col and col2im clip every window to the big image, so any sizes
     are safe to run) */
  blas_sizes(L, fname, g);
  lua_settop(L, 12);
}

/* every pixel of out (N, C, P) = bias[c] (or 0) */
static void fill_bias(lt_tensor *out, const lt_tensor *b) {
  int64_t N = out->shape[0], C = out->shape[1], P = out->shape[2] * out->shape[3];
  if (!b) { memset(lt_data(out), 0, (size_t)lt_numel(out) * lt_itemsize(out->dtype)); return; }
  int f32 = out->dtype == LTENSOR_FLOAT32;
  float *of = (float *)(void *)lt_data(out);
  double *od = (double *)(void *)lt_data(out);
  const float *bf = (const float *)(const void *)lt_data(b);
  const double *bd = (const double *)(const void *)lt_data(b);
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < P; p++) {
        if (f32) of[(n * C + c) * P + p] = bf[c];
        else od[(n * C + c) * P + p] = bd[c];
      }
}

/* scratch for nt workers, left on the stack */
static char *push_scratch_n(lua_State *L, const lt_conv_geom *g, int64_t n, int nt, size_t *per) {
  *per = (size_t)n * lt_itemsize(g->dt);
  if (n == 0) return NULL;
  int64_t shape[1] = { n * nt };
  return lt_data(ltl_push_new(L, g->dt, 1, shape));
}
static char *push_scratch(lua_State *L, const lt_conv_geom *g, int nt, size_t *per) {
  return push_scratch_n(L, g, lt_conv_scratch(g), nt, per);
}

/* channel slices of several image groups (lt_conv_multi_prep): the im2col
   or gathered grids made once, split over the pool, before the parts */
static void multi_prep(lua_State *L, conv_job *j, int to_small, int slices) {
  int64_t items = lt_conv_multi_prep_items(j->g);
  if (slices <= 1 || items == 0) return;
  int64_t n = lt_conv_multi_prep_size(j->g, to_small);
  size_t bytes;
  j->prep = push_scratch_n(L, j->g, n, 1, &bytes);
  j->to_small = to_small;
  par_run(L, par_threads_mem(L, items, (double)n), items, multi_prep_range, j);
}
static void dw_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  conv_job *j = (conv_job *)ctx;
  lt_conv_dw(j->g, j->a, j->w, j->bias, j->out, j->scratch + (size_t)tid * j->scratch_bytes, lo, hi);
}

/* Fewer blocks than a few per thread (a batch of 1, or 2 on 2 threads):
   cut each image into row blocks of at least SPLIT_MIN_COLS columns (no
   extra work), then, for layers of few rows and many channels (512 x 7x7),
   into slices of at least 32 output channels (each slice builds its own
   im2col: one copy per 32+ multiply-adds). */
#define SPLIT_MIN_COLS 96
static void split_small(lt_conv_geom *g, int nt) {
  int64_t want = 4 * (int64_t)nt, items = lt_conv_small_items(g), ng = g->N * g->G;
  if (items >= want || ng <= 0 || g->Hs <= 0 || g->Ws <= 0) return;
  int64_t minrows = (SPLIT_MIN_COLS + g->Ws - 1) / g->Ws, per = (want + ng - 1) / ng;
  int64_t blocks = g->Hs / (minrows > 0 ? minrows : 1);
  if (blocks > per) blocks = per;
  if (blocks > (g->Hs + lt_conv_rows(g) - 1) / lt_conv_rows(g)) g->col_rows = (g->Hs + blocks - 1) / blocks;
  items = lt_conv_small_items(g);
  if (items >= want) return;
  int64_t cs = (want + items - 1) / items;
  if (cs > g->Cs / 32) cs = g->Cs / 32;
  g->cs_parts = cs > 1 ? cs : 1;
}

/* depthwise: a direct kernel over (sample, group) planes, memory-bound
   (a few FMAs per value read), so split by the memory grain */
static void conv_dw(lua_State *L, const lt_conv_geom *g, lt_tensor *x, lt_tensor *w, lt_tensor *b, lt_tensor *out) {
  int64_t items = g->N * g->G, per = lt_conv_dw_scratch(g);
  int nt = par_threads_mem(L, items, (double)lt_numel(out) * (double)(g->kh * g->kw) / 4 + (double)lt_numel(x));
  nt = parts_of(nt, items, per * (int64_t)lt_itemsize(g->dt));
  conv_job j = { g, lt_data(x), lt_data(w), b ? lt_data(b) : NULL, lt_data(out), NULL, (size_t)per * lt_itemsize(g->dt),
                 NULL, 1 };
  int64_t shape[1] = { per * nt };
  j.scratch = lt_data(ltl_push_new(L, g->dt, 1, shape));
  par_run(L, nt, items, dw_range, &j);
}

/* ---- Winograd (lt_conv_wino.c) ------------------------------------------------
   Where it wins, measured at one thread (bench/README.md, "2026-11-28,
   Winograd"): enough channels that the 36 products, not the input and
   output transforms (per tile and channel), dominate -- 32 -> 32 channels
   at 56x56 ran at 0.85x of im2col -- and enough tiles per call to repay the
   weight transform (per call, Cs x Cb x 36 floats): 256 -> 256 at 14x14
   (16 tiles) ran at 0.8x, 128 -> 128 at 28x28 (49 tiles) at 1.27x. */
#define WINO_MIN_C 64
#define WINO_MIN_TILES 48
static int wino_use(const lt_conv_geom *g, int force) {
  if (!lt_wino_ok(g)) return 0;
  if (force >= 0) return force;
  return g->Cb >= WINO_MIN_C && g->Cs >= WINO_MIN_C && lt_wino_tiles(g) >= WINO_MIN_TILES;
}
/* the 13th argument of _conv_small/_conv_big (specs): true forces the
   Winograd path where it applies, false the im2col one; nil: the dispatch */
static int wino_force(lua_State *L) { return lua_isnoneornil(L, 13) ? -1 : lua_toboolean(L, 13); }

/* x and w all finite (Winograd's transforms would spread a NaN or inf to
   outputs the direct sum keeps finite): a scan of both, split over the pool
   like any memory-bound pass (on the caller alone it was 2.5% of a batch-1
   resnet18 pass's main thread) */
typedef struct {
  const float *x, *w;
  int64_t nx, nw;
  int bad[LT_MAX_THREADS];
} finite_job;
static void finite_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  finite_job *j = (finite_job *)ctx;
  int bad = 0;
  if (lo < j->nx) bad |= !lt_wino_finite(j->x + lo, (hi < j->nx ? hi : j->nx) - lo);
  if (hi > j->nx) {
    int64_t a = lo > j->nx ? lo - j->nx : 0;
    bad |= !lt_wino_finite(j->w + a, hi - j->nx - a);
  }
  j->bad[tid] = bad;
}
static int wino_finite(lua_State *L, const lt_tensor *x, const lt_tensor *w) {
  finite_job j = { (const float *)(const void *)lt_data(x), (const float *)(const void *)lt_data(w), lt_numel(x),
                   lt_numel(w), {0} };
  int64_t n = j.nx + j.nw;
  int parts = par_threads_mem(L, n, (double)n);
  par_run(L, parts, n, finite_range, &j);
  for (int t = 0; t < parts; t++)
    if (j.bad[t]) return 0;
  return 1;
}

typedef struct {
  const lt_conv_geom *g;
  const float *x, *U, *bias;
  float *out, *scratch;
  int64_t per, block;
} wino_job;
static void wino_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  wino_job *j = (wino_job *)ctx;
  lt_wino_run(j->g, j->x, j->U, j->bias, j->out, j->scratch + tid * j->per, j->block, lo, hi);
}
typedef struct {
  const lt_conv_geom *g;
  const float *w;
  float *U, *tmp;
  int flip;
} wino_wjob;
static void wino_wrange(void *ctx, int64_t lo, int64_t hi, int tid) {
  wino_wjob *j = (wino_wjob *)ctx;
  lt_wino_weights(j->g, j->w, j->flip, j->U, j->tmp + (int64_t)tid * 27 * j->g->Cb, lo, hi);
}
/* out = conv(x) through Winograd with weights w (flip: w is the weight of
   the conv whose input gradient this is); buffers left on the stack.  The
   weight transform (36 x Cs x Cb floats written, per call) is split over
   the pool too: done by the caller alone it was the serial part that kept
   two threads at 1.1x of one on 28x28 and 14x14 planes. */
static void conv_wino(lua_State *L, const lt_conv_geom *g, lt_tensor *x, lt_tensor *w, int flip, lt_tensor *b,
                      lt_tensor *out) {
  double work = 2.0 * (double)lt_numel(out) * (double)(g->Cb * 9) / 4;
  int nt = par_threads(L, INT64_MAX, work);
  int64_t block = lt_wino_block(g, nt), items = (lt_wino_tiles(g) + block - 1) / block;
  int wt = par_threads_mem(L, g->Cs, 36.0 * (double)g->Cs * (double)g->Cb);
  nt = par_threads(L, items, work);
  int64_t per = lt_wino_scratch(g, block);
  nt = parts_of(nt, items, per * 4);
  int64_t ushape[1] = { 36 * g->Cs * g->Cb + 27 * g->Cb * (int64_t)wt }, sshape[1] = { per * nt };
  float *U = (float *)(void *)lt_data(ltl_push_new(L, LTENSOR_FLOAT32, 1, ushape));
  wino_wjob wj = { g, (const float *)(const void *)lt_data(w), U, U + 36 * g->Cs * g->Cb, flip };
  par_run(L, wt, g->Cs, wino_wrange, &wj);
  wino_job j = { g, (const float *)(const void *)lt_data(x), U, b ? (const float *)(const void *)lt_data(b) : NULL,
                 (float *)(void *)lt_data(out), NULL, per, block };
  j.scratch = (float *)(void *)lt_data(ltl_push_new(L, LTENSOR_FLOAT32, 1, sshape));
  par_run(L, nt, items, wino_range, &j);
}

/* batch-1, one-group convs (lt_conv_shared_*): the im2col once, split by
   small rows, then the product split by output channels -- a few parts
   per thread, at least 16 channels each */
typedef struct {
  const lt_conv_geom *g;
  const void *x, *w, *b;
  void *col, *out;
} shared_job;
static void shared_col_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  shared_job *j = (shared_job *)ctx;
  (void)tid;
  lt_conv_shared_col(j->g, j->x, j->col, lo, hi);
}
static void shared_gemm_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  shared_job *j = (shared_job *)ctx;
  (void)tid;
  lt_conv_shared_gemm(j->g, j->w, j->col, j->b, j->out, lo, hi);
}
/* parts for the product: a few per thread, each over 4 x LT_GEMM_SERIAL_MNK
   multiply-adds, where lt_gemm_tiles cuts K by K alone, so that every
   output sums its terms in the order of one thread's single product (the
   result does not depend on the thread count); 0 when that leaves fewer
   parts than threads */
static int shared_parts(const lt_conv_geom *g, int nt) {
  double macs = (double)g->Cs * (double)(g->Hs * g->Ws) * (double)(g->Cb * g->kh * g->kw);
  double most = macs / (4.0 * LT_GEMM_SERIAL_MNK);
  int64_t parts = 4 * (int64_t)nt;
  if ((double)parts > most) parts = (int64_t)most;
  if (parts > g->Cs / 16) parts = g->Cs / 16;
  return parts >= nt ? (int)parts : 0;
}
static void conv_shared(lua_State *L, const lt_conv_geom *g, lt_tensor *x, lt_tensor *w, lt_tensor *b,
                        lt_tensor *out, int nt, int parts) {
  int64_t shape[1] = { g->Cb * g->kh * g->kw * g->Hs * g->Ws };
  shared_job j = { g, lt_data(x), lt_data(w), b ? lt_data(b) : NULL, NULL, lt_data(out) };
  j.col = lt_data(ltl_push_new(L, g->dt, 1, shape));
  par_run(L, nt < g->Hs ? nt : (int)g->Hs, g->Hs, shared_col_range, &j);
  par_run(L, parts, g->Cs, shared_gemm_range, &j);
}

static int l_conv_small(lua_State *L) {
  lt_conv_geom g = {0};
  lt_tensor *x, *w, *b;
  int force = wino_force(L);
  conv_args(L, "_conv_small", 1, &g, &x, &w, &b);
  int64_t shape[4] = { g.N, g.Cs * g.G, g.Hs, g.Ws };
  lt_tensor *out = ltl_push_new(L, g.dt, 4, shape);
  if (lt_numel(out) == 0) return 1;
  if (g.Cb * g.kh * g.kw == 0) { fill_bias(out, b); return 1; }   /* no input channels */
  if (lt_conv_dw_ok(&g)) {
    conv_dw(L, &g, x, w, b, out);
    ltl_drop_scratch(L, 13);
    return 1;
  }
  if (wino_use(&g, force) && wino_finite(L, x, w)) {
    conv_wino(L, &g, x, w, 0, b, out);
    ltl_drop_scratch(L, 13);
    return 1;
  }
  double work = 2.0 * (double)lt_numel(out) * (double)(g.Cb * g.kh * g.kw);
  int nt = par_threads(L, INT64_MAX, work);
  int sparts = nt > 1 && lt_conv_shared_ok(&g) ? shared_parts(&g, nt) : 0;
  if (sparts) {
    conv_shared(L, &g, x, w, b, out, nt, sparts);
    ltl_drop_scratch(L, 13);
    return 1;
  }
  if (nt > 1) split_small(&g, nt);
  int64_t items = lt_conv_small_items(&g);
  nt = par_threads(L, items, work);
  nt = parts_of(nt, items, lt_conv_scratch(&g) * (int64_t)lt_itemsize(g.dt));   /* (each part its own scratch) */
  conv_job j = { &g, lt_data(x), lt_data(w), b ? lt_data(b) : NULL, lt_data(out), NULL, 0, NULL, 1 };
  j.scratch = push_scratch(L, &g, nt, &j.scratch_bytes);
  if (nt > 1) multi_prep(L, &j, 1, (int)g.cs_parts);
  par_run(L, nt, items, small_range, &j);
  ltl_drop_scratch(L, 13);
  return 1;
}

/* The input gradient of a depthwise stride-1 conv (one small channel per
   group) is the depthwise conv of the small grid with the kernel flipped and
   padding k-1-p: lt_conv_dw.  1 when done (out on the stack's top). */
static int dw_big(lua_State *L, const lt_conv_geom *g, lt_tensor *x, lt_tensor *w, lt_tensor *b, lt_tensor *out) {
  if (!lt_conv_dw_ok(g) || g->Cs != 1 || g->sh != 1 || g->sw != 1) return 0;
  lt_conv_geom f = *g;
  f.Hb = g->Hs; f.Wb = g->Ws; f.Hs = g->Hb; f.Ws = g->Wb;
  f.ph = g->kh - 1 - g->ph; f.pw = g->kw - 1 - g->pw;
  if (!lt_conv_dw_ok(&f)) return 0;
  lt_tensor *wf = ltl_push_new(L, g->dt, 4, w->shape);
  int64_t taps = g->kh * g->kw, sz = (int64_t)lt_itemsize(g->dt);
  const char *src = lt_data(w);
  char *dst = lt_data(wf);
  for (int64_t c = 0; c < g->G; c++)
    for (int64_t t = 0; t < taps; t++) memcpy(dst + (c * taps + t) * sz, src + (c * taps + taps - 1 - t) * sz, (size_t)sz);
  conv_dw(L, &f, x, wf, b, out);
  ltl_drop_scratch(L, 13);
  return 1;
}

/* The input gradient of a stride-1 3x3 conv is the stride-1 conv of the
   small grid with the weights transposed and flipped and padding 2-p:
   Winograd where it applies (1 when done). */
static int wino_big(lua_State *L, const lt_conv_geom *g, lt_tensor *x, lt_tensor *w, lt_tensor *b, lt_tensor *out,
                    int force) {
  if (g->ph > 2 || g->pw > 2) return 0;
  lt_conv_geom f = *g;
  f.Cb = g->Cs; f.Cs = g->Cb;
  f.Hb = g->Hs; f.Wb = g->Ws; f.Hs = g->Hb; f.Ws = g->Wb;
  f.ph = 2 - g->ph; f.pw = 2 - g->pw;
  if (!wino_use(&f, force) || !wino_finite(L, x, w)) return 0;
  conv_wino(L, &f, x, w, 1, b, out);
  ltl_drop_scratch(L, 13);
  return 1;
}

/* The narrowest product a part of g runs (its column count): the last
   row block of lt_conv_rows, the last group of lt_conv_nimg images. */
static double narrowest_cols(const lt_conv_geom *g) {
  int64_t rows = lt_conv_rows(g), ni = lt_conv_nimg(g);
  int64_t last_rows = g->Hs % rows ? g->Hs % rows : rows, last_imgs = g->N % ni ? g->N % ni : ni;
  return (double)(last_rows * g->Ws * last_imgs);
}

/* Slices of the big channels for `want` parts: at most want, at least
   SPLIT_MIN_CB channels each, and each slice's narrowest product over
   4 x LT_GEMM_SERIAL_MNK multiply-adds, so that it sums every value as the
   whole call does (the same bits at any thread count).  Shared by the input
   gradient's and the weight gradient's splits. */
#define SPLIT_MIN_CB 16
static int64_t big_channel_parts(const lt_conv_geom *g, int64_t want) {
  int64_t parts = want, most = g->Cb / SPLIT_MIN_CB;
  if (parts > most) parts = most;
  double cols = narrowest_cols(g);
  /* the smallest slice has Cb / parts channels (rounded down) */
  while (parts > 1 && (double)(g->Cb / parts) * (double)(g->kh * g->kw) * (double)g->Cs * cols <= 4.0 * LT_GEMM_SERIAL_MNK)
    parts--;
  return parts > 1 ? parts : 1;
}

/* Fewer items (image groups) than a few per thread -- resnet18's 7x7 and
   4x4 layers at batch 8 have 3 and 1, which left the input gradient to one
   thread -- : each item cut into slices of the big channels. */
static void split_big(lt_conv_geom *g, int nt) {
  int64_t items = lt_conv_big_items(g), want = 4 * (int64_t)nt;
  if (items >= want || items <= 0) return;
  g->cb_parts = big_channel_parts(g, (want + items - 1) / items);
}

static int l_conv_big(lua_State *L) {
  lt_conv_geom g = {0};
  lt_tensor *x, *w, *b;
  int force = wino_force(L);
  conv_args(L, "_conv_big", 0, &g, &x, &w, &b);
  int64_t shape[4] = { g.N, g.Cb * g.G, g.Hb, g.Wb };
  lt_tensor *out = ltl_push_new(L, g.dt, 4, shape);   /* the kernel writes every element */
  if (lt_numel(out) == 0) return 1;
  if (dw_big(L, &g, x, w, b, out)) return 1;
  if (wino_big(L, &g, x, w, b, out, force)) return 1;
  double work = 2.0 * (double)(g.N * g.G * g.Cs * g.Hs * g.Ws) * (double)(g.Cb * g.kh * g.kw);
  int nt = par_threads(L, INT64_MAX, work);
  if (nt > 1) split_big(&g, nt);
  int64_t items = lt_conv_big_items(&g);
  int64_t per = lt_conv_big_scratch(&g);
  nt = parts_of(par_threads(L, items, work), items, per * (int64_t)lt_itemsize(g.dt));
  conv_job j = { &g, lt_data(x), lt_data(w), b ? lt_data(b) : NULL, lt_data(out), NULL, 0, NULL, 0 };
  j.scratch = push_scratch_n(L, &g, per, nt, &j.scratch_bytes);
  if (nt > 1) multi_prep(L, &j, 0, (int)g.cb_parts);
  /* (as _conv_small: an empty kernel has no rows to gemm) */
  if (g.Cs > 0 && g.Hs * g.Ws > 0 && g.kh * g.kw > 0) par_run(L, nt, items, big_range, &j);
  else fill_bias(out, b);   /* nothing from the input reaches the output */
  ltl_drop_scratch(L, 13);
  return 1;
}

typedef struct {
  const lt_conv_geom *g;
  const void *big, *small;
  char *scratch, *partial;
  size_t scratch_bytes;
  int64_t gw_numel, N;
  int nt;
  char *gw0;
  void *prep;   /* lt_conv_wgrad_prep's blocks, or NULL */
} wgrad_job;
/* item t of nt: samples [t*N/nt, (t+1)*N/nt) into gw (t = 0) or partial t */
static void wgrad_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  wgrad_job *j = (wgrad_job *)ctx;
  (void)tid;
  for (int64_t t = lo; t < hi; t++) {
    int64_t a = t * j->N / j->nt, b = (t + 1) * j->N / j->nt;
    char *dst = t == 0 ? j->gw0 : j->partial + (size_t)(t - 1) * (size_t)j->gw_numel * lt_itemsize(j->g->dt);
    lt_conv_wgrad(j->g, j->big, j->small, NULL, dst, j->scratch + (size_t)t * j->scratch_bytes, a, b, 0, j->g->Cb);
  }
}
/* part p of j->nt: the big channels [Cb*p/nt, Cb*(p+1)/nt) over all samples, straight into gw */
static void wgrad_ch_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  wgrad_job *j = (wgrad_job *)ctx;
  int64_t cb = j->g->Cb;
  for (int64_t p = lo; p < hi; p++)
    lt_conv_wgrad(j->g, j->big, j->small, j->prep, j->gw0, j->scratch + (size_t)tid * j->scratch_bytes, 0, j->N,
                  cb * p / j->nt, cb * (p + 1) / j->nt);
}
static void wgrad_prep_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  wgrad_job *j = (wgrad_job *)ctx;
  (void)tid;
  lt_conv_wgrad_prep(j->g, j->small, j->prep, lo, hi);
}
/* Parts by big channels for nt threads, 0 when the weight gradient should
   split its samples instead.  Each part is a slice of gw's columns over all
   samples: no partial sums to add up after (the serial sum of a 512 -> 512
   layer's 2.4M-value partials ran on the caller alone), and the parts can
   outnumber the threads without changing a bit (a worker that wakes late
   finds parts left).  The output gradient's transposed blocks are made once
   for all parts (lt_conv_wgrad_prep). */
static int wgrad_ch_parts(const lt_conv_geom *g, int nt) {
  if (nt <= 1) return 0;
  int64_t parts = big_channel_parts(g, 4 * (int64_t)nt);
  return parts >= nt ? (int)parts : 0;
}

static void dw_wgrad_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  wgrad_job *j = (wgrad_job *)ctx;
  lt_conv_dw_wgrad(j->g, j->big, j->small, j->gw0, j->scratch + (size_t)tid * j->scratch_bytes, lo, hi);
}

static int l_conv_wgrad(lua_State *L) {
  const char *fname = "_conv_wgrad";
  lt_tensor *big = float_arg(L, 1, fname, 4), *small = float_arg(L, 2, fname, 4);
  lt_conv_geom g = {0};
  g.kh = int_arg(L, 3, fname, 1); g.kw = int_arg(L, 4, fname, 1);
  g.sh = int_arg(L, 5, fname, 1); g.sw = int_arg(L, 6, fname, 1);
  g.ph = int_arg(L, 7, fname, 0); g.pw = int_arg(L, 8, fname, 0);
  g.dh = int_arg(L, 9, fname, 1); g.dw = int_arg(L, 10, fname, 1);
  g.G = int_arg(L, 11, fname, 1);
  if (big->dtype != small->dtype || big->shape[0] != small->shape[0] || big->shape[1] % g.G || small->shape[1] % g.G)
    ltl_error(L, fname, "inconsistent arguments");
  g.dt = big->dtype;
  g.N = big->shape[0];
  g.Cb = big->shape[1] / g.G; g.Hb = big->shape[2]; g.Wb = big->shape[3];
  g.Cs = small->shape[1] / g.G; g.Hs = small->shape[2]; g.Ws = small->shape[3];
  blas_sizes(L, fname, &g);
  lua_settop(L, 11);
  int64_t shape[4] = { g.Cs * g.G, g.Cb, g.kh, g.kw };
  lt_tensor *gw = ltl_push_new(L, g.dt, 4, shape);   /* written by the kernel (beta = 0 first) */
  if (lt_numel(gw) == 0 || g.N == 0 || g.Hs * g.Ws == 0) {
    memset(lt_data(gw), 0, (size_t)lt_numel(gw) * lt_itemsize(g.dt));
    return 1;
  }
  if (lt_conv_dw_wgrad_ok(&g)) {   /* depthwise: groups split over threads, no partial sums */
    int64_t per = lt_conv_dw_wgrad_scratch(&g);
    int nt = par_threads_mem(L, g.G, (double)(g.N * g.G * g.Cs * g.Hs * g.Ws) * (double)(g.kh * g.kw) / 4);
    nt = parts_of(nt, g.G, per * (int64_t)lt_itemsize(g.dt));
    wgrad_job j = { &g, lt_data(big), lt_data(small), NULL, NULL, (size_t)per * lt_itemsize(g.dt), lt_numel(gw), g.N, nt,
                    lt_data(gw), NULL };
    int64_t sshape[1] = { per * nt };
    j.scratch = lt_data(ltl_push_new(L, g.dt, 1, sshape));
    par_run(L, nt, g.G, dw_wgrad_range, &j);
    ltl_drop_scratch(L, 12);
    return 1;
  }
  double work = 2.0 * (double)(g.N * g.G * g.Cs * g.Hs * g.Ws) * (double)(g.Cb * g.kh * g.kw);
  int nt = par_threads_min(L, INT64_MAX, work, WGRAD_MIN_WORK), parts = wgrad_ch_parts(&g, nt);
  if (parts) {   /* big channels split over threads; the output gradient's blocks made once, shared */
    wgrad_job j = { &g, lt_data(big), lt_data(small), NULL, NULL, 0, lt_numel(gw), g.N, parts, lt_data(gw), NULL };
    j.scratch = push_scratch_n(L, &g, lt_conv_wgrad_scratch(&g, (g.Cb + parts - 1) / parts), parts, &j.scratch_bytes);
    int64_t psize = lt_conv_wgrad_prep_size(&g), pitems = lt_conv_wgrad_prep_items(&g);
    if (psize > 0) {
      size_t pbytes;
      j.prep = push_scratch_n(L, &g, psize, 1, &pbytes);
      par_run(L, par_threads_mem(L, pitems, (double)psize), pitems, wgrad_prep_range, &j);
    }
    par_run(L, parts, parts, wgrad_ch_range, &j);
    ltl_drop_scratch(L, 12);
    return 1;
  }
  /* samples split over threads; each sums into its own gw, added up after */
  if (nt > g.N) nt = (int)g.N;
  wgrad_job j = { &g, lt_data(big), lt_data(small), NULL, NULL, 0, lt_numel(gw), g.N, nt, NULL, NULL };
  j.scratch = push_scratch_n(L, &g, lt_conv_wgrad_scratch(&g, g.Cb), nt, &j.scratch_bytes);
  int64_t pshape[1] = { (nt - 1) * lt_numel(gw) };
  j.partial = nt > 1 ? lt_data(ltl_push_new(L, g.dt, 1, pshape)) : NULL;
  j.gw0 = lt_data(gw);
  par_run(L, nt, nt, wgrad_range, &j);
  for (int t = 1; t < nt; t++) {
    size_t off = (size_t)(t - 1) * (size_t)j.gw_numel;
    if (g.dt == LTENSOR_FLOAT32) {
      float *d = (float *)(void *)j.gw0; const float *p = (const float *)(const void *)j.partial + off;
      for (int64_t i = 0; i < j.gw_numel; i++) d[i] += p[i];
    } else {
      double *d = (double *)(void *)j.gw0; const double *p = (const double *)(const void *)j.partial + off;
      for (int64_t i = 0; i < j.gw_numel; i++) d[i] += p[i];
    }
  }
  ltl_drop_scratch(L, 12);
  return 1;
}

/* ---- pooling ------------------------------------------------------------------------ */
typedef struct {
  const lt_pool_geom *g;
  const void *in;
  void *out;
  int64_t *idx;
  int kind;
  uint8_t *codes;
} pool_job;
enum { POOL_MAX, POOL_AVG, POOL_AVG_BWD, POOL_AAVG, POOL_AAVG_BWD, POOL_AMAX };
static void pool_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  (void)tid;
  pool_job *j = (pool_job *)ctx;
  switch (j->kind) {
  case POOL_MAX: lt_max_pool(j->g, j->in, j->out, j->idx, j->codes, lo, hi); break;
  case POOL_AVG: lt_avg_pool(j->g, j->in, j->out, lo, hi); break;
  case POOL_AVG_BWD: lt_avg_pool_bwd(j->g, j->in, j->out, lo, hi); break;
  case POOL_AAVG: lt_adaptive_avg_pool(j->g, j->in, j->out, lo, hi); break;
  case POOL_AAVG_BWD: lt_adaptive_avg_pool_bwd(j->g, j->in, j->out, lo, hi); break;
  default: lt_adaptive_max_pool(j->g, j->in, j->out, j->idx, lo, hi); break;
  }
}
static void pool_run(lua_State *L, pool_job *j, double per_plane_work) {
  int nt = par_threads_mem(L, j->g->planes, per_plane_work * (double)j->g->planes);
  par_run(L, parts_of(nt, j->g->planes, 0), j->g->planes, pool_range, j);
}

static void pool_planes(lt_pool_geom *g, const lt_tensor *x) {
  g->dt = x->dtype;
  g->planes = x->shape[0] * x->shape[1];
  g->Hi = x->shape[2];
  g->Wi = x->shape[3];
}

static int l_max_pool2d(lua_State *L) {
  const char *fname = "_max_pool2d";
  lt_tensor *x = float_arg(L, 1, fname, 4);
  lt_pool_geom g;
  pool_planes(&g, x);
  g.kh = int_arg(L, 2, fname, 1); g.kw = int_arg(L, 3, fname, 1);
  g.sh = int_arg(L, 4, fname, 1); g.sw = int_arg(L, 5, fname, 1);
  g.ph = int_arg(L, 6, fname, 0); g.pw = int_arg(L, 7, fname, 0);
  g.dh = int_arg(L, 8, fname, 1); g.dw = int_arg(L, 9, fname, 1);
  g.Ho = int_arg(L, 10, fname, 0); g.Wo = int_arg(L, 11, fname, 0);
  if (g.Ho > 0 && (g.Ho - 1) * g.sh - g.ph >= g.Hi) ltl_error(L, fname, "inconsistent sizes");
  if (g.Wo > 0 && (g.Wo - 1) * g.sw - g.pw >= g.Wi) ltl_error(L, fname, "inconsistent sizes");
  int want_idx = lua_isnoneornil(L, 12) || lua_toboolean(L, 12);   /* inference skips the indices */
  int codes = lua_type(L, 12) == LUA_TSTRING && strcmp(lua_tostring(L, 12), "codes") == 0;
  if (codes && !(g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 &&
                 g.dw == 1 && 2 * g.Ho <= g.Hi && 2 * g.Wo <= g.Wi))
    ltl_error(L, fname, "tap codes need 2x2 windows of stride 2 inside the input");
  lua_settop(L, 11);
  int64_t shape[4] = { x->shape[0], x->shape[1], g.Ho, g.Wo };
  lt_tensor *out = ltl_push_new(L, g.dt, 4, shape);
  lt_tensor *idx = want_idx ? ltl_push_new(L, codes ? LTENSOR_UINT8 : LTENSOR_INT64, 4, shape) : NULL;
  pool_job j = { &g, lt_data(x), lt_data(out), idx && !codes ? (int64_t *)(void *)lt_data(idx) : NULL, POOL_MAX,
                 codes ? (uint8_t *)lt_data(idx) : NULL };
  pool_run(L, &j, (double)(g.Ho * g.Wo * g.kh * g.kw));
  return want_idx ? 2 : 1;
}

/* adaptive max and avg pooling's forward: (x, Ho, Wo) -> out (and, for
 * max, the int64 argmax indices) */
static int adaptive_run(lua_State *L, const char *fname, int kind) {
  lt_tensor *x = float_arg(L, 1, fname, 4);
  lt_pool_geom g;
  memset(&g, 0, sizeof g);
  pool_planes(&g, x);
  g.Ho = int_arg(L, 2, fname, 0); g.Wo = int_arg(L, 3, fname, 0);
  lua_settop(L, 3);
  int64_t shape[4] = { x->shape[0], x->shape[1], g.Ho, g.Wo };
  lt_tensor *out = ltl_push_new(L, g.dt, 4, shape);
  lt_tensor *idx = kind == POOL_AMAX ? ltl_push_new(L, LTENSOR_INT64, 4, shape) : NULL;
  if (g.Hi * g.Wi == 0 && lt_numel(out) > 0) ltl_error(L, fname, "empty input");
  pool_job j = { &g, lt_data(x), lt_data(out), idx ? (int64_t *)(void *)lt_data(idx) : NULL, kind, NULL };
  pool_run(L, &j, (double)(g.Hi * g.Wi));
  return idx ? 2 : 1;
}

static int l_adaptive_max_pool2d(lua_State *L) { return adaptive_run(L, "_adaptive_max_pool2d", POOL_AMAX); }

typedef struct {
  ltensor_dtype dt;
  int64_t Q, P, Ho, Wo, Hi, Wi;
  const void *gout;
  const int64_t *idx;
  void *gin;
  int tiled;
  const uint8_t *codes;
} mpb_job;
static void mpb_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  (void)tid;
  mpb_job *j = (mpb_job *)ctx;
  if (j->tiled) lt_max_pool2_bwd(j->dt, j->Ho, j->Wo, j->Hi, j->Wi, j->gout, j->idx, j->codes, j->gin, lo, hi);
  else lt_max_pool_bwd(j->dt, j->Q, j->P, j->gout, j->idx, j->gin, lo, hi);
}
static int l_max_pool_bwd(lua_State *L) {
  const char *fname = "_max_pool_bwd";
  lt_tensor *go = float_arg(L, 1, fname, 4);
  lt_tensor *idx = ltl_check(L, 2);
  int codes = idx->dtype == LTENSOR_UINT8;
  if ((idx->dtype != LTENSOR_INT64 && !codes) || idx->ndim != 4 || !lt_is_contiguous(idx) ||
      lt_numel(idx) != lt_numel(go))
    ltl_error(L, fname, "bad indices");
  int64_t Hi = int_arg(L, 3, fname, 0), Wi = int_arg(L, 4, fname, 0);
  /* tiled: the indices come from 2x2 windows of stride 2 (the common pool),
     which cover each input pixel at most once */
  int tiled = lua_toboolean(L, 5);
  if (codes && !tiled) ltl_error(L, fname, "tap codes need 2x2 windows of stride 2");
  int64_t Ho = go->shape[2], Wo = go->shape[3];
  /* no windows: the gradient is all zeros (the tiled walk divides by Wo) */
  if (Ho == 0 || Wo == 0) tiled = codes = 0;
  if (tiled && (2 * Ho > Hi || 2 * Wo > Wi)) ltl_error(L, fname, "2x2 windows do not fit the input");
  lua_settop(L, 4);
  int64_t shape[4] = { go->shape[0], go->shape[1], Hi, Wi };
  lt_tensor *gin = tiled ? ltl_push_new(L, go->dtype, 4, shape) : push_zeros(L, go->dtype, 4, shape);
  mpb_job j = { go->dtype, Ho * Wo, Hi * Wi, Ho, Wo, Hi, Wi, lt_data(go),
                codes ? NULL : (const int64_t *)(const void *)lt_data(idx), lt_data(gin), tiled,
                codes ? (const uint8_t *)lt_data(idx) : NULL };
  int64_t planes = go->shape[0] * go->shape[1];
  par_run(L, parts_of(par_threads_mem(L, planes, (double)(planes * Hi * Wi)), planes, 0), planes, mpb_range, &j);
  return 1;
}

static void avg_params(lua_State *L, const char *fname, int first, lt_pool_geom *g) {
  g->kh = int_arg(L, first, fname, 1); g->kw = int_arg(L, first + 1, fname, 1);
  g->sh = int_arg(L, first + 2, fname, 1); g->sw = int_arg(L, first + 3, fname, 1);
  g->ph = int_arg(L, first + 4, fname, 0); g->pw = int_arg(L, first + 5, fname, 0);
  g->dh = g->dw = 1;
}

/* The arguments avg_pool2d's forward and backward share after the sizes
 * (count_include_pad at 10, divisor_override at 11), their checks, and the
 * run: the forward writes x's windows into a new Ho x Wo output, the
 * backward spreads go over a zeroed Hi x Wi gradient. */
static int avg_run(lua_State *L, const char *fname, lt_pool_geom *g, const lt_tensor *src, int bwd) {
  g->count_include_pad = lua_toboolean(L, 10);
  g->divisor = lua_isnoneornil(L, 11) ? 0 : int_arg(L, 11, fname, 1);
  if (g->Ho > 0 && (g->Ho - 1) * g->sh - g->ph >= g->Hi) ltl_error(L, fname, "inconsistent sizes");
  if (g->Wo > 0 && (g->Wo - 1) * g->sw - g->pw >= g->Wi) ltl_error(L, fname, "inconsistent sizes");
  lua_settop(L, 11);
  int64_t shape[4] = { src->shape[0], src->shape[1], bwd ? g->Hi : g->Ho, bwd ? g->Wi : g->Wo };
  lt_tensor *dst = bwd ? push_zeros(L, g->dt, 4, shape) : ltl_push_new(L, g->dt, 4, shape);
  pool_job j = { g, lt_data(src), lt_data(dst), NULL, bwd ? POOL_AVG_BWD : POOL_AVG, NULL };
  pool_run(L, &j, (double)(g->Ho * g->Wo * g->kh * g->kw));
  return 1;
}

static int l_avg_pool2d(lua_State *L) {
  const char *fname = "_avg_pool2d";
  lt_tensor *x = float_arg(L, 1, fname, 4);
  lt_pool_geom g;
  pool_planes(&g, x);
  avg_params(L, fname, 2, &g);
  g.Ho = int_arg(L, 8, fname, 0); g.Wo = int_arg(L, 9, fname, 0);
  return avg_run(L, fname, &g, x, 0);
}

static int l_avg_pool2d_bwd(lua_State *L) {
  const char *fname = "_avg_pool2d_bwd";
  lt_tensor *go = float_arg(L, 1, fname, 4);
  lt_pool_geom g;
  g.dt = go->dtype;
  g.planes = go->shape[0] * go->shape[1];
  g.Ho = go->shape[2]; g.Wo = go->shape[3];
  g.Hi = int_arg(L, 2, fname, 0); g.Wi = int_arg(L, 3, fname, 0);
  avg_params(L, fname, 4, &g);
  return avg_run(L, fname, &g, go, 1);
}

static int l_adaptive_avg_pool2d(lua_State *L) { return adaptive_run(L, "_adaptive_avg_pool2d", POOL_AAVG); }

static int l_adaptive_avg_pool2d_bwd(lua_State *L) {
  const char *fname = "_adaptive_avg_pool2d_bwd";
  lt_tensor *go = float_arg(L, 1, fname, 4);
  lt_pool_geom g;
  memset(&g, 0, sizeof g);
  g.dt = go->dtype;
  g.planes = go->shape[0] * go->shape[1];
  g.Ho = go->shape[2]; g.Wo = go->shape[3];
  g.Hi = int_arg(L, 2, fname, 0); g.Wi = int_arg(L, 3, fname, 0);
  lua_settop(L, 3);
  int64_t shape[4] = { go->shape[0], go->shape[1], g.Hi, g.Wi };
  lt_tensor *gin = push_zeros(L, g.dt, 4, shape);
  if (g.Hi * g.Wi == 0) return 1;
  pool_job j = { &g, lt_data(go), lt_data(gin), NULL, POOL_AAVG_BWD, NULL };
  pool_run(L, &j, (double)(g.Hi * g.Wi));
  return 1;
}

/* ---- interpolation ------------------------------------------------------------------ */
typedef struct {
  ltensor_dtype dt;
  int64_t planes, Hi, Wi, Ho, Wo;
  lt_interp_axis ah, aw;
  const void *in;
  void *out;
  int bwd, cubic;
} interp_job;
static void interp_range(void *ctx, int64_t lo, int64_t hi, int tid) {
  (void)tid;
  interp_job *j = (interp_job *)ctx;
  if (j->cubic && j->bwd) lt_interp_cubic_bwd(j->dt, j->Hi, j->Wi, j->Ho, j->Wo, &j->ah, &j->aw, j->in, j->out, lo, hi);
  else if (j->cubic) lt_interp_cubic(j->dt, j->Hi, j->Wi, j->Ho, j->Wo, &j->ah, &j->aw, j->in, j->out, lo, hi);
  else if (j->bwd) lt_interp_bwd(j->dt, j->planes, j->Hi, j->Wi, j->Ho, j->Wo, &j->ah, &j->aw, j->in, j->out, lo, hi);
  else lt_interp(j->dt, j->planes, j->Hi, j->Wi, j->Ho, j->Wo, &j->ah, &j->aw, j->in, j->out, lo, hi);
}
/* the per-axis tables live in an int64 tensor left on the stack */
static void interp_tables(lua_State *L, interp_job *j, int mode, int align, double scale_h, double scale_w,
                          int copy) {
  int64_t n[1] = { 3 * (j->Ho + j->Wo) };
  lt_tensor *tab = ltl_push_new(L, LTENSOR_INT64, 1, n);
  int64_t *p = (int64_t *)(void *)lt_data(tab);
  j->ah.i0 = p; j->ah.i1 = p + j->Ho; j->ah.lam = (double *)(void *)(p + 2 * j->Ho);
  p += 3 * j->Ho;
  j->aw.i0 = p; j->aw.i1 = p + j->Wo; j->aw.lam = (double *)(void *)(p + 2 * j->Wo);
  lt_interp_axis_fill(&j->ah, j->Hi, j->Ho, copy == 1 || copy == 3 ? LT_INTERP_COPY : mode, align, scale_h);
  lt_interp_axis_fill(&j->aw, j->Wi, j->Wo, copy >= 2 ? LT_INTERP_COPY : mode, align, scale_w);
}
static int do_interp(lua_State *L, int bwd) {
  const char *fname = bwd ? "_interp_bwd" : "_interp";
  lt_tensor *x = float_arg(L, 1, fname, 4);
  int64_t H = int_arg(L, 2, fname, 1), W = int_arg(L, 3, fname, 1);
  int mode = (int)int_arg(L, 4, fname, 0);
  if (mode > 3) ltl_error(L, fname, "bad mode %d (0 nearest, 1 linear, 2 cubic, 3 nearest-exact)", mode);
  int align = lua_toboolean(L, 5);
  double sh = ltl_optnumber(L, 6, -1), sw = ltl_optnumber(L, 7, -1);
  int copy = lua_isnoneornil(L, 8) ? 0 : (int)int_arg(L, 8, fname, 0);
  if (copy > 3 || (copy && mode == 2)) ltl_error(L, fname, "bad copy axes %d", copy);
  lua_settop(L, 7);
  interp_job j;
  j.dt = x->dtype;
  j.planes = x->shape[0] * x->shape[1];
  j.bwd = bwd;
  j.cubic = mode == 2;
  if (bwd) { j.Ho = x->shape[2]; j.Wo = x->shape[3]; j.Hi = H; j.Wi = W; }
  else { j.Hi = x->shape[2]; j.Wi = x->shape[3]; j.Ho = H; j.Wo = W; }
  if (j.Hi < 1 || j.Wi < 1) ltl_error(L, fname, "empty spatial input");
  if (((copy == 1 || copy == 3) && j.Hi != j.Ho) || (copy >= 2 && j.Wi != j.Wo))
    ltl_error(L, fname, "a copied axis must keep its size");
  interp_tables(L, &j, mode, align, sh, sw, copy);
  int64_t shape[4] = { x->shape[0], x->shape[1], H, W };
  lt_tensor *out = bwd ? push_zeros(L, j.dt, 4, shape) : ltl_push_new(L, j.dt, 4, shape);
  j.in = lt_data(x);
  j.out = lt_data(out);
  par_run(L, par_threads(L, j.planes, 8.0 * (double)(j.planes * j.Ho * j.Wo)), j.planes, interp_range, &j);
  return 1;
}
static int l_interp(lua_State *L) { return do_interp(L, 0); }
static int l_interp_bwd(lua_State *L) { return do_interp(L, 1); }

const ltl_reg ltl_reg_conv[] = {
  {"_conv_small", l_conv_small, LT_MODULE | LT_DIFF, NULL},
  {"_conv_big", l_conv_big, LT_MODULE | LT_DIFF, NULL},
  {"_conv_wgrad", l_conv_wgrad, LT_MODULE | LT_DIFF, NULL},
  {"_max_pool2d", l_max_pool2d, LT_MODULE | LT_DIFF, NULL},
  {"_max_pool_bwd", l_max_pool_bwd, LT_MODULE, NULL},
  {"_adaptive_max_pool2d", l_adaptive_max_pool2d, LT_MODULE | LT_DIFF, NULL},
  {"_avg_pool2d", l_avg_pool2d, LT_MODULE | LT_DIFF, NULL},
  {"_avg_pool2d_bwd", l_avg_pool2d_bwd, LT_MODULE, NULL},
  {"_adaptive_avg_pool2d", l_adaptive_avg_pool2d, LT_MODULE | LT_DIFF, NULL},
  {"_adaptive_avg_pool2d_bwd", l_adaptive_avg_pool2d_bwd, LT_MODULE, NULL},
  {"_interp", l_interp, LT_MODULE | LT_DIFF, NULL},
  {"_interp_bwd", l_interp_bwd, LT_MODULE | LT_DIFF, NULL},
  {NULL, NULL, 0, NULL}
};
