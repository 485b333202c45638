/* lt_iter.c -- the elementwise iteration engine (see lt_iter.h). */
#include <string.h>
#include "lt_iter.h"
#include "lt_promote.h"

/* PyTorch's reorder_dimensions: perm[0] is the fastest-moving dim.  An
   insertion sort with an ambiguous comparison: broadcast (stride 0) dims of
   an operand say nothing, equal strides put the smaller size first. */
static void compute_perm(int nops, int64_t st[][LT_MAX_DIMS], int ndim, const int64_t *shape, int *perm) {
  for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; d0--) {
      int cmp = 0, a = perm[d0], b = perm[d1];
      for (int k = 0; k < nops; k++) {
        int64_t s0 = st[k][a], s1 = st[k][b];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) { cmp = -1; break; }
        if (s0 > s1) { cmp = 1; break; }
        if (shape[a] > shape[b]) { cmp = 1; break; }
      }
      if (cmp > 0) {
        perm[d0] = b;
        perm[d1] = a;
        d1 = d0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
}

int lt_iter_check_out(const lt_tensor *out, int ndim, const int64_t *shape) {
  if (out->ndim != ndim) return LT_OUT_SHAPE;
  for (int i = 0; i < ndim; i++)
    if (out->shape[i] != shape[i]) return LT_OUT_SHAPE;
  if (lt_numel(out) > 1 && lt_has_internal_overlap(out)) return LT_OUT_OVERLAP;
  return LT_OUT_OK;
}

bool lt_iter_input_aliases(const lt_tensor *in, const lt_tensor *out) {
  if (!lt_may_overlap(in, out)) return false;
  if (in->offset != out->offset || in->ndim != out->ndim || in->dtype != out->dtype) return true;
  for (int i = 0; i < in->ndim; i++)
    if (in->shape[i] != out->shape[i] || (in->shape[i] > 1 && in->stride[i] != out->stride[i])) return true;
  return false;
}

void lt_iter_out_strides(const lt_tensor *const *ins, int nin, int ndim, const int64_t *shape,
                         int64_t *stride) {
  int64_t st[LT_ITER_MAX_OPS][LT_MAX_DIMS];
  int perm[LT_MAX_DIMS];
  if (nin > LT_ITER_MAX_OPS) nin = LT_ITER_MAX_OPS;
  for (int k = 0; k < nin; k++) lt_broadcast_strides(ins[k], ndim, shape, st[k]);
  compute_perm(nin, st, ndim, shape, perm);
  int64_t s = 1;
  for (int k = 0; k < ndim; k++) {
    int d = perm[k];
    stride[d] = s;
    s *= shape[d] > 1 ? shape[d] : 1;
  }
}

void lt_iter_init(lt_iter *it, const lt_tensor *const *ops, int nout, int nin,
                  const ltensor_dtype *kdt, int ndim, const int64_t *shape, lt_pool *pool) {
  int nops = nout + nin;
  int64_t st[LT_ITER_MAX_OPS][LT_MAX_DIMS];
  int perm[LT_MAX_DIMS];
  it->nops = nops;
  it->nout = nout;
  it->needs_cast = 0;
  it->grain = LT_GRAIN;
  it->pool = pool;
  int64_t sz[LT_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) {
    const lt_tensor *t = ops[k];
    lt_broadcast_strides(t, ndim, shape, st[k]);
    sz[k] = (int64_t)lt_itemsize(t->dtype);
    it->data[k] = lt_data(t);
    it->dtype[k] = t->dtype;
    it->kdtype[k] = kdt[k];
    it->via[k] = kdt[k];
    if (t->dtype != kdt[k]) it->needs_cast = 1;
  }
  /* the order is the same in elements as in bytes (one operand's strides
     are compared with each other); a size-1 dim's stride is never used to
     step, and may be anything (even beyond int64 in bytes): 0 */
  compute_perm(nops, st, ndim, shape, perm);
  /* an empty walk steps nowhere: its strides are 0 (an empty tensor's other
     dims may be huge, {0, 2^63-1} from vander, and their element strides
     times the item size overflowed) */
  int empty = 0;
  for (int i = 0; i < ndim; i++) empty |= shape[i] == 0;
  int64_t sh[LT_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    sh[i] = shape[perm[i]];
    for (int k = 0; k < nops; k++) it->strides[k][i] = sh[i] == 1 || empty ? 0 : st[k][perm[i]] * sz[k];
  }
  /* coalesce adjacent dims that step through memory as one */
  int prev = 0;
  for (int d = 1; d < ndim; d++) {
    int ok = sh[prev] == 1 || sh[d] == 1;
    if (!ok) {
      ok = 1;
      for (int k = 0; k < nops; k++)
        if (it->strides[k][prev] * sh[prev] != it->strides[k][d]) { ok = 0; break; }
    }
    if (ok) {
      if (sh[prev] == 1)
        for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
      sh[prev] *= sh[d];
    } else {
      prev++;
      if (prev != d) {
        for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
        sh[prev] = sh[d];
      }
    }
  }
  if (ndim == 0) {
    sh[0] = 1;
    for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
    prev = 0;
  }
  it->ndim = prev + 1;
  it->numel = 1;
  for (int i = 0; i < it->ndim; i++) {
    it->shape[i] = sh[i];
    it->numel *= sh[i];
  }
}

/* ---- running ----------------------------------------------------------- */
#define CHUNK 256

/* One run of n elements at ptr with innermost strides s0, casting operands
   whose storage dtype differs from the loop's through stack buffers. */
static void run_cast(const lt_iter *it, char **ptr, const int64_t *s0, int64_t n, lt_loop_fn fn, void *ctx) {
  _Alignas(64) char buf[LT_ITER_MAX_OPS][CHUNK * 16];
  _Alignas(64) char tmp[CHUNK * 16];   /* inputs rounded through it->via */
  char *p[LT_ITER_MAX_OPS];
  int64_t st[LT_ITER_MAX_OPS];
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = n - off < CHUNK ? n - off : CHUNK;
    for (int k = 0; k < it->nops; k++) {
      char *src = ptr[k] + off * s0[k];
      if (it->dtype[k] == it->kdtype[k] && it->via[k] == it->kdtype[k]) { p[k] = src; st[k] = s0[k]; continue; }
      int64_t ksz = (int64_t)lt_itemsize(it->kdtype[k]);
      p[k] = buf[k];
      st[k] = ksz;
      if (k < it->nout) continue;
      if (it->via[k] == it->kdtype[k]) {
        lt_cast_kernel(it->dtype[k], it->kdtype[k])(src, s0[k], buf[k], ksz, m);
      } else {
        int64_t vsz = (int64_t)lt_itemsize(it->via[k]);
        lt_cast_kernel(it->dtype[k], it->via[k])(src, s0[k], tmp, vsz, m);
        lt_cast_kernel(it->via[k], it->kdtype[k])(tmp, vsz, buf[k], ksz, m);
      }
    }
    fn(p, st, m, ctx);
    for (int k = 0; k < it->nout; k++)
      if (it->dtype[k] != it->kdtype[k])
        lt_cast_kernel(it->kdtype[k], it->dtype[k])(buf[k], st[k], ptr[k] + off * s0[k], s0[k], m);
  }
}

static void run_range(const lt_iter *it, int64_t start, int64_t end, lt_loop_fn fn, void *ctx) {
  int nd = it->ndim, nops = it->nops;
  int64_t idx[LT_MAX_DIMS];
  int64_t rest = start / it->shape[0];
  int64_t i0 = start % it->shape[0];
  for (int d = 1; d < nd; d++) { idx[d] = rest % it->shape[d]; rest /= it->shape[d]; }
  int64_t s0[LT_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) s0[k] = it->strides[k][0];
  int64_t pos = start;
  while (pos < end) {
    int64_t n = it->shape[0] - i0;
    if (n > end - pos) n = end - pos;
    char *ptr[LT_ITER_MAX_OPS];
    for (int k = 0; k < nops; k++) {
      int64_t off = i0 * s0[k];
      for (int d = 1; d < nd; d++) off += idx[d] * it->strides[k][d];
      ptr[k] = it->data[k] + off;
    }
    if (it->needs_cast) run_cast(it, ptr, s0, n, fn, ctx);
    else fn(ptr, s0, n, ctx);
    pos += n;
    i0 = 0;
    for (int d = 1; d < nd; d++) {
      if (++idx[d] < it->shape[d]) break;
      idx[d] = 0;
    }
  }
}

/* 2-d iterations where operands disagree on the fast dim (a transposed
   input with a contiguous one): runs along dim 0 step a large stride for
   some operand, one cache line per element.  Going in TILE x TILE tiles
   keeps those lines in cache while the tile's columns reuse them, and an
   operand that runs along dim 1 instead is staged: its tile is transposed
   into a small buffer (read along its own rows; written back the same way
   for an output), so that the kernel sees contiguous runs for every
   operand and takes its vectorised branch. */
#define TILE 64
#define STAGE_MAX 8            /* bytes per element of a staged operand */
static int wants_tiles(const lt_iter *it) {
  if (it->ndim != 2 || it->shape[0] < TILE || it->shape[1] < TILE) return 0;
  int far = 0, across = 0;
  for (int k = 0; k < it->nops; k++) {
    int64_t s0 = it->strides[k][0] < 0 ? -it->strides[k][0] : it->strides[k][0];
    int64_t s1 = it->strides[k][1] < 0 ? -it->strides[k][1] : it->strides[k][1];
    if (s0 > 64) far = 1;
    if (s1 > 0 && s1 <= 16 && s1 < s0) across = 1;
  }
  return far && across;
}

/* staged: its dim-0 stride is far, its dim-1 stride one element */
static int staged_op(const lt_iter *it, int k) {
  int64_t sz = (int64_t)lt_itemsize(it->dtype[k]);
  int64_t s0 = it->strides[k][0] < 0 ? -it->strides[k][0] : it->strides[k][0];
  return sz <= STAGE_MAX && it->strides[k][1] == sz && s0 > 64;
}

/* buf[j * TILE + i] <-> p[i * s0 + j * sz], i < m, j < w, one element size
   per instantiation (fixed-size copies the compiler turns into moves) */
#define TILE_MOVES(SZ)                                                                       \
  static void gather_##SZ(char *buf, const char *p, int64_t s0, int64_t m, int64_t w) {      \
    for (int64_t i = 0; i < m; i++, p += s0)                                                 \
      for (int64_t j = 0; j < w; j++) memcpy(buf + (j * TILE + i) * SZ, p + j * SZ, SZ);     \
  }                                                                                          \
  static void scatter_##SZ(const char *buf, char *p, int64_t s0, int64_t m, int64_t w) {     \
    for (int64_t i = 0; i < m; i++, p += s0)                                                 \
      for (int64_t j = 0; j < w; j++) memcpy(p + j * SZ, buf + (j * TILE + i) * SZ, SZ);     \
  }
TILE_MOVES(1) TILE_MOVES(2)
#if defined(__SSE2__)
/* 4- and 8-byte elements: 4x4 / 2x2 blocks transposed in SSE2 registers
   (a quarter of the scalar loads and stores; the scalar loops above were
   half of a transposed add's time) */
#include <emmintrin.h>
static inline void tr4(__m128i *r) {
  __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpacklo_epi32(r[2], r[3]);
  __m128i t2 = _mm_unpackhi_epi32(r[0], r[1]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
  r[0] = _mm_unpacklo_epi64(t0, t1);
  r[1] = _mm_unpackhi_epi64(t0, t1);
  r[2] = _mm_unpacklo_epi64(t2, t3);
  r[3] = _mm_unpackhi_epi64(t2, t3);
}
static void gather_4(char *buf, const char *p, int64_t s0, int64_t m, int64_t w) {
  int64_t m4 = m & ~(int64_t)3, w4 = w & ~(int64_t)3;
  for (int64_t i = 0; i < m4; i += 4)
    for (int64_t j = 0; j < w4; j += 4) {
      __m128i r[4];
      for (int c = 0; c < 4; c++) r[c] = _mm_loadu_si128((const __m128i *)(p + (i + c) * s0 + j * 4));
      tr4(r);
      for (int c = 0; c < 4; c++) _mm_storeu_si128((__m128i *)(buf + ((j + c) * TILE + i) * 4), r[c]);
    }
  for (int64_t i = 0; i < m; i++)     /* the ragged edges */
    for (int64_t j = i < m4 ? w4 : 0; j < w; j++) memcpy(buf + (j * TILE + i) * 4, p + i * s0 + j * 4, 4);
}
static void scatter_4(const char *buf, char *p, int64_t s0, int64_t m, int64_t w) {
  int64_t m4 = m & ~(int64_t)3, w4 = w & ~(int64_t)3;
  for (int64_t i = 0; i < m4; i += 4)
    for (int64_t j = 0; j < w4; j += 4) {
      __m128i r[4];
      for (int c = 0; c < 4; c++) r[c] = _mm_loadu_si128((const __m128i *)(buf + ((j + c) * TILE + i) * 4));
      tr4(r);
      for (int c = 0; c < 4; c++) _mm_storeu_si128((__m128i *)(p + (i + c) * s0 + j * 4), r[c]);
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = i < m4 ? w4 : 0; j < w; j++) memcpy(p + i * s0 + j * 4, buf + (j * TILE + i) * 4, 4);
}
static void gather_8(char *buf, const char *p, int64_t s0, int64_t m, int64_t w) {
  int64_t m2 = m & ~(int64_t)1, w2 = w & ~(int64_t)1;
  for (int64_t i = 0; i < m2; i += 2)
    for (int64_t j = 0; j < w2; j += 2) {
      __m128i a = _mm_loadu_si128((const __m128i *)(p + i * s0 + j * 8));
      __m128i b = _mm_loadu_si128((const __m128i *)(p + (i + 1) * s0 + j * 8));
      _mm_storeu_si128((__m128i *)(buf + (j * TILE + i) * 8), _mm_unpacklo_epi64(a, b));
      _mm_storeu_si128((__m128i *)(buf + ((j + 1) * TILE + i) * 8), _mm_unpackhi_epi64(a, b));
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = i < m2 ? w2 : 0; j < w; j++) memcpy(buf + (j * TILE + i) * 8, p + i * s0 + j * 8, 8);
}
static void scatter_8(const char *buf, char *p, int64_t s0, int64_t m, int64_t w) {
  int64_t m2 = m & ~(int64_t)1, w2 = w & ~(int64_t)1;
  for (int64_t i = 0; i < m2; i += 2)
    for (int64_t j = 0; j < w2; j += 2) {
      __m128i a = _mm_loadu_si128((const __m128i *)(buf + (j * TILE + i) * 8));
      __m128i b = _mm_loadu_si128((const __m128i *)(buf + ((j + 1) * TILE + i) * 8));
      _mm_storeu_si128((__m128i *)(p + i * s0 + j * 8), _mm_unpacklo_epi64(a, b));
      _mm_storeu_si128((__m128i *)(p + (i + 1) * s0 + j * 8), _mm_unpackhi_epi64(a, b));
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = i < m2 ? w2 : 0; j < w; j++) memcpy(p + i * s0 + j * 8, buf + (j * TILE + i) * 8, 8);
}
#else
TILE_MOVES(4) TILE_MOVES(8)
#endif
typedef void (*gather_fn)(char *, const char *, int64_t, int64_t, int64_t);
typedef void (*scatter_fn)(const char *, char *, int64_t, int64_t, int64_t);
static gather_fn gather_of(int64_t sz) {
  return sz == 1 ? gather_1 : sz == 2 ? gather_2 : sz == 4 ? gather_4 : gather_8;
}
static scatter_fn scatter_of(int64_t sz) {
  return sz == 1 ? scatter_1 : sz == 2 ? scatter_2 : sz == 4 ? scatter_4 : scatter_8;
}

/* columns [j0, j1) of dim 1, in tiles */
static void run_tiles(const lt_iter *it, int64_t j0, int64_t j1, lt_loop_fn fn, void *ctx) {
  int nops = it->nops;
  _Alignas(64) char sbuf[LT_ITER_MAX_OPS - 1][TILE * TILE * STAGE_MAX];
  char *bufk[LT_ITER_MAX_OPS] = {0};
  int64_t s0[LT_ITER_MAX_OPS], st[LT_ITER_MAX_OPS], sz[LT_ITER_MAX_OPS];
  int nstaged = 0;
  for (int k = 0; k < nops; k++) {
    s0[k] = it->strides[k][0];
    sz[k] = (int64_t)lt_itemsize(it->dtype[k]);
    /* at most nops - 1 operands are staged: one (the one the dims were
       ordered by) always runs along dim 0 */
    if (nstaged < LT_ITER_MAX_OPS - 1 && staged_op(it, k)) bufk[k] = sbuf[nstaged++];
    st[k] = bufk[k] ? sz[k] : s0[k];
  }
  for (int64_t jt = j0; jt < j1; jt += TILE) {
    int64_t w = jt + TILE < j1 ? TILE : j1 - jt;
    for (int64_t it0 = 0; it0 < it->shape[0]; it0 += TILE) {
      int64_t m = it->shape[0] - it0 < TILE ? it->shape[0] - it0 : TILE;
      char *base[LT_ITER_MAX_OPS];
      for (int k = 0; k < nops; k++) {
        base[k] = it->data[k] + it0 * s0[k] + jt * it->strides[k][1];
        if (bufk[k] && k >= it->nout) gather_of(sz[k])(bufk[k], base[k], s0[k], m, w);
      }
      /* the next tile (down dim 0, or the next band of columns): its
         lines are fetched while this one computes -- each row or column of
         a tile is a few lines on its own page, which the hardware
         prefetchers do not follow, so without this the walk waits on
         memory once per line */
      int64_t ni = it0 + TILE, nj = jt;
      if (ni >= it->shape[0]) { ni = 0; nj = jt + TILE; }
      int pf = nj < j1;
      int64_t pm = pf ? (it->shape[0] - ni < TILE ? it->shape[0] - ni : TILE) : 0;
      int64_t pw = pf ? (j1 - nj < TILE ? j1 - nj : TILE) : 0;
      for (int64_t j = 0; j < w; j++) {
        char *ptr[LT_ITER_MAX_OPS];
        for (int k = 0; k < nops; k++) {
          ptr[k] = bufk[k] ? bufk[k] + j * TILE * sz[k] : base[k] + j * it->strides[k][1];
          if (bufk[k] ? j < pm : (j < pw && s0[k] == sz[k])) {
            /* staged: row j of the next tile; else its column j */
            const char *q = it->data[k] + ni * s0[k] + nj * it->strides[k][1] +
                            (bufk[k] ? j * s0[k] : j * it->strides[k][1]);
            int64_t len = (bufk[k] ? pw : pm) * sz[k];
            for (int64_t b = 0; b < len; b += 64) __builtin_prefetch(q + b);
          }
        }
        if (it->needs_cast) run_cast(it, ptr, st, m, fn, ctx);
        else fn(ptr, st, m, ctx);
      }
      for (int k = 0; k < it->nout; k++)
        if (bufk[k]) scatter_of(sz[k])(bufk[k], base[k], s0[k], m, w);
    }
  }
}

void lt_iter_round_inputs(lt_iter *it, ltensor_dtype common) {
  for (int k = it->nout; k < it->nops; k++)
    if (it->kdtype[k] == lt_compute_dtype(common) && it->dtype[k] != common) {
      it->via[k] = common;
      it->needs_cast = 1;
    }
}

/* ---- splitting across the pool ---------------------------------------------
   A few chunks per thread even out late wake-ups: whole tiles (dim-1
   indices in multiples of TILE), or whole cache lines of the output. */
typedef struct iter_work {
  const lt_iter *it;
  lt_loop_fn fn;
  void *ctx;
  int tiles;
  int64_t total, chunk;
} iter_work;

static void iter_chunk(void *v, int64_t c) {
  iter_work *w = (iter_work *)v;
  int64_t s = c * w->chunk, e = s + w->chunk < w->total ? s + w->chunk : w->total;
  if (w->tiles) run_tiles(w->it, s, e, w->fn, w->ctx);
  else run_range(w->it, s, e, w->fn, w->ctx);
}

void lt_iter_run(lt_iter *it, lt_loop_fn fn, void *ctx) {
  int64_t n = it->numel;
  if (n <= 0) return;
  int64_t grain = it->grain > 0 ? it->grain : LT_GRAIN;
  /* A grain of work per thread, as PyTorch's parallel_for: with the pool's
     workers polling (1 ms) the hand-off costs about a microsecond, and a
     64k-element add takes 3.7 us on two threads against 5.3 on one
     (2026-11-27, quiet; it stayed on one thread when the workers slept
     after 100 us). */
  int nt = lt_parallel_parts(it->pool, n, grain, n);
  /* the common case: one contiguous run, no casts, not split */
  if (it->ndim == 1 && !it->needs_cast && nt <= 1) {
    int64_t s[LT_ITER_MAX_OPS];
    for (int k = 0; k < it->nops; k++) s[k] = it->strides[k][0];
    fn(it->data, s, n, ctx);
    return;
  }
  int tiles = wants_tiles(it);
  if (nt <= 1) {
    if (tiles) run_tiles(it, 0, it->shape[1], fn, ctx);
    else run_range(it, 0, n, fn, ctx);
    return;
  }
  iter_work w = {it, fn, ctx, tiles, tiles ? it->shape[1] : n, 0};
  int64_t ch = (w.total + 4 * nt - 1) / (4 * nt);
  if (tiles) ch = (ch + TILE - 1) / TILE * TILE;
  else {
    if (ch < 8192) ch = 8192;
    ch = (ch + 63) & ~(int64_t)63;
  }
  w.chunk = ch;
  lt_pool_run(it->pool, nt, (w.total + ch - 1) / ch, iter_chunk, &w);
}

/* ---- copies and fills: the iterator with a cast loop ----------------------
   The loop is the dtype pair's cast kernel (which takes strides), so the
   iterator needs no casting stage of its own here. */
static void cast_loop(char **data, const int64_t *strides, int64_t n, void *ctx) {
  (*(lt_cast_fn *)ctx)(data[1], strides[1], data[0], strides[0], n);
}

/* The contiguous copies and fills below, split over the pool: memory-bound
   runs, so a part is at least COPY_GRAIN bytes (a zero_grad of resnet18's
   47 MB, clones and contiguous copies of activations ran on the caller
   alone at two threads). */
#define COPY_GRAIN ((int64_t)256 << 10)
typedef struct copy_job {
  char *d;
  const char *s;        /* NULL: a fill of the sz-byte value v */
  size_t dsz, ssz;      /* item sizes */
  lt_cast_fn cast;      /* NULL: same dtype, memcpy */
  unsigned char v[16];
  int zero;
} copy_job;
static void copy_range(void *ctx, int64_t lo, int64_t hi, int t) {
  (void)t;
  copy_job *j = (copy_job *)ctx;
  char *d = j->d + (size_t)lo * j->dsz;
  size_t total = (size_t)(hi - lo) * j->dsz;
  if (hi <= lo) return;
  if (j->s) {
    const char *s = j->s + (size_t)lo * j->ssz;
    if (!j->cast) memcpy(d, s, total);
    else j->cast(s, (int64_t)j->ssz, d, (int64_t)j->dsz, hi - lo);
    return;
  }
  if (j->zero) { memset(d, 0, total); return; }
  memcpy(d, j->v, j->dsz);
  for (size_t done = j->dsz; done < total;) {   /* doubling copies */
    size_t k = done < total - done ? done : total - done;
    memcpy(d + done, d, k);
    done += k;
  }
}
static void copy_run(copy_job *j, int64_t n, lt_pool *pool) {
  int64_t bytes = n * (int64_t)j->dsz;
  int parts = pool ? lt_parallel_parts(pool, bytes, COPY_GRAIN, n) : 1;
  lt_parallel_run(pool, parts, n, copy_range, j);
}

void lt_copy_into_pool(lt_tensor *dst, const lt_tensor *src, lt_pool *pool) {
  int nd = dst->ndim;
  int64_t n = lt_numel(dst);
  if (n == 0) return;
  lt_cast_fn cast = lt_cast_kernel(src->dtype, dst->dtype);
  char *dbase = lt_data(dst);
  const char *sbase = lt_data(src);
  if (nd == 0) { cast(sbase, 0, dbase, 0, 1); return; }
  /* both contiguous with the same shape: one run (memmove when they
     overlap; disjoint ones in parts) */
  if (src->ndim == nd && lt_is_contiguous(dst) && lt_is_contiguous(src) &&
      memcmp(src->shape, dst->shape, sizeof(int64_t) * (size_t)nd) == 0) {
    size_t dsz = lt_itemsize(dst->dtype), ssz = lt_itemsize(src->dtype);
    int disjoint = dbase + (size_t)n * dsz <= sbase || sbase + (size_t)n * ssz <= dbase;
    if (!disjoint) {
      if (src->dtype == dst->dtype) memmove(dbase, sbase, (size_t)n * dsz);
      else cast(sbase, (int64_t)ssz, dbase, (int64_t)dsz, n);
      return;
    }
    copy_job j = { dbase, sbase, dsz, ssz, src->dtype == dst->dtype ? NULL : cast, {0}, 0 };
    copy_run(&j, n, pool);
    return;
  }
  /* a fill (one source element) into contiguous memory: the value converted
     once, then stored by memset (zero_, zero_grad: the cast loop with a
     stride-0 source ran 1.5% of a resnet18 training step) or in doubling
     copies */
  if (lt_numel(src) == 1 && lt_is_contiguous(dst)) {
    copy_job j = { dbase, NULL, lt_itemsize(dst->dtype), 0, NULL, {0}, 1 };
    cast(sbase, 0, (char *)j.v, 0, 1);
    for (size_t i = 0; i < j.dsz; i++) j.zero &= j.v[i] == 0;
    copy_run(&j, n, pool);
    return;
  }
  const lt_tensor *ops[2] = {dst, src};
  ltensor_dtype kdt[2] = {dst->dtype, src->dtype};
  lt_iter it;
  lt_iter_init(&it, ops, 1, 1, kdt, nd, dst->shape, pool);
  lt_iter_run(&it, cast_loop, &cast);
}
void lt_copy_into(lt_tensor *dst, const lt_tensor *src) { lt_copy_into_pool(dst, src, NULL); }

static void fill_with(lt_tensor *dst, ltensor_dtype vt, const void *v) {
  lt_tensor src = {0};
  lt_storage st = {0};
  st.data = (char *)v;
  src.storage = &st;
  src.dtype = vt;
  src.ndim = 0;
  lt_copy_into(dst, &src);
}
void lt_fill_f64(lt_tensor *dst, double v) { fill_with(dst, LTENSOR_FLOAT64, &v); }
void lt_fill_i64(lt_tensor *dst, int64_t v) { fill_with(dst, LTENSOR_INT64, &v); }
void lt_fill_c128(lt_tensor *dst, lt_cdouble v) { fill_with(dst, LTENSOR_COMPLEX128, &v); }

/* ---- the whole build: lt_iter_ew (see lt_iter.h) ---------------------------- */

/* Small same-shape contiguous inputs (0-dim ones broadcast freely: they
   never change the shape), no casts, a new output: nothing to work out, so
   the loop runs once over a contiguous result (the 1-element path). */
static int try_small(lt_iter_config *cfg, lt_loop_fn fn, lt_kctx *ctx, int *status) {
  if (cfg->out || cfg->kout != cfg->out_dtype || cfg->round_to >= 0) return 0;
  const lt_tensor *ref = NULL;
  for (int i = 0; i < cfg->nin; i++) {
    const lt_tensor *t = cfg->in[i];
    if (t->dtype != cfg->kin[i]) return 0;
    if (t->ndim == 0) continue;
    if (!lt_is_contiguous(t)) return 0;
    if (!ref) { ref = t; continue; }
    if (t->ndim != ref->ndim || memcmp(t->shape, ref->shape, sizeof(int64_t) * (size_t)t->ndim) != 0) return 0;
  }
  int64_t n = ref ? lt_numel(ref) : 1;
  if (n >= LT_GRAIN) return 0;
  lt_tensor *out = cfg->alloc(cfg->alloc_ud, cfg->out_dtype, ref ? ref->ndim : 0, ref ? ref->shape : NULL, NULL);
  if (!out) { *status = LT_ITER_NOMEM; return 1; }
  cfg->out = out;
  char *data[LT_ITER_MAX_OPS];
  int64_t st[LT_ITER_MAX_OPS];
  data[0] = lt_data(out);
  st[0] = (int64_t)lt_itemsize(cfg->kout);
  for (int i = 0; i < cfg->nin; i++) {
    data[i + 1] = lt_data(cfg->in[i]);
    st[i + 1] = cfg->in[i]->ndim == 0 ? 0 : (int64_t)lt_itemsize(cfg->in[i]->dtype);
  }
  if (n > 0) fn(data, st, n, ctx);
  *status = LT_ITER_OK;
  return 1;
}

int lt_iter_ew(lt_iter_config *cfg, lt_loop_fn fn, lt_kctx *ctx, lt_iter_err *err) {
  int nin = cfg->nin, status;
  atomic_store_explicit(&ctx->err, LT_KERR_NONE, memory_order_relaxed);
  if (try_small(cfg, fn, ctx, &status)) {
    if (status == LT_ITER_OK && atomic_load(&ctx->err) == LT_KERR_ZERODIV) return LT_ITER_ZERODIV;
    return status;
  }
  int ndim = 0;
  int64_t shape[LT_MAX_DIMS];
  if (lt_broadcast_shape(cfg->in, nin, &ndim, shape, &err->a, &err->b, &err->dim) != 0) return LT_ITER_BROADCAST;
  lt_tensor *out = cfg->out;
  int given = out != NULL;
  if (given) {
    if (!lt_can_cast(cfg->out_dtype, out->dtype)) {
      err->from = cfg->out_dtype;
      err->to = out->dtype;
      return LT_ITER_OUT_CAST;
    }
    int code = lt_iter_check_out(out, ndim, shape);
    if (code != LT_OUT_OK) {
      err->ndim = ndim;
      memcpy(err->shape, shape, sizeof(int64_t) * (size_t)ndim);
      return code == LT_OUT_SHAPE ? LT_ITER_OUT_SHAPE : LT_ITER_OUT_OVERLAP;
    }
    /* an input that is another view of the written storage is read
       through a copy (the very same view is safe: each element is read
       before it is written) */
    for (int i = 0; i < nin; i++) {
      const lt_tensor *t = cfg->in[i];
      if (!lt_iter_input_aliases(t, out)) continue;
      lt_tensor *c = cfg->alloc(cfg->alloc_ud, t->dtype, t->ndim, t->shape, NULL);
      if (!c) return LT_ITER_NOMEM;
      lt_copy_into(c, t);
      cfg->in[i] = c;
    }
  } else {
    /* laid out like the inputs (PyTorch's reorder_dimensions: the first
       input that orders two dims decides, so a:t() + b is transposed) */
    int64_t stride[LT_MAX_DIMS];
    int perm_out = ndim > 1 && nin > 0;
    if (perm_out) lt_iter_out_strides(cfg->in, nin, ndim, shape, stride);
    out = cfg->alloc(cfg->alloc_ud, cfg->out_dtype, ndim, shape, perm_out ? stride : NULL);
    if (!out) return LT_ITER_NOMEM;
    cfg->out = out;
  }
  const lt_tensor *ops[LT_ITER_MAX_OPS];
  ltensor_dtype kdt[LT_ITER_MAX_OPS];
  ops[0] = out;
  kdt[0] = cfg->kout;
  for (int i = 0; i < nin; i++) { ops[i + 1] = cfg->in[i]; kdt[i + 1] = cfg->kin[i]; }
  lt_iter it;
  lt_iter_init(&it, ops, 1, nin, kdt, ndim, shape, cfg->pool);
  if (cfg->round_to >= 0) lt_iter_round_inputs(&it, (ltensor_dtype)cfg->round_to);
  /* grain policy (lt_parallel.h): a compute-bound element costs ~2 units */
  it.grain = ctx->heavy ? LT_GRAIN / 2 : LT_GRAIN;
  lt_iter_run(&it, fn, ctx);
  if (given) lt_bump_version(out);
  return atomic_load(&ctx->err) == LT_KERR_ZERODIV ? LT_ITER_ZERODIV : LT_ITER_OK;
}

/* ---- the reduction mode ---------------------------------------------------- */
/* Append a dim to a group, merging it into the previous one when walking
   both as one dim visits the same elements in the same order. */
static void red_add_dim(int *n, int64_t *sh, int64_t *s0, int64_t *s1, int64_t size, int64_t a, int64_t b) {
  int k = *n;
  if (k > 0 && s0[k - 1] == a * size && s1[k - 1] == b * size) {
    sh[k - 1] *= size; s0[k - 1] = a; s1[k - 1] = b;
    return;
  }
  sh[k] = size; s0[k] = a; s1[k] = b; *n = k + 1;
}

void lt_iter_reduce_plan(lt_iter_red *p, const lt_tensor *in, const int64_t *out_str, uint32_t mask) {
  int64_t cs[LT_MAX_DIMS] = {0};
  if (!out_str) {   /* a contiguous output over the kept dims, 0 on reduced dims */
    int64_t s = 1;
    for (int d = in->ndim - 1; d >= 0; d--)
      if (!((mask >> d) & 1)) { cs[d] = s; s *= in->shape[d]; }
    out_str = cs;
  }
  p->nout_d = p->nred_d = 0;
  p->nout = p->nred = 1;
  for (int d = 0; d < in->ndim; d++) {
    int64_t n = in->shape[d];
    if ((mask >> d) & 1) {
      p->nred *= n;
      if (n != 1) red_add_dim(&p->nred_d, p->ishape, p->istr0, p->istr1, n, in->stride[d], out_str[d]);
    } else {
      p->nout *= n;
      if (n != 1) red_add_dim(&p->nout_d, p->oshape, p->ostr0, p->ostr1, n, in->stride[d], out_str[d]);
    }
  }
  if (!p->nred_d) { p->ishape[0] = 1; p->istr0[0] = p->istr1[0] = 0; p->nred_d = 1; }
  if (!p->nout_d) { p->oshape[0] = 1; p->ostr0[0] = p->ostr1[0] = 0; p->nout_d = 1; }
}

int lt_iter_reduce_parts(const lt_iter_red *p, lt_pool *pool, int64_t grain, int can_cut, int *pieces) {
  int64_t work = p->nout * (p->nred ? p->nred : 1);
  int few = can_cut && p->nred > 1 && p->nout < LT_MAX_THREADS;
  int parts = lt_parallel_parts(pool, work, grain, few ? p->nout * LT_ITER_RED_PIECES : p->nout);
  *pieces = few && parts > p->nout ? LT_ITER_RED_PIECES : 1;
  return parts;
}
