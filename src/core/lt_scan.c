/* lt_scan.c -- inclusive scans (cumsum, cumprod) and softmax / log_softmax
 * along one dim (Lua-free): the output has the input's shape.
 *
 * The plan is the iterator planner's reduction mode over the one dim, with
 * the output's strides (lt_reduce_common.h).  Generic path: each row of the
 * dim is walked in chunks cast into the compute dtype (walk_dim).  Fast
 * paths (float32/float64 in and out): softmax and cumsum of unit-stride
 * rows, or of column blocks when the kept innermost dim is unit-stride.
 */
#include "lt_scan.h"
#include "lt_reduce_common.h"

enum { COL_SOFTMAX, COL_CUMSUM };
static int fast_dim(acc *c, const plan *p, const lt_tensor *in, int kind, lt_pool *pool);

#define FAST_KERNELS(S, T, EXP, V, ATTR)                                                \
  /* softmax of w adjacent columns (n rows, row strides rs, ws); bad[i] set  \
     where column i's max is not finite (its outputs are then garbage) */     \
  ATTR static void softmax_cols_##V##S(const T *restrict x, int64_t rs, T *restrict y, int64_t ws, \
                               int64_t n, int64_t w, int is_log, unsigned char *bad) { \
    T mx[CW], af[CW];                                                         \
    double ad[CW];                                                            \
    for (int64_t i = 0; i < w; i++) mx[i] = x[i];                             \
    for (int64_t r = 1; r < n; r++) {                                         \
      const T *xr = x + r * rs;                                               \
      for (int64_t i = 0; i < w; i++) { T v = xr[i]; mx[i] = BETTER_MAX(v, mx[i]) ? v : mx[i]; } \
    }                                                                         \
    for (int64_t i = 0; i < w; i++) {                                         \
      bad[i] = !isfinite(mx[i]);                                              \
      if (bad[i]) mx[i] = 0;                                                  \
      af[i] = 0; ad[i] = 0;                                                   \
    }                                                                         \
    int cnt = 0;                                                              \
    for (int64_t r = 0; r < n; r++) {                                         \
      const T *xr = x + r * rs;                                               \
      T *yr = y + r * ws;                                                     \
      if (is_log) {                                                           \
        for (int64_t i = 0; i < w; i++) af[i] += EXP(xr[i] - mx[i]);          \
      } else {                                                                \
        for (int64_t i = 0; i < w; i++) { T e = EXP(xr[i] - mx[i]); yr[i] = e; af[i] += e; } \
      }                                                                       \
      if (++cnt == CFLUSH || r == n - 1) {                                    \
        for (int64_t i = 0; i < w; i++) { ad[i] += (double)af[i]; af[i] = 0; } \
        cnt = 0;                                                              \
      }                                                                       \
    }                                                                         \
    for (int64_t i = 0; i < w; i++) af[i] = is_log ? (T)log(ad[i]) : (T)(1.0 / ad[i]); \
    for (int64_t r = 0; r < n; r++) {                                         \
      const T *xr = x + r * rs;                                               \
      T *yr = y + r * ws;                                                     \
      if (is_log) for (int64_t i = 0; i < w; i++) yr[i] = (xr[i] - mx[i]) - af[i]; \
      else for (int64_t i = 0; i < w; i++) yr[i] *= af[i];                    \
    }                                                                         \
  }                                                                           \
  /* cumsum in double (PyTorch's CPU accumulation type), rows in fours so    \
     four independent add chains hide the latency */                          \
  ATTR static void cumsum_rows_##V##S(const T *const *x, T *const *y, int k, int64_t n) { \
    if (k == 4) {                                                             \
      const T *restrict x0 = x[0], *restrict x1 = x[1], *restrict x2 = x[2], *restrict x3 = x[3]; \
      T *restrict y0 = y[0], *restrict y1 = y[1], *restrict y2 = y[2], *restrict y3 = y[3]; \
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                  \
      for (int64_t i = 0; i < n; i++) {                                       \
        s0 += (double)x0[i]; y0[i] = (T)s0;                                   \
        s1 += (double)x1[i]; y1[i] = (T)s1;                                   \
        s2 += (double)x2[i]; y2[i] = (T)s2;                                   \
        s3 += (double)x3[i]; y3[i] = (T)s3;                                   \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    for (int j = 0; j < k; j++) {                                             \
      const T *restrict xj = x[j];                                            \
      T *restrict yj = y[j];                                                  \
      double s = 0;                                                           \
      for (int64_t i = 0; i < n; i++) { s += (double)xj[i]; yj[i] = (T)s; }   \
    }                                                                         \
  }                                                                           \
  ATTR static void cumsum_cols_##V##S(const T *restrict x, int64_t rs, T *restrict y, int64_t ws, \
                              int64_t n, int64_t w) {                         \
    double cr[CW];                                                            \
    for (int64_t i = 0; i < w; i++) cr[i] = 0;                                \
    for (int64_t r = 0; r < n; r++) {                                         \
      const T *xr = x + r * rs;                                               \
      T *yr = y + r * ws;                                                     \
      for (int64_t i = 0; i < w; i++) { cr[i] += (double)xr[i]; yr[i] = (T)cr[i]; } \
    }                                                                         \
  }

FAST_KERNELS(f32, float, exp_f32, b, )
FAST_KERNELS(f64, double, exp_f64, b, )
#ifdef LT_VEC_AVX2
FAST_KERNELS(f32, float, exp_f32, x, LT_TARGET_AVX2_FMA)
FAST_KERNELS(f64, double, exp_f64, x, LT_TARGET_AVX2_FMA)
#endif

/* Walk the single scanned dim of one row in chunks: load (cast into the
   compute dtype), let fn transform the chunk in place, store (cast out). */
typedef void (*scan_fn)(acc *c, void *buf, int64_t n);
static void walk_dim(acc *c, const char *in, int64_t o, scan_fn fn, int store) {
  const plan *p = c->p;
  if (p->nred == 0) return;
  int64_t isz = (int64_t)lt_itemsize(c->idt), bsz = (int64_t)lt_itemsize(c->bdt);
  _Alignas(16) char buf[CHUNK_BYTES];
  int64_t cap = CHUNK_BYTES / bsz;
  lt_cast_fn load = lt_cast_kernel(c->idt, c->bdt), save = lt_cast_kernel(c->bdt, c->odt);
  int64_t run = p->ishape[0], rs = p->istr0[0] * isz, ws = p->istr1[0] * c->osz;
  char *dst = c->out + o * c->osz;
  for (int64_t k = 0; k < run; k += cap) {
    int64_t m = run - k < cap ? run - k : cap;
    load(in + k * rs, rs, buf, bsz, m);
    fn(c, buf, m);
    if (store) save(buf, bsz, dst + k * ws, ws, m);
  }
}

/* running sum/product of a chunk in place (S: the accumulator type, for
   integers uint64 so that overflow wraps instead of being UB) */
#define SCAN_FN(NAME, T, S, FIELD, OP)                                         \
  static void NAME(acc *c, void *b, int64_t n) {                              \
    T *x = b; S s = c->FIELD;                                                 \
    for (int64_t i = 0; i < n; i++) { s OP (S)x[i]; x[i] = (T)s; }            \
    c->FIELD = s;                                                             \
  }
SCAN_FN(cumsum_f, double, double, f, +=)
SCAN_FN(cumprod_f, double, double, f, *=)
SCAN_FN(cumsum_i, int64_t, uint64_t, i, +=)
SCAN_FN(cumprod_i, int64_t, uint64_t, i, *=)
SCAN_FN(cumsum_c, lt_cdouble, lt_cdouble, c, +=)
SCAN_FN(cumprod_c, lt_cdouble, lt_cdouble, c, *=)

static void row_scan(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  int prod = c->mode;
  c->f = prod; c->i = (uint64_t)prod; c->c = prod;
  scan_fn fn = c->cls == CLS_F ? (prod ? cumprod_f : cumsum_f)
             : c->cls == CLS_C ? (prod ? cumprod_c : cumsum_c) : (prod ? cumprod_i : cumsum_i);
  walk_dim(c, in, o, fn, 1);
}

/* Scan along a strided dim while the unit-stride dim is kept: carry a
   block of running values across contiguous row segments (as for sums). */
static void scan_columns(const plan *p, const lt_tensor *in, acc *c) {
  colgen g = colgen_of(c);
  _Alignas(16) char buf[CHUNK_BYTES], carry[CHUNK_BYTES];
  const char *ibase = lt_data(in);
  int lo = p->nout_d - 1;
  int64_t width = p->oshape[lo], run = p->ishape[0], rs = p->istr0[0], ws = p->istr1[0];
  lt_odo ow;   /* the kept dims before the columns */
  outer_odo(&ow, p, lo);
  do {
    int64_t o0 = ow.off[0], o1 = ow.off[1];
    for (int64_t j = 0; j < width; j += g.cap) {
      int64_t w = width - j < g.cap ? width - j : g.cap;
      for (int64_t k = 0; k < run; k++) {
        const char *src = ibase + (o0 + j + k * rs) * g.isz;
        if (k == 0) g.load(src, g.isz, carry, g.bsz, w);
        else { g.load(src, g.isz, buf, g.bsz, w); g.add(c, carry, buf, w); }
        g.save(carry, g.bsz, c->out + (o1 + j + k * ws) * c->osz, c->osz, w);
      }
    }
  } while (lt_odo_next(&ow));
}

static void one_dim_plan(plan *p, const lt_tensor *out, const lt_tensor *in, int dim) {
  plan_init(p, in, out->stride, in->ndim ? 1u << dim : 0u);
}

void lt_scan(lt_tensor *out, const lt_tensor *in, int dim, int is_prod, lt_pool *pool) {
  plan p;
  acc c;
  one_dim_plan(&p, out, in, dim);
  acc_start(&c, &p, in, out, wrap_cls(out->dtype), is_prod);
  if (!is_prod && fast_dim(&c, &p, in, COL_CUMSUM, pool)) return;
  if (columns_apply(&p, in)) { c.mode = is_prod ? 2 : 0; scan_columns(&p, in, &c); return; }
  run_rows_acc(&p, in, row_scan, &c, pool);
}

static void sm_max(acc *c, void *b, int64_t n) {
  double *x = b, m = c->param;
  for (int64_t i = 0; i < n; i++) if (x[i] != x[i] || x[i] > m) m = x[i];
  c->param = m;
}
static void sm_sum(acc *c, void *b, int64_t n) {
  double *x = b, m = c->param, s = 0;
  for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
  c->f += s;
}
static void sm_out(acc *c, void *b, int64_t n) {
  double *x = b, m = c->param;
  if (c->mode) {
    double l = m + log(c->f);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] - l;
  } else {
    double inv = 1.0 / c->f;
    for (int64_t i = 0; i < n; i++) x[i] = exp(x[i] - m) * inv;
  }
}
static void row_softmax(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  c->param = -INFINITY;
  walk_dim(c, in, o, sm_max, 0);
  if (isnan(c->param)) { /* a NaN in the row: every output is NaN, as in PyTorch */
    c->f = NAN;
  } else {
    c->f = 0;
    walk_dim(c, in, o, sm_sum, 0);
  }
  walk_dim(c, in, o, sm_out, 1);
}

/* ---- fast softmax and cumsum (float32/float64, same dtype out) ------------- */
static void sm_fast_row(void *vc, const char *x, int64_t o) {
  acc *c = vc;
  int64_t n = c->p->nred;
  int ok = c->odt == LTENSOR_FLOAT32
         ? lt_softmax_row_f32((const float *)x, (float *)c->out + o, n, c->mode)
         : lt_softmax_row_f64((const double *)x, (double *)c->out + o, n, c->mode);
  if (!ok) row_softmax(c, x, o);
}

/* rows case: the dim is unit-stride in input and output */
static int dim_is_row(const plan *p) {
  return p->nred_d == 1 && p->istr0[0] == 1 && p->istr1[0] == 1;
}
/* columns case for one-dim ops: also needs the output unit-stride there */
static int dim_is_cols(const plan *p, const lt_tensor *in) {
  return p->nred_d == 1 && columns_apply(p, in);
}

static void cs_rows_part(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  colrun *cp = v;
  const plan *p = cp->p;
  const acc *c = cp->proto;
  int f32 = c->odt == LTENSOR_FLOAT32;
  int64_t sz = f32 ? 4 : 8, n = p->nred;
  const char *ibase = lt_data(cp->in);
  lt_odo w;
  if (s >= e) return;
  outer_odo(&w, p, p->nout_d);
  lt_odo_seek(&w, s);
  for (int64_t o = s; o < e; o += 4) {
    const void *x[4];
    void *y[4];
    int k = 0;
    for (; k < 4 && o + k < e; k++) {
      x[k] = ibase + w.off[0] * sz; y[k] = c->out + w.off[1] * sz;
      lt_odo_next(&w);
    }
    if (f32) PICK(cumsum_rows, f32)((const float *const *)x, (float *const *)y, k, n);
    else PICK(cumsum_rows, f64)((const double *const *)x, (double *const *)y, k, n);
  }
}
/* column blocks of softmax (columns whose max is not finite redone by the
   generic rows) and of cumsum */
static void softmax_cols_unit(const colrun *r, acc *c, int64_t o0, int64_t o1, int64_t w) {
  const plan *p = r->p;
  const char *ibase = lt_data(r->in);
  int f32 = r->in->dtype == LTENSOR_FLOAT32;
  int64_t isz = f32 ? 4 : 8, rs = p->istr0[0], ws = p->istr1[0], n = p->ishape[0];
  unsigned char bad[CW];
  if (f32) PICK(softmax_cols, f32)((const float *)ibase + o0, rs, (float *)c->out + o1, ws, n, w, c->mode, bad);
  else PICK(softmax_cols, f64)((const double *)ibase + o0, rs, (double *)c->out + o1, ws, n, w, c->mode, bad);
  for (int64_t i = 0; i < w; i++)
    if (bad[i]) row_softmax(c, ibase + (o0 + i) * isz, o1 + i);
}
static void cumsum_cols_unit(const colrun *r, acc *c, int64_t o0, int64_t o1, int64_t w) {
  const plan *p = r->p;
  const char *ibase = lt_data(r->in);
  int64_t rs = p->istr0[0], ws = p->istr1[0], n = p->ishape[0];
  if (r->in->dtype == LTENSOR_FLOAT32) PICK(cumsum_cols, f32)((const float *)ibase + o0, rs, (float *)c->out + o1, ws, n, w);
  else PICK(cumsum_cols, f64)((const double *)ibase + o0, rs, (double *)c->out + o1, ws, n, w);
}
/* softmax / log_softmax (kind COL_SOFTMAX) and cumsum (COL_CUMSUM) over
   one dim, float32/float64 in and out: unit-stride rows or column blocks;
   0 when the layout or dtypes have no fast path. */
static int fast_dim(acc *c, const plan *p, const lt_tensor *in, int kind, lt_pool *pool) {
  if (!fast_dtype(in->dtype) || c->odt != in->dtype || p->nout == 0 || p->nred == 0) return 0;
  colrun r = {p, in, c, NULL, kind == COL_SOFTMAX ? softmax_cols_unit : cumsum_cols_unit, 0, 0, 0};
  int64_t grain = kind == COL_SOFTMAX ? LT_GRAIN : VEC_GRAIN;
  if (dim_is_row(p)) {
    if (kind == COL_SOFTMAX) run_rows_acc(p, in, sm_fast_row, c, pool);
    else {
      int pieces, parts = lt_iter_reduce_parts(p, pool, grain, 0, &pieces);
      run_split(pool, parts, p->nout, cs_rows_part, &r);
    }
    return 1;
  }
  if (dim_is_cols(p, in)) {
    run_cols(&r, pool, grain);
    return 1;
  }
  return 0;
}

void lt_softmax(lt_tensor *out, const lt_tensor *in, int dim, int is_log, lt_pool *pool) {
  plan p;
  acc c;
  one_dim_plan(&p, out, in, dim);
  acc_start(&c, &p, in, out, CLS_F, is_log);
  if (fast_dim(&c, &p, in, COL_SOFTMAX, pool)) return;
  run_rows_acc(&p, in, row_softmax, &c, pool);
}
