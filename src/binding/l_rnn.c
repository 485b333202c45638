/* l_rnn.c -- the step loop of a recurrent layer (RNN tanh/relu, LSTM, GRU)
 * for one layer and one direction, forward and backward, in C.
 *
 * lua/ltensor/nn/rnn.lua wraps these two functions in one autograd node per
 * layer and direction: it computes the input projection of every timestep
 * as one gemm before calling _rnn_forward, and the weight gradients as
 * whole-sequence gemms after _rnn_backward, so what is left here is what
 * cannot be batched over time: per step one gemm h @ W_hh^T for all gates
 * and the gate math, which in Lua would be a dozen tensor ops (and, with
 * autograd, a dozen graph nodes) per step.
 *
 *   T._rnn_forward(mode, reverse, xp, w_hh, b_hh, h0, c0 [, keep_ws = true])
 *     -> y (T,B,H), h_n (B,H), c_n (B,H) or nil, ws
 *   T._rnn_backward(mode, reverse, xp, w_hh, b_hh, h0, c0, y, ws, dy, dh_n, dc_n)
 *     -> dxp (T,B,G*H), dh0, dc0 or nil, dhh (GRU: T,B,3H) or nil
 *
 * mode: 0 RNN tanh, 1 RNN relu, 2 LSTM (gates i,f,g,o), 3 GRU (r,z,n).
 * xp (T,B,G*H): W_ih x + b_ih (+ b_hh except for GRU, whose b_hn sits
 * inside r * (W_hn h + b_hn), so b_hh is passed apart).  All tensors are
 * contiguous float32 or float64 of one dtype (checked).  ws, the workspace
 * backward needs: LSTM (T,B,5H) = activated i,f,g,o and the cell c_t; GRU
 * (T,B,4H) = r, z, n and W_hn h + b_hn; RNN: empty.
 */
#include <math.h>
#include <string.h>
#include "l_lua.h"
#include "lt_blas.h"
#include "lt_parallel.h"

enum { RNN_TANH = 0, RNN_RELU = 1, RNN_LSTM = 2, RNN_GRU = 3 };

/* memcpy/memset of n bytes; an empty tensor's data pointer may be NULL,
   which memcpy must not see even for n == 0 */
static void copy_n(void *d, const void *s, size_t n) { if (n) memcpy(d, s, n); }
static void zero_n(void *d, size_t n) { if (n) memset(d, 0, n); }
static const int gate_count[] = { 1, 1, 4, 3 };

/* ---- argument checks ---------------------------------------------------- */
static lt_tensor *check_arg(lua_State *L, int idx, ltensor_dtype dt, int ndim, const int64_t *shape,
                            const char *fname, const char *what) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype != dt) ltl_error(L, fname, "%s must be %s", what, lt_dtypes[dt].name);
  if (t->ndim != ndim) ltl_error(L, fname, "%s must be %d-D", what, ndim);
  for (int i = 0; i < ndim; i++)
    if (t->shape[i] != shape[i]) ltl_error(L, fname, "%s has a wrong shape", what);
  if (!lt_is_contiguous(t)) ltl_error(L, fname, "%s must be contiguous", what);
  return t;
}
static lt_tensor *opt_arg(lua_State *L, int idx, ltensor_dtype dt, int ndim, const int64_t *shape,
                          const char *fname, const char *what) {
  if (lua_isnoneornil(L, idx) || (lua_isboolean(L, idx) && !lua_toboolean(L, idx))) return NULL;
  return check_arg(L, idx, dt, ndim, shape, fname, what);
}

/* ---- the gate math ------------------------------------------------------
 * Row kernels over H elements with restrict pointers and the branch-free
 * exp/tanh of lt_k_vmath.h, so that the loops vectorise; compiled for the
 * baseline ISA and for AVX2+FMA, picked once per call from the CPU's
 * features.  The build is -O2, whose cost model does not vectorise loops
 * of unknown length: the rest of this file is -O3.  A pragma rather than a
 * function attribute, because functions with different optimize options
 * are never inlined into one another (lt_expf would stay a scalar call);
 * the kernels have no branches to if-convert (selects are bit masks). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno")
#endif
#include "lt_vmath.h"

/* Segments of a gate row get their own restrict pointers: with offsets
   like wr[H + j] alone GCC cannot prove the stores independent and leaves
   the loop scalar. */
/* no loop-carried dependences: the pointers never overlap (no runtime alias
   checks, whose count would exceed GCC's limit and leave the loop scalar) */
#if defined(__GNUC__) && !defined(__clang__)
#define RNN_IVDEP _Pragma("GCC ivdep")
#else
#define RNN_IVDEP
#endif
#define RNN_SIGM(EXP, T, x) ((T)1 / ((T)1 + EXP(-(x))))
#define RNN_ROWS(S, T, EXP, TANH, ATTR)                                                          \
  ATTR static void lstm_fw_##S(int64_t H, const void *xv, const void *gv, const void *cv,        \
                               void *hv, void *wv) {                                            \
    const T *restrict xi = xv, *restrict xf = xi + H, *restrict xg = xi + 2 * H;                \
    const T *restrict xo = xi + 3 * H;                                                          \
    const T *restrict gi = gv, *restrict gf = gi + H, *restrict gg = gi + 2 * H;                \
    const T *restrict go = gi + 3 * H, *restrict cp = cv;                                       \
    T *restrict h = hv, *restrict wi = wv, *restrict wf = wi + H, *restrict wg = wi + 2 * H;    \
    T *restrict wo = wi + 3 * H, *restrict wc = wi + 4 * H;                                     \
    RNN_IVDEP for (int64_t j = 0; j < H; j++) {                                                           \
      T i = RNN_SIGM(EXP, T, xi[j] + gi[j]);                                                    \
      T f = RNN_SIGM(EXP, T, xf[j] + gf[j]);                                                    \
      T g = TANH(xg[j] + gg[j]);                                                                \
      T o = RNN_SIGM(EXP, T, xo[j] + go[j]);                                                    \
      T c = f * cp[j] + i * g;                                                                  \
      h[j] = o * TANH(c);                                                                       \
      wi[j] = i; wf[j] = f; wg[j] = g; wo[j] = o; wc[j] = c;                                    \
    }                                                                                           \
  }                                                                                             \
  ATTR static void gru_fw_##S(int64_t H, const void *xv, const void *gv, const void *bv,        \
                              const void *hpv, void *hv, void *wv) {                            \
    const T *restrict xr = xv, *restrict xz = xr + H, *restrict xn = xr + 2 * H;                \
    const T *restrict gr = gv, *restrict gz = gr + H, *restrict gn = gr + 2 * H;                \
    const T *restrict br = bv, *restrict bz = br + H, *restrict bn = br + 2 * H;                \
    const T *restrict hp = hpv;                                                                 \
    T *restrict h = hv, *restrict wr = wv, *restrict wz = wr + H, *restrict wn = wr + 2 * H;    \
    T *restrict whn = wr + 3 * H;                                                               \
    RNN_IVDEP for (int64_t j = 0; j < H; j++) {                                                           \
      T hn = gn[j] + bn[j];                                                                     \
      T r = RNN_SIGM(EXP, T, xr[j] + gr[j] + br[j]);                                            \
      T z = RNN_SIGM(EXP, T, xz[j] + gz[j] + bz[j]);                                            \
      T n = TANH(xn[j] + r * hn);                                                               \
      h[j] = n + z * (hp[j] - n);                                                               \
      wr[j] = r; wz[j] = z; wn[j] = n; whn[j] = hn;                                             \
    }                                                                                           \
  }                                                                                             \
  ATTR static void rnn_fw_##S(int64_t H, int relu, const void *xv, const void *gv, void *hv) {  \
    const T *restrict x = xv, *restrict g = gv;                                                 \
    T *restrict h = hv;                                                                         \
    if (relu)                                                                                   \
      RNN_IVDEP for (int64_t j = 0; j < H; j++) { T a = x[j] + g[j]; h[j] = a > 0 ? a : (T)0; }           \
    else                                                                                        \
      RNN_IVDEP for (int64_t j = 0; j < H; j++) h[j] = TANH(x[j] + g[j]);                                 \
  }                                                                                             \
  /* backward rows: dh holds the gradient reaching h_t and is left with the part of          \
     dh_{t-1} that does not go through W_hh (GRU: z * dh, else 0); dc likewise */              \
  ATTR static void lstm_bw_##S(int64_t H, const void *wv, const void *cv, void *dhv,            \
                               void *dcv, void *dgv) {                                          \
    const T *restrict wi = wv, *restrict wf = wi + H, *restrict wg = wi + 2 * H;                \
    const T *restrict wo = wi + 3 * H, *restrict wc = wi + 4 * H, *restrict cp = cv;            \
    T *restrict dh = dhv, *restrict dc = dcv;                                                   \
    T *restrict di = dgv, *restrict df = di + H, *restrict dgg = di + 2 * H;                    \
    T *restrict dout = di + 3 * H;                                                              \
    RNN_IVDEP for (int64_t j = 0; j < H; j++) {                                                           \
      T i = wi[j], f = wf[j], g = wg[j], o = wo[j];                                             \
      T tc = TANH(wc[j]);                                                                       \
      T d = dh[j];                                                                              \
      T dcj = dc[j] + d * o * ((T)1 - tc * tc);                                                 \
      di[j] = dcj * g * i * ((T)1 - i);                                                         \
      df[j] = dcj * cp[j] * f * ((T)1 - f);                                                     \
      dgg[j] = dcj * i * ((T)1 - g * g);                                                        \
      dout[j] = d * tc * o * ((T)1 - o);                                                        \
      dc[j] = dcj * f;                                                                          \
      dh[j] = 0;                                                                                \
    }                                                                                           \
  }                                                                                             \
  ATTR static void gru_bw_##S(int64_t H, const void *wv, const void *hpv, void *dhv,            \
                              void *dgv, void *dhhv) {                                          \
    const T *restrict wr = wv, *restrict wz = wr + H, *restrict wn = wr + 2 * H;                \
    const T *restrict whn = wr + 3 * H, *restrict hp = hpv;                                     \
    T *restrict dh = dhv;                                                                       \
    T *restrict gr = dgv, *restrict gz = gr + H, *restrict gn = gr + 2 * H;                     \
    T *restrict hr = dhhv, *restrict hz = hr + H, *restrict hn = hr + 2 * H;                    \
    RNN_IVDEP for (int64_t j = 0; j < H; j++) {                                                           \
      T r = wr[j], z = wz[j], n = wn[j];                                                        \
      T d = dh[j];                                                                              \
      T dan = d * ((T)1 - z) * ((T)1 - n * n);                                                  \
      T daz = d * (hp[j] - n) * z * ((T)1 - z);                                                 \
      T dar = dan * whn[j] * r * ((T)1 - r);                                                    \
      gr[j] = dar; gz[j] = daz; gn[j] = dan;                                                    \
      hr[j] = dar; hz[j] = daz; hn[j] = dan * r;                                                \
      dh[j] = d * z;                                                                            \
    }                                                                                           \
  }                                                                                             \
  ATTR static void rnn_bw_##S(int64_t H, int relu, const void *hv, void *dhv, void *dgv) {      \
    const T *restrict h = hv;                                                                   \
    T *restrict dh = dhv, *restrict dg = dgv;                                                   \
    if (relu)                                                                                   \
      RNN_IVDEP for (int64_t j = 0; j < H; j++) { dg[j] = h[j] > 0 ? dh[j] : (T)0; dh[j] = 0; }           \
    else                                                                                        \
      RNN_IVDEP for (int64_t j = 0; j < H; j++) { dg[j] = dh[j] * ((T)1 - h[j] * h[j]); dh[j] = 0; }      \
  }                                                                                             \
  ATTR static void vadd_##S(int64_t n, void *av, const void *bv) {                              \
    T *restrict a = av;                                                                         \
    const T *restrict b = bv;                                                                   \
    RNN_IVDEP for (int64_t k = 0; k < n; k++) a[k] += b[k];                                               \
  }

#define RNN_O3
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define RNN_HAVE_AVX2 1
#define RNN_AVX2 __attribute__((target("avx2,fma")))
#else
#define RNN_HAVE_AVX2 0
#endif

#define RNN_ALL_ROWS(V, ATTR)                                                                    \
  RNN_ROWS(f32##V, float, lt_expf, lt_tanhf, ATTR)                                               \
  RNN_ROWS(f64##V, double, lt_exp, lt_tanh, ATTR)
RNN_ALL_ROWS(_gen, RNN_O3)
#if RNN_HAVE_AVX2
RNN_ALL_ROWS(_avx2, RNN_AVX2)
#endif

/* the row kernels of one dtype and ISA, called through void pointers */
typedef struct rnn_rows {
  void (*lstm_fw)(int64_t, const void *, const void *, const void *, void *, void *);
  void (*gru_fw)(int64_t, const void *, const void *, const void *, const void *, void *, void *);
  void (*rnn_fw)(int64_t, int, const void *, const void *, void *);
  void (*lstm_bw)(int64_t, const void *, const void *, void *, void *, void *);
  void (*gru_bw)(int64_t, const void *, const void *, void *, void *, void *);
  void (*rnn_bw)(int64_t, int, const void *, void *, void *);
  void (*vadd)(int64_t, void *, const void *);
} rnn_rows;
#define RNN_TABLE(S) { lstm_fw_##S, gru_fw_##S, rnn_fw_##S, lstm_bw_##S, gru_bw_##S, rnn_bw_##S, vadd_##S }
static const rnn_rows rows_gen[2] = { RNN_TABLE(f32_gen), RNN_TABLE(f64_gen) };
#if RNN_HAVE_AVX2
static const rnn_rows rows_avx2[2] = { RNN_TABLE(f32_avx2), RNN_TABLE(f64_avx2) };
#endif
static const rnn_rows *rows_for(ltensor_dtype dt) {
  int k = dt == LTENSOR_FLOAT64;
#if RNN_HAVE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &rows_avx2[k];
#endif
  return &rows_gen[k];
}

static int check_mode(lua_State *L, const char *fname) {
  lua_Integer mode = ltl_checkinteger(L, 1);
  if (mode < 0 || mode > 3) ltl_error(L, fname, "unknown mode %d", (int)mode);
  return (int)mode;
}

/* ---- the time loops, by bands of batch rows ----------------------------------
   Each batch row's recurrence depends on that row alone (h_t of row b needs
   h_{t-1} of row b), so the rows are cut into bands and every band runs the
   whole sequence on its own thread with no synchronisation between steps:
   its rows of the scratch gates, of y, of ws and of dh/dc are its own.  One
   band per thread of the state's pool, when the sequence holds enough
   arithmetic to repay the hand-off (RNN_PAR_MIN_WORK, below). */
#define RNN_PAR_MIN_WORK 4000000.0 /* flops per extra part: tens of µs of arithmetic */
/* what both directions of a layer's time loop know */
typedef struct {
  int mode, reverse;
  ltensor_dtype dt;
  int64_t Tn, B, G, H, wsz;   /* steps, batch, gates, hidden size, ws row length */
  const rnn_rows *K;
  int one_thread;             /* products on the band's own thread (lt_mm_1t) */
} rnn_seq;

typedef struct {
  rnn_seq q;
  int keep;
  const char *pxp, *pw, *pb, *h0, *c0;
  char *py, *pws, *pg;
} rnn_fw_job;

static void rnn_fw_band(void *ctx, int64_t b0, int64_t b1, int part) {
  (void)part;
  const rnn_fw_job *j = (const rnn_fw_job *)ctx;
  const rnn_seq *q = &j->q;
  size_t es = lt_itemsize(q->dt);
  int64_t Tn = q->Tn, B = q->B, H = q->H, GH = q->G * H, wsz = q->wsz, nb = b1 - b0;
  const char *hprev = j->h0 + (size_t)(b0 * H) * es;   /* row b0 of h_{t-1}; rows H apart */
  char *pg = j->pg + (size_t)(b0 * GH) * es;
  for (int64_t s = 0; s < Tn; s++) {
    int64_t t = q->reverse ? Tn - 1 - s : s;
    int64_t tp = q->reverse ? t + 1 : t - 1;
    /* g = h_prev (nb x H) @ W_hh^T (H x GH): W_hh read transposed in place */
    (q->one_thread ? lt_mm_1t : lt_mm)(q->dt, nb, GH, H, hprev, H, 1, j->pw, 1, H, pg, GH, 1);
    char *ht = j->py + (size_t)(t * B * H) * es;
    int64_t slot = j->keep ? t : s % 2, pslot = j->keep ? tp : (s + 1) % 2;   /* ws rows of t and t-1 */
    char *wst = j->pws + (size_t)(slot * B * wsz) * es;
    const char *xt = j->pxp + (size_t)(t * B * GH) * es;
    for (int64_t b = b0; b < b1; b++) {
      const char *xr = xt + (size_t)(b * GH) * es, *gr = j->pg + (size_t)(b * GH) * es;
      char *hr = ht + (size_t)(b * H) * es, *wr = wst + (size_t)(b * wsz) * es;
      if (q->mode == RNN_LSTM) {
        /* c_{t-1}: c0's row, or the cell column of the previous step's ws */
        const char *cp = s == 0 ? j->c0 + (size_t)(b * H) * es
                                : j->pws + (size_t)((pslot * B + b) * wsz + 4 * H) * es;
        q->K->lstm_fw(H, xr, gr, cp, hr, wr);
      } else if (q->mode == RNN_GRU) {
        q->K->gru_fw(H, xr, gr, j->pb, hprev + (size_t)((b - b0) * H) * es, hr, wr);
      } else {
        q->K->rnn_fw(H, q->mode == RNN_RELU, xr, gr, hr);
      }
    }
    hprev = ht + (size_t)(b0 * H) * es;
  }
}

typedef struct {
  rnn_seq q;
  const char *py, *pws, *pdy, *pw, *h0, *c0;
  char *pdxp, *pdh, *pdc, *pdhh, *ptmp;
} rnn_bw_job;

static void rnn_bw_band(void *ctx, int64_t b0, int64_t b1, int part) {
  (void)part;
  const rnn_bw_job *j = (const rnn_bw_job *)ctx;
  const rnn_seq *q = &j->q;
  size_t es = lt_itemsize(q->dt);
  int64_t Tn = q->Tn, B = q->B, H = q->H, GH = q->G * H, wsz = q->wsz, nb = b1 - b0;
  char *dh0 = j->pdh + (size_t)(b0 * H) * es, *tmp0 = j->ptmp + (size_t)(b0 * H) * es;
  for (int64_t s = Tn - 1; s >= 0; s--) {
    int64_t t = q->reverse ? Tn - 1 - s : s;
    int64_t tp = q->reverse ? t + 1 : t - 1;          /* the step processed before t */
    const char *hprev = s == 0 ? j->h0 : j->py + (size_t)(tp * B * H) * es;
    const char *wst = j->pws + (size_t)(t * B * wsz) * es;
    const char *ht = j->py + (size_t)(t * B * H) * es;
    char *dgt = j->pdxp + (size_t)(t * B * GH) * es;
    char *dhht = j->pdhh ? j->pdhh + (size_t)(t * B * 3 * H) * es : NULL;
    q->K->vadd(nb * H, dh0, j->pdy + (size_t)((t * B + b0) * H) * es);
    for (int64_t b = b0; b < b1; b++) {
      const char *wr = wst + (size_t)(b * wsz) * es;
      char *dhr = j->pdh + (size_t)(b * H) * es, *dgr = dgt + (size_t)(b * GH) * es;
      if (q->mode == RNN_LSTM) {
        const char *cp = s == 0 ? j->c0 + (size_t)(b * H) * es
                                : j->pws + (size_t)((tp * B + b) * wsz + 4 * H) * es;
        q->K->lstm_bw(H, wr, cp, dhr, j->pdc + (size_t)(b * H) * es, dgr);
      } else if (q->mode == RNN_GRU) {
        q->K->gru_bw(H, wr, hprev + (size_t)(b * H) * es, dhr, dgr, dhht + (size_t)(b * 3 * H) * es);
      } else {
        q->K->rnn_bw(H, q->mode == RNN_RELU, ht + (size_t)(b * H) * es, dhr, dgr);
      }
    }
    /* dh_{t-1} = direct part (already in dh) + (dgates or dhh) @ W_hh */
    const char *src = q->mode == RNN_GRU ? dhht : dgt;
    (q->one_thread ? lt_mm_1t : lt_mm)(q->dt, nb, H, GH, src + (size_t)(b0 * GH) * es, GH, 1, j->pw, H, 1, tmp0, H, 1);
    q->K->vadd(nb * H, dh0, tmp0);
  }
}

/* fn over the B batch rows, in one band per pool thread when the sequence's
   recurrent products (2 Tn B GH H flops) repay the hand-off */
static void run_bands(lua_State *L, rnn_seq *q, void *job, lt_range_fn fn) {
  lt_pool *pool = ltl_settings_of(L)->pool;
  int64_t B = q->B, H = q->H;
  double work = 2.0 * (double)q->Tn * (double)B * (double)(q->G * H) * (double)H;
  int nt = lt_pool_threads(pool);
  if ((double)nt > work / RNN_PAR_MIN_WORK) nt = (int)(work / RNN_PAR_MIN_WORK);
  if (nt > B) nt = (int)B;
  if (nt > 1) {
    q->one_thread = 1;   /* the pool's threads are the parallelism */
    lt_parallel_run(pool, nt, B, fn, job);
  } else {
    fn(job, 0, B, 0);
  }
}

/* T._rnn_forward(mode, reverse, xp, w_hh, b_hh, h0, c0 [, keep_ws]) */
static int l_rnn_forward(lua_State *L) {
  const char *fname = "_rnn_forward";
  int mode = check_mode(L, fname);
  int reverse = lua_toboolean(L, 2);
  lt_tensor *xp = ltl_check(L, 3);
  ltensor_dtype dt = xp->dtype;
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) ltl_error(L, fname, "xp must be float32 or float64");
  if (xp->ndim != 3 || !lt_is_contiguous(xp)) ltl_error(L, fname, "xp must be a contiguous 3-D tensor");
  int64_t Tn = xp->shape[0], B = xp->shape[1], G = gate_count[mode];
  lt_tensor *whh = ltl_check(L, 4);
  if (whh->ndim != 2) ltl_error(L, fname, "w_hh must be 2-D");
  int64_t H = whh->shape[1];
  if (xp->shape[2] != G * H) ltl_error(L, fname, "xp has a wrong shape");
  int64_t swhh[2] = { G * H, H }, sb[1] = { G * H }, sh[2] = { B, H };
  check_arg(L, 4, dt, 2, swhh, fname, "w_hh");
  lt_tensor *bhh = mode == RNN_GRU ? opt_arg(L, 5, dt, 1, sb, fname, "b_hh") : NULL;
  lt_tensor *h0 = check_arg(L, 6, dt, 2, sh, fname, "h0");
  lt_tensor *c0 = mode == RNN_LSTM ? check_arg(L, 7, dt, 2, sh, fname, "c0") : NULL;
  /* keep_ws false (no backward will follow): ws holds two steps, used in
     turn, instead of every step's gate activations */
  int keep = lua_isnoneornil(L, 8) || lua_toboolean(L, 8);
  lua_settop(L, 7);
  int64_t sy[3] = { Tn, B, H };
  lt_tensor *y = ltl_push_new(L, dt, 3, sy);                                    /* 8 */
  lt_tensor *hn = ltl_push_new(L, dt, 2, sh);                                   /* 9 */
  lt_tensor *cn = NULL;
  if (mode == RNN_LSTM) cn = ltl_push_new(L, dt, 2, sh); else lua_pushnil(L);   /* 10 */
  int64_t wsz = mode == RNN_LSTM ? 5 * H : mode == RNN_GRU ? 4 * H : 0;
  int64_t sws[3] = { keep ? Tn : (Tn < 2 ? Tn : 2), B, wsz };
  lt_tensor *ws = ltl_push_new(L, dt, 3, sws);                                  /* 11 */
  int64_t sg[2] = { B, G * H };
  lt_tensor *g = ltl_push_new(L, dt, 2, sg);                                    /* 12: scratch */
  size_t es = lt_dtypes[dt].itemsize;
  char *pxp = lt_data(xp), *pw = lt_data(whh), *py = lt_data(y), *pws = lt_data(ws), *pg = lt_data(g);
  const char *pb = bhh ? lt_data(bhh) : NULL;
  if (mode == RNN_GRU && !pb) {
    lt_tensor *zb = ltl_push_new(L, dt, 1, sb);                                 /* 13: zero b_hh */
    zero_n(lt_data(zb), (size_t)(G * H) * lt_dtypes[dt].itemsize);
    pb = lt_data(zb);
  }
  rnn_fw_job j = { { mode, reverse, dt, Tn, B, G, H, wsz, rows_for(dt), ltl_one_thread(L) }, keep, pxp, pw, pb,
                   lt_data(h0), c0 ? lt_data(c0) : NULL, py, pws, pg };
  if (B * H > 0) run_bands(L, &j.q, &j, rnn_fw_band);
  /* h_n: the last step's h (h0 when there are no steps) */
  const char *hprev = B * H > 0 && Tn > 0 ? py + (size_t)((reverse ? 0 : Tn - 1) * B * H) * es : lt_data(h0);
  int64_t ws_row = wsz, steps = B * H > 0 ? Tn : 0;
  copy_n(lt_data(hn), hprev, (size_t)(B * H) * es);
  if (mode == RNN_LSTM) {
    if (steps == 0) copy_n(lt_data(cn), lt_data(c0), (size_t)(B * H) * es);
    else {
      int64_t tl = keep ? (reverse ? 0 : Tn - 1) : (Tn - 1) % 2;
      for (int64_t b = 0; b < B; b++)
        copy_n(lt_data(cn) + (size_t)(b * H) * es, pws + (size_t)((tl * B + b) * ws_row + 4 * H) * es,
               (size_t)H * es);
    }
  }
  lua_settop(L, 11);
  return 4;
}

/* T._rnn_backward(mode, reverse, xp, w_hh, b_hh, h0, c0, y, ws, dy, dh_n, dc_n) */
static int l_rnn_backward(lua_State *L) {
  const char *fname = "_rnn_backward";
  int mode = check_mode(L, fname);
  int reverse = lua_toboolean(L, 2);
  lt_tensor *xp = ltl_check(L, 3);
  ltensor_dtype dt = xp->dtype;
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) ltl_error(L, fname, "xp must be float32 or float64");
  if (xp->ndim != 3) ltl_error(L, fname, "xp must be 3-D");
  int64_t Tn = xp->shape[0], B = xp->shape[1], G = gate_count[mode];
  lt_tensor *whh = ltl_check(L, 4);
  if (whh->ndim != 2) ltl_error(L, fname, "w_hh must be 2-D");
  int64_t H = whh->shape[1];
  int64_t swhh[2] = { G * H, H }, sh[2] = { B, H }, sy[3] = { Tn, B, H };
  int64_t wsz = mode == RNN_LSTM ? 5 * H : mode == RNN_GRU ? 4 * H : 0;
  int64_t sws[3] = { Tn, B, wsz };
  check_arg(L, 4, dt, 2, swhh, fname, "w_hh");
  lt_tensor *h0 = check_arg(L, 6, dt, 2, sh, fname, "h0");
  lt_tensor *c0 = mode == RNN_LSTM ? check_arg(L, 7, dt, 2, sh, fname, "c0") : NULL;
  lt_tensor *y = check_arg(L, 8, dt, 3, sy, fname, "y");
  lt_tensor *ws = check_arg(L, 9, dt, 3, sws, fname, "ws");
  lt_tensor *dy = check_arg(L, 10, dt, 3, sy, fname, "dy");
  lt_tensor *dhn = check_arg(L, 11, dt, 2, sh, fname, "dh_n");
  lt_tensor *dcn = mode == RNN_LSTM ? opt_arg(L, 12, dt, 2, sh, fname, "dc_n") : NULL;
  lua_settop(L, 12);
  int64_t sg[3] = { Tn, B, G * H };
  lt_tensor *dxp = ltl_push_new(L, dt, 3, sg);                                  /* 13 */
  lt_tensor *dh = ltl_push_new(L, dt, 2, sh);                                   /* 14: dh0 */
  lt_tensor *dc = NULL;
  if (mode == RNN_LSTM) dc = ltl_push_new(L, dt, 2, sh); else lua_pushnil(L);   /* 15: dc0 */
  lt_tensor *dhh = NULL;
  int64_t shh[3] = { Tn, B, 3 * H };
  if (mode == RNN_GRU) dhh = ltl_push_new(L, dt, 3, shh); else lua_pushnil(L);  /* 16 */
  lt_tensor *tmp = ltl_push_new(L, dt, 2, sh);                                  /* 17: scratch */
  size_t es = lt_dtypes[dt].itemsize;
  copy_n(lt_data(dh), lt_data(dhn), (size_t)(B * H) * es);
  if (dc) {
    if (dcn) copy_n(lt_data(dc), lt_data(dcn), (size_t)(B * H) * es);
    else zero_n(lt_data(dc), (size_t)(B * H) * es);
  }
  rnn_bw_job j = { { mode, reverse, dt, Tn, B, G, H, wsz, rows_for(dt), ltl_one_thread(L) }, lt_data(y), lt_data(ws), lt_data(dy),
                   lt_data(whh), lt_data(h0), c0 ? lt_data(c0) : NULL, lt_data(dxp), lt_data(dh),
                   dc ? lt_data(dc) : NULL, dhh ? lt_data(dhh) : NULL, lt_data(tmp) };
  if (B * H > 0 && Tn > 0) run_bands(L, &j.q, &j, rnn_bw_band);
  lua_pushvalue(L, 13);
  lua_pushvalue(L, 14);
  lua_pushvalue(L, 15);
  lua_pushvalue(L, 16);
  return 4;
}

/* ---- the whole-sequence products of the layer ------------------------------
   T._rnn_mm(A, B [, bias]) -> A @ B (+ bias per column), A (M, K) and B (K, N)
   float32/float64 matrices of any strides BLAS takes (a transposed view is
   fine), the result contiguous.  These products (the input projection of
   every step, the weight gradients) are a few MFLOP: OpenBLAS would hand
   each to its own threads, whose wake-up and spinning cost more than the
   product here and compete with the state's pool.  So the rows are cut into
   bands each small enough for OpenBLAS to run on the calling thread, and
   the bands go to the shared pool when the product is large enough. */
#define RNN_SERIAL_MNK 262144      /* OpenBLAS 0.3.21 stays on one thread below M*N*K = 65536 * 4 */
typedef struct {
  ltensor_dtype dt;
  int64_t N, K, band;
  const char *A, *B, *bias;
  int64_t ars, acs, brs, bcs;
  char *C;
} rnn_mm_job;
static void rnn_mm_range(void *ctx, int64_t lo, int64_t hi, int part) {
  (void)part;
  rnn_mm_job *j = (rnn_mm_job *)ctx;
  size_t es = lt_itemsize(j->dt);
  for (int64_t bi = lo; bi < hi; bi++) {
    int64_t m0 = bi * j->band;
    lt_mm(j->dt, j->band, j->N, j->K, j->A + (size_t)(m0 * j->ars) * es, j->ars, j->acs, j->B, j->brs, j->bcs,
          j->C + (size_t)(m0 * j->N) * es, j->N, 1);
  }
}
static int l_rnn_mm(lua_State *L) {
  const char *fname = "_rnn_mm";
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  lt_tensor *bias = lua_isnoneornil(L, 3) ? NULL : ltl_check(L, 3);
  if (a->ndim != 2 || b->ndim != 2) ltl_error(L, fname, "expected two matrices");
  if (a->dtype != b->dtype || (a->dtype != LTENSOR_FLOAT32 && a->dtype != LTENSOR_FLOAT64))
    ltl_error(L, fname, "expected float32 or float64 matrices of one dtype");
  if (a->shape[1] != b->shape[0]) ltl_error(L, fname, "inner sizes differ (%I and %I)", a->shape[1], b->shape[0]);
  if (bias && (bias->dtype != a->dtype || bias->ndim != 1 || bias->shape[0] != b->shape[1] || !lt_is_contiguous(bias)))
    ltl_error(L, fname, "bias must be a contiguous vector of the output's width and dtype");
  int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
  int64_t shape[2] = { M, N };
  lt_tensor *c = ltl_push_new(L, a->dtype, 2, shape);
  if (M == 0 || N == 0) return 1;
  size_t es = lt_itemsize(a->dtype);
  rnn_mm_job j = { a->dtype, N, K, 0, lt_data(a), lt_data(b), bias ? lt_data(bias) : NULL,
                   a->stride[0], a->stride[1], b->stride[0], b->stride[1], lt_data(c) };
  int64_t per = N * (K > 0 ? K : 1);
  int64_t band = RNN_SERIAL_MNK / per;
  if (band < 1) band = 1;
  if (band > M) band = M;
  /* bands of equal height: the last one may be shorter, so run it apart */
  int64_t nfull = M / band, rest = M - nfull * band;
  j.band = band;
  int nt = lt_pool_threads(ltl_settings_of(L)->pool);
  double work = 2.0 * (double)M * (double)N * (double)K;
  if ((double)nt > work / RNN_PAR_MIN_WORK) nt = (int)(work / RNN_PAR_MIN_WORK);
  if (nt > nfull) nt = (int)nfull;
  if (nt > 1) lt_parallel_run(ltl_settings_of(L)->pool, nt, nfull, rnn_mm_range, &j);
  else rnn_mm_range(&j, 0, nfull, 0);
  if (rest > 0) {
    int64_t m0 = nfull * band;
    lt_mm(a->dtype, rest, N, K, j.A + (size_t)(m0 * j.ars) * es, j.ars, j.acs, j.B, j.brs, j.bcs,
          j.C + (size_t)(m0 * N) * es, N, 1);
  }
  if (bias) {
    if (a->dtype == LTENSOR_FLOAT32) {
      float *cf = (float *)(void *)lt_data(c);
      const float *bf = (const float *)(const void *)lt_data(bias);
      for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < N; k++) cf[i * N + k] += bf[k];
    } else {
      double *cd = (double *)(void *)lt_data(c);
      const double *bd = (const double *)(const void *)lt_data(bias);
      for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < N; k++) cd[i * N + k] += bd[k];
    }
  }
  return 1;
}

const ltl_reg ltl_reg_rnn[] = {
  { "_rnn_mm", l_rnn_mm, LT_MODULE, NULL },
  { "_rnn_forward", l_rnn_forward, LT_MODULE, NULL },
  { "_rnn_backward", l_rnn_backward, LT_MODULE, NULL },
  { NULL, NULL, 0, NULL }
};
