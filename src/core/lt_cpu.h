/*
 * lt_cpu.h -- the one place that asks which vector units the CPU has;
 * Lua-free.
 *
 * Kernels that are worth a wider build are compiled twice or three times
 * (the baseline ISA, and clones with one of the LT_TARGET_* attributes
 * below) and pick a clone per call with lt_cpu_has_*(): one binary runs
 * everywhere and uses AVX2/FMA/AVX-512 where they exist (no -march=native
 * in a distributed build).  The checks read what libgcc's CPU detection
 * (a constructor, run when the library loads) stored: a load and a test,
 * no state of ours.  LT_CPU_X86 is 0 where no clone is compiled; the
 * checks are then constant 0 and the clones' callers compile them out.
 */
#ifndef LT_CPU_H
#define LT_CPU_H

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define LT_CPU_X86 1
/* AVX2 without FMA: loops whose products and sums must round separately
   (add_alpha's a + alpha*b, the optimizers' updates) */
#define LT_TARGET_AVX2 __attribute__((target("avx2")))
#define LT_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define LT_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512dq,avx512vl,avx512bw")))
static inline int lt_cpu_has_avx2(void) { return __builtin_cpu_supports("avx2"); }
static inline int lt_cpu_has_avx2_fma(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
/* AVX-512 F, DQ, VL and BW (and the OS saving their state, which the
   detection checks) */
static inline int lt_cpu_has_avx512(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}
/* For code that may run before the constructors (a host's own constructor
   calling the library): runs the detection now (idempotent). */
static inline void lt_cpu_init(void) { __builtin_cpu_init(); }
#else
#define LT_CPU_X86 0
#define LT_TARGET_AVX2
#define LT_TARGET_AVX2_FMA
#define LT_TARGET_AVX512
static inline int lt_cpu_has_avx2(void) { return 0; }
static inline int lt_cpu_has_avx2_fma(void) { return 0; }
static inline int lt_cpu_has_avx512(void) { return 0; }
static inline void lt_cpu_init(void) {}
#endif

#endif
