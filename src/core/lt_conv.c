/* lt_conv.c -- convolution (im2col + BLAS gemm), pooling and interpolation
   kernels for float32/float64.  See lt_conv.h for the layout conventions.

   The gemms go through lt_gemm_tiles rather than lt_mm because the weight
   gradient accumulates over samples (beta = 1), which lt_mm does not offer.
   The binding validates every size before a kernel runs (all positive and
   within blasint), so OpenBLAS never sees a bad argument. */
#include <math.h>
#include <string.h>
#include "lt_conv.h"
#include "lt_gemm_tiles.h"
#include "lt_cpu.h"


/* First and one-past-last output index o in [0, n) whose input position
   o*s + off lies in [0, len). */
static inline void valid_range(int64_t n, int64_t s, int64_t off, int64_t len, int64_t *a, int64_t *b) {
  int64_t lo, hi;
  if (s == 1) {   /* no division: im2col/col2im call this per channel and tap */
    lo = off >= 0 ? 0 : -off;
    hi = len - off < 0 ? 0 : len - off;
  } else {
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    hi = (len - 1 - off) < 0 ? 0 : (len - 1 - off) / s + 1;
  }
  if (hi > n) hi = n;
  if (lo > hi) lo = hi;
  *a = lo;
  *b = hi;
}

static int is_direct(const lt_conv_geom *g) {
  return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->Hs == g->Hb &&
         g->Ws == g->Wb;
}

/* Products go through lt_gemm_tiles (tiles OpenBLAS runs on the calling
   thread; the binding splits the work over the state's pool). */
#define GEMM_SERIAL_MNK LT_GEMM_SERIAL_MNK

/* The im2col (col2im) block: a whole image while its columns fit in
   COL_BYTES, so that the per-channel-and-tap work of im2col/col2im is paid
   once per image and the block stays in L2 while the tiles read it (in
   place: leading dimension = the block's width). */
#define COL_BYTES (1 << 20)
int64_t lt_conv_rows(const lt_conv_geom *g) {
  int64_t Hs = g->Hs > 0 ? g->Hs : 1;
  if (g->col_rows > 0) return g->col_rows < Hs ? g->col_rows : Hs;
  int64_t per_row = g->Cb * g->kh * g->kw * g->Ws * (int64_t)lt_itemsize(g->dt);
  int64_t r = per_row > 0 ? COL_BYTES / per_row : Hs;
  if (r > Hs) r = Hs;
  return r < 1 ? 1 : r;
}

/* Images per product: small grids (resnet18's 7x7 and 3x3 layers) make
   gemms 9-49 columns wide, so up to SMALL_COLS columns' worth of images
   share one im2col and one product (outputs scattered back per image). */
#define SMALL_COLS 128
/* the weight gradient's transposed buffers: row padding (see conv_wgrad) */
#define WGRAD_PAD 8
int64_t lt_conv_nimg(const lt_conv_geom *g) {
  int64_t L = g->Hs * g->Ws;
  if (is_direct(g) || L <= 0 || L >= 64 || lt_conv_rows(g) < g->Hs || g->N <= 1) return 1;
  int64_t n = (SMALL_COLS + L - 1) / L;
  return n < g->N ? n : g->N;
}

/* im2col block (times the images per product), then (several images) the
   product's output before it is scattered */
int64_t lt_conv_scratch(const lt_conv_geom *g) {
  int64_t ni = lt_conv_nimg(g), cols = lt_conv_rows(g) * g->Ws * ni;
  return (is_direct(g) ? 0 : g->Cb * g->kh * g->kw * cols) + (ni > 1 ? g->Cs * cols : 0);
}
/* the input gradient's part (g->cb_parts slices of the big channels): col
   of its channels' K rows, then the gathered small grids (several images) */
static int64_t big_kp(const lt_conv_geom *g) {
  int64_t parts = g->cb_parts > 1 ? g->cb_parts : 1;
  return (g->Cb + parts - 1) / parts * g->kh * g->kw;
}
int64_t lt_conv_big_scratch(const lt_conv_geom *g) {
  int64_t ni = lt_conv_nimg(g), cols = lt_conv_rows(g) * g->Ws * ni;
  return (is_direct(g) ? 0 : big_kp(g) * cols) + (ni > 1 ? g->Cs * cols : 0);
}
/* the weight gradient as gw^T += im2col @ gout^T (see conv_wgrad): one
   image per product, blocks of >= WGRAD_TR_MIN columns, and products large
   enough to repay the transpositions (a 1 -> 16 channel first layer took
   4x longer that way) */
#define WGRAD_TR_MIN 64
/* Several images per product (grids under 64 pixels) take it too while gw^T
   stays within WGRAD_TR_MAX_BYTES (one thread, batch 8: 256 -> 256 at 7x7
   6.1 -> 4.0 ms, 128 -> 256 stride 2 at 14x14 3.1 -> 2.0 ms; 512 -> 512 at
   4x4, 9.4 MB of gw^T, 6.1 -> 8.8 ms, so it stays NT). */
#define WGRAD_TR_MAX_BYTES ((int64_t)4 << 20)
static int wgrad_tr(const lt_conv_geom *g) {
  int64_t K = g->Cb * g->kh * g->kw, ni = lt_conv_nimg(g);
  if (ni > 1 && K * g->Cs * (int64_t)lt_itemsize(g->dt) > WGRAD_TR_MAX_BYTES) return 0;
  return lt_conv_rows(g) * g->Ws * ni >= WGRAD_TR_MIN && g->Cs >= 32 && K >= 64;
}
/* the im2col block of nch big channels (the weight gradient's part), before its transposed buffers */
static int64_t wgrad_col(const lt_conv_geom *g, int64_t nch) {
  return is_direct(g) ? 0 : nch * g->kh * g->kw * lt_conv_rows(g) * g->Ws * lt_conv_nimg(g);
}
int64_t lt_conv_wgrad_scratch(const lt_conv_geom *g, int64_t nch) {
  int64_t ld = g->Cs + WGRAD_PAD, tr = wgrad_tr(g);
  return wgrad_col(g, nch) + lt_conv_rows(g) * g->Ws * lt_conv_nimg(g) * ld + (tr ? g->G * ld * nch * g->kh * g->kw : 0);
}

#define FLOAT_TYPES(X) X(float) X(double)

static inline void gemm_tiles_float(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  lt_gemm_tiles_f32(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
static inline void gemm_tiles_double(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  lt_gemm_tiles_f64(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}


#define DEFINE_CONV(T)                                                                                      \
  /* im2col of one group's big image (Cb planes) for small rows [r0, r1):                                  \
     col has K rows of (r1 - r0) * Ws */                                                                   \
  static void im2col_##T(const lt_conv_geom *g, const T *big, T *col, int64_t r0, int64_t r1, int64_t L) { \
    int64_t Ws = g->Ws;   /* L: col's row stride (>= (r1 - r0) * Ws; wider when images share it) */      \
    int span = g->sh == 1 && g->sw == 1 && Ws == g->Wb;                                                    \
    for (int64_t c = 0; c < g->Cb; c++) {                                                                  \
      const T *plane = big + c * g->Hb * g->Wb;                                                            \
      for (int64_t i = 0; i < g->kh; i++)                                                                  \
        for (int64_t j = 0; j < g->kw; j++) {                                                              \
          T *row = col + ((c * g->kh + i) * g->kw + j) * L - r0 * Ws;                                      \
          int64_t ow0, ow1, oh0, oh1, offw = j * g->dw - g->pw, offh = i * g->dh - g->ph;                  \
          valid_range(Ws, g->sw, offw, g->Wb, &ow0, &ow1);                                                 \
          valid_range(g->Hs, g->sh, offh, g->Hb, &oh0, &oh1);                                              \
          /* (a padding taller than the block puts every valid row past it: the                          \
             leading zeros stop at r1, as the block does) */                                               \
          if (oh0 < r0) oh0 = r0;                                                                          \
          if (oh0 > r1) oh0 = r1;                                                                          \
          if (oh1 > r1) oh1 = r1;                                                                          \
          if (oh1 < oh0) oh1 = oh0;                                                                        \
          if (oh0 > r0) memset(row + r0 * Ws, 0, sizeof(T) * (size_t)((oh0 - r0) * Ws));                   \
          if (span && oh1 > oh0 && ow1 > ow0) {                                                             \
            /* unit strides, equal widths: the valid taps of rows [oh0, oh1) are one shifted run of the    \
               plane; copy it whole, then zero the columns that wrapped round a row edge */                \
            int64_t e0 = oh0 * Ws + ow0, e1 = (oh1 - 1) * Ws + ow1;                                        \
            if (e1 > e0) memcpy(row + e0, plane + e0 + offh * g->Wb + offw, sizeof(T) * (size_t)(e1 - e0));  \
            for (int64_t oh = oh0; oh < oh1; oh++) {                                                       \
              T *r = row + oh * Ws;                                                                        \
              for (int64_t ow = 0; ow < ow0; ow++) r[ow] = 0;                                              \
              for (int64_t ow = ow1; ow < Ws; ow++) r[ow] = 0;                                             \
            }                                                                                              \
            if (oh1 < r1) memset(row + oh1 * Ws, 0, sizeof(T) * (size_t)((r1 - oh1) * Ws));                \
            continue;                                                                                      \
          }                                                                                                \
          for (int64_t oh = oh0; oh < oh1; oh++) {                                                         \
            T *r = row + oh * Ws;                                                                          \
            const T *src = plane + (oh * g->sh + offh) * g->Wb + offw;                                     \
            for (int64_t ow = 0; ow < ow0; ow++) r[ow] = 0;                                                \
            if (g->sw == 1) memcpy(r + ow0, src + ow0, sizeof(T) * (size_t)(ow1 - ow0));                   \
            else if (g->sw == 2)   /* a constant stride: vectorised (the stem's 7x7/2 spent a quarter here) */ \
              for (int64_t ow = ow0; ow < ow1; ow++) r[ow] = src[2 * ow];                                  \
            else                                                                                           \
              for (int64_t ow = ow0; ow < ow1; ow++) r[ow] = src[ow * g->sw];                              \
            for (int64_t ow = ow1; ow < Ws; ow++) r[ow] = 0;                                               \
          }                                                                                                \
          if (oh1 < r1) memset(row + oh1 * Ws, 0, sizeof(T) * (size_t)((r1 - oh1) * Ws));                  \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* destination columns [x0, x1) where some of the three taps fall outside                               \
     the source row: the taps that are inside, in order */                                                 \
  static inline void col2im3_edge_##T(T *d, const T *s0, const T *s1, const T *s2, int64_t o0, int64_t o1, \
                                      int64_t o2, int64_t Ws, int64_t x0, int64_t x1) {                    \
    for (int64_t x = x0; x < x1; x++) {                                                                    \
      T t = d[x];                                                                                          \
      if (x - o0 >= 0 && x - o0 < Ws) t += s0[x - o0];                                                     \
      if (x - o1 >= 0 && x - o1 < Ws) t += s1[x - o1];                                                     \
      if (x - o2 >= 0 && x - o2 < Ws) t += s2[x - o2];                                                     \
      d[x] = t;                                                                                            \
    }                                                                                                      \
  }                                                                                                        \
  /* col2im for unit strides and 3 taps across: by destination row, each row                              \
     read and written once per tap row i with its three taps j added in                                    \
     registers, ((d + t0) + t1) + t2: the same terms in the same order per                                 \
     pixel as the tap-by-tap passes (which stall on store forwarding, each                                 \
     pass re-reading what the one before stored one element over) */                                       \
  static void col2im3_##T(const lt_conv_geom *g, const T *col, int64_t L, T *big, int64_t r0, int64_t r1) { \
    int64_t Ws = g->Ws, Wb = g->Wb, oh_lo = r0 > 0 ? r0 : 0, oh_hi = r1 < g->Hs ? r1 : g->Hs;           \
    int64_t o0 = -g->pw, o1 = g->dw - g->pw, o2 = 2 * g->dw - g->pw;   /* x = ow + o_j */                 \
    int64_t xa = o2 > 0 ? o2 : 0, xb = Ws + o0 < Wb ? Ws + o0 : Wb;   /* all three taps inside */        \
    if (xb < xa) xb = xa;                                                                                  \
    int64_t ylo = oh_lo - g->ph, yhi = oh_hi - 1 + (g->kh - 1) * g->dh - g->ph + 1;                        \
    if (ylo < 0) ylo = 0;                                                                                  \
    if (yhi > g->Hb) yhi = g->Hb;                                                                          \
    for (int64_t c = 0; c < g->Cb; c++) {                                                                  \
      T *plane = big + c * g->Hb * Wb;                                                                     \
      for (int64_t y = ylo; y < yhi; y++) {                                                                \
        T *restrict d = plane + y * Wb;                                                                    \
        for (int64_t i = 0; i < g->kh; i++) {                                                              \
          int64_t oh = y - (i * g->dh - g->ph);                                                            \
          if (oh < oh_lo || oh >= oh_hi) continue;                                                         \
          const T *restrict s0 = col + ((c * g->kh + i) * 3) * L + (oh - r0) * Ws;                         \
          const T *restrict s1 = s0 + L, *restrict s2 = s1 + L;                                            \
          col2im3_edge_##T(d, s0, s1, s2, o0, o1, o2, Ws, 0, xa < Wb ? xa : Wb);                           \
          for (int64_t x = xa; x < xb; x++) d[x] = ((d[x] + s0[x - o0]) + s1[x - o1]) + s2[x - o2];        \
          col2im3_edge_##T(d, s0, s1, s2, o0, o1, o2, Ws, xb > xa ? xb : xa, Wb);                          \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* big += col2im(col) for one group, col holding small rows [r0, r1); col                              \
     is scratch and may be changed */                                                                      \
  static void col2im_##T(const lt_conv_geom *g, T *col, int64_t L, T *big, int64_t r0, int64_t r1) {      \
    int64_t Ws = g->Ws;                                                                                    \
    if (g->sh == 1 && g->sw == 1 && g->kw == 3) { col2im3_##T(g, col, L, big, r0, r1); return; }         \
    int span = g->sh == 1 && g->sw == 1 && Ws == g->Wb;                                                    \
    for (int64_t c = 0; c < g->Cb; c++) {                                                                  \
      T *plane = big + c * g->Hb * g->Wb;                                                                  \
      for (int64_t i = 0; i < g->kh; i++)                                                                  \
        for (int64_t j = 0; j < g->kw; j++) {                                                              \
          T *row = col + ((c * g->kh + i) * g->kw + j) * L - r0 * Ws;                                      \
          int64_t ow0, ow1, oh0, oh1, offw = j * g->dw - g->pw, offh = i * g->dh - g->ph;                  \
          valid_range(Ws, g->sw, offw, g->Wb, &ow0, &ow1);                                                 \
          valid_range(g->Hs, g->sh, offh, g->Hb, &oh0, &oh1);                                              \
          if (oh0 < r0) oh0 = r0;                                                                          \
          if (oh1 > r1) oh1 = r1;                                                                          \
          if (span && oh1 > oh0 && ow1 > ow0) {                                                             \
            /* unit strides, equal widths (im2col's shifted run): zero the entries whose taps wrap        \
               round a row edge, then add the whole run in one loop.  Each pixel still gets its            \
               terms in the same order; the extra +0.0 terms change no value (the plane starts at          \
               +0.0, so no sum is -0.0) */                                                                 \
            for (int64_t oh = oh0; oh < oh1; oh++) {                                                       \
              T *r = row + oh * Ws;                                                                        \
              for (int64_t ow = 0; ow < ow0; ow++) r[ow] = 0;                                              \
              for (int64_t ow = ow1; ow < Ws; ow++) r[ow] = 0;                                             \
            }                                                                                              \
            int64_t e0 = oh0 * Ws + ow0, e1 = (oh1 - 1) * Ws + ow1, shift = offh * g->Wb + offw;           \
            T *restrict dst = plane + e0 + shift;                                                          \
            const T *restrict src = row + e0;                                                              \
            for (int64_t e = 0; e < e1 - e0; e++) dst[e] += src[e];                                        \
            continue;                                                                                      \
          }                                                                                                \
          for (int64_t oh = oh0; oh < oh1; oh++) {                                                         \
            const T *r = row + oh * Ws;                                                                    \
            T *dst = plane + (oh * g->sh + offh) * g->Wb + offw;                                           \
            if (g->sw == 1)                                                                                \
              for (int64_t ow = ow0; ow < ow1; ow++) dst[ow] += r[ow];                                     \
            else                                                                                           \
              for (int64_t ow = ow0; ow < ow1; ow++) dst[ow * g->sw] += r[ow];                             \
          }                                                                                                \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* several images per product (lt_conv_nimg > 1: whole-image blocks): items (image group, group, channel \
     slice); the images' im2cols side by side in col (row stride W), the product in out, scattered back */ \
  /* the im2col of image group ng (= image group * G + group), images side by side (row stride W) */      \
  static void multi_col_##T(const lt_conv_geom *g, const T *big, int64_t ng, T *col) {                     \
    int64_t L = g->Hs * g->Ws, Bsz = g->Cb * g->Hb * g->Wb, ni = lt_conv_nimg(g);                          \
    int64_t gi = ng % g->G, n0 = ng / g->G * ni, n1 = n0 + ni < g->N ? n0 + ni : g->N, W = (n1 - n0) * L;  \
    for (int64_t n = n0; n < n1; n++) im2col_##T(g, big + (n * g->G + gi) * Bsz, col + (n - n0) * L, 0, g->Hs, W); \
  }                                                                                                        \
  /* the small grids of image group ng side by side (Cs x W) */                                           \
  static void multi_gather_##T(const lt_conv_geom *g, const T *small, int64_t ng, T *in) {                 \
    int64_t L = g->Hs * g->Ws, ni = lt_conv_nimg(g);                                                       \
    int64_t gi = ng % g->G, n0 = ng / g->G * ni, n1 = n0 + ni < g->N ? n0 + ni : g->N, W = (n1 - n0) * L;  \
    for (int64_t n = n0; n < n1; n++)                                                                      \
      for (int64_t o = 0; o < g->Cs; o++)                                                                  \
        memcpy(in + o * W + (n - n0) * L, small + ((n * g->G + gi) * g->Cs + o) * L, sizeof(T) * (size_t)L); \
  }                                                                                                        \
  /* lt_conv_multi_prep: image group ng's block of every image group's im2col (small) or gathered grids   \
     (big) */                                                                                              \
  static void multi_prep_##T(const lt_conv_geom *g, int to_small, const T *src, T *prep, int64_t lo, int64_t hi) { \
    int64_t per = (to_small ? g->Cb * g->kh * g->kw : g->Cs) * lt_conv_nimg(g) * g->Hs * g->Ws;            \
    for (int64_t ng = lo; ng < hi; ng++) {                                                                 \
      if (to_small) multi_col_##T(g, src, ng, prep + ng * per);                                            \
      else multi_gather_##T(g, src, ng, prep + ng * per);                                                  \
    }                                                                                                      \
  }                                                                                                        \
  static void conv_small_multi_##T(const lt_conv_geom *g, const T *big, const T *w, const T *bias, T *small, \
                                   const T *prep, T *col, int64_t lo, int64_t hi) {                        \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw, ni = lt_conv_nimg(g);                            \
    int64_t parts = g->cs_parts > 0 ? g->cs_parts : 1, built = -1;                                         \
    T *out = col + K * ni * L;                                                                             \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t part = it % parts, ng = it / parts, gi = ng % g->G, n0 = ng / g->G * ni;                     \
      int64_t n1 = n0 + ni < g->N ? n0 + ni : g->N, W = (n1 - n0) * L;                                     \
      int64_t m0 = g->Cs * part / parts, m1 = g->Cs * (part + 1) / parts;                                  \
      if (m1 <= m0) continue;                                                                              \
      const T *c = prep ? prep + ng * K * ni * L : col;   /* made once for all slices, or here */          \
      if (!prep && built != ng) multi_col_##T(g, big, ng, col);                                            \
      built = ng;                                                                                          \
      gemm_tiles_##T(0, 0, m1 - m0, W, K, w + (gi * g->Cs + m0) * K, K, c, W, 0, out, W);                  \
      for (int64_t n = n0; n < n1; n++)                                                                    \
        for (int64_t o = m0; o < m1; o++) {                                                                \
          T bv = bias ? bias[gi * g->Cs + o] : (T)0, *dst = small + ((n * g->G + gi) * g->Cs + o) * L;     \
          const T *src = out + (o - m0) * W + (n - n0) * L;                                                \
          for (int64_t l = 0; l < L; l++) dst[l] = src[l] + bv;                                            \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* the same for big = col2im(W^T @ small): items (image group, group, slice of the big channels); the    \
     images' small grids gathered side by side first (by every slice's part) */                           \
  static void conv_big_multi_##T(const lt_conv_geom *g, const T *small, const T *w, const T *bias, T *big,  \
                                 const T *prep, T *col, int64_t lo, int64_t hi) {                          \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw, P = g->Hb * g->Wb, Bsz = g->Cb * P;              \
    int64_t ni = lt_conv_nimg(g), parts = g->cb_parts > 1 ? g->cb_parts : 1, taps = g->kh * g->kw;        \
    T *in = col + big_kp(g) * ni * L;                                                                      \
    int64_t gathered = -1;                                                                                 \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t part = it % parts, rest = it / parts;                                                        \
      int64_t gi = rest % g->G, n0 = rest / g->G * ni, n1 = n0 + ni < g->N ? n0 + ni : g->N, W = (n1 - n0) * L; \
      int64_t c0 = g->Cb * part / parts, c1 = g->Cb * (part + 1) / parts;                                  \
      if (c1 <= c0) continue;                                                                              \
      lt_conv_geom gc = *g;   /* col2im of the slice's channels */                                         \
      gc.Cb = c1 - c0;                                                                                     \
      const T *src = prep ? prep + rest * g->Cs * ni * L : in;   /* gathered once for all slices, or here */ \
      if (!prep && gathered != rest) multi_gather_##T(g, small, rest, in);                                 \
      gathered = rest;                                                                                     \
      gemm_tiles_##T(1, 0, (c1 - c0) * taps, W, g->Cs, w + gi * g->Cs * K + c0 * taps, K, src, W, 0, col, W); \
      for (int64_t n = n0; n < n1; n++) {                                                                  \
        T *b = big + (n * g->G + gi) * Bsz + c0 * P;                                                       \
        memset(b, 0, sizeof(T) * (size_t)((c1 - c0) * P));                                                 \
        col2im_##T(&gc, col + (n - n0) * L, W, b, 0, g->Hs);                                               \
        if (bias)                                                                                          \
          for (int64_t c = c0; c < c1; c++)                                                                \
            for (int64_t p = 0; p < P; p++) b[(c - c0) * P + p] += bias[gi * g->Cb + c];                   \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* items: (sample, group, block of small rows, slice of the small channels), flattened in that order;  \
     each part builds the im2col of the blocks it meets (a block split over two parts is built twice:     \
     cheap next to the gemms, K x Lc copies against Cs/parts multiply-adds per copied value) */            \
  static void conv_small_##T(const lt_conv_geom *g, const T *big, const T *w, const T *bias, T *small,    \
                             const T *prep, T *col, int64_t lo, int64_t hi) {                              \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw, Bsz = g->Cb * g->Hb * g->Wb;                     \
    int64_t cb = lt_conv_rows(g), nb = (g->Hs + cb - 1) / cb, parts = g->cs_parts > 0 ? g->cs_parts : 1;   \
    int direct = is_direct(g);                                                                             \
    int64_t built = -1;   /* the block whose im2col is in col: a part's slices of one block share it */   \
    if (lt_conv_nimg(g) > 1) { conv_small_multi_##T(g, big, w, bias, small, prep, col, lo, hi); return; }  \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t part = it % parts, blk = (it / parts) % nb, ng = it / parts / nb;                            \
      int64_t gi = ng % g->G, n = ng / g->G;                                                               \
      int64_t c0 = blk * cb, c1 = c0 + cb < g->Hs ? c0 + cb : g->Hs, Lc = (c1 - c0) * g->Ws;               \
      int64_t m0 = g->Cs * part / parts, m1 = g->Cs * (part + 1) / parts;                                  \
      const T *b = big + (n * g->G + gi) * Bsz;                                                            \
      T *s = small + ((n * g->G + gi) * g->Cs + m0) * L + c0 * g->Ws;                                      \
      if (m1 <= m0) continue;                                                                              \
      if (!direct && built != it / parts) im2col_##T(g, b, col, c0, c1, Lc);                               \
      built = it / parts;                                                                                  \
      /* with a bias, the block starts as the bias and the gemm adds to it (beta = 1, as PyTorch's       \
         addmm): no separate zeroing pass and no second pass for the bias */                               \
      if (bias)                                                                                            \
        for (int64_t o = m0; o < m1; o++) {                                                                \
          T bv = bias[gi * g->Cs + o], *r = s + (o - m0) * L;                                              \
          for (int64_t l = 0; l < Lc; l++) r[l] = bv;                                                      \
        }                                                                                                  \
      gemm_tiles_##T(0, 0, m1 - m0, Lc, K, w + (gi * g->Cs + m0) * K, K, direct ? b + c0 * g->Ws : col,    \
                     direct ? L : Lc, bias ? (T)1 : (T)0, s, L);                                           \
    }                                                                                                      \
  }                                                                                                        \
  /* items: (sample, group, slice of the big channels): blocks of one image overlap in big */              \
  static void conv_big_##T(const lt_conv_geom *g, const T *small, const T *w, const T *bias, T *big,      \
                           const T *prep, T *col, int64_t lo, int64_t hi) {                                \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw, P = g->Hb * g->Wb, Bsz = g->Cb * P;              \
    int64_t cb = lt_conv_rows(g), parts = g->cb_parts > 1 ? g->cb_parts : 1, taps = g->kh * g->kw;        \
    int direct = is_direct(g);                                                                             \
    if (lt_conv_nimg(g) > 1) { conv_big_multi_##T(g, small, w, bias, big, prep, col, lo, hi); return; }    \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t part = it % parts, rest = it / parts, gi = rest % g->G, n = rest / g->G;                     \
      int64_t c0 = g->Cb * part / parts, c1 = g->Cb * (part + 1) / parts, Kp = (c1 - c0) * taps;           \
      if (c1 <= c0) continue;                                                                              \
      lt_conv_geom gc = *g;   /* col2im of the slice's channels */                                         \
      gc.Cb = c1 - c0;                                                                                     \
      T *b = big + (n * g->G + gi) * Bsz + c0 * P;                                                         \
      const T *s = small + (n * g->G + gi) * g->Cs * L, *wp = w + gi * g->Cs * K + c0 * taps;             \
      if (!direct) memset(b, 0, sizeof(T) * (size_t)((c1 - c0) * P));                                     \
      for (int64_t r0 = 0; r0 < g->Hs; r0 += cb) {                                                         \
        int64_t r1 = r0 + cb < g->Hs ? r0 + cb : g->Hs, Lc = (r1 - r0) * g->Ws;                            \
        if (direct)                                                                                        \
          gemm_tiles_##T(1, 0, Kp, Lc, g->Cs, wp, K, s + r0 * g->Ws, L, 0, b + r0 * g->Ws, L);             \
        else {                                                                                             \
          gemm_tiles_##T(1, 0, Kp, Lc, g->Cs, wp, K, s + r0 * g->Ws, L, 0, col, Lc);                       \
          col2im_##T(&gc, col, Lc, b, r0, r1);                                                             \
        }                                                                                                  \
      }                                                                                                    \
      if (bias)                                                                                            \
        for (int64_t c = c0; c < c1; c++) {                                                                \
          T bv = bias[gi * g->Cb + c], *r = b + (c - c0) * P;                                              \
          for (int64_t p = 0; p < P; p++) r[p] += bv;                                                      \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* gw (written) = sum over samples [lo, hi), for the big channels [ch0, ch1) of every group (gw's   \
     columns k0 = ch0*kh*kw .. k1 = ch1*kh*kw: a part of the binding's split, which needs only those      \
     rows of im2col).  Computed transposed, gw^T (K x Cs) += im2col (K x Lc) @ gout^T (Lc x Cs), with     \
     gout's block transposed first (Cs x Lc values: a copy per K multiply-adds): a plain NN product,      \
     where gout @ im2col^T is an NT one that OpenBLAS ran at two thirds of the speed (its small-matrix NT  \
     kernel on 64^3 tiles).  Scratch: im2col, then the transposed block, then gw^T.  Blocks narrower than \
     WGRAD_TR_MIN (512 channels at 3x3) keep the NT product straight into gw: the transposed one would   \
     read and write all of gw^T per few columns. */                                                       \
  /* the output gradient's block of images [n0, n1), small rows [c0, c1) as the weight gradient's product \
     reads it: transposed (W x ld, tr) or, several images side by side, gathered (Cs x W) */              \
  static void wgrad_block_##T(const lt_conv_geom *g, const T *small, int64_t gi, int64_t n0, int64_t n1,   \
                              int64_t c0, int64_t c1, int tr, T *dst) {                                   \
    int64_t L = g->Hs * g->Ws, Cs = g->Cs, Lc = (c1 - c0) * g->Ws, W = (n1 - n0) * Lc, ld = Cs + WGRAD_PAD; \
    for (int64_t n = n0; n < n1; n++) {                                                                    \
      const T *sn = small + (n * g->G + gi) * Cs * L + c0 * g->Ws;                                         \
      if (!tr) {                                                                                           \
        for (int64_t o = 0; o < Cs; o++) memcpy(dst + o * W + (n - n0) * L, sn + o * L, sizeof(T) * (size_t)L); \
        continue;                                                                                          \
      }                                                                                                    \
      T *gn = dst + (n - n0) * Lc * ld;                                                                    \
      for (int64_t l0 = 0; l0 < Lc; l0 += 16)   /* by 16 columns: rows of gn stay in cache */             \
        for (int64_t o = 0; o < Cs; o++)                                                                   \
          for (int64_t l = l0; l < l0 + 16 && l < Lc; l++) gn[l * ld + o] = sn[o * L + l];                 \
    }                                                                                                      \
  }                                                                                                        \
  /* prep (lt_conv_wgrad_prep): every such block of group gi, images from n0 (in groups of lt_conv_nimg),   \
     rows from c0 starts at column gi*N*L + n0*L + c0*Ws*(images in the group) */                         \
  static void wgrad_prep_##T(const lt_conv_geom *g, const T *small, T *prep, int64_t lo, int64_t hi) {    \
    int64_t L = g->Hs * g->Ws, ni = lt_conv_nimg(g), cb = lt_conv_rows(g), ngroups = (g->N + ni - 1) / ni; \
    int tr = wgrad_tr(g);                                                                                  \
    int64_t width = tr ? g->Cs + WGRAD_PAD : g->Cs;                                                        \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t gi = it / ngroups, n0 = it % ngroups * ni, n1 = n0 + ni < g->N ? n0 + ni : g->N;             \
      for (int64_t c0 = 0; c0 < g->Hs; c0 += cb) {                                                         \
        int64_t c1 = c0 + cb < g->Hs ? c0 + cb : g->Hs;                                                    \
        wgrad_block_##T(g, small, gi, n0, n1, c0, c1, tr,                                                  \
                        prep + (gi * g->N * L + n0 * L + c0 * g->Ws * (n1 - n0)) * width);                 \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  static void conv_wgrad_##T(const lt_conv_geom *g, const T *big, const T *small, const T *prep, T *gw,   \
                             T *col, int64_t lo, int64_t hi, int64_t ch0, int64_t ch1) {                   \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw, Bsz = g->Cb * g->Hb * g->Wb, Cs = g->Cs;         \
    int64_t k0 = ch0 * g->kh * g->kw, Kp = (ch1 - ch0) * g->kh * g->kw, P = g->Hb * g->Wb;                 \
    int64_t cb = lt_conv_rows(g), ni = lt_conv_nimg(g);                                                    \
    int direct = is_direct(g);                                                                             \
    lt_conv_geom gc = *g;   /* im2col of the part's channels alone (row blocks stay g's) */               \
    gc.Cb = ch1 - ch0;                                                                                     \
    /* gt and gw^T rows padded by 8 values: a row stride of 512 floats (2 KB) put a tile's rows in the same  \
       few L1 sets (the 512-channel products ran at 10 GFLOP/s) */                                         \
    int64_t ld = Cs + WGRAD_PAD;                                                                           \
    T *gt = col + wgrad_col(g, ch1 - ch0), *acc = gt + cb * g->Ws * ni * ld;                               \
    int tr = wgrad_tr(g);                                                                                  \
    if (Kp <= 0) return;                                                                                   \
    if (hi <= lo) {                                                                                        \
      for (int64_t r = 0; r < g->G * Cs; r++) memset(gw + r * K + k0, 0, sizeof(T) * (size_t)Kp);         \
      return;                                                                                              \
    }                                                                                                      \
    for (int64_t n0 = lo; n0 < hi; n0 += ni) {                                                             \
      int64_t n1 = n0 + ni < hi ? n0 + ni : hi;                                                            \
      for (int64_t gi = 0; gi < g->G; gi++)                                                                \
        for (int64_t c0 = 0; c0 < g->Hs; c0 += cb) {                                                       \
          int64_t c1 = c0 + cb < g->Hs ? c0 + cb : g->Hs, Lc = (c1 - c0) * g->Ws, W = (n1 - n0) * Lc;      \
          const T *b = big + (n0 * g->G + gi) * Bsz + ch0 * P, *s = small + (n0 * g->G + gi) * Cs * L;     \
          T beta = (n0 == lo && c0 == 0) ? 0 : 1, *gwp = gw + gi * Cs * K + k0;                            \
          /* the output gradient's block: prepared once for all parts, or here */                          \
          const T *gb = gt;                                                                                \
          if (prep && (tr || ni > 1))                                                                      \
            gb = prep + (gi * g->N * L + n0 * L + c0 * g->Ws * (n1 - n0)) * (tr ? ld : Cs);                 \
          else if (tr || ni > 1)                                                                           \
            wgrad_block_##T(g, small, gi, n0, n1, c0, c1, tr, gt);                                         \
          if (!direct)                                                                                     \
            for (int64_t n = n0; n < n1; n++)                                                              \
              im2col_##T(&gc, big + (n * g->G + gi) * Bsz + ch0 * P, col + (n - n0) * Lc, c0, c1, W);       \
          if (!tr && ni > 1) {   /* small grids: the images' output gradients side by side, one NT product */ \
            gemm_tiles_##T(0, 1, Cs, Kp, W, gb, W, col, W, beta, gwp, K);                                  \
            continue;                                                                                      \
          }                                                                                                \
          if (!tr) {                                                                                       \
            gemm_tiles_##T(0, 1, Cs, Kp, Lc, s + c0 * g->Ws, L, direct ? b + c0 * g->Ws : col,             \
                           direct ? L : Lc, beta, gwp, K);                                                 \
            continue;                                                                                      \
          }                                                                                                \
          gemm_tiles_##T(0, 0, Kp, Cs, W, direct ? b + c0 * g->Ws : col, direct ? L : W, gb, ld, beta,     \
                         acc + gi * Kp * ld, ld);                                                          \
        }                                                                                                  \
    }                                                                                                      \
    if (tr)   /* gw = (gw^T)^T by 16 rows of gw^T: both sides read and written in runs */                \
      for (int64_t gi = 0; gi < g->G; gi++)                                                                \
        for (int64_t q0 = 0; q0 < Kp; q0 += 16)                                                            \
          for (int64_t o = 0; o < Cs; o++)                                                                 \
            for (int64_t q = q0; q < q0 + 16 && q < Kp; q++)                                               \
              gw[(gi * Cs + o) * K + k0 + q] = acc[(gi * Kp + q) * ld + o];                                \
  }
FLOAT_TYPES(DEFINE_CONV)
#undef DEFINE_CONV

/* One image, one group, its im2col built once and shared: the parts build
   row ranges of it, then take output-channel ranges of the product (the
   row blocks x channel slices of conv_small rebuilt each block's im2col in
   every slice's part: 8 copies of 0.9 MB for a 512 -> 512 7x7 conv cut
   for two threads). */
#define SHARED_MAX_ELEMS ((int64_t)1 << 24)
int lt_conv_shared_ok(const lt_conv_geom *g) {
  int64_t K = g->Cb * g->kh * g->kw, L = g->Hs * g->Ws;
  return g->N == 1 && g->G == 1 && !is_direct(g) && K > 0 && L > 0 && g->Cs > 0 && K <= SHARED_MAX_ELEMS / L;
}
#define DEFINE_SHARED(T)                                                                                  \
  static void shared_gemm_##T(const lt_conv_geom *g, const T *w, const T *col, const T *bias, T *small,   \
                              int64_t m0, int64_t m1) {                                                   \
    int64_t L = g->Hs * g->Ws, K = g->Cb * g->kh * g->kw;                                                 \
    if (bias)                                                                                             \
      for (int64_t o = m0; o < m1; o++) {                                                                 \
        T bv = bias[o], *r = small + o * L;                                                               \
        for (int64_t l = 0; l < L; l++) r[l] = bv;                                                        \
      }                                                                                                   \
    gemm_tiles_##T(0, 0, m1 - m0, L, K, w + m0 * K, K, col, L, bias ? (T)1 : (T)0, small + m0 * L, L);     \
  }
FLOAT_TYPES(DEFINE_SHARED)
#undef DEFINE_SHARED
void lt_conv_shared_col(const lt_conv_geom *g, const void *big, void *col, int64_t r0, int64_t r1) {
  int64_t L = g->Hs * g->Ws;
  if (g->dt == LTENSOR_FLOAT32) im2col_float(g, (const float *)big, (float *)col + r0 * g->Ws, r0, r1, L);
  else im2col_double(g, (const double *)big, (double *)col + r0 * g->Ws, r0, r1, L);
}
void lt_conv_shared_gemm(const lt_conv_geom *g, const void *w, const void *col, const void *bias, void *small,
                         int64_t m0, int64_t m1) {
  if (g->dt == LTENSOR_FLOAT32) shared_gemm_float(g, (const float *)w, (const float *)col, (const float *)bias, (float *)small, m0, m1);
  else shared_gemm_double(g, (const double *)w, (const double *)col, (const double *)bias, (double *)small, m0, m1);
}

int64_t lt_conv_multi_prep_items(const lt_conv_geom *g) {
  int64_t ni = lt_conv_nimg(g);
  return ni > 1 ? (g->N + ni - 1) / ni * g->G : 0;
}
int64_t lt_conv_multi_prep_size(const lt_conv_geom *g, int to_small) {
  return lt_conv_multi_prep_items(g) * (to_small ? g->Cb * g->kh * g->kw : g->Cs) * lt_conv_nimg(g) * g->Hs * g->Ws;
}
void lt_conv_multi_prep(const lt_conv_geom *g, int to_small, const void *src, void *prep, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) multi_prep_float(g, to_small, src, prep, lo, hi);
  else multi_prep_double(g, to_small, src, prep, lo, hi);
}
void lt_conv_small(const lt_conv_geom *g, const void *big, const void *w, const void *bias, void *small,
                   const void *prep, void *scratch, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) conv_small_float(g, big, w, bias, small, prep, scratch, lo, hi);
  else conv_small_double(g, big, w, bias, small, prep, scratch, lo, hi);
}
void lt_conv_big(const lt_conv_geom *g, const void *small, const void *w, const void *bias, void *big,
                 const void *prep, void *scratch, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) conv_big_float(g, small, w, bias, big, prep, scratch, lo, hi);
  else conv_big_double(g, small, w, bias, big, prep, scratch, lo, hi);
}
int64_t lt_conv_wgrad_prep_size(const lt_conv_geom *g) {
  int tr = wgrad_tr(g);
  if (!tr && lt_conv_nimg(g) == 1) return 0;
  return g->G * g->N * g->Hs * g->Ws * (tr ? g->Cs + WGRAD_PAD : g->Cs);
}
int64_t lt_conv_wgrad_prep_items(const lt_conv_geom *g) {
  int64_t ni = lt_conv_nimg(g);
  return g->G * ((g->N + ni - 1) / ni);
}
void lt_conv_wgrad_prep(const lt_conv_geom *g, const void *small, void *prep, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) wgrad_prep_float(g, small, prep, lo, hi);
  else wgrad_prep_double(g, small, prep, lo, hi);
}
void lt_conv_wgrad(const lt_conv_geom *g, const void *big, const void *small, const void *prep, void *gw,
                   void *scratch, int64_t lo, int64_t hi, int64_t ch0, int64_t ch1) {
  if (g->dt == LTENSOR_FLOAT32) conv_wgrad_float(g, big, small, prep, gw, scratch, lo, hi, ch0, ch1);
  else conv_wgrad_double(g, big, small, prep, gw, scratch, lo, hi, ch0, ch1);
}

/* ---- pooling --------------------------------------------------------------- */
/* One output row of a 2x2/2 max pool.  Horizontal pairs first, then the
   two rows: the same winner as PyTorch's row-major scan (first maximum,
   last NaN).  Every selection is a separate same-type ternary, the form
   GCC's vectoriser turns into compare-and-blend (lt_conv.o is built with
   -O3): a branch per tap is mispredicted half the time on real data, and
   mixing int and float lanes stops the vectoriser.  So the winner is
   recorded as a float code (0..3: tap in scan order) and turned into flat
   indices by a second, branch-free integer loop. */
#define POOL2_CHUNK 256
#define DEFINE_POOL2(T, U, S, ATTR)                                                                         \
  /* one window: the value and (code) its tap */                                                           \
  static inline ATTR T pool2_one_##T##S(const T *r0, const T *r1, int64_t ow, T *code) {                   \
    T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];                              \
    T h0 = b > a ? b : a;                                                                                  \
    h0 = b != b ? b : h0;                                                                                  \
    T h1 = d > c ? d : c;                                                                                  \
    h1 = d != d ? d : h1;                                                                                  \
    T m = h1 > h0 ? h1 : h0;                                                                               \
    T s0 = b > a ? (T)1 : (T)0;                                                                            \
    s0 = b != b ? (T)1 : s0;                                                                               \
    T s1 = d > c ? (T)3 : (T)2;                                                                            \
    s1 = d != d ? (T)3 : s1;                                                                               \
    T s = h1 > h0 ? s1 : s0;                                                                               \
    *code = h1 != h1 ? s1 : s;                                                                             \
    return h1 != h1 ? h1 : m;                                                                              \
  }                                                                                                        \
  /* Rows are short (14 windows in a 28-wide image), too short for a vector                                \
     loop with its scalar remainder; so windows go 8 at a time in loops of a                               \
     fixed count (fully vectorised), the last block overlapping the one                                    \
     before it when n is not a multiple of 8 (it writes the same values                                    \
     again).  n < 8: one window at a time. */                                                              \
  static inline ATTR void pool2_vals_##T##S(const T *restrict r0, const T *restrict r1, T *restrict y,     \
                                            T *restrict code, int64_t n) {                                 \
    if (n < 8) {                                                                                           \
      for (int64_t ow = 0; ow < n; ow++) { T cd; y[ow] = pool2_one_##T##S(r0, r1, ow, &cd); if (code) code[ow] = cd; } \
      return;                                                                                              \
    }                                                                                                      \
    for (int64_t o = 0; o < n; o += 8) {                                                                   \
      if (o + 8 > n) o = n - 8;                                                                            \
      T cd[8];                                                                                             \
      for (int k = 0; k < 8; k++) y[o + k] = pool2_one_##T##S(r0, r1, o + k, &cd[k]);                      \
      if (code) for (int k = 0; k < 8; k++) code[o + k] = cd[k];                                           \
    }                                                                                                      \
  }                                                                                                        \
  /* yi: 1-based flat indices; else yc: the tap codes themselves (one byte                                \
     per output, all the backward needs); neither: values only */                                          \
  static inline ATTR void pool2_row_##T##S(const T *r0, const T *r1, T *y, int64_t *yi, uint8_t *yc,       \
                                           int64_t Wo, int64_t k0, int64_t Wi) {                           \
    if (!yi && !yc) { pool2_vals_##T##S(r0, r1, y, NULL, Wo); return; }                                    \
    T code[POOL2_CHUNK];                                                                                   \
    for (int64_t o0 = 0; o0 < Wo; o0 += POOL2_CHUNK) {                                                     \
      int64_t n = Wo - o0 < POOL2_CHUNK ? Wo - o0 : POOL2_CHUNK;                                           \
      pool2_vals_##T##S(r0 + 2 * o0, r1 + 2 * o0, y + o0, code, n);                                        \
      if (yc) {                                                                                            \
        for (int64_t i = 0; i < n; i++) yc[o0 + i] = (uint8_t)code[i];                                     \
        continue;                                                                                          \
      }                                                                                                    \
      for (int64_t i = 0; i < n; i++) {                                                                    \
        int64_t c = (int64_t)code[i];                                                                      \
        yi[o0 + i] = k0 + 2 * (o0 + i) + (c & 1) + (c >> 1) * Wi + 1;                                     \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* the backward of one output row from tap codes: each 2x2 window gets the                              \
     gradient at its winner and 0 elsewhere (same-type selects: vectorised) */                             \
  /* v where keep, else +0.0, without a branch (scalar code of a ternary on                               \
     floats branches, and the taps are random) */                                                          \
  static inline ATTR T pool2_keep_##T##S(T v, int keep) {                                                  \
    U b;                                                                                                   \
    memcpy(&b, &v, sizeof b);                                                                              \
    b &= (U)0 - (U)keep;                                                                                   \
    memcpy(&v, &b, sizeof v);                                                                              \
    return v;                                                                                              \
  }                                                                                                        \
  static inline ATTR void pool2_bwd_row_##T##S(const T *restrict g, const T *restrict code,               \
                                               T *restrict r0, T *restrict r1, int64_t Wo) {               \
    for (int64_t i = 0; i < Wo; i++) {                                                                     \
      T v = g[i], c = code[i];                                                                             \
      r0[2 * i] = pool2_keep_##T##S(v, c == (T)0);                                                         \
      r0[2 * i + 1] = pool2_keep_##T##S(v, c == (T)1);                                                     \
      r1[2 * i] = pool2_keep_##T##S(v, c == (T)2);                                                         \
      r1[2 * i + 1] = pool2_keep_##T##S(v, c == (T)3);                                                     \
    }                                                                                                      \
  }                                                                                                        \
  /* the forward over planes [lo, hi): every window inside the plane */                                     \
  static ATTR void pool2_fwd_##T##S(const T *in, T *out, int64_t *idx, uint8_t *codes, int64_t Ho, int64_t Wo, \
                                    int64_t Hi, int64_t Wi, int64_t lo, int64_t hi) {                      \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * Hi * Wi;                                                                       \
      T *y = out + p * Ho * Wo;                                                                            \
      int64_t *yi = idx ? idx + p * Ho * Wo : NULL;                                                        \
      uint8_t *yc = codes ? codes + p * Ho * Wo : NULL;                                                    \
      if (yc && Wo <= POOL2_CHUNK) {                                                                       \
        /* codes of several rows gathered as T, then narrowed to bytes in one                              \
           long loop (a row of 14 narrows mostly in the scalar remainder) */                               \
        T cb[POOL2_CHUNK];                                                                                 \
        int64_t rows = POOL2_CHUNK / Wo;                                                                   \
        for (int64_t oh0 = 0; oh0 < Ho; oh0 += rows) {                                                     \
          int64_t oh1 = oh0 + rows < Ho ? oh0 + rows : Ho;                                                 \
          for (int64_t oh = oh0; oh < oh1; oh++)                                                           \
            pool2_vals_##T##S(x + 2 * oh * Wi, x + (2 * oh + 1) * Wi, y + oh * Wo, cb + (oh - oh0) * Wo, Wo); \
          uint8_t *dst = yc + oh0 * Wo;                                                                    \
          for (int64_t i = 0; i < (oh1 - oh0) * Wo; i++) dst[i] = (uint8_t)cb[i];                          \
        }                                                                                                  \
        continue;                                                                                          \
      }                                                                                                    \
      for (int64_t oh = 0; oh < Ho; oh++)                                                                  \
        pool2_row_##T##S(x + 2 * oh * Wi, x + (2 * oh + 1) * Wi, y + oh * Wo, yi ? yi + oh * Wo : NULL,     \
                         yc ? yc + oh * Wo : NULL, Wo, 2 * oh * Wi, Wi);                                   \
    }                                                                                                      \
  }                                                                                                        \
  static ATTR void pool2_bwd_##T##S(int64_t Ho, int64_t Wo, int64_t Hi, int64_t Wi, const T *gout,         \
                                    const int64_t *idx, const uint8_t *codes, T *gin, int64_t lo, int64_t hi) { \
    /* the codes as T (same-type selects), converted for several rows at once                              \
       (one long loop rather than one per 14-window row) */                                                \
    T cb[POOL2_CHUNK];                                                                                     \
    int64_t rows = Wo <= POOL2_CHUNK ? POOL2_CHUNK / Wo : 1, part = Wo < POOL2_CHUNK ? Wo : POOL2_CHUNK;   \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *g = gout + p * Ho * Wo;                                                                     \
      T *x = gin + p * Hi * Wi;                                                                            \
      for (int64_t oh0 = 0; oh0 < Ho; oh0 += rows) {                                                       \
        int64_t oh1 = oh0 + rows < Ho ? oh0 + rows : Ho;                                                   \
        for (int64_t o0 = 0; o0 < Wo; o0 += part) {   /* o0 > 0 only for rows wider than a chunk */        \
          int64_t n = Wo - o0 < part ? Wo - o0 : part, m = (oh1 - oh0) * n;                                \
          if (codes) {                                                                                     \
            const uint8_t *yc = codes + (p * Ho + oh0) * Wo + o0;                                          \
            for (int64_t i = 0; i < m; i++) cb[i] = (T)yc[i];   /* n == Wo when there are several rows */  \
          } else                                                                                           \
            for (int64_t oh = oh0; oh < oh1; oh++) {                                                       \
              /* flat indices back to tap codes (4: none of the window's taps) */                          \
              const int64_t *k = idx + (p * Ho + oh) * Wo + o0;                                            \
              int64_t base = 2 * oh * Wi + 1 + 2 * o0;   /* 1-based flat index of the first tap */        \
              T *c = cb + (oh - oh0) * n;                                                                  \
              for (int64_t i = 0; i < n; i++) {   /* branch-free: the taps are random */                   \
                /* wrapping arithmetic: an index far out of range must give "no tap", not overflow */      \
                int64_t rel = (int64_t)((uint64_t)k[i] - (uint64_t)(base + 2 * i));                       \
                int64_t h = rel >= Wi, l = rel - h * Wi;                                                   \
                int64_t ok = (l == 0) | (l == 1);                                                          \
                c[i] = (T)(4 - ok * (4 - 2 * h - l));                                                      \
              }                                                                                            \
            }                                                                                              \
          for (int64_t oh = oh0; oh < oh1; oh++) {                                                         \
            T *r0 = x + 2 * oh * Wi + 2 * o0;                                                              \
            pool2_bwd_row_##T##S(g + oh * Wo + o0, cb + (oh - oh0) * n, r0, r0 + Wi, n);                   \
          }                                                                                                \
        }                                                                                                  \
        for (int64_t oh = oh0; oh < oh1; oh++)                                                             \
          for (int64_t w = 2 * Wo; w < Wi; w++) x[2 * oh * Wi + w] = x[(2 * oh + 1) * Wi + w] = 0;         \
      }                                                                                                    \
      if (2 * Ho < Hi) memset(x + 2 * Ho * Wi, 0, sizeof(T) * (size_t)((Hi - 2 * Ho) * Wi));               \
    }                                                                                                      \
  }
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
/* compiled for the baseline ISA and for AVX2 (picked per call, as
   lt_k_loops.h does): the 2x2 selects run ~1.5-2x faster 8 lanes wide */
#define POOL2_AVX2 LT_TARGET_AVX2
DEFINE_POOL2(float, uint32_t, _base, )
DEFINE_POOL2(double, uint64_t, _base, )
DEFINE_POOL2(float, uint32_t, _avx2, POOL2_AVX2)
DEFINE_POOL2(double, uint64_t, _avx2, POOL2_AVX2)
#define POOL2_PICK(fn, ...) (lt_cpu_has_avx2() ? fn##_avx2(__VA_ARGS__) : fn##_base(__VA_ARGS__))
#else
DEFINE_POOL2(float, uint32_t, _base, )
DEFINE_POOL2(double, uint64_t, _base, )
#define POOL2_PICK(fn, ...) fn##_base(__VA_ARGS__)
#endif
#undef DEFINE_POOL2

#define DEFINE_POOL(T)                                                                                      \
  /* The maximum of every window without its index: for each output row, each                              \
     valid tap (i, j) updates the whole row of maxima (a strided walk of one                               \
     input row that vectorises), instead of one window at a time with the                                 \
     index bookkeeping (the 3x3/2 stem pool of resnet18 was 9% of its                                      \
     inference).  NaN wins, as in the windowed walk; a window with no tap                                  \
     inside the input is -inf. */                                                                          \
  /* One output row (yr) with its 1-based flat indices (ir): the winning tap                               \
     of each window tracked as a tap number of type T in chunks of 256                                     \
     outputs (same-type selects, which vectorise: an int64 index beside T                                  \
     values kept the walk scalar, 7x slower than the values alone), turned                                 \
     into flat indices at the end.  Taps in window order: the first maximum                                \
     and the last NaN win; the index starts at the window's first valid tap                                \
     (PyTorch's rule; 0: no tap).  Callers keep kh*kw under 2^24. */                                       \
  static void max_pool_row_idx_##T(const lt_pool_geom *g, const T *x, T *restrict yr, int64_t *restrict ir, \
                                   int64_t h0, int64_t i0, int64_t i1) {                                   \
    const int64_t Wi = g->Wi, Wo = g->Wo, sw = g->sw, dw = g->dw, kw = g->kw;                              \
    int64_t jlo = 0, jhi = 0, unused; /* the taps some window has inside the row (see max_pool_rows) */    \
    valid_range(kw, dw, (Wo - 1) * sw - g->pw, Wi, &jlo, &unused);                                         \
    valid_range(kw, dw, -g->pw, Wi, &unused, &jhi);                                                        \
    T tap[256];                                                                                            \
    for (int64_t c0 = 0; c0 < Wo; c0 += 256) {                                                             \
      int64_t c1 = Wo - c0 < 256 ? Wo : c0 + 256;                                                          \
      for (int64_t ow = c0; ow < c1; ow++) { yr[ow] = (T)-INFINITY; tap[ow - c0] = (T)-1; }                \
      for (int64_t i = i0; i < i1; i++) {                                                                  \
        const T *restrict row = x + (h0 + i * g->dh) * Wi;                                                 \
        for (int64_t j = jlo; j < jhi; j++) {                                                              \
          int64_t off = j * dw - g->pw, a = off >= 0 ? 0 : (-off + sw - 1) / sw;                           \
          int64_t b = Wi - 1 - off < 0 ? 0 : (Wi - 1 - off) / sw + 1;                                      \
          if (b > c1) b = c1;                                                                              \
          if (a < c0) a = c0;                                                                              \
          const T t = (T)(i * kw + j);                                                                     \
          T *restrict tp = tap - c0;                                                                       \
          for (int64_t ow = a; ow < b; ow++) {                                                             \
            T v = row[ow * sw + off], m = yr[ow], k = tp[ow];                                              \
            yr[ow] = ((v > m) | (v != v)) ? v : m;                                                         \
            tp[ow] = ((v > m) | (v != v)) ? t : k;                                                         \
          }                                                                                                \
        }                                                                                                  \
      }                                                                                                    \
      for (int64_t ow = c0; ow < c1; ow++) {                                                               \
        int64_t w0 = ow * sw - g->pw, j0, j1, k = (int64_t)tap[ow - c0];                                   \
        valid_range(kw, dw, w0, Wi, &j0, &j1);                                                             \
        if (k < 0) ir[ow] = i0 < i1 && j0 < j1 ? (h0 + i0 * g->dh) * Wi + w0 + j0 * dw + 1 : 0;            \
        else ir[ow] = (h0 + (k / kw) * g->dh) * Wi + w0 + (k % kw) * dw + 1;                               \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  static void max_pool_rows_##T(const lt_pool_geom *g, const T *in, T *out, int64_t *idx, int64_t lo,      \
                                int64_t hi) {                                                              \
    const int64_t Hi = g->Hi, Wi = g->Wi, Ho = g->Ho, Wo = g->Wo, sw = g->sw, dw = g->dw;                  \
    /* the taps some window of the row has inside the input: the last window's                             \
       first to the first window's last (a kernel of 2^31 over a few pixels                                \
       walked every tap of every row) */                                                                   \
    int64_t jlo = 0, jhi = 0, unused;                                                                      \
    if (Wo > 0) {                                                                                          \
      valid_range(g->kw, dw, (Wo - 1) * sw - g->pw, Wi, &jlo, &unused);                                    \
      valid_range(g->kw, dw, -g->pw, Wi, &unused, &jhi);                                                   \
    }                                                                                                      \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * Hi * Wi;                                                                       \
      for (int64_t oh = 0; oh < Ho; oh++) {                                                                \
        T *restrict yr = out + (p * Ho + oh) * Wo;                                                         \
        int64_t *restrict ir = idx ? idx + (p * Ho + oh) * Wo : NULL;                                      \
        int64_t h0 = oh * g->sh - g->ph, i0, i1;                                                           \
        valid_range(g->kh, g->dh, h0, Hi, &i0, &i1);                                                       \
        for (int64_t ow = 0; ow < Wo; ow++) yr[ow] = (T)-INFINITY;                                         \
        if (ir) { max_pool_row_idx_##T(g, x, yr, ir, h0, i0, i1); continue; }                              \
        for (int64_t i = i0; i < i1; i++) {                                                                \
          const T *restrict row = x + (h0 + i * g->dh) * Wi;                                               \
          for (int64_t j = jlo; j < jhi; j++) {                                                            \
            /* the outputs whose tap j lies inside the row: 0 <= ow*sw - pw + j*dw < Wi */                 \
            int64_t off = j * dw - g->pw, a = off >= 0 ? 0 : (-off + sw - 1) / sw;                         \
            int64_t b = Wi - 1 - off < 0 ? 0 : (Wi - 1 - off) / sw + 1;                                    \
            if (b > Wo) b = Wo;                                                                            \
            for (int64_t ow = a; ow < b; ow++) {                                                           \
              T v = row[ow * sw + off], m = yr[ow];                                                        \
              yr[ow] = ((v > m) | (v != v)) ? v : m;                                                       \
            }                                                                                              \
          }                                                                                                \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  static void max_pool_##T(const lt_pool_geom *g, const T *in, T *out, int64_t *idx, uint8_t *codes,      \
                           int64_t lo, int64_t hi) {                                                       \
    int64_t P = g->Hi * g->Wi, Q = g->Ho * g->Wo, Wi = g->Wi;                                              \
    int fast2 = g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 && g->pw == 0 &&       \
                g->dh == 1 && g->dw == 1 && 2 * g->Ho <= g->Hi && 2 * g->Wo <= g->Wi &&                   \
                g->Ho > 0 && g->Wo > 0; /* (no windows: the tiled walk would divide by Wo) */              \
    if (fast2) { /* the common 2x2/2 window, every tap inside the plane */                                 \
      POOL2_PICK(pool2_fwd_##T, in, out, idx, codes, g->Ho, g->Wo, g->Hi, Wi, lo, hi);                     \
      return;                                                                                              \
    }                                                                                                      \
    if (!codes && (!idx || g->kh * g->kw <= ((int64_t)1 << 24))) { /* whole output rows, a tap at a time */ \
      max_pool_rows_##T(g, in, out, idx, lo, hi);                                                          \
      return;                                                                                              \
    }                                                                                                      \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * P;                                                                             \
      T *y = out + p * Q;                                                                                  \
      int64_t *yi = idx ? idx + p * Q : NULL;                                                              \
      for (int64_t oh = 0; oh < g->Ho; oh++) {                                                             \
        int64_t h0 = oh * g->sh - g->ph, i0, i1;                                                           \
        valid_range(g->kh, g->dh, h0, g->Hi, &i0, &i1);                                                    \
        for (int64_t ow = 0; ow < g->Wo; ow++) {                                                           \
          int64_t w0 = ow * g->sw - g->pw, j0, j1, best = -1;                                              \
          valid_range(g->kw, g->dw, w0, Wi, &j0, &j1);                                                     \
          T m = (T)-INFINITY;                                                                              \
          /* PyTorch's rule: start at the first tap, then the first maximum and                            \
             the last NaN win */                                                                           \
          if (i0 < i1 && j0 < j1) best = (h0 + i0 * g->dh) * Wi + w0 + j0 * g->dw;                          \
          for (int64_t i = i0; i < i1; i++) {                                                              \
            const T *row = x + (h0 + i * g->dh) * Wi + w0;                                                 \
            for (int64_t j = j0; j < j1; j++) {                                                            \
              T v = row[j * g->dw];                                                                        \
              if ((v > m) | (v != v)) { m = v; best = (h0 + i * g->dh) * Wi + w0 + j * g->dw; }            \
            }                                                                                              \
          }                                                                                                \
          y[oh * g->Wo + ow] = m;                                                                          \
          if (yi) yi[oh * g->Wo + ow] = best < 0 ? 0 : best + 1;                                           \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  static void max_pool_bwd_##T(int64_t Q, int64_t P, const T *gout, const int64_t *idx, T *gin,           \
                               int64_t lo, int64_t hi) {                                                   \
    for (int64_t p = lo; p < hi; p++)                                                                      \
      for (int64_t q = 0; q < Q; q++) {                                                                    \
        int64_t k = idx[p * Q + q];                                                                        \
        if (k >= 1 && k <= P) gin[p * P + k - 1] += gout[p * Q + q];                                       \
      }                                                                                                    \
  }                                                                                                        \
  /* the window of output (oh, ow) clipped to the input and its divisor */                                 \
  static inline T avg_div_##T(const lt_pool_geom *g, int64_t h0, int64_t w0, int64_t *hs, int64_t *he,     \
                              int64_t *ws, int64_t *we) {                                                  \
    int64_t h1 = h0 + g->kh, w1 = w0 + g->kw;                                                              \
    if (h1 > g->Hi + g->ph) h1 = g->Hi + g->ph;                                                            \
    if (w1 > g->Wi + g->pw) w1 = g->Wi + g->pw;                                                            \
    int64_t pool = (h1 - h0) * (w1 - w0);                                                                  \
    *hs = h0 < 0 ? 0 : h0;                                                                                 \
    *ws = w0 < 0 ? 0 : w0;                                                                                 \
    *he = h1 > g->Hi ? g->Hi : h1;                                                                         \
    *we = w1 > g->Wi ? g->Wi : w1;                                                                         \
    if (g->divisor) return (T)g->divisor;                                                                  \
    if (g->count_include_pad) return (T)pool;                                                              \
    return (T)((*he - *hs) * (*we - *ws));                                                                 \
  }                                                                                                        \
  static void avg_pool_##T(const lt_pool_geom *g, const T *in, T *out, int64_t lo, int64_t hi) {          \
    int64_t P = g->Hi * g->Wi, Q = g->Ho * g->Wo;                                                          \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * P;                                                                             \
      for (int64_t oh = 0; oh < g->Ho; oh++)                                                               \
        for (int64_t ow = 0; ow < g->Wo; ow++) {                                                           \
          int64_t hs, he, ws, we;                                                                          \
          T d = avg_div_##T(g, oh * g->sh - g->ph, ow * g->sw - g->pw, &hs, &he, &ws, &we);                \
          T s = 0;                                                                                         \
          for (int64_t h = hs; h < he; h++)                                                                \
            for (int64_t w = ws; w < we; w++) s += x[h * g->Wi + w];                                       \
          out[p * Q + oh * g->Wo + ow] = s / d;                                                            \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  static void avg_pool_bwd_##T(const lt_pool_geom *g, const T *gout, T *gin, int64_t lo, int64_t hi) {    \
    int64_t P = g->Hi * g->Wi, Q = g->Ho * g->Wo;                                                          \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      T *x = gin + p * P;                                                                                  \
      for (int64_t oh = 0; oh < g->Ho; oh++)                                                               \
        for (int64_t ow = 0; ow < g->Wo; ow++) {                                                           \
          int64_t hs, he, ws, we;                                                                          \
          T d = avg_div_##T(g, oh * g->sh - g->ph, ow * g->sw - g->pw, &hs, &he, &ws, &we);                \
          T v = gout[p * Q + oh * g->Wo + ow] / d;                                                         \
          for (int64_t h = hs; h < he; h++)                                                                \
            for (int64_t w = ws; w < we; w++) x[h * g->Wi + w] += v;                                       \
        }                                                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* adaptive average pooling, forward (src = input, dst = output) or                                      \
     backward (src = output gradient, dst += into the input gradient): one                                 \
     walk over the windows [hs, he) x [ws, we) */                                                          \
  static void adaptive_walk_##T(const lt_pool_geom *g, const T *src, T *dst, int bwd, int64_t lo, int64_t hi) { \
    int64_t P = g->Hi * g->Wi, Q = g->Ho * g->Wo;                                                          \
    for (int64_t p = lo; p < hi; p++)                                                                      \
      for (int64_t oh = 0; oh < g->Ho; oh++) {                                                             \
        int64_t hs = oh * g->Hi / g->Ho, he = ((oh + 1) * g->Hi + g->Ho - 1) / g->Ho;                      \
        for (int64_t ow = 0; ow < g->Wo; ow++) {                                                           \
          int64_t ws = ow * g->Wi / g->Wo, we = ((ow + 1) * g->Wi + g->Wo - 1) / g->Wo;                    \
          T n = (T)((he - hs) * (we - ws)), s = 0;                                                         \
          if (bwd) {                                                                                       \
            T v = src[p * Q + oh * g->Wo + ow] / n;                                                        \
            for (int64_t h = hs; h < he; h++)                                                              \
              for (int64_t w = ws; w < we; w++) dst[p * P + h * g->Wi + w] += v;                           \
            continue;                                                                                      \
          }                                                                                                \
          for (int64_t h = hs; h < he; h++)                                                                \
            for (int64_t w = ws; w < we; w++) s += src[p * P + h * g->Wi + w];                             \
          dst[p * Q + oh * g->Wo + ow] = s / n;                                                            \
        }                                                                                                  \
      }                                                                                                    \
  }                                                                                                        \
  static void adaptive_max_##T(const lt_pool_geom *g, const T *in, T *out, int64_t *idx, int64_t lo,      \
                               int64_t hi) {                                                               \
    int64_t P = g->Hi * g->Wi, Q = g->Ho * g->Wo;                                                          \
    for (int64_t p = lo; p < hi; p++)                                                                      \
      for (int64_t oh = 0; oh < g->Ho; oh++) {                                                             \
        int64_t hs = oh * g->Hi / g->Ho, he = ((oh + 1) * g->Hi + g->Ho - 1) / g->Ho;                      \
        for (int64_t ow = 0; ow < g->Wo; ow++) {                                                           \
          int64_t ws = ow * g->Wi / g->Wo, we = ((ow + 1) * g->Wi + g->Wo - 1) / g->Wo, best = -1;         \
          T m = 0;                                                                                         \
          for (int64_t h = hs; h < he; h++)                                                                \
            for (int64_t w = ws; w < we; w++) {                                                            \
              T v = in[p * P + h * g->Wi + w];                                                             \
              if (best < 0 || v > m || isnan(v)) { m = v; best = h * g->Wi + w; }                      \
            }                                                                                              \
          out[p * Q + oh * g->Wo + ow] = m;                                                                \
          if (idx) idx[p * Q + oh * g->Wo + ow] = best + 1;                                                \
        }                                                                                                  \
      }                                                                                                    \
  }
FLOAT_TYPES(DEFINE_POOL)
#undef DEFINE_POOL

void lt_max_pool(const lt_pool_geom *g, const void *in, void *out, int64_t *idx, uint8_t *codes, int64_t lo,
                 int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) max_pool_float(g, in, out, idx, codes, lo, hi);
  else max_pool_double(g, in, out, idx, codes, lo, hi);
}
/* The 2x2/2 windows tile the plane: every input pixel is written once (the
   gradient at its window's winner, 0 elsewhere and in the uncovered last
   row/column), so gin needs no zeroing first and is written in order. */
void lt_max_pool2_bwd(ltensor_dtype dt, int64_t Ho, int64_t Wo, int64_t Hi, int64_t Wi, const void *gout,
                      const int64_t *idx, const uint8_t *codes, void *gin, int64_t lo, int64_t hi) {
  if (Ho <= 0 || Wo <= 0) {   /* no windows: zeros (the walk below divides by Wo) */
    size_t es = dt == LTENSOR_FLOAT32 ? sizeof(float) : sizeof(double);
    if (hi > lo && Hi * Wi > 0) memset((char *)gin + (size_t)(lo * Hi * Wi) * es, 0, (size_t)((hi - lo) * Hi * Wi) * es);
    return;
  }
  if (dt == LTENSOR_FLOAT32) POOL2_PICK(pool2_bwd_float, Ho, Wo, Hi, Wi, gout, idx, codes, gin, lo, hi);
  else POOL2_PICK(pool2_bwd_double, Ho, Wo, Hi, Wi, gout, idx, codes, gin, lo, hi);
}
void lt_max_pool_bwd(ltensor_dtype dt, int64_t out_per_plane, int64_t in_per_plane, const void *gout,
                     const int64_t *idx, void *gin, int64_t lo, int64_t hi) {
  if (dt == LTENSOR_FLOAT32) max_pool_bwd_float(out_per_plane, in_per_plane, gout, idx, gin, lo, hi);
  else max_pool_bwd_double(out_per_plane, in_per_plane, gout, idx, gin, lo, hi);
}
void lt_avg_pool(const lt_pool_geom *g, const void *in, void *out, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) avg_pool_float(g, in, out, lo, hi);
  else avg_pool_double(g, in, out, lo, hi);
}
void lt_avg_pool_bwd(const lt_pool_geom *g, const void *gout, void *gin, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) avg_pool_bwd_float(g, gout, gin, lo, hi);
  else avg_pool_bwd_double(g, gout, gin, lo, hi);
}
void lt_adaptive_avg_pool(const lt_pool_geom *g, const void *in, void *out, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) adaptive_walk_float(g, in, out, 0, lo, hi);
  else adaptive_walk_double(g, in, out, 0, lo, hi);
}
void lt_adaptive_avg_pool_bwd(const lt_pool_geom *g, const void *gout, void *gin, int64_t lo, int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) adaptive_walk_float(g, gout, gin, 1, lo, hi);
  else adaptive_walk_double(g, gout, gin, 1, lo, hi);
}
void lt_adaptive_max_pool(const lt_pool_geom *g, const void *in, void *out, int64_t *idx, int64_t lo,
                          int64_t hi) {
  if (g->dt == LTENSOR_FLOAT32) adaptive_max_float(g, in, out, idx, lo, hi);
  else adaptive_max_double(g, in, out, idx, lo, hi);
}

/* ---- interpolation ------------------------------------------------------------ */
/* PyTorch's area_pixel_compute_source_index, nearest_idx,
   nearest_exact_idx and compute_source_index_and_lambda (UpSample.h). */
void lt_interp_axis_fill(lt_interp_axis *a, int64_t in, int64_t out, int mode, int align_corners, double scale) {
  a->one = mode == 0 || mode == 3 || mode == LT_INTERP_COPY;
  for (int64_t o = 0; o < out; o++) {
    a->lam[o] = 0;
    if (mode == LT_INTERP_COPY) {   /* an axis the caller added (in == out): read in place */
      a->i0[o] = a->i1[o] = o < in ? o : in - 1;
      continue;
    }
    if (mode == 0 || mode == 3) {   /* nearest: float arithmetic, as PyTorch's */
      int64_t i;
      float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
      if (mode == 3) i = (int64_t)floorf((float)(((double)o + 0.5) * (double)s));   /* nearest-exact */
      else if (out == in) i = o;
      else if (out == 2 * in) i = o >> 1;
      else i = (int64_t)floorf((float)o * s);
      if (i > in - 1) i = in - 1;
      a->i0[o] = a->i1[o] = i;
      continue;
    }
    double s;
    if (align_corners) s = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    else s = scale > 0 ? 1.0 / scale : (double)in / (double)out;
    double src = align_corners ? s * (double)o : s * ((double)o + 0.5) - 0.5;
    if (mode == 2) {   /* cubic: the source is not clamped; taps i0-1 .. i0+2 clamp per tap */
      double f = floor(src);
      a->i0[o] = a->i1[o] = (int64_t)f;
      a->lam[o] = src - f;
      continue;
    }
    if (out == in) {   /* PyTorch: "scale_factor = 1, simply copy" (both taps the same pixel) */
      a->i0[o] = a->i1[o] = o;
      continue;
    }
    if (!align_corners && src < 0) src = 0;
    int64_t i0 = (int64_t)src;
    if (i0 > in - 1) i0 = in - 1;
    a->i0[o] = i0;
    a->i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
    /* past the last pixel both taps read it, with PyTorch's weights */
    double lam = src - (double)i0;
    a->lam[o] = lam < 0 ? 0 : (lam > 1 ? 1 : lam);
  }
}

/* one output value along W from the row r: a single tap on a one-tap
   axis (nearest, or an axis the caller added), else the two-tap blend */
#define DEFINE_INTERP(T)                                                                                    \
  static inline T wtap_##T(const T *r, const lt_interp_axis *aw, int64_t ow) {                              \
    if (aw->one) return r[aw->i0[ow]];                                                                     \
    T lw = (T)aw->lam[ow], kw = 1 - lw;                                                                    \
    return kw * r[aw->i0[ow]] + lw * r[aw->i1[ow]];                                                        \
  }                                                                                                        \
  static void interp_##T(int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,         \
                         const lt_interp_axis *aw, const T *in, T *out, int64_t lo, int64_t hi) {          \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * Hi * Wi;                                                                       \
      T *y = out + p * Ho * Wo;                                                                            \
      for (int64_t oh = 0; oh < Ho; oh++) {                                                                \
        const T *r0 = x + ah->i0[oh] * Wi, *r1 = x + ah->i1[oh] * Wi;                                      \
        T *yr = y + oh * Wo;                                                                               \
        if (ah->one) {                                                                                     \
          for (int64_t ow = 0; ow < Wo; ow++) yr[ow] = wtap_##T(r0, aw, ow);                               \
          continue;                                                                                        \
        }                                                                                                  \
        T lh = (T)ah->lam[oh], kh = 1 - lh;                                                                \
        for (int64_t ow = 0; ow < Wo; ow++) yr[ow] = kh * wtap_##T(r0, aw, ow) + lh * wtap_##T(r1, aw, ow); \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* gin row r += g spread over the W taps of output ow */                                                 \
  static inline void wadd_##T(T *r, const lt_interp_axis *aw, int64_t ow, T g) {                           \
    if (aw->one) { r[aw->i0[ow]] += g; return; }                                                           \
    T lw = (T)aw->lam[ow], kw = 1 - lw;                                                                    \
    r[aw->i0[ow]] += kw * g;                                                                               \
    r[aw->i1[ow]] += lw * g;                                                                               \
  }                                                                                                        \
  static void interp_bwd_##T(int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,     \
                             const lt_interp_axis *aw, const T *gout, T *gin, int64_t lo, int64_t hi) {    \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      T *x = gin + p * Hi * Wi;                                                                            \
      const T *y = gout + p * Ho * Wo;                                                                     \
      for (int64_t oh = 0; oh < Ho; oh++) {                                                                \
        T *r0 = x + ah->i0[oh] * Wi, *r1 = x + ah->i1[oh] * Wi;                                            \
        const T *yr = y + oh * Wo;                                                                         \
        if (ah->one) {                                                                                     \
          for (int64_t ow = 0; ow < Wo; ow++) wadd_##T(r0, aw, ow, yr[ow]);                                \
          continue;                                                                                        \
        }                                                                                                  \
        T lh = (T)ah->lam[oh], kh = 1 - lh;                                                                \
        for (int64_t ow = 0; ow < Wo; ow++) {                                                              \
          wadd_##T(r0, aw, ow, kh * yr[ow]);                                                               \
          wadd_##T(r1, aw, ow, lh * yr[ow]);                                                               \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }
FLOAT_TYPES(DEFINE_INTERP)
#undef DEFINE_INTERP

/* Bicubic (PyTorch's upsample_bicubic2d): Keys' cubic convolution with
   A = -0.75 over the 4x4 taps around floor(src), each tap index clamped to
   the image (so border pixels repeat). */
static inline int64_t clamp_idx(int64_t i, int64_t n) { return i < 0 ? 0 : (i > n - 1 ? n - 1 : i); }
static inline void cubic_coeffs(double t, double c[4]) {
  const double A = -0.75;
  double x1 = t + 1.0, x2 = 1.0 - t, x3 = 2.0 - t;
  c[0] = ((A * x1 - 5.0 * A) * x1 + 8.0 * A) * x1 - 4.0 * A;
  c[1] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
  c[2] = ((A + 2.0) * x2 - (A + 3.0)) * x2 * x2 + 1.0;
  c[3] = ((A * x3 - 5.0 * A) * x3 + 8.0 * A) * x3 - 4.0 * A;
}
#define DEFINE_CUBIC(T)                                                                                     \
  static void cubic_##T(int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,          \
                        const lt_interp_axis *aw, const T *in, T *out, int64_t lo, int64_t hi) {           \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      const T *x = in + p * Hi * Wi;                                                                       \
      T *y = out + p * Ho * Wo;                                                                            \
      for (int64_t oh = 0; oh < Ho; oh++) {                                                                \
        double ch[4];                                                                                      \
        cubic_coeffs(ah->lam[oh], ch);                                                                     \
        const T *rows[4];                                                                                  \
        for (int k = 0; k < 4; k++) rows[k] = x + clamp_idx(ah->i0[oh] - 1 + k, Hi) * Wi;                  \
        for (int64_t ow = 0; ow < Wo; ow++) {                                                              \
          double cw[4];                                                                                    \
          int64_t c[4];                                                                                    \
          cubic_coeffs(aw->lam[ow], cw);                                                                   \
          for (int k = 0; k < 4; k++) c[k] = clamp_idx(aw->i0[ow] - 1 + k, Wi);                            \
          double acc = 0;                                                                                  \
          for (int k = 0; k < 4; k++)                                                                      \
            acc += ch[k] * (cw[0] * rows[k][c[0]] + cw[1] * rows[k][c[1]] + cw[2] * rows[k][c[2]] +        \
                            cw[3] * rows[k][c[3]]);                                                        \
          y[oh * Wo + ow] = (T)acc;                                                                        \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  static void cubic_bwd_##T(int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,      \
                            const lt_interp_axis *aw, const T *gout, T *gin, int64_t lo, int64_t hi) {     \
    for (int64_t p = lo; p < hi; p++) {                                                                    \
      T *x = gin + p * Hi * Wi;                                                                            \
      const T *y = gout + p * Ho * Wo;                                                                     \
      for (int64_t oh = 0; oh < Ho; oh++) {                                                                \
        double ch[4];                                                                                      \
        cubic_coeffs(ah->lam[oh], ch);                                                                     \
        T *rows[4];                                                                                        \
        for (int k = 0; k < 4; k++) rows[k] = x + clamp_idx(ah->i0[oh] - 1 + k, Hi) * Wi;                  \
        for (int64_t ow = 0; ow < Wo; ow++) {                                                              \
          double cw[4], g = (double)y[oh * Wo + ow];                                                       \
          cubic_coeffs(aw->lam[ow], cw);                                                                   \
          for (int k = 0; k < 4; k++)                                                                      \
            for (int l = 0; l < 4; l++) rows[k][clamp_idx(aw->i0[ow] - 1 + l, Wi)] += (T)(g * ch[k] * cw[l]); \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }
FLOAT_TYPES(DEFINE_CUBIC)
#undef DEFINE_CUBIC

void lt_interp_cubic(ltensor_dtype dt, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,
                     const lt_interp_axis *aw, const void *in, void *out, int64_t lo, int64_t hi) {
  if (dt == LTENSOR_FLOAT32) cubic_float(Hi, Wi, Ho, Wo, ah, aw, in, out, lo, hi);
  else cubic_double(Hi, Wi, Ho, Wo, ah, aw, in, out, lo, hi);
}
void lt_interp_cubic_bwd(ltensor_dtype dt, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,
                         const lt_interp_axis *aw, const void *gout, void *gin, int64_t lo, int64_t hi) {
  if (dt == LTENSOR_FLOAT32) cubic_bwd_float(Hi, Wi, Ho, Wo, ah, aw, gout, gin, lo, hi);
  else cubic_bwd_double(Hi, Wi, Ho, Wo, ah, aw, gout, gin, lo, hi);
}
void lt_interp(ltensor_dtype dt, int64_t planes, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo,
               const lt_interp_axis *ah, const lt_interp_axis *aw, const void *in, void *out, int64_t lo,
               int64_t hi) {
  (void)planes;
  if (dt == LTENSOR_FLOAT32) interp_float(Hi, Wi, Ho, Wo, ah, aw, in, out, lo, hi);
  else interp_double(Hi, Wi, Ho, Wo, ah, aw, in, out, lo, hi);
}
void lt_interp_bwd(ltensor_dtype dt, int64_t planes, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo,
                   const lt_interp_axis *ah, const lt_interp_axis *aw, const void *gout, void *gin, int64_t lo,
                   int64_t hi) {
  (void)planes;
  if (dt == LTENSOR_FLOAT32) interp_bwd_float(Hi, Wi, Ho, Wo, ah, aw, gout, gin, lo, hi);
  else interp_bwd_double(Hi, Wi, Ho, Wo, ah, aw, gout, gin, lo, hi);
}
