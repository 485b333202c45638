/* lt_rng.c -- xoshiro256** generator and the scalar samplers (see lt_rng.h). */
#include <math.h>
#include <string.h>
#include "lt_rng.h"

uint64_t lt_rng_splitmix(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void lt_rng_seed(uint64_t *s, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) s[i] = lt_rng_splitmix(&x);
  s[4] = 1;
  s[5] = seed;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t lt_rng_next(uint64_t *s) {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t lt_rng_below(uint64_t *s, uint64_t n) {
  uint64_t threshold = (0 - n) % n;   /* 2^64 mod n: words below it would bias w mod n */
  for (;;) {
    uint64_t w = lt_rng_next(s);
    if (w >= threshold) return w % n;
  }
}

/* little-endian whatever the host, so a saved state moves between machines */
void lt_rng_save(const uint64_t *s, unsigned char *out) {
  const uint64_t w[5] = { s[0], s[1], s[2], s[3], s[5] };
  for (int i = 0; i < 5; i++)
    for (int b = 0; b < 8; b++) out[i * 8 + b] = (unsigned char)(w[i] >> (8 * b));
}

int lt_rng_load(uint64_t *s, const unsigned char *in) {
  uint64_t w[5] = { 0 };
  for (int i = 0; i < 5; i++)
    for (int b = 0; b < 8; b++) w[i] |= (uint64_t)in[i * 8 + b] << (8 * b);
  if (!(w[0] | w[1] | w[2] | w[3])) return 0;   /* xoshiro's one fixed point */
  for (int i = 0; i < 4; i++) s[i] = w[i];
  s[4] = 1;
  s[5] = w[4];
  return 1;
}

double lt_rng_gauss(lt_gauss *g) {
  if (g->has_spare) { g->has_spare = 0; return g->spare; }
  double u1 = lt_rng_unit(g->s, 53), u2 = lt_rng_unit(g->s, 53);
  double r = sqrt(-2.0 * log(1.0 - u1)), th = 6.283185307179586 * u2;
  g->spare = r * sin(th);
  g->has_spare = 1;
  return r * cos(th);
}

double lt_rng_gamma(lt_gauss *g, double alpha) {
  double scale = 1.0;
  if (alpha < 1.0) {
    if (alpha <= 0.0) return 0.0;
    /* Gamma(a) = Gamma(a + 1) * U^(1/a): Marsaglia-Tsang needs a >= 1 */
    scale = pow(1.0 - lt_rng_unit(g->s, 53), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, y;
    do {
      x = lt_rng_gauss(g);
      y = 1.0 + c * x;
    } while (y <= 0.0);
    const double v = y * y * y, u = 1.0 - lt_rng_unit(g->s, 53), xx = x * x;
    if (u < 1.0 - 0.0331 * xx * xx) return scale * d * v;
    if (log(u) < 0.5 * xx + d * (1.0 - v + log(v))) return scale * d * v;
  }
}

double lt_rng_poisson(lt_gauss *g, double rate) {
  if (!(rate > 0.0)) return 0.0;
  if (rate < 10.0) {   /* count uniforms until their product drops below e^-rate */
    double enlam = exp(-rate), prod = 1.0, k = 0.0;
    for (;;) {
      prod *= lt_rng_unit(g->s, 53);
      if (prod > enlam) k += 1.0;
      else return k;
    }
  }
  /* PTRS: W. Hormann, "The transformed rejection method for generating
     Poisson random variables", Insurance: Math. and Econ. 12 (1993) */
  const double slam = sqrt(rate), loglam = log(rate);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    double U = lt_rng_unit(g->s, 53) - 0.5, V = lt_rng_unit(g->s, 53);
    double us = 0.5 - fabs(U);
    double k = floor((2.0 * a / us + b) * U + rate + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0.0 || (us < 0.013 && V > us)) continue;
    if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -rate + k * loglam - lgamma(k + 1.0)) return k;
  }
}

/* ---- single-precision Box-Muller in blocks --------------------------- */
static inline float f32_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t u32_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* log(u) for u = (w + 1/2) 2^-24 in (0, 1) (never 0, so the log is finite;
   a normal float), without branches or calls */
static inline float log_unit24(uint32_t w) {
  float u = ((float)w + 0.5f) * 0x1p-24f;
  uint32_t bits = u32_of(u);
  int32_t e = (int32_t)(bits >> 23) - 127;
  float m = f32_of((bits & 0x7fffffu) | 0x3f800000u);          /* [1, 2) */
  int32_t big = m > 1.41421356f;                               /* to [sqrt(1/2), sqrt(2)) */
  m = f32_of(u32_of(m) - ((uint32_t)big << 23));               /* m / 2 when big */
  e += big;
  /* log m = 2 atanh(f), f = (m - 1) / (m + 1), |f| < 0.172: the series to
     f^11 is exact to float precision */
  float f = (m - 1.0f) / (m + 1.0f), f2 = f * f;
  float lg = 2.0f * f * (1.0f + f2 * (1.0f / 3 + f2 * (1.0f / 5 + f2 * (1.0f / 7 + f2 * (1.0f / 9 + f2 * (1.0f / 11))))));
  return lg + (float)e * 0.693147180559945f;
}

void lt_rng_exponential_block_f32(uint64_t *s, float *out) {
  enum { H = LT_RNG_NBLOCK / 2 };
  uint32_t w1[H], w2[H];
  for (int i = 0; i < H; i++) {
    uint64_t w = lt_rng_next(s);
    w1[i] = (uint32_t)(w >> 40);
    w2[i] = (uint32_t)(w >> 16) & 0xffffffu;
  }
  for (int i = 0; i < H; i++) {
    out[i] = -log_unit24(w1[i]);
    out[H + i] = -log_unit24(w2[i]);
  }
}

void lt_rng_normal_block_f32(uint64_t *s, float *out) {
  enum { H = LT_RNG_NBLOCK / 2 };
  uint32_t w1[H], w2[H];
  for (int i = 0; i < H; i++) {
    uint64_t w = lt_rng_next(s);
    w1[i] = (uint32_t)(w >> 40);                 /* top 24 bits: the radius */
    w2[i] = (uint32_t)(w >> 16) & 0xffffffu;     /* next 24 bits: the angle */
  }
  /* a fixed trip count and selects written as integer masks keep this loop
     free of branches and calls */
  for (int i = 0; i < H; i++) {
    float x = -2.0f * log_unit24(w1[i]);                        /* -2 log u1 > 0 */
    /* sqrt(x) = x / sqrt(x): reciprocal square root by the bit-pattern
       estimate and three Newton steps (relative error below float's) */
    float y = f32_of(0x5f3759dfu - (u32_of(x) >> 1));
    y = y * (1.5f - 0.5f * x * y * y);
    y = y * (1.5f - 0.5f * x * y * y);
    y = y * (1.5f - 0.5f * x * y * y);
    float r = x * y;
    /* angle 2 pi u2: quadrant q = round(4 u2), a = 2 pi (u2 - q / 4) in [-pi/4, pi/4] */
    float u2 = (float)w2[i] * 0x1p-24f;
    int32_t q = (int32_t)(u2 * 4.0f + 0.5f);
    float a = (u2 - (float)q * 0.25f) * 6.28318530717958648f, a2 = a * a;
    float sn = a * (1.0f - a2 * (1.0f / 6 - a2 * (1.0f / 120 - a2 * (1.0f / 5040 - a2 * (1.0f / 362880)))));
    float cs = 1.0f - a2 * (0.5f - a2 * (1.0f / 24 - a2 * (1.0f / 720 - a2 * (1.0f / 40320))));
    /* rotate by q quarter turns: q odd swaps sin and cos; the signs follow */
    uint32_t swap = 0u - (uint32_t)(q & 1);
    uint32_t c_bits = (u32_of(cs) & ~swap) | (u32_of(sn) & swap);
    uint32_t s_bits = (u32_of(sn) & ~swap) | (u32_of(cs) & swap);
    c_bits ^= (uint32_t)((q + 1) & 2) << 30;   /* cos negative in quadrants 1, 2 */
    s_bits ^= (uint32_t)(q & 2) << 30;         /* sin negative in quadrants 2, 3 */
    out[i] = r * f32_of(c_bits);
    out[H + i] = r * f32_of(s_bits);
  }
}

/* ---- implicit reparameterisation of the Gamma ------------------------ */
/* Regularised lower (P) or upper (Q) incomplete gamma, whichever of the
   series (x < a + 1) or the continued fraction converges; *is_q says which.
   Numerical Recipes' gser / gcf (modified Lentz). */
static double inc_gamma(double a, double x, int *is_q) {
  const double lg = lgamma(a);
  if (x <= 0.0) { *is_q = 0; return 0.0; }
  if (x < a + 1.0) {
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < 1000; n++) {
      ap += 1.0;
      del *= x / ap;
      sum += del;
      if (fabs(del) < fabs(sum) * 1e-17) break;
    }
    *is_q = 0;
    return sum * exp(-x + a * log(x) - lg);
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 1000; i++) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < 1e-17) break;
  }
  *is_q = 1;
  return exp(-x + a * log(x) - lg) * h;
}

double lt_gamma_grad_alpha(double alpha, double x) {
  if (!(alpha > 0.0) || !(x > 0.0) || !isfinite(x)) return 0.0;
  /* dP/da by a central difference of the branch that is accurate at
     (alpha, x) (P in the body, Q = 1 - P in the upper tail); both sides
     are evaluated on the same branch so the quotient stays smooth */
  const double h = 1e-5 * (alpha > 1e-3 ? alpha : 1e-3);
  int q0, q1, q2;
  inc_gamma(alpha, x, &q0);
  double lo = alpha - h > 0.0 ? alpha - h : alpha, hi = alpha + h;
  double fp = inc_gamma(hi, x, &q1), fm = inc_gamma(lo, x, &q2);
  if (q1 != q0) fp = 1.0 - fp;
  if (q2 != q0) fm = 1.0 - fm;
  double dp = (fp - fm) / (hi - lo);
  if (q0) dp = -dp;   /* dP/da = -dQ/da */
  double logpdf = (alpha - 1.0) * log(x) - x - lgamma(alpha);
  double g = -dp * exp(-logpdf);
  return isfinite(g) ? g : 0.0;   /* far tail: both factors under/overflow */
}
