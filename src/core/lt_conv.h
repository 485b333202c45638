/*
 * lt_conv.h -- convolution, pooling and resampling kernels (Lua-free).
 *
 * Every kernel works on contiguous float32/float64 NCHW data; 1-D ops are
 * the H = 1 case, unbatched inputs N = 1 (the binding arranges both).
 *
 * Convolutions are written once for both directions.  A convolution maps a
 * "big" image to a "small" grid: small position (oh, ow) reads big pixels
 * (oh*sh - ph + i*dh, ow*sw - pw + j*dw) for kernel taps (i, j); pixels
 * outside the big image read as zero.  Per group g the weights are one
 * matrix W_g of Cs rows and Cb*kh*kw columns, so
 *   conv forward / conv_transpose input grad:  small = W_g @ im2col(big)
 *   conv input grad / conv_transpose forward:  big  = col2im(W_g^T @ small)
 *   weight grad (both):                        W_g = sum_n small @ im2col(big)^T
 * (conv: big = input, small = output; conv_transpose the other way round).
 * The im2col matrix has K = Cb*kh*kw rows and Hs*Ws columns, built a block
 * of rows at a time (lt_conv_rows: a whole image up to 1 MB); callers pass a
 * scratch buffer of lt_conv_scratch() elements for each part of the work.
 *
 * Work is split into ranges [lo, hi) of samples or planes so that the binding
 * can run pieces on several threads; the part number selects the scratch.
 */
#ifndef LT_CONV_H
#define LT_CONV_H

#include "lt_dtype.h"

typedef struct lt_conv_geom {
  ltensor_dtype dt;              /* float32 or float64 */
  int64_t N, G;                  /* batch, groups */
  int64_t Cb, Hb, Wb;            /* big image: channels per group, height, width */
  int64_t Cs, Hs, Ws;            /* small grid: channels per group, height, width */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t col_rows;              /* rows per im2col block; 0: lt_conv_rows' choice */
  int64_t cs_parts;              /* lt_conv_small: slices of the small channels per block (0 or 1: none) */
  int64_t cb_parts;              /* lt_conv_big: slices of the big channels per item (0 or 1: none) */
} lt_conv_geom;

/* Small-grid rows per im2col block: a whole image while its columns fit in
   1 MB (g->col_rows, when set, overrides).  Every gemm runs on the calling
   thread (OpenBLAS is given tiles too small for its threads): the binding
   spreads the items below over the state's pool. */
int64_t lt_conv_rows(const lt_conv_geom *g);
/* Elements of im2col scratch one part needs (0: none, the big image is
   read in place: 1x1 kernels with unit stride and no padding). */
int64_t lt_conv_scratch(const lt_conv_geom *g);
/* Images per product: 1, or for small grids (under 64 positions) enough
   images for ~128 columns, which then share one im2col and one gemm. */
int64_t lt_conv_nimg(const lt_conv_geom *g);
/* Work items of lt_conv_small: image groups * G * blocks of lt_conv_rows
   rows * cs_parts; of lt_conv_big: image groups * G * cb_parts. */
static inline int64_t lt_conv_small_items(const lt_conv_geom *g) {
  int64_t rb = lt_conv_rows(g), hs = g->Hs > 0 ? g->Hs : 1, ni = lt_conv_nimg(g);
  return (g->N + ni - 1) / ni * g->G * ((hs + rb - 1) / rb) * (g->cs_parts > 1 ? g->cs_parts : 1);
}
static inline int64_t lt_conv_big_items(const lt_conv_geom *g) {
  int64_t ni = lt_conv_nimg(g);
  return (g->N + ni - 1) / ni * g->G * (g->cb_parts > 1 ? g->cb_parts : 1);
}

/* small = W @ im2col(big) (+ bias per small channel) for the items
   [lo, hi) of lt_conv_small_items (item = (n, group, row block, channel slice)). */
void lt_conv_small(const lt_conv_geom *g, const void *big, const void *w, const void *bias, void *small,
                   const void *prep, void *scratch, int64_t lo, int64_t hi);
/* Several images per product (lt_conv_nimg > 1) cut into channel slices:
   each image group's im2col (to_small, lt_conv_small) or gathered small
   grids (lt_conv_big) made once for every slice instead of once per slice's
   part.  prep holds lt_conv_multi_prep_size elements, written by
   lt_conv_multi_prep over its items [lo, hi) of lt_conv_multi_prep_items
   ((image group, group) pairs; 0: one image per product, nothing to
   share); NULL prep: each part makes its own. */
int64_t lt_conv_multi_prep_items(const lt_conv_geom *g);
int64_t lt_conv_multi_prep_size(const lt_conv_geom *g, int to_small);
void lt_conv_multi_prep(const lt_conv_geom *g, int to_small, const void *src, void *prep, int64_t lo, int64_t hi);
/* One image and one group (batch-1 inference) split over threads by
   phases: lt_conv_shared_col builds the small rows [r0, r1) of the whole
   im2col (K = Cb*kh*kw rows, Hs*Ws columns) into col, then
   lt_conv_shared_gemm computes the small channels [m0, m1) from it (+ bias).
   lt_conv_shared_ok: g is such a conv, not a direct 1x1 one, and its
   im2col has at most 2^24 elements. */
int lt_conv_shared_ok(const lt_conv_geom *g);
void lt_conv_shared_col(const lt_conv_geom *g, const void *big, void *col, int64_t r0, int64_t r1);
void lt_conv_shared_gemm(const lt_conv_geom *g, const void *w, const void *col, const void *bias, void *small,
                         int64_t m0, int64_t m1);
/* Depthwise (one big channel per group, dilation 1, stride 1 or 2,
   kernels up to 7x7, the usual output size): a direct kernel
   (lt_conv_dw.c).  lt_conv_dw_ok says whether g qualifies; items are
   N * G (sample, group), each part needs lt_conv_dw_scratch elements. */
int lt_conv_dw_ok(const lt_conv_geom *g);
int64_t lt_conv_dw_scratch(const lt_conv_geom *g);
void lt_conv_dw(const lt_conv_geom *g, const void *big, const void *w, const void *bias, void *small,
                void *scratch, int64_t lo, int64_t hi);
/* its weight gradient (up to 8 output channels per group): gw written for
   the groups [lo, hi), each summed over all N samples (items: groups);
   lt_conv_dw_wgrad_scratch elements per part.  The input gradient of a
   stride-1 depthwise conv is lt_conv_dw itself with the kernel flipped and
   the padding k-1-p (the binding arranges it). */
int lt_conv_dw_wgrad_ok(const lt_conv_geom *g);
int64_t lt_conv_dw_wgrad_scratch(const lt_conv_geom *g);
void lt_conv_dw_wgrad(const lt_conv_geom *g, const void *big, const void *small, void *gw, void *scratch, int64_t lo,
                      int64_t hi);
/* big[n, g] = col2im(W_g^T @ small[n, g]) (+ bias per big channel) for
   the items [lo, hi) of lt_conv_big_items (item = (image group, group,
   slice of the big channels)); lt_conv_big_scratch elements per part.  A
   slice computes its channels as the whole call would (the K tiles of
   lt_gemm_tiles depend on K alone) while its product stays over
   4 x LT_GEMM_SERIAL_MNK multiply-adds. */
int64_t lt_conv_big_scratch(const lt_conv_geom *g);
void lt_conv_big(const lt_conv_geom *g, const void *small, const void *w, const void *bias, void *big,
                 const void *prep, void *scratch, int64_t lo, int64_t hi);
/* gw = sum over n in [lo, hi) of small[n] @ im2col(big[n])^T, per group,
   for the big channels [ch0, ch1) of each group (gw's columns
   [ch0*kh*kw, ch1*kh*kw) written; zeros when the sample range is empty);
   scratch of lt_conv_wgrad_scratch(g, ch1 - ch0) elements.  Every column
   sums its terms in the same order whatever the channel range (the K tiles
   of lt_gemm_tiles depend on K alone), so parts split by channels give
   the bits of one whole call when each part's product is over
   4 x LT_GEMM_SERIAL_MNK multiply-adds. */
int64_t lt_conv_wgrad_scratch(const lt_conv_geom *g, int64_t nch);
void lt_conv_wgrad(const lt_conv_geom *g, const void *big, const void *small, const void *prep, void *gw,
                   void *scratch, int64_t lo, int64_t hi, int64_t ch0, int64_t ch1);
/* The output gradient as the weight gradient's products read it
   (transposed, or several images' grids side by side), made once for the
   parts that split the big channels instead of once per part: prep (NULL:
   each call makes its blocks itself) holds lt_conv_wgrad_prep_size
   elements (0: the products read small in place), written by
   lt_conv_wgrad_prep over its items [lo, hi) of lt_conv_wgrad_prep_items
   ((group, image group) pairs). */
int64_t lt_conv_wgrad_prep_size(const lt_conv_geom *g);
int64_t lt_conv_wgrad_prep_items(const lt_conv_geom *g);
void lt_conv_wgrad_prep(const lt_conv_geom *g, const void *small, void *prep, int64_t lo, int64_t hi);

/* ---- Winograd F(4x4, 3x3) (lt_conv_wino.c) ---------------------------------
   float32 3x3 convolutions of stride 1, dilation 1, one group, any padding
   (the usual output size), as 36 products per block of 6x6 input tiles:
   4x fewer multiplications than the direct product.  The weights are
   transformed once per call (lt_wino_weights, 36 x Cs x Cb floats); items
   of lt_wino_run are blocks of lt_wino_block(g) tiles over all images, each
   part needing lt_wino_scratch(g) floats. */
int lt_wino_ok(const lt_conv_geom *g);
/* 1 when the n floats at p are all finite: a NaN or inf would spread over
   a whole 4x4 tile (inf - inf in the transforms) where the direct product
   touches only the outputs whose windows hold it, so such inputs keep the
   im2col path */
int lt_wino_finite(const float *p, int64_t n);
int64_t lt_wino_tiles(const lt_conv_geom *g);
int64_t lt_wino_block(const lt_conv_geom *g, int parts);
int64_t lt_wino_scratch(const lt_conv_geom *g, int64_t block);
/* U = transformed weights; w is Cs x Cb x 3 x 3, or with `flip` Cb x Cs x
   3 x 3 read with its taps reversed (the input gradient of a conv with
   weights w is the conv of the output gradient with these); output
   channels [lo, hi) only (parts of the pool split them); tmp: 27 * Cb
   floats per part */
void lt_wino_weights(const lt_conv_geom *g, const float *w, int flip, float *U, float *tmp, int64_t lo, int64_t hi);
void lt_wino_run(const lt_conv_geom *g, const float *big, const float *U, const float *bias, float *small,
                 float *scratch, int64_t block, int64_t lo, int64_t hi);

/* ---- pooling (planes = N*C, each Hi x Wi -> Ho x Wo) --------------------- */
typedef struct lt_pool_geom {
  ltensor_dtype dt;
  int64_t planes, Hi, Wi, Ho, Wo;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int count_include_pad;         /* avg */
  int64_t divisor;               /* avg: divisor_override, 0 = none */
} lt_pool_geom;

/* values and 1-based flat indices within each input plane (NaN wins, as
   in PyTorch); idx may be NULL.  codes (2x2 windows of stride 2 inside the
   plane only, idx NULL): one byte per output, the winning tap 0..3 in scan
   order, which is all the backward needs (an eighth of the indices' bytes). */
void lt_max_pool(const lt_pool_geom *g, const void *in, void *out, int64_t *idx, uint8_t *codes, int64_t lo,
                 int64_t hi);
/* gin (zeroed by the caller) += gout scattered to the recorded positions;
   `per_plane` = Ho*Wo outputs and Hi*Wi inputs per plane. */
void lt_max_pool_bwd(ltensor_dtype dt, int64_t out_per_plane, int64_t in_per_plane, const void *gout,
                     const int64_t *idx, void *gin, int64_t lo, int64_t hi);
/* the same for 2x2 windows of stride 2 (no padding, dilation 1; 2*Ho <= Hi,
   2*Wo <= Wi), from the indices or (idx NULL) the tap codes of lt_max_pool:
   writes all of gin (no zeroing needed) */
void lt_max_pool2_bwd(ltensor_dtype dt, int64_t Ho, int64_t Wo, int64_t Hi, int64_t Wi, const void *gout,
                      const int64_t *idx, const uint8_t *codes, void *gin, int64_t lo, int64_t hi);
void lt_avg_pool(const lt_pool_geom *g, const void *in, void *out, int64_t lo, int64_t hi);
void lt_avg_pool_bwd(const lt_pool_geom *g, const void *gout, void *gin, int64_t lo, int64_t hi);

/* adaptive pools: output cell (i, j) covers rows [floor(i*Hi/Ho), ceil((i+1)*Hi/Ho)) */
void lt_adaptive_avg_pool(const lt_pool_geom *g, const void *in, void *out, int64_t lo, int64_t hi);
void lt_adaptive_avg_pool_bwd(const lt_pool_geom *g, const void *gout, void *gin, int64_t lo, int64_t hi);
void lt_adaptive_max_pool(const lt_pool_geom *g, const void *in, void *out, int64_t *idx, int64_t lo,
                          int64_t hi);

/* ---- interpolation (separable: per output row/col a source pair and weight) */
typedef struct lt_interp_axis {
  int64_t *i0, *i1;              /* source indices (0-based) */
  double *lam;                   /* weight of i1 (0 for nearest) */
  int one;                       /* one tap (i0) per output: nearest modes and LT_INTERP_COPY */
} lt_interp_axis;
/* mode 0 nearest, 1 linear, 2 cubic (i0 = floor(source), lam = the fraction,
   i1 unused), 3 nearest-exact, LT_INTERP_COPY an axis of equal sizes the
   caller added (1-D as 2-D, 3-D as two 2-D passes) read in place, with no
   arithmetic, so that an inf is not turned into NaN by a zero weight;
   scale < 0 means "not given" (use in/out) */
#define LT_INTERP_COPY 9
void lt_interp_axis_fill(lt_interp_axis *a, int64_t in, int64_t out, int mode, int align_corners, double scale);
void lt_interp(ltensor_dtype dt, int64_t planes, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo,
               const lt_interp_axis *ah, const lt_interp_axis *aw, const void *in, void *out, int64_t lo,
               int64_t hi);
/* gin (zeroed by the caller) += transpose of lt_interp */
void lt_interp_bwd(ltensor_dtype dt, int64_t planes, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo,
                   const lt_interp_axis *ah, const lt_interp_axis *aw, const void *gout, void *gin, int64_t lo,
                   int64_t hi);

/* bicubic over planes [lo, hi) from mode-2 axis tables; the backward adds
   into gin (zeroed by the caller) */
void lt_interp_cubic(ltensor_dtype dt, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,
                     const lt_interp_axis *aw, const void *in, void *out, int64_t lo, int64_t hi);
void lt_interp_cubic_bwd(ltensor_dtype dt, int64_t Hi, int64_t Wi, int64_t Ho, int64_t Wo, const lt_interp_axis *ah,
                         const lt_interp_axis *aw, const void *gout, void *gin, int64_t lo, int64_t hi);

#endif
