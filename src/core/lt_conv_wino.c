/* lt_conv_wino.c -- Winograd F(4x4, 3x3) for float32 3x3 convolutions of
   stride 1 (lt_conv.h).

   Per 6x6 input tile d (stride 4 over the padded image), per output tile
   of 4x4:  y = A^T [ (G g G^T) .* (B^T d B) ] A  (Lavin & Gray 2015).  The
   elementwise product summed over input channels is, for each of the 36
   tile positions k, one product U_k (Cs x Cb) @ V_k (Cb x tiles): 36 gemms
   with 4x fewer multiplications than im2col's Cs x (Cb*9) x (16 per tile).

   Layout per block of TB tiles (tile t: image n, tile row ty, column tx,
   numbered across all images so that small planes still fill a product):
     V[k][c][t]  = B^T d B,  Mo[k][co][t] = sum_c U[k][co][c] V[k][c][t].
   The transforms run along t (contiguous), so they vectorise: compiled for
   the baseline ISA and for AVX2/FMA, picked per call (lt_cpu.h); so does
   the weight transform, along the input channels.  Never raises. */
#include <string.h>
#include "lt_conv.h"
#include "lt_gemm_tiles.h"
#include "lt_cpu.h"

#define TAPS 36
/* scratch per part aimed at (V and Mo of one block): stays in L2-ish sizes
   while the 36 products read it */
#define WINO_BYTES (1 << 21)

int lt_wino_ok(const lt_conv_geom *g) {
  return g->dt == LTENSOR_FLOAT32 && g->G == 1 && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 &&
         g->dh == 1 && g->dw == 1 && g->Cb > 0 && g->Cs > 0 && g->Hs > 0 && g->Ws > 0 && g->N > 0 &&
         g->Hs == g->Hb + 2 * g->ph - 2 && g->Ws == g->Wb + 2 * g->pw - 2;
}

/* integer compares and an integer sum, so that -O3 vectorises the scan */
int lt_wino_finite(const float *p, int64_t n) {
  const uint32_t *u = (const uint32_t *)(const void *)p;
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad |= (u[i] & 0x7f800000u) == 0x7f800000u;
  return !bad;
}

int64_t lt_wino_tiles(const lt_conv_geom *g) { return g->N * ((g->Hs + 3) / 4) * ((g->Ws + 3) / 4); }

/* tiles per block: the byte budget (at least 16, at most 256 columns per
   product); with few blocks, a whole number of equal blocks per part */
int64_t lt_wino_block(const lt_conv_geom *g, int parts) {
  int64_t T = lt_wino_tiles(g), tb = WINO_BYTES / (TAPS * 4 * (g->Cb + g->Cs + 2));
  if (tb > 256) tb = 256;
  if (tb < 16) tb = 16;
  tb -= tb % 8;
  int64_t nb = (T + tb - 1) / tb;
  if (parts > 1 && nb < 4 * parts) {
    /* few blocks: as many per part, of equal size (each block reads all
       36 x Cs x Cb transformed weights, so no more blocks than that) */
    nb = (nb + parts - 1) / parts * parts;
    tb = (T + nb - 1) / nb;
  }
  return tb > T ? T : tb;
}

int64_t lt_wino_scratch(const lt_conv_geom *g, int64_t block) { return TAPS * block * (g->Cb + g->Cs + 2); }

/* gather one channel's 6x6 patches of the tiles [t0, t0+nb) into d[36][TB] */
static void gather(const lt_conv_geom *g, const float *img0, int64_t c, int64_t t0, int64_t nb, int64_t TB,
                   float *d) {
  int64_t th = (g->Hs + 3) / 4, tw = (g->Ws + 3) / 4, Hb = g->Hb, Wb = g->Wb;
  for (int64_t b = 0; b < nb; b++) {
    int64_t t = t0 + b, n = t / (th * tw), r = t % (th * tw);
    int64_t y0 = r / tw * 4 - g->ph, x0 = r % tw * 4 - g->pw;
    const float *img = img0 + (n * g->Cb + c) * Hb * Wb;
    if (y0 >= 0 && x0 >= 0 && y0 + 6 <= Hb && x0 + 6 <= Wb) {
      for (int i = 0; i < 6; i++) {
        const float *row = img + (y0 + i) * Wb + x0;
        for (int j = 0; j < 6; j++) d[(i * 6 + j) * TB + b] = row[j];
      }
      continue;
    }
    for (int i = 0; i < 6; i++) {
      int64_t y = y0 + i;
      for (int j = 0; j < 6; j++) {
        int64_t x = x0 + j;
        d[(i * 6 + j) * TB + b] = (y >= 0 && y < Hb && x >= 0 && x < Wb) ? img[y * Wb + x] : 0.0f;
      }
    }
  }
}

/* scatter the 4x4 outputs y[16][TB] of the tiles [t0, t0+nb) for channel co */
static void scatter(const lt_conv_geom *g, const float *y, float bias, int64_t co, int64_t t0, int64_t nb,
                    int64_t TB, float *out0) {
  int64_t th = (g->Hs + 3) / 4, tw = (g->Ws + 3) / 4, Hs = g->Hs, Ws = g->Ws;
  for (int64_t b = 0; b < nb; b++) {
    int64_t t = t0 + b, n = t / (th * tw), r = t % (th * tw);
    int64_t oy = r / tw * 4, ox = r % tw * 4;
    float *out = out0 + (n * g->Cs + co) * Hs * Ws;
    int hi = Hs - oy < 4 ? (int)(Hs - oy) : 4, wi = Ws - ox < 4 ? (int)(Ws - ox) : 4;
    for (int i = 0; i < hi; i++)
      for (int j = 0; j < wi; j++) out[(oy + i) * Ws + ox + j] = y[(i * 4 + j) * TB + b] + bias;
  }
}

/* The 1-D transforms over n lanes: inputs p + r*is (r < 6), outputs
   q + k*os.  B^T (6 -> 6) for the input, A^T (6 -> 4) for the output. */
#define DEFINE_WINO_TF(S, ATTR)                                                                             \
  static ATTR void bt6##S(const float *restrict p, int64_t is, float *restrict q, int64_t os, int64_t n) {  \
    for (int64_t t = 0; t < n; t++) {                                                                      \
      float d0 = p[t], d1 = p[is + t], d2 = p[2 * is + t], d3 = p[3 * is + t], d4 = p[4 * is + t],         \
            d5 = p[5 * is + t];                                                                            \
      q[t] = 4 * d0 - 5 * d2 + d4;                                                                         \
      q[os + t] = -4 * (d1 + d2) + d3 + d4;                                                                \
      q[2 * os + t] = 4 * (d1 - d2) - d3 + d4;                                                             \
      q[3 * os + t] = 2 * (d3 - d1) - d2 + d4;                                                             \
      q[4 * os + t] = 2 * (d1 - d3) - d2 + d4;                                                             \
      q[5 * os + t] = 4 * d1 - 5 * d3 + d5;                                                                \
    }                                                                                                      \
  }                                                                                                        \
  static ATTR void at6##S(const float *restrict p, int64_t is, float *restrict q, int64_t os, int64_t n) {  \
    for (int64_t t = 0; t < n; t++) {                                                                      \
      float m0 = p[t], m1 = p[is + t], m2 = p[2 * is + t], m3 = p[3 * is + t], m4 = p[4 * is + t],         \
            m5 = p[5 * is + t];                                                                            \
      float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;                                    \
      q[t] = m0 + s12 + s34;                                                                               \
      q[os + t] = d12 + 2 * d34;                                                                           \
      q[2 * os + t] = s12 + 4 * s34;                                                                       \
      q[3 * os + t] = d12 + 8 * d34 + m5;                                                                  \
    }                                                                                                      \
  }                                                                                                        \
  /* d[36][TB] -> V[k][c][TB] through tmp[36][TB] (rows, then columns) */                                  \
  static ATTR void in_tf##S(const float *d, float *tmp, float *V, int64_t Cb, int64_t TB, int64_t n) {      \
    for (int j = 0; j < 6; j++) bt6##S(d + j * TB, 6 * TB, tmp + j * TB, 6 * TB, n);                       \
    for (int i = 0; i < 6; i++) bt6##S(tmp + i * 6 * TB, TB, V + (int64_t)i * 6 * Cb * TB, Cb * TB, n);     \
  }                                                                                                        \
  /* Mo[k][co][TB] (one co) -> y[16][TB] through tmp[24][TB] */                                            \
  static ATTR void out_tf##S(const float *m, int64_t ks, float *tmp, float *y, int64_t TB, int64_t n) {    \
    for (int j = 0; j < 6; j++) at6##S(m + j * ks, 6 * ks, tmp + j * TB, 6 * TB, n);                       \
    for (int i = 0; i < 4; i++) at6##S(tmp + i * 6 * TB, TB, y + i * 4 * TB, TB, n);                       \
  }                                                                                                        \
  /* G (6 x 3) over n lanes: inputs p + r*is (r < 3), outputs q + k*os */                                \
  static ATTR void g3##S(const float *restrict p, int64_t is, float *restrict q, int64_t os, int64_t n) {   \
    for (int64_t t = 0; t < n; t++) {                                                                      \
      float a = p[t], b = p[is + t], c = p[2 * is + t], ac = a + c;                                        \
      q[t] = a * 0.25f;                                                                                    \
      q[os + t] = (ac + b) * (-1.0f / 6);                                                                  \
      q[2 * os + t] = (ac - b) * (-1.0f / 6);                                                              \
      q[3 * os + t] = a * (1.0f / 24) + b * (1.0f / 12) + c * (1.0f / 6);                                  \
      q[4 * os + t] = a * (1.0f / 24) - b * (1.0f / 12) + c * (1.0f / 6);                                  \
      q[5 * os + t] = c;                                                                                   \
    }                                                                                                      \
  }                                                                                                        \
  /* k[9][n] (taps of n input channels) -> U[k][co][0..n) through t[18][n] */                              \
  static ATTR void w_tf##S(const float *k, float *t, float *U, int64_t ks, int64_t n) {                    \
    for (int j = 0; j < 3; j++) g3##S(k + j * n, 3 * n, t + j * n, 3 * n, n);                              \
    for (int i = 0; i < 6; i++) g3##S(t + i * 3 * n, n, U + (int64_t)i * 6 * ks, ks, n);                   \
  }
DEFINE_WINO_TF(_base, )
#if LT_CPU_X86
DEFINE_WINO_TF(_avx2, LT_TARGET_AVX2_FMA)
#define WINO_PICK(fn, ...) (lt_cpu_has_avx2_fma() ? fn##_avx2(__VA_ARGS__) : fn##_base(__VA_ARGS__))
#else
#define WINO_PICK(fn, ...) fn##_base(__VA_ARGS__)
#endif
#undef DEFINE_WINO_TF

void lt_wino_weights(const lt_conv_geom *g, const float *w, int flip, float *U, float *tmp, int64_t lo, int64_t hi) {
  int64_t Cs = g->Cs, Cb = g->Cb;
  float *k = tmp, *t = tmp + 9 * Cb;
  for (int64_t co = lo; co < hi; co++) {
    for (int64_t ci = 0; ci < Cb; ci++) {
      const float *src = flip ? w + (ci * Cs + co) * 9 : w + (co * Cb + ci) * 9;
      for (int i = 0; i < 9; i++) k[i * Cb + ci] = flip ? src[8 - i] : src[i];
    }
    WINO_PICK(w_tf, k, t, U + co * Cb, Cs * Cb, Cb);
  }
}

void lt_wino_run(const lt_conv_geom *g, const float *big, const float *U, const float *bias, float *small,
                 float *scratch, int64_t block, int64_t lo, int64_t hi) {
  int64_t Cb = g->Cb, Cs = g->Cs, TB = block, T = lt_wino_tiles(g);
  float *V = scratch, *Mo = V + TAPS * Cb * TB, *d = Mo + TAPS * Cs * TB, *tmp = d + TAPS * TB;
  for (int64_t it = lo; it < hi; it++) {
    int64_t t0 = it * TB, nb = T - t0 < TB ? T - t0 : TB;
    for (int64_t c = 0; c < Cb; c++) {
      gather(g, big, c, t0, nb, TB, d);
      WINO_PICK(in_tf, d, tmp, V + c * TB, Cb, TB, nb);
    }
    for (int k = 0; k < TAPS; k++)
      lt_gemm_tiles_f32(0, 0, Cs, nb, Cb, U + (int64_t)k * Cs * Cb, Cb, V + (int64_t)k * Cb * TB, TB, 0.0f,
                          Mo + (int64_t)k * Cs * TB, TB);
    for (int64_t co = 0; co < Cs; co++) {
      WINO_PICK(out_tf, Mo + co * TB, Cs * TB, tmp, d, TB, nb);
      scatter(g, d, bias ? bias[co] : 0.0f, co, t0, nb, TB, small);
    }
  }
}
