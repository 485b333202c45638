/* lt_conv_dw.c -- depthwise convolution (one input channel per group:
   MobileNet's 3x3 layers), a direct kernel for float32/float64.

   im2col + gemm is the wrong shape here: a 1 x (kh*kw) x L product per
   channel.  Instead each input plane is copied once into a zero-padded
   buffer, its columns split by phase for stride 2 (phase p holds the
   padded columns p, p + s, p + 2s ...), so that every tap of every output
   row reads a contiguous run: out[ow] = b + sum_t w_t * tap_t[ow], one loop
   over ow that the vectoriser turns into FMAs over 8 (4) lanes.  The
   buffer's borders stay zero between planes of one call (only the interior
   is rewritten), so padding costs nothing per plane.  See lt_conv.h. */
#include <string.h>
#include "lt_conv.h"
#include "lt_cpu.h"

/* outputs computed per pass (on the padded pitch) before they are copied out */
#define DW_CHUNK 1024
/* a pass into the chunk buffer runs to a multiple of DW_SLACK lanes (no
   scalar remainder: on a 7x7 plane that was most of the work), so both the
   buffer and the chunk have DW_SLACK spare values */
#define DW_SLACK 16
/* output channels per group the kernels take (the weight gradient keeps one
   double per tap and output channel of a group on the stack) */
#define DW_WGRAD_MULT 8

int lt_conv_dw_ok(const lt_conv_geom *g) {
  /* (more output channels per input channel, e.g. a first layer on one-channel images: the gemm is
     faster than a pass per output plane) */
  if (g->Cb != 1 || g->Cs > DW_WGRAD_MULT || g->dh != 1 || g->dw != 1 || g->sh < 1 || g->sh > 2 || g->sw < 1 || g->sw > 2) return 0;
  if (g->kh < 1 || g->kw < 1 || g->kh > 7 || g->kw > 7 || g->ph >= g->kh || g->pw >= g->kw) return 0;
  int64_t hp = g->Hb + 2 * g->ph, wp = g->Wb + 2 * g->pw;
  if (hp < g->kh || wp < g->kw || g->Hb < 1 || g->Wb < 1) return 0;
  return g->Hs == (hp - g->kh) / g->sh + 1 && g->Ws == (wp - g->kw) / g->sw + 1;
}

/* The buffer holds the padded plane split by phase in both directions:
   padded pixel (r, c) = (rr*sh + rp, k*sw + cp) sits in sub-plane (rp, cp)
   at row rr, column k, each sub-plane Hq+1 rows of Lp (one spare row, see
   dw_planes).  Tap (i, j) of output (oh, ow) then reads sub-plane
   (i % sh, j % sw) at row oh + i/sh, column ow + j/sw: at offset
   tap(i, j) + oh*Lp + ow, linear in q = oh*Lp + ow, so the whole output
   runs as one long loop over q (Wo of every Lp values are kept). */
static int64_t dw_lp(const lt_conv_geom *g) { return (g->Wb + 2 * g->pw + g->sw - 1) / g->sw; }
static int64_t dw_hq(const lt_conv_geom *g) { return (g->Hb + 2 * g->ph + g->sh - 1) / g->sh + 1; }
int64_t lt_conv_dw_wgrad_scratch(const lt_conv_geom *g) {
  return g->sh * g->sw * dw_hq(g) * dw_lp(g) + DW_SLACK + g->Hs * dw_lp(g) + DW_SLACK;
}
int64_t lt_conv_dw_scratch(const lt_conv_geom *g) {
  int64_t lp = dw_lp(g);
  return g->sh * g->sw * dw_hq(g) * lp + DW_SLACK + (lp > DW_CHUNK ? lp : DW_CHUNK) + DW_SLACK;
}

#define DEFINE_DW(T, S, ATTR)                                                                               \
  /* z[q] = b + sum over the nine taps: one pass */                                                        \
  static inline ATTR void dw_run9_##T##S(T *restrict z, int64_t n, const T *const *a, const T *wv, T b) {  \
    const T *restrict a0 = a[0], *restrict a1 = a[1], *restrict a2 = a[2], *restrict a3 = a[3];            \
    const T *restrict a4 = a[4], *restrict a5 = a[5], *restrict a6 = a[6], *restrict a7 = a[7];            \
    const T *restrict a8 = a[8];                                                                           \
    T w0 = wv[0], w1 = wv[1], w2 = wv[2], w3 = wv[3], w4 = wv[4], w5 = wv[5], w6 = wv[6], w7 = wv[7];      \
    T w8 = wv[8];                                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                        \
      z[i] = b + w0 * a0[i] + w1 * a1[i] + w2 * a2[i] + w3 * a3[i] + w4 * a4[i] + w5 * a5[i] +            \
             w6 * a6[i] + w7 * a7[i] + w8 * a8[i];                                                         \
  }                                                                                                        \
  /* any other kernel: a pass per tap */                                                                   \
  static inline ATTR void dw_runk_##T##S(T *restrict z, int64_t n, const T *const *a, const T *wv,         \
                                         int64_t taps, T b) {                                              \
    for (int64_t i = 0; i < n; i++) z[i] = b;                                                              \
    for (int64_t t = 0; t < taps; t++) {                                                                   \
      const T *restrict src = a[t];                                                                        \
      T wt = wv[t];                                                                                        \
      for (int64_t i = 0; i < n; i++) z[i] += wt * src[i];                                                 \
    }                                                                                                      \
  }                                                                                                        \
  /* d[k] = s[k * step] for k < n: rows of 7-112 values, in blocks of 8 of a fixed count (the last one    \
     overlapping the one before), as the 2x2 pools do: a loop of variable count spent most of its time    \
     in its scalar remainder and loop set-up */                                                           \
  static inline ATTR void dw_copy_##T##S(T *restrict d, const T *restrict s, int64_t n, int64_t step) {   \
    if (n < 8) {                                                                                           \
      for (int64_t k = 0; k < n; k++) d[k] = s[k * step];                                                  \
      return;                                                                                              \
    }                                                                                                      \
    for (int64_t o = 0; o < n; o += 8) {                                                                   \
      if (o + 8 > n) o = n - 8;                                                                            \
      for (int k = 0; k < 8; k++) d[o + k] = s[(o + k) * step];                                            \
    }                                                                                                      \
  }                                                                                                        \
  /* the interior of the phase-split padded plane from input plane x (plain loops: rows of 7-112         \
     values, where a memcpy call costs more than the copy) */                                              \
  static inline ATTR void dw_fill_##T##S(const lt_conv_geom *g, const T *restrict x, T *restrict buf) {    \
    int64_t Lp = dw_lp(g), sub = dw_hq(g) * Lp, sh = g->sh, sw = g->sw, Wb = g->Wb, pw = g->pw;            \
    for (int64_t r = 0; r < g->Hb; r++) {                                                                  \
      int64_t pr = r + g->ph;                                                                              \
      T *restrict row = buf + (pr % sh) * sw * sub + (pr / sh) * Lp;                                       \
      const T *restrict src = x + r * Wb;                                                                  \
      if (sw == 1) {                                                                                       \
        dw_copy_##T##S(row + pw, src, Wb, 1);                                                              \
        continue;                                                                                          \
      }                                                                                                    \
      /* phase p holds padded columns 2k + p, input column 2k + p - pw */                                  \
      for (int64_t p = 0; p < 2; p++) {                                                                    \
        int64_t k0 = (pw - p + 1) / 2, k1 = (Wb - 1 + pw - p) / 2 + 1;                                     \
        T *restrict d = row + p * sub;                                                                     \
        const T *restrict s = src + p - pw;                                                                \
        if (k1 > k0) dw_copy_##T##S(d + k0, s + 2 * k0, k1 - k0, 2);                                       \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* items [lo, hi) of (sample, group); buf: lt_conv_dw_scratch elements.  The lanes of q past an          \
     output row's Wo read the next row or the spare one: garbage, never kept */                            \
  static ATTR void dw_planes_##T##S(const lt_conv_geom *g, const T *big, const T *w, const T *bias, T *small, \
                                    T *buf, int64_t lo, int64_t hi) {                                      \
    int64_t Lp = dw_lp(g), sub = dw_hq(g) * Lp, taps = g->kh * g->kw, Ho = g->Hs, Wo = g->Ws;              \
    int64_t rows = DW_CHUNK / Lp > 0 ? DW_CHUNK / Lp : 1;                                                  \
    T *z = buf + g->sh * g->sw * sub + DW_SLACK;   /* rows * Lp <= DW_CHUNK values, or one row of Lp */    \
    const T *a[49];                                                                                        \
    int64_t off[49];   /* each tap's offset from its output, as the header comment derives */              \
    for (int64_t i = 0; i < g->kh; i++)                                                                    \
      for (int64_t j = 0; j < g->kw; j++)                                                                  \
        off[i * g->kw + j] = ((i % g->sh) * g->sw + j % g->sw) * sub + (i / g->sh) * Lp + j / g->sw;      \
    memset(buf, 0, sizeof(T) * (size_t)(g->sh * g->sw * sub + DW_SLACK));                                             \
    for (int64_t it = lo; it < hi; it++) {                                                                 \
      int64_t gi = it % g->G;                                                                              \
      dw_fill_##T##S(g, big + it * g->Hb * g->Wb, buf);                                                    \
      for (int64_t o = 0; o < g->Cs; o++) {                                                                \
        int64_t oc = gi * g->Cs + o;                                                                       \
        const T *wv = w + oc * taps;                                                                       \
        T b = bias ? bias[oc] : (T)0, *y = small + (it * g->Cs + o) * Ho * Wo;                             \
        for (int64_t oh0 = 0; oh0 < Ho; oh0 += rows) {                                                     \
          int64_t nr = Ho - oh0 < rows ? Ho - oh0 : rows, n = (nr - 1) * Lp + Wo;                          \
          for (int64_t t = 0; t < taps; t++) a[t] = buf + off[t] + oh0 * Lp;                               \
          T *zz = Lp == Wo ? y + oh0 * Wo : z;   /* (equal pitches: straight into y) */                   \
          if (zz == z) n = (n + DW_SLACK - 1) / DW_SLACK * DW_SLACK;                                       \
          if (taps == 9) dw_run9_##T##S(zz, n, a, wv, b);                                                  \
          else dw_runk_##T##S(zz, n, a, wv, taps, b);                                                      \
          if (zz == z)                                                                                     \
            for (int64_t r = 0; r < nr; r++) dw_copy_##T##S(y + (oh0 + r) * Wo, z + r * Lp, Wo, 1);        \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }

#define DEFINE_DW_WGRAD(T, S, ATTR)                                                                         \
  /* sum over q < n of z[q] * a[q], in 8 lanes (a vectorised reduction without reassociating flags) */    \
  static inline ATTR double dw_dot_##T##S(const T *restrict z, const T *restrict a, int64_t n) {          \
    T lane[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };                                                                \
    int64_t q = 0;                                                                                         \
    for (; q + 8 <= n; q += 8)                                                                             \
      for (int l = 0; l < 8; l++) lane[l] += z[q + l] * a[q + l];                                          \
    double s = 0;                                                                                          \
    for (; q < n; q++) s += (double)z[q] * (double)a[q];                                                   \
    for (int l = 0; l < 8; l++) s += (double)lane[l];                                                      \
    return s;                                                                                              \
  }                                                                                                        \
  /* the nine dot products of a 3x3 kernel in one pass over z: 9 x 8 lanes */                              \
  static inline ATTR void dw_dot9_##T##S(const T *restrict z, const T *const *a, int64_t n, double *out) { \
    const T *restrict a0 = a[0], *restrict a1 = a[1], *restrict a2 = a[2], *restrict a3 = a[3];            \
    const T *restrict a4 = a[4], *restrict a5 = a[5], *restrict a6 = a[6], *restrict a7 = a[7];            \
    const T *restrict a8 = a[8];                                                                           \
    T l0[8] = {0}, l1[8] = {0}, l2[8] = {0}, l3[8] = {0}, l4[8] = {0}, l5[8] = {0}, l6[8] = {0};           \
    T l7[8] = {0}, l8[8] = {0};                                                                            \
    int64_t q = 0;                                                                                         \
    for (; q + 8 <= n; q += 8)                                                                             \
      for (int l = 0; l < 8; l++) {                                                                        \
        T zv = z[q + l];                                                                                   \
        l0[l] += zv * a0[q + l]; l1[l] += zv * a1[q + l]; l2[l] += zv * a2[q + l];                         \
        l3[l] += zv * a3[q + l]; l4[l] += zv * a4[q + l]; l5[l] += zv * a5[q + l];                         \
        l6[l] += zv * a6[q + l]; l7[l] += zv * a7[q + l]; l8[l] += zv * a8[q + l];                         \
      }                                                                                                    \
    const T *ls[9] = { l0, l1, l2, l3, l4, l5, l6, l7, l8 };                                               \
    for (int t = 0; t < 9; t++) {                                                                          \
      double s = 0;                                                                                        \
      for (int64_t r = q; r < n; r++) s += (double)z[r] * (double)a[t][r];                                 \
      for (int l = 0; l < 8; l++) s += (double)ls[t][l];                                                   \
      out[t] = s;                                                                                          \
    }                                                                                                      \
  }                                                                                                        \
  /* gw for the groups [lo, hi): each group's taps summed over every sample (no partial sums between      \
     threads: a group is one item).  The output gradient plane is copied onto the buffer's pitch Lp with  \
     zeros in the lanes past Wo, so a tap is one dot product over the whole plane. */                      \
  static ATTR void dw_wgrad_##T##S(const lt_conv_geom *g, const T *big, const T *small, T *gw, T *buf,     \
                                   int64_t lo, int64_t hi) {                                               \
    int64_t Lp = dw_lp(g), sub = dw_hq(g) * Lp, taps = g->kh * g->kw, Ho = g->Hs, Wo = g->Ws;              \
    int64_t off[49], n = (Ho - 1) * Lp + Wo;                                                               \
    T *gz = buf + g->sh * g->sw * sub + DW_SLACK;                                                          \
    double acc[DW_WGRAD_MULT * 49];                                                                        \
    for (int64_t i = 0; i < g->kh; i++)                                                                    \
      for (int64_t j = 0; j < g->kw; j++)                                                                  \
        off[i * g->kw + j] = ((i % g->sh) * g->sw + j % g->sw) * sub + (i / g->sh) * Lp + j / g->sw;      \
    memset(buf, 0, sizeof(T) * (size_t)lt_conv_dw_wgrad_scratch(g));                                       \
    for (int64_t gi = lo; gi < hi; gi++) {                                                                 \
      for (int64_t k = 0; k < g->Cs * taps; k++) acc[k] = 0;                                               \
      for (int64_t s = 0; s < g->N; s++) {                                                                 \
        dw_fill_##T##S(g, big + (s * g->G + gi) * g->Hb * g->Wb, buf);                                     \
        for (int64_t o = 0; o < g->Cs; o++) {                                                              \
          const T *y = small + ((s * g->G + gi) * g->Cs + o) * Ho * Wo;                                    \
          for (int64_t r = 0; r < Ho; r++) dw_copy_##T##S(gz + r * Lp, y + r * Wo, Wo, 1);                 \
          if (taps == 9) {                                                                                 \
            double d9[9];                                                                                  \
            const T *a[9];                                                                                 \
            for (int t = 0; t < 9; t++) a[t] = buf + off[t];                                               \
            dw_dot9_##T##S(gz, a, n, d9);                                                                  \
            for (int t = 0; t < 9; t++) acc[o * 9 + t] += d9[t];                                           \
          } else                                                                                           \
            for (int64_t t = 0; t < taps; t++) acc[o * taps + t] += dw_dot_##T##S(gz, buf + off[t], n);    \
        }                                                                                                  \
      }                                                                                                    \
      for (int64_t k = 0; k < g->Cs * taps; k++) gw[gi * g->Cs * taps + k] = (T)acc[k];                    \
    }                                                                                                      \
  }

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
/* baseline and AVX2+FMA builds, picked per call (as lt_conv.c's pools) */
#define DW_AVX2 LT_TARGET_AVX2_FMA
DEFINE_DW(float, _base, )
DEFINE_DW(double, _base, )
DEFINE_DW(float, _avx2, DW_AVX2)
DEFINE_DW(double, _avx2, DW_AVX2)
DEFINE_DW_WGRAD(float, _base, )
DEFINE_DW_WGRAD(double, _base, )
DEFINE_DW_WGRAD(float, _avx2, DW_AVX2)
DEFINE_DW_WGRAD(double, _avx2, DW_AVX2)
#define DW_PICK(fn, ...) (lt_cpu_has_avx2_fma() ? fn##_avx2(__VA_ARGS__) : fn##_base(__VA_ARGS__))
#else
DEFINE_DW(float, _base, )
DEFINE_DW(double, _base, )
DEFINE_DW_WGRAD(float, _base, )
DEFINE_DW_WGRAD(double, _base, )
#define DW_PICK(fn, ...) fn##_base(__VA_ARGS__)
#endif
#undef DEFINE_DW
#undef DEFINE_DW_WGRAD

void lt_conv_dw(const lt_conv_geom *g, const void *big, const void *w, const void *bias, void *small,
                void *scratch, int64_t lo, int64_t hi) {
  if (hi <= lo) return;
  if (g->dt == LTENSOR_FLOAT32) DW_PICK(dw_planes_float, g, big, w, bias, small, scratch, lo, hi);
  else DW_PICK(dw_planes_double, g, big, w, bias, small, scratch, lo, hi);
}

int lt_conv_dw_wgrad_ok(const lt_conv_geom *g) { return lt_conv_dw_ok(g) && g->Cs <= DW_WGRAD_MULT; }
void lt_conv_dw_wgrad(const lt_conv_geom *g, const void *big, const void *small, void *gw, void *scratch, int64_t lo,
                      int64_t hi) {
  if (hi <= lo) return;
  if (g->dt == LTENSOR_FLOAT32) DW_PICK(dw_wgrad_float, g, big, small, gw, scratch, lo, hi);
  else DW_PICK(dw_wgrad_double, g, big, small, gw, scratch, lo, hi);
}
