/* lt_rnn.c -- the step loop of a recurrent layer (RNN tanh/relu, LSTM, GRU)
 * for one layer and one direction, forward and backward; Lua-free (the
 * binding, src/binding/l_rnn.c, checks the arguments and allocates).
 *
 * lua/ltensor/nn_rnn.lua wraps these in one autograd node per layer and
 * direction: it computes the input projection of every timestep as one gemm
 * (lt_rnn_mm) before the forward, and the weight gradients as
 * whole-sequence gemms after the backward, so what is left here is what
 * cannot be batched over time: per step one gemm h @ W_hh^T for all gates
 * and the gate math, which in Lua would be a dozen tensor ops (and, with
 * autograd, a dozen graph nodes) per step.  Layouts: lt_rnn.h.
 */
#include "lt_mv_split.h"
#include <math.h>
#include <string.h>
#include "lt_rnn.h"
#include "lt_blas.h"
#include "lt_cpu.h"

/* memcpy/memset of n bytes; an empty tensor's data pointer may be NULL,
   which memcpy must not see even for n == 0 */
static void copy_n(void *d, const void *s, size_t n) { if (n) memcpy(d, s, n); }

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
#if LT_CPU_X86 && !defined(__clang__)
#define RNN_HAVE_AVX2 1
#define RNN_AVX2 LT_TARGET_AVX2_FMA
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
  if (lt_cpu_has_avx2_fma()) return &rows_avx2[k];
#endif
  return &rows_gen[k];
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
  lt_pool *pool;              /* a one-row band's product over the pool (lt_mv_split), when not on it */
} rnn_seq;

/* C (nb x N) = A (nb x K) @ B: a band of one row (batch 1, the per-token
   step of a language model) spreads over the pool when the band is not
   already one of the pool's parts */
static void step_mm(const rnn_seq *q, int64_t nb, int64_t N, int64_t K, const char *A, int64_t ars,
                    const char *B, int64_t brs, int64_t bcs, char *C) {
  if (!q->one_thread && nb == 1 && lt_mv_split(q->pool, q->dt, 0, nb, N, K, A, ars, 1, B, brs, bcs, C, N, 1)) return;
  (q->one_thread ? lt_mm_1t : lt_mm)(q->dt, nb, N, K, A, ars, 1, B, brs, bcs, C, N, 1);
}

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
    step_mm(q, nb, GH, H, hprev, H, j->pw, 1, H, pg);
    char *ht = j->py + (size_t)(t * B * H) * es;
    int64_t slot = j->keep ? t : s % 2, pslot = j->keep ? tp : (s + 1) % 2;   /* ws rows of t and t-1 */
    char *wst = j->pws + (size_t)(slot * B * wsz) * es;
    const char *xt = j->pxp + (size_t)(t * B * GH) * es;
    for (int64_t b = b0; b < b1; b++) {
      const char *xr = xt + (size_t)(b * GH) * es, *gr = j->pg + (size_t)(b * GH) * es;
      char *hr = ht + (size_t)(b * H) * es, *wr = wst + (size_t)(b * wsz) * es;
      if (q->mode == LT_RNN_LSTM) {
        /* c_{t-1}: c0's row, or the cell column of the previous step's ws */
        const char *cp = s == 0 ? j->c0 + (size_t)(b * H) * es
                                : j->pws + (size_t)((pslot * B + b) * wsz + 4 * H) * es;
        q->K->lstm_fw(H, xr, gr, cp, hr, wr);
      } else if (q->mode == LT_RNN_GRU) {
        q->K->gru_fw(H, xr, gr, j->pb, hprev + (size_t)((b - b0) * H) * es, hr, wr);
      } else {
        q->K->rnn_fw(H, q->mode == LT_RNN_RELU, xr, gr, hr);
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
      if (q->mode == LT_RNN_LSTM) {
        const char *cp = s == 0 ? j->c0 + (size_t)(b * H) * es
                                : j->pws + (size_t)((tp * B + b) * wsz + 4 * H) * es;
        q->K->lstm_bw(H, wr, cp, dhr, j->pdc + (size_t)(b * H) * es, dgr);
      } else if (q->mode == LT_RNN_GRU) {
        q->K->gru_bw(H, wr, hprev + (size_t)(b * H) * es, dhr, dgr, dhht + (size_t)(b * 3 * H) * es);
      } else {
        q->K->rnn_bw(H, q->mode == LT_RNN_RELU, ht + (size_t)(b * H) * es, dhr, dgr);
      }
    }
    /* dh_{t-1} = direct part (already in dh) + (dgates or dhh) @ W_hh */
    const char *src = q->mode == LT_RNN_GRU ? dhht : dgt;
    step_mm(q, nb, H, GH, src + (size_t)(b0 * GH) * es, GH, j->pw, H, 1, tmp0);
    q->K->vadd(nb * H, dh0, tmp0);
  }
}

/* fn over the B batch rows, in one band per pool thread when the sequence's
   recurrent products (2 Tn B GH H flops) repay the hand-off */
static void run_bands(lt_pool *pool, rnn_seq *q, void *job, lt_range_fn fn) {
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

/* ---- the whole-sequence products of the layer ------------------------------
   lt_rnn_mm (lt_rnn.h).  These products (the input projection of
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
static void bias_rows(ltensor_dtype dt, int64_t M, int64_t N, const void *bias, void *C) {
  if (dt == LTENSOR_FLOAT32) {
    float *cf = C;
    const float *bf = bias;
    for (int64_t i = 0; i < M; i++)
      for (int64_t k = 0; k < N; k++) cf[i * N + k] += bf[k];
  } else {
    double *cd = C;
    const double *bd = bias;
    for (int64_t i = 0; i < M; i++)
      for (int64_t k = 0; k < N; k++) cd[i * N + k] += bd[k];
  }
}

void lt_rnn_mm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t ars, int64_t acs,
               const void *B, int64_t brs, int64_t bcs, const void *bias, void *C, lt_pool *pool) {
  if (M == 0 || N == 0) return;
  size_t es = lt_itemsize(dt);
  rnn_mm_job j = { dt, N, K, 0, A, B, bias, ars, acs, brs, bcs, C };
  int64_t per = N * (K > 0 ? K : 1);
  int64_t band = RNN_SERIAL_MNK / per;
  if (band < 1) band = 1;
  if (band > M) band = M;
  /* bands of equal height: the last one may be shorter, so run it apart */
  int64_t nfull = M / band, rest = M - nfull * band;
  j.band = band;
  /* one row (one step of one sequence): the output's columns over the pool */
  if (M == 1 && lt_mv_split(pool, dt, 0, M, N, K, A, ars, acs, B, brs, bcs, C, N, 1)) {
    if (bias) bias_rows(dt, M, N, bias, C);
    return;
  }
  int nt = lt_pool_threads(pool);
  double work = 2.0 * (double)M * (double)N * (double)K;
  if ((double)nt > work / RNN_PAR_MIN_WORK) nt = (int)(work / RNN_PAR_MIN_WORK);
  if (nt > nfull) nt = (int)nfull;
  if (nt > 1) lt_parallel_run(pool, nt, nfull, rnn_mm_range, &j);
  else rnn_mm_range(&j, 0, nfull, 0);
  if (rest > 0) {
    int64_t m0 = nfull * band;
    lt_mm(dt, rest, N, K, j.A + (size_t)(m0 * j.ars) * es, j.ars, j.acs, j.B, j.brs, j.bcs,
          j.C + (size_t)(m0 * N) * es, N, 1);
  }
  if (bias) bias_rows(dt, M, N, bias, C);
}

/* ---- the layer's two passes -------------------------------------------- */
void lt_rnn_forward(const lt_rnn_fw *a, lt_pool *pool, int one_thread) {
  int64_t Tn = a->Tn, B = a->B, H = a->H, wsz = lt_rnn_ws_row(a->mode, H);
  size_t es = lt_itemsize(a->dt);
  rnn_fw_job j = { { a->mode, a->reverse, a->dt, Tn, B, lt_rnn_gates(a->mode), H, wsz, rows_for(a->dt), one_thread,
                     pool },
                   a->keep, a->xp, a->w_hh, a->b_hh, a->h0, a->c0, a->y, a->ws, a->g };
  if (B * H > 0) run_bands(pool, &j.q, &j, rnn_fw_band);
  /* h_n: the last step's h (h0 when there are no steps) */
  const char *py = a->y, *pws = a->ws;
  const char *hprev = B * H > 0 && Tn > 0 ? py + (size_t)((a->reverse ? 0 : Tn - 1) * B * H) * es
                                          : (const char *)a->h0;
  int64_t steps = B * H > 0 ? Tn : 0;
  copy_n(a->h_n, hprev, (size_t)(B * H) * es);
  if (a->mode != LT_RNN_LSTM) return;
  if (steps == 0) { copy_n(a->c_n, a->c0, (size_t)(B * H) * es); return; }
  /* c_n: the cell column of the last step's workspace rows */
  int64_t tl = a->keep ? (a->reverse ? 0 : Tn - 1) : (Tn - 1) % 2;
  for (int64_t b = 0; b < B; b++)
    copy_n((char *)a->c_n + (size_t)(b * H) * es, pws + (size_t)((tl * B + b) * wsz + 4 * H) * es,
           (size_t)H * es);
}

void lt_rnn_backward(const lt_rnn_bw *a, lt_pool *pool, int one_thread) {
  int64_t Tn = a->Tn, B = a->B, H = a->H;
  size_t es = lt_itemsize(a->dt);
  copy_n(a->dh0, a->dh_n, (size_t)(B * H) * es);
  if (a->dc0) {
    if (a->dc_n) copy_n(a->dc0, a->dc_n, (size_t)(B * H) * es);
    else if (B * H > 0) memset(a->dc0, 0, (size_t)(B * H) * es);
  }
  rnn_bw_job j = { { a->mode, a->reverse, a->dt, Tn, B, lt_rnn_gates(a->mode), H, lt_rnn_ws_row(a->mode, H),
                     rows_for(a->dt), one_thread, pool },
                   a->y, a->ws, a->dy, a->w_hh, a->h0, a->c0, a->dxp, a->dh0, a->dc0, a->dhh, a->tmp };
  if (B * H > 0 && Tn > 0) run_bands(pool, &j.q, &j, rnn_bw_band);
}
