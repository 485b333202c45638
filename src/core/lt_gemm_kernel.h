/*
 * lt_gemm_kernel.h -- one real type's blocked gemm and gemv, included by
 * lt_gemm.c once per type with these macros defined:
 *   T      the element type          V    a GCC vector of VL T's
 *   MR, NR the register tile (NR a multiple of VL)
 *   MC, KC, NC  the cache blocks (MC a multiple of MR, NC of NR)
 *   SFX    the name suffix (f32, f64)
 *
 * The blocking is GotoBLAS's: a KC x NC panel of B is packed once per
 * (jc, pc) into NR-wide slivers (stays in L3/L2), an MC x KC block of A into
 * MR-tall slivers (stays in L2), and the micro-kernel streams one sliver of
 * each, keeping the MR x NR tile of C in vector registers.  Packing pads
 * partial slivers with zeros, so the kernel always runs a full tile; only
 * the valid part of the tile is stored.
 */
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(name, SFX)
#define NV (NR / VL)

/* tile (MR x NR, row-major) = sum over p < kc of a[p] (MR) outer b[p] (NR) */
static inline __attribute__((always_inline)) void FN(kbody)(int64_t kc, const T *restrict a, const T *restrict b,
                                                            T *restrict tile) {
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
    for (int j = 0; j < NV; j++) acc[i][j] = (V){ 0 };
  for (int64_t p = 0; p < kc; p++) {
    V bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; j++) memcpy(&bv[j], b + j * VL, sizeof(V));
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      V av = (V){ 0 } + a[i];   /* broadcast */
#pragma GCC unroll 4
      for (int j = 0; j < NV; j++) acc[i][j] += av * bv[j];
    }
    a += MR;
    b += NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
    for (int j = 0; j < NV; j++) memcpy(tile + i * NR + j * VL, &acc[i][j], sizeof(V));
}

typedef void (*FN(kernel_fn))(int64_t, const T *restrict, const T *restrict, T *restrict);
static void FN(kernel_base)(int64_t kc, const T *restrict a, const T *restrict b, T *restrict tile) {
  FN(kbody)(kc, a, b, tile);
}
#ifdef LT_GEMM_X86
/* the same body compiled for AVX2 + FMA (chosen at run time) */
static LT_TARGET_AVX2_FMA void FN(kernel_avx2)(int64_t kc, const T *restrict a, const T *restrict b,
                                                                 T *restrict tile) {
  FN(kbody)(kc, a, b, tile);
}
#endif

/* mc x kc block of A (strides ars, acs) -> MR-tall slivers, zero padded */
static void FN(pack_a)(int64_t mc, int64_t kc, const T *A, int64_t ars, int64_t acs, T *dst) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    int64_t mr = mc - ir < MR ? mc - ir : MR;
    const T *a = A + ir * ars;
    if (mr == MR) {
      for (int64_t p = 0; p < kc; p++)
        for (int i = 0; i < MR; i++) dst[p * MR + i] = a[i * ars + p * acs];
    } else {
      for (int64_t p = 0; p < kc; p++)
        for (int i = 0; i < MR; i++) dst[p * MR + i] = i < mr ? a[i * ars + p * acs] : (T)0;
    }
    dst += kc * MR;
  }
}

/* kc x nc block of B (strides brs, bcs) -> NR-wide slivers, zero padded */
static void FN(pack_b)(int64_t kc, int64_t nc, const T *B, int64_t brs, int64_t bcs, T *dst) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    int64_t nr = nc - jr < NR ? nc - jr : NR;
    const T *b = B + jr * bcs;
    if (nr == NR && bcs == 1) {
      for (int64_t p = 0; p < kc; p++) memcpy(dst + p * NR, b + p * brs, NR * sizeof(T));
    } else {
      for (int64_t p = 0; p < kc; p++)
        for (int j = 0; j < NR; j++) dst[p * NR + j] = j < nr ? b[p * brs + j * bcs] : (T)0;
    }
    dst += kc * NR;
  }
}

/* C (mr x nr part of the tile) = alpha * tile + beta * C; C unread if beta == 0 */
static void FN(store)(int64_t mr, int64_t nr, const T *tile, T alpha, T beta, T *C, int64_t crs, int64_t ccs) {
  if (beta == 0) {
    for (int64_t i = 0; i < mr; i++)
      for (int64_t j = 0; j < nr; j++) C[i * crs + j * ccs] = alpha * tile[i * NR + j];
  } else {
    for (int64_t i = 0; i < mr; i++)
      for (int64_t j = 0; j < nr; j++) C[i * crs + j * ccs] = alpha * tile[i * NR + j] + beta * C[i * crs + j * ccs];
  }
}

/* y (M, stride ys) = alpha * A (M x K) x (K, stride xs) + beta * y */
static void FN(gemv)(int64_t M, int64_t K, T alpha, const T *A, int64_t ars, int64_t acs, const T *x, int64_t xs,
                     T beta, T *y, int64_t ys) {
  if (acs == 1 && xs == 1) {   /* rows are contiguous: one dot product per row */
    for (int64_t i = 0; i < M; i++) {
      const T *a = A + i * ars;
      V s0 = { 0 }, s1 = { 0 };
      int64_t k = 0;
      for (; k + 2 * VL <= K; k += 2 * VL) {
        V a0, a1, x0, x1;
        memcpy(&a0, a + k, sizeof(V)); memcpy(&a1, a + k + VL, sizeof(V));
        memcpy(&x0, x + k, sizeof(V)); memcpy(&x1, x + k + VL, sizeof(V));
        s0 += a0 * x0; s1 += a1 * x1;
      }
      s0 += s1;
      T s = 0;
      for (int l = 0; l < VL; l++) s += s0[l];
      for (; k < K; k++) s += a[k] * x[k];
      y[i * ys] = beta == 0 ? alpha * s : alpha * s + beta * y[i * ys];
    }
    return;
  }
  if (ars == 1 && ys == 1) {   /* columns are contiguous: y += x[k] * column k */
    if (beta == 0) memset(y, 0, (size_t)M * sizeof(T));
    else if (beta != 1) for (int64_t i = 0; i < M; i++) y[i] *= beta;
    for (int64_t k = 0; k < K; k++) {
      T xk = alpha * x[k * xs];
      const T *a = A + k * acs;
      for (int64_t i = 0; i < M; i++) y[i] += xk * a[i];
    }
    return;
  }
  for (int64_t i = 0; i < M; i++) {   /* any strides */
    const T *a = A + i * ars;
    T s0 = 0, s1 = 0;
    int64_t k = 0;
    for (; k + 1 < K; k += 2) { s0 += a[k * acs] * x[k * xs]; s1 += a[(k + 1) * acs] * x[(k + 1) * xs]; }
    if (k < K) s0 += a[k * acs] * x[k * xs];
    T s = s0 + s1;
    y[i * ys] = beta == 0 ? alpha * s : alpha * s + beta * y[i * ys];
  }
}

int FN(lt_gemm)(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t ars, int64_t acs, const T *B,
                int64_t brs, int64_t bcs, T beta, T *C, int64_t crs, int64_t ccs) {
  if (M <= 0 || N <= 0) return 0;
  if (K <= 0) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) C[i * crs + j * ccs] = beta == 0 ? (T)0 : beta * C[i * crs + j * ccs];
    return 0;
  }
  if (N == 1) { FN(gemv)(M, K, alpha, A, ars, acs, B, brs, beta, C, crs); return 0; }
  if (M == 1) { FN(gemv)(N, K, alpha, B, bcs, brs, A, acs, beta, C, ccs); return 0; }
  int64_t nc_max = N < NC ? (N + NR - 1) / NR * NR : NC;
  int64_t kc_max = K < KC ? K : KC;
  int64_t mc_max = M < MC ? (M + MR - 1) / MR * MR : MC;
  size_t bbytes = ((size_t)(kc_max * nc_max) * sizeof(T) + 63) & ~(size_t)63;
  size_t abytes = ((size_t)(kc_max * mc_max) * sizeof(T) + 63) & ~(size_t)63;
  T *buf = aligned_alloc(64, bbytes + abytes);
  if (!buf) return -1;
  T *pb = buf, *pa = (T *)(void *)((char *)buf + bbytes);
  T tile[MR * NR] __attribute__((aligned(64)));
  FN(kernel_fn) kernel = FN(kernel_base);
#ifdef LT_GEMM_X86
  if (lt_gemm_has_avx2()) kernel = FN(kernel_avx2);
#endif
  for (int64_t jc = 0; jc < N; jc += NC) {
    int64_t nc = N - jc < NC ? N - jc : NC;
    for (int64_t pc = 0; pc < K; pc += KC) {
      int64_t kc = K - pc < KC ? K - pc : KC;
      T be = pc == 0 ? beta : (T)1;
      FN(pack_b)(kc, nc, B + pc * brs + jc * bcs, brs, bcs, pb);
      for (int64_t ic = 0; ic < M; ic += MC) {
        int64_t mc = M - ic < MC ? M - ic : MC;
        FN(pack_a)(mc, kc, A + ic * ars + pc * acs, ars, acs, pa);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          int64_t nr = nc - jr < NR ? nc - jr : NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            int64_t mr = mc - ir < MR ? mc - ir : MR;
            kernel(kc, pa + ir * kc, pb + jr * kc, tile);
            FN(store)(mr, nr, tile, alpha, be, C + (ic + ir) * crs + (jc + jr) * ccs, crs, ccs);
          }
        }
      }
    }
  }
  free(buf);
  return 0;
}

#undef NV
#undef FN
#undef CAT
#undef CAT2

/* the parameters of this instance: the next one defines its own */
#undef T
#undef V
#undef VL
#undef MR
#undef NR
#undef MC
#undef KC
#undef NC
#undef SFX
