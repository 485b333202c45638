/*
 * lt_attention.h -- fused scaled dot-product attention (Lua-free core).
 *
 * For every batch n and head h:  out = softmax(Q K^T * scale + mask) V,
 * Q (L x D), K (S x D), V (S x Dv), with any element strides, so that the
 * heads are read in place from a packed (L, N, 3E) projection and written
 * straight into an (N, L, E) or (L, N, E) result.  The mask is the sum of an
 * optional attention mask and an optional key-padding mask (float, added to
 * the scores; -inf excludes a key).  Float32 and float64; each (n, h) pair is
 * one unit of work on the state's pool, its two products on that thread.
 *
 * Never raises: returns 0, or -1 when scratch memory could not be allocated
 * or the dtype is not float32/float64 (outputs then undefined).
 */
#ifndef LT_ATTENTION_H
#define LT_ATTENTION_H

#include <stdint.h>
#include "lt_dtype.h"
#include "lt_parallel.h"

typedef struct lt_sdpa_args {
  ltensor_dtype dt;
  int64_t N, H, L, S, D, Dv;
  /* element strides: [0] batch, [1] head, [2] row (query / key position), [3] feature */
  const char *q, *k, *v;
  int64_t qs[4], ks[4], vs[4];
  const char *am;           /* attention mask or NULL; strides batch, head, row, key */
  int64_t ams[4];
  const char *kpm;          /* key-padding mask or NULL; strides batch, key */
  int64_t kpms[2];
  double scale;
  char *out;                /* strides batch, head, row, feature */
  int64_t os[4];
  char *w;                  /* NULL, or the (N, H, L, S) contiguous attention weights */
} lt_sdpa_args;

int lt_sdpa_fwd(const lt_sdpa_args *a, lt_pool *pool);

#endif
