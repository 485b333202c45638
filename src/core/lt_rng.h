/*
 * lt_rng.h -- the random generator core (Lua-free).
 *
 * A generator is LT_RNG_WORDS 64-bit words (the layout of lt_settings.rng,
 * so the state's default generator and T.Generator objects share it):
 *   s[0..3]  xoshiro256** 1.0 state (Blackman & Vigna, prng.di.unimi.it)
 *   s[4]     1 once seeded (an unseeded default generator seeds itself
 *            lazily with LT_RNG_DEFAULT_SEED)
 *   s[5]     the seed it was initialised from (initial_seed())
 * Seeding expands the 64-bit seed with four steps of splitmix64, as the
 * xoshiro authors recommend.  Only 64-bit integer arithmetic is involved
 * up to a word, so a seed gives the same words on every machine; the
 * transforms below use log/sin/cos/tan from the C library, which may differ
 * in the last ulp between platforms.
 *
 * Transforms (each value consumes whole words):
 *   unit(bits)   (w >> (64 - bits)) * 2^-bits: exact in a type with `bits`
 *                mantissa bits, in [0, 1)
 *   below(n)     uniform integer in [0, n) by rejection (no bias)
 *   gauss        Box-Muller on two 53-bit uniforms, the second value of a
 *                pair kept in the lt_gauss for the next call
 *   gamma        Marsaglia & Tsang (2000), alpha < 1 boosted by u^(1/alpha)
 *   poisson      multiplication method for small rates, Hormann's
 *                transformed rejection (PTRS, 1993) from rate 10 on
 */
#ifndef LT_RNG_H
#define LT_RNG_H

#include <stdint.h>

#define LT_RNG_WORDS 8
#define LT_RNG_DEFAULT_SEED UINT64_C(67280421310721)   /* PyTorch's default seed */
#define LT_RNG_STATE_BYTES 40                          /* get_state: s[0..3], seed (little-endian) */

void lt_rng_seed(uint64_t *s, uint64_t seed);
uint64_t lt_rng_splitmix(uint64_t *x);
uint64_t lt_rng_next(uint64_t *s);
static inline double lt_rng_unit(uint64_t *s, int bits) {
  return (double)(lt_rng_next(s) >> (64 - bits)) * (1.0 / (double)(UINT64_C(1) << bits));
}
uint64_t lt_rng_below(uint64_t *s, uint64_t n);   /* n >= 1 */

/* state serialisation (LT_RNG_STATE_BYTES bytes); load returns 0 for an
   all-zero (invalid) state */
void lt_rng_save(const uint64_t *s, unsigned char *out);
int lt_rng_load(uint64_t *s, const unsigned char *in);

typedef struct lt_gauss {
  uint64_t *s;
  int has_spare;
  double spare;
} lt_gauss;
static inline lt_gauss lt_gauss_of(uint64_t *s) { lt_gauss g = { s, 0, 0.0 }; return g; }
double lt_rng_gauss(lt_gauss *g);
double lt_rng_gamma(lt_gauss *g, double alpha);     /* alpha > 0; 0 gives 0 */
double lt_rng_poisson(lt_gauss *g, double rate);    /* rate >= 0 */

/* LT_RNG_NBLOCK standard normals in single precision from LT_RNG_NBLOCK/2
   words: Box-Muller on two 24-bit uniforms per word, with branch-free
   polynomial log / sincos / Newton square root (no libm calls, so GCC can
   vectorise the loop); for float32 / float16 / bfloat16 destinations.
   The radius is at most sqrt(2 log 2^25) = 5.9 (the smallest u1 is 2^-25). */
#define LT_RNG_NBLOCK 256
void lt_rng_normal_block_f32(uint64_t *s, float *out);
/* LT_RNG_NBLOCK standard exponentials -log(u), u = (k + 1/2) 2^-24, the
   same way (two per word); at most log 2^25 = 17.3 */
void lt_rng_exponential_block_f32(uint64_t *s, float *out);

/* d sample / d alpha of a standard Gamma(alpha) sample x (implicit
   reparameterisation, Figurnov et al. 2018): -(dP(alpha, x)/d alpha) / pdf(x). */
double lt_gamma_grad_alpha(double alpha, double x);

#endif
