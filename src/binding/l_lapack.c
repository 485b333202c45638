/* l_lapack.c -- the LAPACK kernels behind T.linalg (lua/ltensor/linalg/).
 *
 * These are raw, batched building blocks registered as T._lapack_*; the Lua
 * module does PyTorch's argument handling, error messages, broadcasting of
 * batch dims and autograd.  Each kernel still validates what it is given
 * (dtype, rank, sizes that fit LAPACK's 32-bit ints) before calling LAPACK,
 * which would otherwise print to stdout.
 *
 * Layout: every matrix of the batch is copied from its tensor (any strides:
 * transposed, narrowed, expanded) into a column-major scratch buffer, and
 * results are copied back into new row-major tensors.  All scratch memory is
 * one uint8 tensor pushed on the Lua stack before LAPACK runs, so an error
 * raised anywhere leaks nothing.  Batch dims are the leading ndim - 2 dims of
 * the first operand; the Lua side expands other operands to the same batch.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "l_lua.h"
#include "lt_iter.h"
#include "lt_lapack.h"

/* ---- helpers ----------------------------------------------------------- */
static lt_tensor *check_mat(lua_State *L, int idx, const char *fname) {
  lt_tensor *t = ltl_check(L, idx);
  if (!lt_lapack_dtype(t->dtype))
    ltl_error(L, fname, "expected a floating point or complex tensor as input. Got %s", lt_dtypes[t->dtype].name);
  if (t->ndim < 2) ltl_error(L, fname, "the input tensor must have at least 2 dimensions");
  return t;
}

static int fits_int(lua_State *L, const char *fname, int64_t v) {
  if (v > INT_MAX / 2) ltl_error(L, fname, "matrix too large for LAPACK (%I)", (lua_Integer)v);
  return (int)v;
}

static int64_t nbatch_of(const lt_tensor *t, int nbd) {
  int64_t n = 1;
  for (int i = 0; i < nbd; i++) n *= t->shape[i];
  return n;
}

/* Element offset of batch entry b (row-major over the leading nbd dims). */
static int64_t batch_off(const lt_tensor *t, int nbd, int64_t b) {
  lt_odo w;
  lt_odo_init_str(&w, nbd, t->shape, t->stride, NULL, NULL);
  lt_odo_seek(&w, b);
  return t->offset + w.off[0];
}

#define TILE 32

static inline void copy_elem(char *d, const char *s, size_t isz) {
  switch (isz) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, isz); break;
  }
}

/* rows x cols matrix of t at element offset off -> column-major dst (ld). */
static void pack_cm(char *dst, int64_t ld, const lt_tensor *t, int64_t off, int64_t rows, int64_t cols) {
  size_t isz = lt_itemsize(t->dtype);
  int64_t rs = t->stride[t->ndim - 2], cs = t->stride[t->ndim - 1];
  const char *base = t->storage->data + off * (int64_t)isz;
  if (rs == 1 && ld == rows) {   /* already column-major: one copy per column */
    for (int64_t j = 0; j < cols; j++) memcpy(dst + j * ld * isz, base + j * cs * isz, (size_t)rows * isz);
    return;
  }
  /* a transposing copy: in tiles, so that both sides stay in cache */
  for (int64_t i0 = 0; i0 < rows; i0 += TILE)
    for (int64_t j0 = 0; j0 < cols; j0 += TILE) {
      int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows, j1 = j0 + TILE < cols ? j0 + TILE : cols;
      for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) copy_elem(dst + (i + j * ld) * isz, base + (i * rs + j * cs) * isz, isz);
    }
}

/* column-major src (ld) -> rows x cols row-major block at dst. */
static void unpack_rm(char *dst, const char *src, int64_t ld, int64_t rows, int64_t cols, size_t isz) {
  for (int64_t i0 = 0; i0 < rows; i0 += TILE)
    for (int64_t j0 = 0; j0 < cols; j0 += TILE) {
      int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows, j1 = j0 + TILE < cols ? j0 + TILE : cols;
      for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) copy_elem(dst + (i * cols + j) * isz, src + (i + j * ld) * isz, isz);
    }
}

/* A tensor with t's batch shape (first nbd dims) followed by trailing dims. */
static lt_tensor *push_batched(lua_State *L, ltensor_dtype dt, const lt_tensor *t, int nbd, int ntrail, ...) {
  int64_t shape[LT_MAX_DIMS];
  for (int i = 0; i < nbd; i++) shape[i] = t->shape[i];
  va_list ap;
  va_start(ap, ntrail);
  for (int i = 0; i < ntrail; i++) shape[nbd + i] = va_arg(ap, int64_t);
  va_end(ap);
  return ltl_push_new(L, dt, nbd + ntrail, shape);
}

/* Pushes one scratch tensor carved into n pieces of the given byte sizes
   (each rounded up to 64 bytes), buf[i] the start of piece i.  Call it before
   pushing the results, which are then the top values returned. */
static void scratch_n(lua_State *L, char **buf, int n, const int64_t *bytes) {
  int64_t total = 64;
  for (int i = 0; i < n; i++) total += (bytes[i] + 63) & ~(int64_t)63;
  lt_tensor *s = ltl_push_new(L, LTENSOR_UINT8, 1, &total);
  char *p = lt_data(s);
  for (int i = 0; i < n; i++) { buf[i] = p; p += (bytes[i] + 63) & ~(int64_t)63; }
}
#define SCRATCH(L, buf, ...) \
  scratch_n((L), (buf), (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ })

/* LAPACK takes int sizes: a workspace that does not fit is refused */
static void check_ws(lua_State *L, const char *fn, const lt_lapack_ws *ws) {
  if (ws->work > INT_MAX || ws->rwork > INT_MAX || ws->iwork > INT_MAX) ltl_error(L, fn, "workspace too large");
}

/* Batch entry b of t (its trailing rows x cols matrix) -> column-major dst (ld). */
static void pack_entry(char *dst, int64_t ld, const lt_tensor *t, int nbd, int64_t b, int64_t rows, int64_t cols) {
  pack_cm(dst, ld, t, batch_off(t, nbd, b), rows, cols);
}

/* Column-major src (ld) -> batch entry b of out, a new row-major tensor of
   rows x cols matrices. */
static void unpack_entry(lt_tensor *out, int64_t b, const char *src, int64_t ld, int64_t rows, int64_t cols) {
  size_t isz = lt_itemsize(out->dtype);
  unpack_rm(lt_data(out) + b * rows * cols * (int64_t)isz, src, ld, rows, cols, isz);
}

static void set_info(lt_tensor *info, int64_t b, int r) { ((int32_t *)lt_data(info))[b] = r; }

static ltensor_dtype real_of(ltensor_dtype dt) { return lt_is_complex(dt) ? lt_to_real(dt) : dt; }
static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* n of A's batch of n x n matrices (raises for other shapes) */
static int square_n(lua_State *L, const char *fn, const lt_tensor *a, int nbd) {
  int n = fits_int(L, fn, a->shape[nbd]);
  if (a->shape[nbd + 1] != n) ltl_error(L, fn, "A must be batches of square matrices");
  return n;
}

static void check_same_batch(lua_State *L, const char *fname, const lt_tensor *a, const lt_tensor *b, int nbd) {
  if (b->ndim != nbd + 2 || b->dtype != a->dtype) ltl_error(L, fname, "internal: operands do not match");
  for (int i = 0; i < nbd; i++)
    if (a->shape[i] != b->shape[i]) ltl_error(L, fname, "internal: batch shapes differ");
}

/* Is every element of the rows x cols matrix finite?  (LAPACK's eigen and
   SVD drivers may fail in odd ways on NaN; PyTorch reports such input.) */
static int all_finite(const lt_tensor *t, int64_t off, int64_t rows, int64_t cols) {
  int64_t rs = t->stride[t->ndim - 2], cs = t->stride[t->ndim - 1];
  int cx = lt_is_complex(t->dtype), dbl = t->dtype == LTENSOR_FLOAT64 || t->dtype == LTENSOR_COMPLEX128;
  size_t isz = lt_itemsize(t->dtype);
  const char *base = t->storage->data + off * (int64_t)isz;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      const char *p = base + (i * rs + j * cs) * (int64_t)isz;
      for (int part = 0; part <= cx; part++) {
        double v = dbl ? ((const double *)p)[part] : (double)((const float *)p)[part];
        if (!isfinite(v)) return 0;
      }
    }
  return 1;
}

/* Store 1 into an element whose real part is a float (rsz 4) or double. */
static void set_one(char *p, size_t rsz) {
  if (rsz == 8) *(double *)p = 1;
  else *(float *)p = 1;
}

/* Fill count elements of dtype dt (real or complex) with NaN. */
static void fill_nan(char *p, int64_t count, ltensor_dtype dt) {
  int64_t parts = count * (lt_is_complex(dt) ? 2 : 1);
  if (dt == LTENSOR_FLOAT64 || dt == LTENSOR_COMPLEX128)
    for (int64_t i = 0; i < parts; i++) ((double *)p)[i] = NAN;
  else
    for (int64_t i = 0; i < parts; i++) ((float *)p)[i] = NAN;
}

/* ---- the first operand ----------------------------------------------------- */
/* What every kernel derives from its first operand A (..., m, n). */
typedef struct lap_job {
  lt_tensor *a;
  int nbd, m, n;          /* batch dims; A's rows and columns */
  ltensor_dtype dt, rt;   /* A's dtype and its real dtype */
  size_t isz, rsz;        /* their item sizes */
  int64_t nb;             /* entries in the batch */
} lap_job;

/* Checks the matrix at idx (square: batches of n x n) and fills j. */
static void job_begin(lua_State *L, const char *fn, int idx, int square, lap_job *j) {
  j->a = check_mat(L, idx, fn);
  j->nbd = j->a->ndim - 2;
  if (square) {
    j->m = j->n = square_n(L, fn, j->a, j->nbd);
  } else {
    j->m = fits_int(L, fn, j->a->shape[j->nbd]);
    j->n = fits_int(L, fn, j->a->shape[j->nbd + 1]);
  }
  j->dt = j->a->dtype;
  j->rt = real_of(j->dt);
  j->isz = lt_itemsize(j->dt);
  j->rsz = lt_itemsize(j->rt);
  j->nb = nbatch_of(j->a, j->nbd);
}

/* A's batch entry b -> column-major dst (ld) if all of it is finite; 0 (dst
   untouched) if not: the eigen and SVD drivers are never given NaN or inf. */
static int pack_finite(char *dst, int64_t ld, const lap_job *j, int64_t b) {
  int64_t off = batch_off(j->a, j->nbd, b);
  if (!all_finite(j->a, off, j->m, j->n)) return 0;
  pack_cm(dst, ld, j->a, off, j->m, j->n);
  return 1;
}

/* ---- LU --------------------------------------------------------------- */
/* _lapack_getrf(A) -> LU, pivots (int32), info (int32) */
static int l_getrf(lua_State *L) {
  lap_job j;
  job_begin(L, "linalg.lu_factor", 1, 0, &j);
  int m = j.m, n = j.n, k = imin(m, n), lda = imax(1, m);
  char *buf[1];
  SCRATCH(L, buf, (int64_t)lda * n * j.isz);
  lt_tensor *lu = push_batched(L, j.dt, j.a, j.nbd, 2, (int64_t)m, (int64_t)n);
  lt_tensor *piv = push_batched(L, LTENSOR_INT32, j.a, j.nbd, 1, (int64_t)k);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, j.a, j.nbd, 0);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], lda, j.a, j.nbd, b, m, n);
    set_info(info, b, lt_lapack_getrf(j.dt, m, n, buf[0], lda, (int *)lt_data(piv) + b * k));
    unpack_entry(lu, b, buf[0], lda, m, n);
  }
  return 3;
}

/* Validate an int32 pivots tensor (..., n) with the batch of lu; values in
   [1, n] (LAPACK would read out of bounds otherwise). */
static lt_tensor *check_piv(lua_State *L, const char *fn, int idx, const lt_tensor *lu, int nbd, int n) {
  lt_tensor *p = ltl_check(L, idx);
  if (p->dtype != LTENSOR_INT32) ltl_error(L, fn, "pivots should be a Tensor of dtype int32");
  if (p->ndim != nbd + 1 || p->shape[nbd] != n) ltl_error(L, fn, "internal: pivots shape");
  for (int i = 0; i < nbd; i++) if (p->shape[i] != lu->shape[i]) ltl_error(L, fn, "internal: pivots batch");
  return p;
}

/* Copy the k pivots of batch entry b into ipiv, checking that they are
   rows of an n-row matrix (1-based). */
static void load_piv(lua_State *L, const char *fn, const lt_tensor *p, int nbd, int64_t b, int k, int n, int *ipiv) {
  int64_t off = batch_off(p, nbd, b), st = p->stride[nbd];
  const int32_t *d = (const int32_t *)p->storage->data;
  for (int i = 0; i < k; i++) {
    int32_t v = d[off + i * st];
    if (v < 1 || v > n) ltl_error(L, fn, "pivots must be in the range [1, %d], got %d", n, (int)v);
    ipiv[i] = v;
  }
}

/* _lapack_perm(pivots, m, dtype) -> P (..., m, m) with A = P L U: getrf's row
   swaps (1-based, k per batch entry) applied to the identity. */
static int l_perm(lua_State *L) {
  const char *fn = "linalg.lu";
  lt_tensor *p = ltl_check(L, 1);
  if (p->dtype != LTENSOR_INT32 || p->ndim < 1) ltl_error(L, fn, "pivots should be a Tensor of dtype int32");
  int64_t m64 = ltl_checkinteger(L, 2);
  ltensor_dtype dt = ltl_checkdtype(L, 3);
  if (!lt_lapack_dtype(dt)) ltl_error(L, fn, "internal: dtype");
  int nbd = p->ndim - 1;
  int m = fits_int(L, fn, m64), k = fits_int(L, fn, p->shape[nbd]);
  if (k > m) ltl_error(L, fn, "internal: more pivots than rows");
  size_t isz = lt_itemsize(dt), rsz = lt_itemsize(real_of(dt));
  char *buf[2];
  SCRATCH(L, buf, (int64_t)(m + 1) * (int64_t)sizeof(int), (int64_t)(k + 1) * (int64_t)sizeof(int));
  lt_tensor *out = push_batched(L, dt, p, nbd, 2, (int64_t)m, (int64_t)m);
  int *perm = (int *)buf[0], *ipiv = (int *)buf[1];
  int64_t nb = nbatch_of(p, nbd);
  memset(lt_data(out), 0, (size_t)(nb * m * m) * isz);
  for (int64_t b = 0; b < nb; b++) {
    for (int i = 0; i < m; i++) perm[i] = i;
    load_piv(L, fn, p, nbd, b, k, m, ipiv);
    for (int i = 0; i < k; i++) {
      int j = ipiv[i] - 1;
      int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    /* row i of P L U is row perm[i] of A: P[perm[i], i] = 1 */
    char *o = lt_data(out) + b * (int64_t)m * m * isz;
    for (int i = 0; i < m; i++) set_one(o + ((int64_t)perm[i] * m + i) * isz, rsz);
  }
  return 1;
}

/* The operands of a batched square system A X = B: A (n x n) at index ia,
   B (n x k) at index ib with A's batch and dtype, column-major scratch for
   A, B and the pivots (pushed first), then X (pushed: n x k per entry). */
typedef struct square_system {
  lap_job j;      /* A; j.n its order */
  lt_tensor *b, *x;
  int k, ld;
  char *buf[3];   /* A, B, pivots */
} square_system;

static void begin_square_system(lua_State *L, const char *fn, int ia, int ib, square_system *s) {
  job_begin(L, fn, ia, 1, &s->j);
  int nbd = s->j.nbd, n = s->j.n;
  s->b = check_mat(L, ib, fn);
  check_same_batch(L, fn, s->j.a, s->b, nbd);
  if (s->b->shape[nbd] != n) ltl_error(L, fn, "internal: B rows");
  s->k = fits_int(L, fn, s->b->shape[nbd + 1]);
  s->ld = imax(1, n);
  SCRATCH(L, s->buf, (int64_t)s->ld * n * s->j.isz, (int64_t)s->ld * s->k * s->j.isz,
          (int64_t)(n + 1) * (int64_t)sizeof(int));
  s->x = push_batched(L, s->j.dt, s->b, nbd, 2, (int64_t)n, (int64_t)s->k);
}

/* _lapack_getrs(LU, pivots, B, trans) -> X : op(A) X = B with A = P L U */
static int l_getrs(lua_State *L) {
  const char *fn = "linalg.lu_solve";
  const char *ts = ltl_checkstring(L, 4);
  char trans = ts[0] == 'T' ? 'T' : ts[0] == 'C' ? 'C' : 'N';
  square_system s;
  begin_square_system(L, fn, 1, 3, &s);
  int nbd = s.j.nbd, n = s.j.n;
  lt_tensor *p = check_piv(L, fn, 2, s.j.a, nbd, n);
  for (int64_t b = 0; b < s.j.nb; b++) {
    load_piv(L, fn, p, nbd, b, n, n, (int *)s.buf[2]);
    pack_entry(s.buf[0], s.ld, s.j.a, nbd, b, n, n);
    pack_entry(s.buf[1], s.ld, s.b, nbd, b, n, s.k);
    if (n > 0 && s.k > 0) lt_lapack_getrs(s.j.dt, trans, n, s.k, s.buf[0], s.ld, (int *)s.buf[2], s.buf[1], s.ld);
    unpack_entry(s.x, b, s.buf[1], s.ld, n, s.k);
  }
  return 1;
}

/* _lapack_solve(A, B) -> X, info : A X = B by getrf + getrs (X of a singular
   entry is left as getrf left it: the caller raises or reports info). */
static int l_solve(lua_State *L) {
  square_system s;
  begin_square_system(L, "linalg.solve", 1, 2, &s);
  const lt_tensor *a = s.j.a;
  int nbd = s.j.nbd, n = s.j.n, k = s.k, ld = s.ld;
  ltensor_dtype dt = s.j.dt;
  char **buf = s.buf;
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  /* A row-major matrix is A^T in column-major order: factor that (a plain
     copy instead of a transposing one) and solve with trans = 'T', as
     PyTorch does for contiguous real input (so info and the exactness of a
     zero pivot are PyTorch's too). */
  lt_tensor at = *a;
  int use_t = !lt_is_complex(dt) && a->stride[nbd + 1] == 1 && a->stride[nbd] == n;
  if (use_t) {
    at.stride[nbd] = 1;
    at.stride[nbd + 1] = n;
  }
  for (int64_t b = 0; b < s.j.nb; b++) {
    pack_cm(buf[0], ld, &at, batch_off(a, nbd, b), n, n);
    pack_entry(buf[1], ld, s.b, nbd, b, n, k);
    int r;
    if (use_t) {
      r = lt_lapack_getrf(dt, n, n, buf[0], ld, (int *)buf[2]);
      if (r == 0 && n > 0 && k > 0) lt_lapack_getrs(dt, 'T', n, k, buf[0], ld, (int *)buf[2], buf[1], ld);
    } else {
      r = lt_lapack_gesv(dt, n, k, buf[0], ld, (int *)buf[2], buf[1], ld);
    }
    set_info(info, b, r);
    unpack_entry(s.x, b, buf[1], ld, n, k);
  }
  return 2;
}

/* ---- Cholesky ----------------------------------------------------------- */
/* _lapack_potrf(A, upper) -> factor (other triangle zero), info */
static int l_potrf(lua_State *L) {
  lap_job j;
  job_begin(L, "linalg.cholesky", 1, 1, &j);
  int upper = lua_toboolean(L, 2);
  int n = j.n, ld = imax(1, n);
  size_t isz = j.isz;
  char *buf[1];
  SCRATCH(L, buf, (int64_t)ld * n * isz);
  lt_tensor *f = push_batched(L, j.dt, j.a, j.nbd, 2, (int64_t)n, (int64_t)n);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, j.a, j.nbd, 0);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], ld, j.a, j.nbd, b, n, n);
    set_info(info, b, lt_lapack_potrf(j.dt, upper ? 'U' : 'L', n, buf[0], ld));
    /* zero the triangle LAPACK did not reference */
    for (int c = 0; c < n; c++)
      for (int i = 0; i < n; i++)
        if (upper ? i > c : i < c) memset(buf[0] + ((int64_t)i + (int64_t)c * ld) * isz, 0, isz);
    unpack_entry(f, b, buf[0], ld, n, n);
  }
  return 2;
}

/* ---- QR ----------------------------------------------------------------- */
/* The work size (elements) of geqrf on A, and of orgqr making ncols columns
   of Q when ncols > 0. */
static int qr_work(lua_State *L, const char *fn, const lap_job *j, int ncols) {
  lt_lapack_ws ws;
  lt_lapack_geqrf_ws(j->dt, j->m, j->n, ncols, &ws);
  check_ws(L, fn, &ws);
  return (int)ws.work;
}

/* _lapack_qr(A, mode) -> Q, R ; mode "reduced", "complete" or "r" (Q empty) */
static int l_qr(lua_State *L) {
  const char *fn = "linalg.qr";
  lap_job j;
  job_begin(L, fn, 1, 0, &j);
  const char *mode = ltl_checkstring(L, 2);
  int complete = strcmp(mode, "complete") == 0, ronly = strcmp(mode, "r") == 0;
  int m = j.m, n = j.n, k = imin(m, n);
  int ld = imax(1, m), ncol = imax(n, m), qcols = complete ? m : k, rrows = complete ? m : k;
  ltensor_dtype dt = j.dt;
  size_t isz = j.isz;
  int lwork = qr_work(L, fn, &j, ronly ? 0 : qcols);
  char *buf[3];
  SCRATCH(L, buf, (int64_t)ld * imax(ncol, 1) * isz, (int64_t)(k + 1) * isz, (int64_t)lwork * isz);
  lt_tensor *q;
  if (ronly) { int64_t z = 0; q = ltl_push_new(L, dt, 1, &z); }
  else q = push_batched(L, dt, j.a, j.nbd, 2, (int64_t)m, (int64_t)qcols);
  lt_tensor *r = push_batched(L, dt, j.a, j.nbd, 2, (int64_t)rrows, (int64_t)n);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], ld, j.a, j.nbd, b, m, n);
    lt_lapack_geqrf(dt, m, n, buf[0], ld, buf[1], buf[2], lwork);
    /* R: the upper triangle of the first rrows rows */
    char *rd = lt_data(r) + b * (int64_t)rrows * n * isz;
    memset(rd, 0, (size_t)rrows * n * isz);
    for (int i = 0; i < imin(rrows, m); i++)
      for (int c = i; c < n; c++) copy_elem(rd + ((int64_t)i * n + c) * isz, buf[0] + (i + (int64_t)c * ld) * isz, isz);
    if (!ronly) {
      if (qcols > 0 && m > 0) lt_lapack_orgqr(dt, m, qcols, k, buf[0], ld, buf[1], buf[2], lwork);
      unpack_entry(q, b, buf[0], ld, m, qcols);
    }
  }
  return 2;
}

/* _lapack_geqrf(A) -> packed QR (R above the diagonal, reflectors below), tau */
static int l_geqrf(lua_State *L) {
  const char *fn = "geqrf";
  lap_job j;
  job_begin(L, fn, 1, 0, &j);
  int m = j.m, n = j.n, k = imin(m, n), ld = imax(1, m);
  int lwork = qr_work(L, fn, &j, 0);
  char *buf[2];
  SCRATCH(L, buf, (int64_t)ld * imax(n, 1) * j.isz, (int64_t)lwork * j.isz);
  lt_tensor *qr = push_batched(L, j.dt, j.a, j.nbd, 2, (int64_t)m, (int64_t)n);
  lt_tensor *tau = push_batched(L, j.dt, j.a, j.nbd, 1, (int64_t)k);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], ld, j.a, j.nbd, b, m, n);
    lt_lapack_geqrf(j.dt, m, n, buf[0], ld, lt_data(tau) + b * (int64_t)k * j.isz, buf[1], lwork);
    unpack_entry(qr, b, buf[0], ld, m, n);
  }
  return 2;
}

/* _lapack_orgqr(A, tau) -> the first n columns of H_1 ... H_k (m >= n >= k) */
static int l_orgqr(lua_State *L) {
  const char *fn = "linalg.householder_product";
  lap_job j;
  job_begin(L, fn, 1, 0, &j);
  lt_tensor *tau = ltl_check(L, 2);
  int nbd = j.nbd, m = j.m, n = j.n, ld = imax(1, m);
  if (tau->dtype != j.dt || tau->ndim != nbd + 1) ltl_error(L, fn, "internal: tau");
  for (int i = 0; i < nbd; i++) if (tau->shape[i] != j.a->shape[i]) ltl_error(L, fn, "internal: tau batch");
  int k = fits_int(L, fn, tau->shape[nbd]);
  if (!(m >= n && n >= k)) ltl_error(L, fn, "internal: shapes");
  size_t isz = j.isz;
  int lwork = qr_work(L, fn, &j, n);
  char *buf[3];
  SCRATCH(L, buf, (int64_t)ld * imax(n, 1) * isz, (int64_t)(k + 1) * isz, (int64_t)lwork * isz);
  lt_tensor *q = push_batched(L, j.dt, j.a, nbd, 2, (int64_t)m, (int64_t)n);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], ld, j.a, nbd, b, m, n);
    int64_t toff = batch_off(tau, nbd, b), ts = tau->stride[nbd];
    for (int i = 0; i < k; i++) copy_elem(buf[1] + i * isz, tau->storage->data + (toff + i * ts) * (int64_t)isz, isz);
    if (m > 0 && n > 0) lt_lapack_orgqr(j.dt, m, n, k, buf[0], ld, buf[1], buf[2], lwork);
    unpack_entry(q, b, buf[0], ld, m, n);
  }
  return 1;
}

/* ---- Hermitian eigen -------------------------------------------------------- */
/* eigh/eig's results, pushed in order: eigenvalues w (wdt, n per matrix),
   eigenvectors v (vdt, n x n; nil and v NULL without vec), info (int32) */
static void push_eig_outs(lua_State *L, const lap_job *j, int vec, ltensor_dtype wdt, ltensor_dtype vdt,
                          lt_tensor **w, lt_tensor **v, lt_tensor **info) {
  int64_t n = j->n;
  *w = push_batched(L, wdt, j->a, j->nbd, 1, n);
  *v = NULL;
  if (vec) *v = push_batched(L, vdt, j->a, j->nbd, 2, n, n);
  else lua_pushnil(L);
  *info = push_batched(L, LTENSOR_INT32, j->a, j->nbd, 0);
}
/* _lapack_syevd(A, upper, vectors) -> w (real), V or nil, info
   (info -4 marks a non-finite input, never given to LAPACK) */
static int l_syevd(lua_State *L) {
  const char *fn = "linalg.eigh";
  lap_job j;
  job_begin(L, fn, 1, 1, &j);
  int upper = lua_toboolean(L, 2), vec = lua_toboolean(L, 3);
  int n = j.n, ld = imax(1, n);
  size_t isz = j.isz, rsz = j.rsz;
  lt_lapack_ws ws;
  lt_lapack_syevd_ws(j.dt, vec ? 'V' : 'N', n, &ws);
  check_ws(L, fn, &ws);
  char *buf[4];
  SCRATCH(L, buf, (int64_t)ld * n * isz, ws.work * (int64_t)isz, ws.rwork * (int64_t)rsz,
          ws.iwork * (int64_t)sizeof(int));
  lt_tensor *w, *v, *info;
  push_eig_outs(L, &j, vec, j.rt, j.dt, &w, &v, &info);
  for (int64_t b = 0; b < j.nb; b++) {
    char *wd = lt_data(w) + b * (int64_t)n * rsz;
    int r;
    if (!pack_finite(buf[0], ld, &j, b)) {
      r = -4;
      memset(wd, 0, (size_t)n * rsz);
      memset(buf[0], 0, (size_t)ld * n * isz);
    } else {
      r = lt_lapack_syevd(j.dt, vec ? 'V' : 'N', upper ? 'U' : 'L', n, buf[0], ld, wd, buf[1], (int)ws.work, buf[2],
                          (int)ws.rwork, (int *)buf[3], (int)ws.iwork);
    }
    set_info(info, b, r);
    if (vec) unpack_entry(v, b, buf[0], ld, n, n);
  }
  return 3;
}

/* ---- general eigen ------------------------------------------------------------ */
/* Real geev output -> complex values and vectors (LAPACK packs a conjugate
   pair j, j+1 as the real and imaginary parts of column j). */
#define GEEV_UNPACK(R)                                                                                \
  static void geev_unpack_##R(int n, const R *wr, const R *wi, const R *vr, int ld, R *w, R *v,       \
                              int vec) {                                                            \
    for (int j = 0; j < n; j++) { w[2 * j] = wr[j]; w[2 * j + 1] = wi[j]; }                          \
    if (!vec) return;                                                                                \
    for (int j = 0; j < n; j++) {                                                                    \
      if (wi[j] != 0 && j + 1 < n) {                                                                 \
        for (int i = 0; i < n; i++) {                                                                \
          R re = vr[i + (int64_t)j * ld], im = vr[i + (int64_t)(j + 1) * ld];                         \
          v[2 * ((int64_t)i * n + j)] = re; v[2 * ((int64_t)i * n + j) + 1] = im;                    \
          v[2 * ((int64_t)i * n + j + 1)] = re; v[2 * ((int64_t)i * n + j + 1) + 1] = -im;           \
        }                                                                                            \
        j++;                                                                                         \
      } else {                                                                                       \
        for (int i = 0; i < n; i++) {                                                                \
          v[2 * ((int64_t)i * n + j)] = vr[i + (int64_t)j * ld]; v[2 * ((int64_t)i * n + j) + 1] = 0;  \
        }                                                                                            \
      }                                                                                              \
    }                                                                                                \
  }
GEEV_UNPACK(float)
GEEV_UNPACK(double)

/* _lapack_geev(A, vectors) -> w (complex), V (complex) or nil, info */
static int l_geev(lua_State *L) {
  const char *fn = "linalg.eig";
  lap_job j;
  job_begin(L, fn, 1, 1, &j);
  int vec = lua_toboolean(L, 2);
  int n = j.n, ld = imax(1, n);
  ltensor_dtype dt = j.dt, ct = lt_is_complex(dt) ? dt : lt_to_complex(dt);
  size_t isz = j.isz, csz = lt_itemsize(ct), rsz = j.rsz;
  lt_lapack_ws ws;
  lt_lapack_geev_ws(dt, vec ? 'V' : 'N', n, &ws);
  check_ws(L, fn, &ws);
  char *buf[5];   /* A, VR, w (wr, wi), work, rwork */
  SCRATCH(L, buf, (int64_t)ld * n * isz, (int64_t)ld * n * isz, (int64_t)2 * (n + 1) * rsz * 2,
          ws.work * (int64_t)isz, ws.rwork * (int64_t)rsz);
  lt_tensor *w, *v, *info;
  push_eig_outs(L, &j, vec, ct, ct, &w, &v, &info);
  for (int64_t b = 0; b < j.nb; b++) {
    char *wd = lt_data(w) + b * (int64_t)n * csz, *vd = vec ? lt_data(v) + b * (int64_t)n * n * csz : NULL;
    int r;
    if (!pack_finite(buf[0], ld, &j, b)) {
      r = -4;
      memset(wd, 0, (size_t)n * csz);
      if (vec) memset(vd, 0, (size_t)n * n * csz);
    } else {
      r = lt_lapack_geev(dt, vec ? 'V' : 'N', n, buf[0], ld, lt_is_complex(dt) ? wd : buf[2], buf[1], ld, buf[3],
                         (int)ws.work, buf[4]);
      if (lt_is_complex(dt)) {
        if (vec) unpack_rm(vd, buf[1], ld, n, n, isz);
      } else if (dt == LTENSOR_FLOAT32) {
        geev_unpack_float(n, (float *)buf[2], (float *)buf[2] + n, (float *)buf[1], ld, (float *)wd, (float *)vd, vec);
      } else {
        geev_unpack_double(n, (double *)buf[2], (double *)buf[2] + n, (double *)buf[1], ld, (double *)wd,
                           (double *)vd, vec);
      }
    }
    set_info(info, b, r);
  }
  return 3;
}

/* ---- SVD -------------------------------------------------------------------- */
/* U (ldu x ucols) and Vh (ldvt x n) of an empty matrix: LAPACK leaves them
   untouched when the other side is empty, so they are the identity. */
static void svd_empty_uv(char *u, int ldu, int ucols, char *vt, int ldvt, int vrows, int m, int n, size_t isz,
                         size_t rsz) {
  memset(u, 0, (size_t)ldu * ucols * isz);
  memset(vt, 0, (size_t)ldvt * n * isz);
  for (int i = 0; i < imin(m, ucols); i++) set_one(u + ((int64_t)i + (int64_t)i * ldu) * isz, rsz);
  for (int i = 0; i < imin(vrows, n); i++) set_one(vt + ((int64_t)i + (int64_t)i * ldvt) * isz, rsz);
}

/* _lapack_gesdd(A, jobz) -> S, U or nil, Vh or nil, info ; jobz "N", "S", "A"
   (info -4: non-finite input, as LAPACK's own NaN check reports it) */
static int l_gesdd(lua_State *L) {
  const char *fn = "linalg.svd";
  lap_job j;
  job_begin(L, fn, 1, 0, &j);
  const char *js = ltl_checkstring(L, 2);
  char jobz = js[0] == 'A' ? 'A' : js[0] == 'S' ? 'S' : 'N';
  int m = j.m, n = j.n, k = imin(m, n);
  int ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  int lda = imax(1, m), ldu = imax(1, m), ldvt = imax(1, vrows);
  ltensor_dtype dt = j.dt;
  size_t isz = j.isz, rsz = j.rsz;
  lt_lapack_ws ws;
  lt_lapack_gesdd_ws(dt, jobz, m, n, &ws);
  check_ws(L, fn, &ws);
  char *buf[6];   /* A, U, Vh, work, rwork, iwork */
  SCRATCH(L, buf, (int64_t)lda * n * isz, jobz == 'N' ? (int64_t)isz : (int64_t)ldu * ucols * (int64_t)isz,
          jobz == 'N' ? (int64_t)isz : (int64_t)ldvt * n * (int64_t)isz, ws.work * (int64_t)isz,
          ws.rwork * (int64_t)rsz, ws.iwork * (int64_t)sizeof(int));
  lt_tensor *s = push_batched(L, j.rt, j.a, j.nbd, 1, (int64_t)k), *u = NULL, *vh = NULL;
  if (jobz != 'N') {
    u = push_batched(L, dt, j.a, j.nbd, 2, (int64_t)m, (int64_t)ucols);
    vh = push_batched(L, dt, j.a, j.nbd, 2, (int64_t)vrows, (int64_t)n);
  } else {
    lua_pushnil(L);
    lua_pushnil(L);
  }
  lt_tensor *info = push_batched(L, LTENSOR_INT32, j.a, j.nbd, 0);
  for (int64_t b = 0; b < j.nb; b++) {
    char *sd = lt_data(s) + b * (int64_t)k * rsz;
    int r = 0;
    if (m == 0 || n == 0) {
      if (jobz != 'N') svd_empty_uv(buf[1], ldu, ucols, buf[2], ldvt, vrows, m, n, isz, rsz);
    } else if (!pack_finite(buf[0], lda, &j, b)) {
      r = -4;
      memset(sd, 0, (size_t)k * rsz);
      if (jobz != 'N') {
        memset(buf[1], 0, (size_t)ldu * ucols * isz);
        memset(buf[2], 0, (size_t)ldvt * n * isz);
      }
    } else {
      r = lt_lapack_gesdd(dt, jobz, m, n, buf[0], lda, sd, buf[1], ldu, buf[2], ldvt, buf[3], (int)ws.work, buf[4],
                          (int *)buf[5]);
    }
    set_info(info, b, r);
    if (jobz != 'N') {
      unpack_entry(u, b, buf[1], ldu, m, ucols);
      unpack_entry(vh, b, buf[2], ldvt, vrows, n);
    }
  }
  return 4;
}

/* ---- least squares ---------------------------------------------------------- */
/* _lapack_gels(A, B, driver, rcond) -> Xfull (..., max(m,n), k), rank (int64),
   singular values (real, (..., min(m, n))), info */
static int l_gels(lua_State *L) {
  const char *fn = "linalg.lstsq";
  lap_job j;
  job_begin(L, fn, 1, 0, &j);
  lt_tensor *bt = check_mat(L, 2, fn);
  int nbd = j.nbd;
  check_same_batch(L, fn, j.a, bt, nbd);
  const char *ds = ltl_checkstring(L, 3);
  char drv = strcmp(ds, "gels") == 0 ? 'l' : strcmp(ds, "gelsy") == 0 ? 'y' : strcmp(ds, "gelsd") == 0 ? 'd'
           : strcmp(ds, "gelss") == 0 ? 's' : 0;
  if (!drv) ltl_error(L, fn, "internal: driver");
  double rcond = ltl_checknumber(L, 4);
  int m = j.m, n = j.n;
  if (bt->shape[nbd] != m) ltl_error(L, fn, "internal: B rows");
  int k = fits_int(L, fn, bt->shape[nbd + 1]), mx = imax(m, n), mn = imin(m, n);
  int lda = imax(1, m), ldb = imax(1, mx);
  ltensor_dtype dt = j.dt, rt = j.rt;
  size_t isz = j.isz, rsz = j.rsz;
  lt_lapack_ws ws;
  /* nrhs = 0 upsets gelsd (dlalsd reports an illegal argument): solve for one
     zero column instead, so that rank and singular values are still computed */
  int kk = imax(k, 1);
  lt_lapack_gels_ws(dt, drv, m, n, kk, &ws);
  check_ws(L, fn, &ws);
  char *buf[7];   /* A, B, s, jpvt, work, rwork, iwork */
  SCRATCH(L, buf, (int64_t)lda * imax(n, 1) * isz, (int64_t)ldb * imax(k, 1) * isz, (int64_t)(mn + 1) * rsz,
          (int64_t)(n + 1) * (int64_t)sizeof(int), ws.work * (int64_t)isz, ws.rwork * (int64_t)rsz,
          ws.iwork * (int64_t)sizeof(int));
  lt_tensor *x = push_batched(L, dt, j.a, nbd, 2, (int64_t)mx, (int64_t)k);
  lt_tensor *rank = push_batched(L, LTENSOR_INT64, j.a, nbd, 0);
  lt_tensor *sv = push_batched(L, rt, j.a, nbd, 1, (int64_t)mn);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, j.a, nbd, 0);
  for (int64_t b = 0; b < j.nb; b++) {
    memset(buf[1], 0, (size_t)ldb * imax(k, 1) * isz);
    pack_entry(buf[1], ldb, bt, nbd, b, m, k);
    memset(buf[3], 0, (size_t)(n + 1) * sizeof(int));
    memset(buf[2], 0, (size_t)(mn + 1) * rsz);
    int rk = 0, r = 0;
    if (!pack_finite(buf[0], lda, &j, b) || !all_finite(bt, batch_off(bt, nbd, b), m, k)) {
      /* the SVD drivers loop forever on inf and report NaN as a bad argument:
         a non-finite system has a NaN solution and NaN singular values */
      fill_nan(buf[1], (int64_t)ldb * kk, dt);
      fill_nan(buf[2], mn, rt);
    } else if (m > 0 && n > 0)
      r = lt_lapack_gels(dt, drv, m, n, kk, buf[0], lda, buf[1], ldb, buf[2], (int *)buf[3], rcond, &rk, buf[4],
                         (int)ws.work, buf[5], (int *)buf[6]);
    set_info(info, b, r);
    ((int64_t *)lt_data(rank))[b] = rk;
    if (mn > 0) memcpy(lt_data(sv) + b * (int64_t)mn * rsz, buf[2], (size_t)mn * rsz);
    unpack_entry(x, b, buf[1], ldb, mx, k);
  }
  return 4;
}

/* ---- triangular solve -------------------------------------------------------- */
/* _lapack_trsm(A, B, left, upper, trans, unit) -> X with op(A) X = B (left) or
   X op(A) = B; trans "N", "T" or "C" */
static int l_trsm(lua_State *L) {
  const char *fn = "linalg.solve_triangular";
  lap_job j;
  job_begin(L, fn, 1, 1, &j);
  lt_tensor *bt = check_mat(L, 2, fn);
  int nbd = j.nbd, na = j.n;
  check_same_batch(L, fn, j.a, bt, nbd);
  int left = lua_toboolean(L, 3), upper = lua_toboolean(L, 4), unit = lua_toboolean(L, 6);
  const char *ts = ltl_checkstring(L, 5);
  char trans = ts[0] == 'T' ? 'T' : ts[0] == 'C' ? 'C' : 'N';
  int m = fits_int(L, fn, bt->shape[nbd]), n = fits_int(L, fn, bt->shape[nbd + 1]);
  if ((left ? m : n) != na) ltl_error(L, fn, "internal: shapes");
  int lda = imax(1, na), ldb = imax(1, m);
  char *buf[2];
  SCRATCH(L, buf, (int64_t)lda * na * j.isz, (int64_t)ldb * n * j.isz);
  lt_tensor *x = push_batched(L, j.dt, bt, nbd, 2, (int64_t)m, (int64_t)n);
  for (int64_t b = 0; b < j.nb; b++) {
    pack_entry(buf[0], lda, j.a, nbd, b, na, na);
    pack_entry(buf[1], ldb, bt, nbd, b, m, n);
    lt_lapack_trsm(j.dt, left ? 'L' : 'R', upper ? 'U' : 'L', trans, unit ? 'U' : 'N', m, n, buf[0], lda, buf[1], ldb);
    unpack_entry(x, b, buf[1], ldb, m, n);
  }
  return 1;
}

const ltl_reg ltl_reg_lapack[] = {
  { "_lapack_getrf", l_getrf, LT_MODULE, NULL },
  { "_lapack_getrs", l_getrs, LT_MODULE, NULL },
  { "_lapack_perm", l_perm, LT_MODULE, NULL },
  { "_lapack_solve", l_solve, LT_MODULE, NULL },
  { "_lapack_potrf", l_potrf, LT_MODULE, NULL },
  { "_lapack_qr", l_qr, LT_MODULE, NULL },
  { "_lapack_geqrf", l_geqrf, LT_MODULE, NULL },
  { "_lapack_orgqr", l_orgqr, LT_MODULE, NULL },
  { "_lapack_syevd", l_syevd, LT_MODULE, NULL },
  { "_lapack_geev", l_geev, LT_MODULE, NULL },
  { "_lapack_gesdd", l_gesdd, LT_MODULE, NULL },
  { "_lapack_gels", l_gels, LT_MODULE, NULL },
  { "_lapack_trsm", l_trsm, LT_MODULE, NULL },
  { NULL, NULL, 0, NULL }
};
