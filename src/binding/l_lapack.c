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

/* One scratch block carved into aligned pieces. */
typedef struct { int64_t size[8]; int n; } carve_t;
static int carve_add(carve_t *c, int64_t bytes) {
  c->size[c->n] = (bytes + 63) & ~(int64_t)63;
  return c->n++;
}
/* Pushes the scratch tensor: call it before pushing the results, which are
   then the top values returned. */
static char *carve_alloc(lua_State *L, carve_t *c, char **ptr) {
  int64_t total = 64;
  for (int i = 0; i < c->n; i++) total += c->size[i];
  lt_tensor *s = ltl_push_new(L, LTENSOR_UINT8, 1, &total);
  char *p = lt_data(s);
  for (int i = 0; i < c->n; i++) { ptr[i] = p; p += c->size[i]; }
  return lt_data(s);
}

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

/* ---- LU --------------------------------------------------------------- */
/* _lapack_getrf(A) -> LU, pivots (int32), info (int32) */
static int l_getrf(lua_State *L) {
  const char *fn = "linalg.lu_factor";
  lt_tensor *a = check_mat(L, 1, fn);
  int nbd = a->ndim - 2;
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]), k = imin(m, n);
  int lda = imax(1, m);
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)lda * n * isz);
  char *buf[1];
  carve_alloc(L, &c, buf);
  lt_tensor *lu = push_batched(L, dt, a, nbd, 2, (int64_t)m, (int64_t)n);
  lt_tensor *piv = push_batched(L, LTENSOR_INT32, a, nbd, 1, (int64_t)k);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], lda, a, batch_off(a, nbd, b), m, n);
    ((int32_t *)lt_data(info))[b] = lt_lapack_getrf(dt, m, n, buf[0], lda, (int *)lt_data(piv) + b * k);
    unpack_rm(lt_data(lu) + b * (int64_t)m * n * isz, buf[0], lda, m, n, isz);
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
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)(m + 1) * sizeof(int));
  carve_add(&c, (int64_t)(k + 1) * sizeof(int));
  char *buf[2];
  carve_alloc(L, &c, buf);
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
  lt_tensor *a, *b, *x;
  int nbd, n, k, ld;
  ltensor_dtype dt;
  size_t isz;
  char *buf[3];   /* A, B, pivots */
} square_system;

static void begin_square_system(lua_State *L, const char *fn, int ia, int ib, square_system *s) {
  s->a = check_mat(L, ia, fn);
  s->nbd = s->a->ndim - 2;
  s->n = square_n(L, fn, s->a, s->nbd);
  s->b = check_mat(L, ib, fn);
  check_same_batch(L, fn, s->a, s->b, s->nbd);
  if (s->b->shape[s->nbd] != s->n) ltl_error(L, fn, "internal: B rows");
  s->k = fits_int(L, fn, s->b->shape[s->nbd + 1]);
  s->ld = imax(1, s->n);
  s->dt = s->a->dtype;
  s->isz = lt_itemsize(s->dt);
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)s->ld * s->n * s->isz);
  carve_add(&c, (int64_t)s->ld * s->k * s->isz);
  carve_add(&c, (int64_t)(s->n + 1) * sizeof(int));
  carve_alloc(L, &c, s->buf);
  s->x = push_batched(L, s->dt, s->b, s->nbd, 2, (int64_t)s->n, (int64_t)s->k);
}

/* _lapack_getrs(LU, pivots, B, trans) -> X : op(A) X = B with A = P L U */
static int l_getrs(lua_State *L) {
  const char *fn = "linalg.lu_solve";
  const char *ts = ltl_checkstring(L, 4);
  char trans = ts[0] == 'T' ? 'T' : ts[0] == 'C' ? 'C' : 'N';
  square_system s;
  begin_square_system(L, fn, 1, 3, &s);
  lt_tensor *p = check_piv(L, fn, 2, s.a, s.nbd, s.n);
  int64_t nb = nbatch_of(s.a, s.nbd);
  for (int64_t b = 0; b < nb; b++) {
    load_piv(L, fn, p, s.nbd, b, s.n, s.n, (int *)s.buf[2]);
    pack_cm(s.buf[0], s.ld, s.a, batch_off(s.a, s.nbd, b), s.n, s.n);
    pack_cm(s.buf[1], s.ld, s.b, batch_off(s.b, s.nbd, b), s.n, s.k);
    if (s.n > 0 && s.k > 0) lt_lapack_getrs(s.dt, trans, s.n, s.k, s.buf[0], s.ld, (int *)s.buf[2], s.buf[1], s.ld);
    unpack_rm(lt_data(s.x) + b * (int64_t)s.n * s.k * s.isz, s.buf[1], s.ld, s.n, s.k, s.isz);
  }
  return 1;
}

/* _lapack_solve(A, B) -> X, info : A X = B by getrf + getrs (X of a singular
   entry is left as getrf left it: the caller raises or reports info). */
static int l_solve(lua_State *L) {
  square_system s;
  begin_square_system(L, "linalg.solve", 1, 2, &s);
  lt_tensor *a = s.a, *bt = s.b, *x = s.x;
  int nbd = s.nbd, n = s.n, k = s.k, ld = s.ld;
  ltensor_dtype dt = s.dt;
  size_t isz = s.isz;
  char **buf = s.buf;
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  int64_t nb = nbatch_of(a, nbd);
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
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], ld, &at, batch_off(a, nbd, b), n, n);
    pack_cm(buf[1], ld, bt, batch_off(bt, nbd, b), n, k);
    int r;
    if (use_t) {
      r = lt_lapack_getrf(dt, n, n, buf[0], ld, (int *)buf[2]);
      if (r == 0 && n > 0 && k > 0) lt_lapack_getrs(dt, 'T', n, k, buf[0], ld, (int *)buf[2], buf[1], ld);
    } else {
      r = lt_lapack_gesv(dt, n, k, buf[0], ld, (int *)buf[2], buf[1], ld);
    }
    ((int32_t *)lt_data(info))[b] = r;
    unpack_rm(lt_data(x) + b * (int64_t)n * k * isz, buf[1], ld, n, k, isz);
  }
  return 2;
}

/* ---- Cholesky ----------------------------------------------------------- */
/* _lapack_potrf(A, upper) -> factor (other triangle zero), info */
static int l_potrf(lua_State *L) {
  const char *fn = "linalg.cholesky";
  lt_tensor *a = check_mat(L, 1, fn);
  int upper = lua_toboolean(L, 2);
  int nbd = a->ndim - 2;
  int n = square_n(L, fn, a, nbd), ld = imax(1, n);
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * n * isz);
  char *buf[1];
  carve_alloc(L, &c, buf);
  lt_tensor *f = push_batched(L, dt, a, nbd, 2, (int64_t)n, (int64_t)n);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], ld, a, batch_off(a, nbd, b), n, n);
    ((int32_t *)lt_data(info))[b] = lt_lapack_potrf(dt, upper ? 'U' : 'L', n, buf[0], ld);
    /* zero the triangle LAPACK did not reference */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        if (upper ? i > j : i < j) memset(buf[0] + ((int64_t)i + (int64_t)j * ld) * isz, 0, isz);
    unpack_rm(lt_data(f) + b * (int64_t)n * n * isz, buf[0], ld, n, n, isz);
  }
  return 2;
}

/* ---- QR ----------------------------------------------------------------- */
/* _lapack_qr(A, mode) -> Q, R ; mode "reduced", "complete" or "r" (Q empty) */
static int l_qr(lua_State *L) {
  const char *fn = "linalg.qr";
  lt_tensor *a = check_mat(L, 1, fn);
  const char *mode = ltl_checkstring(L, 2);
  int complete = strcmp(mode, "complete") == 0, ronly = strcmp(mode, "r") == 0;
  int nbd = a->ndim - 2;
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]), k = imin(m, n);
  int ld = imax(1, m), ncol = imax(n, m), qcols = complete ? m : k, rrows = complete ? m : k;
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  lt_lapack_ws ws;
  lt_lapack_geqrf_ws(dt, m, n, ronly ? 0 : qcols, &ws);
  if (ws.work > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * imax(ncol, 1) * isz);
  carve_add(&c, (int64_t)(k + 1) * isz);
  carve_add(&c, ws.work * (int64_t)isz);
  char *buf[3];
  carve_alloc(L, &c, buf);
  lt_tensor *q;
  if (ronly) { int64_t z = 0; q = ltl_push_new(L, dt, 1, &z); }
  else q = push_batched(L, dt, a, nbd, 2, (int64_t)m, (int64_t)qcols);
  lt_tensor *r = push_batched(L, dt, a, nbd, 2, (int64_t)rrows, (int64_t)n);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], ld, a, batch_off(a, nbd, b), m, n);
    lt_lapack_geqrf(dt, m, n, buf[0], ld, buf[1], buf[2], (int)ws.work);
    /* R: the upper triangle of the first rrows rows */
    char *rd = lt_data(r) + b * (int64_t)rrows * n * isz;
    memset(rd, 0, (size_t)rrows * n * isz);
    for (int i = 0; i < imin(rrows, m); i++)
      for (int j = i; j < n; j++) copy_elem(rd + ((int64_t)i * n + j) * isz, buf[0] + (i + (int64_t)j * ld) * isz, isz);
    if (!ronly) {
      if (qcols > 0 && m > 0) lt_lapack_orgqr(dt, m, qcols, k, buf[0], ld, buf[1], buf[2], (int)ws.work);
      unpack_rm(lt_data(q) + b * (int64_t)m * qcols * isz, buf[0], ld, m, qcols, isz);
    }
  }
  return 2;
}

/* _lapack_geqrf(A) -> packed QR (R above the diagonal, reflectors below), tau */
static int l_geqrf(lua_State *L) {
  const char *fn = "geqrf";
  lt_tensor *a = check_mat(L, 1, fn);
  int nbd = a->ndim - 2;
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]), k = imin(m, n), ld = imax(1, m);
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  lt_lapack_ws ws;
  lt_lapack_geqrf_ws(dt, m, n, 0, &ws);
  if (ws.work > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * imax(n, 1) * isz);
  carve_add(&c, ws.work * (int64_t)isz);
  char *buf[2];
  carve_alloc(L, &c, buf);
  lt_tensor *qr = push_batched(L, dt, a, nbd, 2, (int64_t)m, (int64_t)n);
  lt_tensor *tau = push_batched(L, dt, a, nbd, 1, (int64_t)k);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], ld, a, batch_off(a, nbd, b), m, n);
    lt_lapack_geqrf(dt, m, n, buf[0], ld, lt_data(tau) + b * (int64_t)k * isz, buf[1], (int)ws.work);
    unpack_rm(lt_data(qr) + b * (int64_t)m * n * isz, buf[0], ld, m, n, isz);
  }
  return 2;
}

/* _lapack_orgqr(A, tau) -> the first n columns of H_1 ... H_k (m >= n >= k) */
static int l_orgqr(lua_State *L) {
  const char *fn = "linalg.householder_product";
  lt_tensor *a = check_mat(L, 1, fn);
  lt_tensor *tau = ltl_check(L, 2);
  int nbd = a->ndim - 2;
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]), ld = imax(1, m);
  if (tau->dtype != a->dtype || tau->ndim != nbd + 1) ltl_error(L, fn, "internal: tau");
  for (int i = 0; i < nbd; i++) if (tau->shape[i] != a->shape[i]) ltl_error(L, fn, "internal: tau batch");
  int k = fits_int(L, fn, tau->shape[nbd]);
  if (!(m >= n && n >= k)) ltl_error(L, fn, "internal: shapes");
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  lt_lapack_ws ws;
  lt_lapack_geqrf_ws(dt, m, n, n, &ws);
  if (ws.work > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * imax(n, 1) * isz);
  carve_add(&c, (int64_t)(k + 1) * isz);
  carve_add(&c, ws.work * (int64_t)isz);
  char *buf[3];
  carve_alloc(L, &c, buf);
  lt_tensor *q = push_batched(L, dt, a, nbd, 2, (int64_t)m, (int64_t)n);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], ld, a, batch_off(a, nbd, b), m, n);
    int64_t toff = batch_off(tau, nbd, b), ts = tau->stride[nbd];
    for (int i = 0; i < k; i++) copy_elem(buf[1] + i * isz, tau->storage->data + (toff + i * ts) * (int64_t)isz, isz);
    if (m > 0 && n > 0) lt_lapack_orgqr(dt, m, n, k, buf[0], ld, buf[1], buf[2], (int)ws.work);
    unpack_rm(lt_data(q) + b * (int64_t)m * n * isz, buf[0], ld, m, n, isz);
  }
  return 1;
}

/* ---- Hermitian eigen -------------------------------------------------------- */
/* eigh/eig's results, pushed in order: eigenvalues w (wdt, n per matrix),
   eigenvectors v (vdt, n x n; nil and v NULL without vec), info (int32) */
static void push_eig_outs(lua_State *L, const lt_tensor *a, int nbd, int n, int vec, ltensor_dtype wdt,
                          ltensor_dtype vdt, lt_tensor **w, lt_tensor **v, lt_tensor **info) {
  *w = push_batched(L, wdt, a, nbd, 1, (int64_t)n);
  *v = NULL;
  if (vec) *v = push_batched(L, vdt, a, nbd, 2, (int64_t)n, (int64_t)n);
  else lua_pushnil(L);
  *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
}
/* _lapack_syevd(A, upper, vectors) -> w (real), V or nil, info
   (info -4 marks a non-finite input, never given to LAPACK) */
static int l_syevd(lua_State *L) {
  const char *fn = "linalg.eigh";
  lt_tensor *a = check_mat(L, 1, fn);
  int upper = lua_toboolean(L, 2), vec = lua_toboolean(L, 3);
  int nbd = a->ndim - 2;
  int n = square_n(L, fn, a, nbd), ld = imax(1, n);
  ltensor_dtype dt = a->dtype, rt = real_of(dt);
  size_t isz = lt_itemsize(dt), rsz = lt_itemsize(rt);
  lt_lapack_ws ws;
  lt_lapack_syevd_ws(dt, vec ? 'V' : 'N', n, &ws);
  if (ws.work > INT_MAX || ws.rwork > INT_MAX || ws.iwork > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * n * isz);
  carve_add(&c, ws.work * (int64_t)isz);
  carve_add(&c, ws.rwork * (int64_t)rsz);
  carve_add(&c, ws.iwork * (int64_t)sizeof(int));
  char *buf[4];
  carve_alloc(L, &c, buf);
  lt_tensor *w, *v, *info;
  push_eig_outs(L, a, nbd, n, vec, rt, dt, &w, &v, &info);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    int64_t off = batch_off(a, nbd, b);
    char *wd = lt_data(w) + b * (int64_t)n * rsz;
    int r;
    if (!all_finite(a, off, n, n)) {
      r = -4;
      memset(wd, 0, (size_t)n * rsz);
      memset(buf[0], 0, (size_t)ld * n * isz);
    } else {
      pack_cm(buf[0], ld, a, off, n, n);
      r = lt_lapack_syevd(dt, vec ? 'V' : 'N', upper ? 'U' : 'L', n, buf[0], ld, wd, buf[1], (int)ws.work, buf[2],
                          (int)ws.rwork, (int *)buf[3], (int)ws.iwork);
    }
    ((int32_t *)lt_data(info))[b] = r;
    if (vec) unpack_rm(lt_data(v) + b * (int64_t)n * n * isz, buf[0], ld, n, n, isz);
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
  lt_tensor *a = check_mat(L, 1, fn);
  int vec = lua_toboolean(L, 2);
  int nbd = a->ndim - 2;
  int n = square_n(L, fn, a, nbd), ld = imax(1, n);
  ltensor_dtype dt = a->dtype, ct = lt_is_complex(dt) ? dt : lt_to_complex(dt), rt = real_of(dt);
  size_t isz = lt_itemsize(dt), csz = lt_itemsize(ct), rsz = lt_itemsize(rt);
  lt_lapack_ws ws;
  lt_lapack_geev_ws(dt, vec ? 'V' : 'N', n, &ws);
  if (ws.work > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)ld * n * isz);          /* A */
  carve_add(&c, (int64_t)ld * n * isz);          /* VR */
  carve_add(&c, (int64_t)2 * (n + 1) * rsz * 2); /* w (wr, wi) */
  carve_add(&c, ws.work * (int64_t)isz);
  carve_add(&c, ws.rwork * (int64_t)rsz);
  char *buf[5];
  carve_alloc(L, &c, buf);
  lt_tensor *w, *v, *info;
  push_eig_outs(L, a, nbd, n, vec, ct, ct, &w, &v, &info);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    int64_t off = batch_off(a, nbd, b);
    char *wd = lt_data(w) + b * (int64_t)n * csz, *vd = vec ? lt_data(v) + b * (int64_t)n * n * csz : NULL;
    int r;
    if (!all_finite(a, off, n, n)) {
      r = -4;
      memset(wd, 0, (size_t)n * csz);
      if (vec) memset(vd, 0, (size_t)n * n * csz);
    } else {
      pack_cm(buf[0], ld, a, off, n, n);
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
    ((int32_t *)lt_data(info))[b] = r;
  }
  return 3;
}

/* ---- SVD -------------------------------------------------------------------- */
/* _lapack_gesdd(A, jobz) -> S, U or nil, Vh or nil, info ; jobz "N", "S", "A"
   (info -4: non-finite input, as LAPACK's own NaN check reports it) */
static int l_gesdd(lua_State *L) {
  const char *fn = "linalg.svd";
  lt_tensor *a = check_mat(L, 1, fn);
  const char *js = ltl_checkstring(L, 2);
  char jobz = js[0] == 'A' ? 'A' : js[0] == 'S' ? 'S' : 'N';
  int nbd = a->ndim - 2;
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]), k = imin(m, n);
  int ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  int lda = imax(1, m), ldu = imax(1, m), ldvt = imax(1, vrows);
  ltensor_dtype dt = a->dtype, rt = real_of(dt);
  size_t isz = lt_itemsize(dt), rsz = lt_itemsize(rt);
  lt_lapack_ws ws;
  lt_lapack_gesdd_ws(dt, jobz, m, n, &ws);
  if (ws.work > INT_MAX || ws.rwork > INT_MAX || ws.iwork > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)lda * n * isz);
  carve_add(&c, jobz == 'N' ? (int64_t)isz : (int64_t)ldu * ucols * (int64_t)isz);
  carve_add(&c, jobz == 'N' ? (int64_t)isz : (int64_t)ldvt * n * (int64_t)isz);
  carve_add(&c, ws.work * (int64_t)isz);
  carve_add(&c, ws.rwork * (int64_t)rsz);
  carve_add(&c, ws.iwork * (int64_t)sizeof(int));
  char *buf[6];
  carve_alloc(L, &c, buf);
  lt_tensor *s = push_batched(L, rt, a, nbd, 1, (int64_t)k), *u = NULL, *vh = NULL;
  if (jobz != 'N') {
    u = push_batched(L, dt, a, nbd, 2, (int64_t)m, (int64_t)ucols);
    vh = push_batched(L, dt, a, nbd, 2, (int64_t)vrows, (int64_t)n);
  } else {
    lua_pushnil(L);
    lua_pushnil(L);
  }
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    int64_t off = batch_off(a, nbd, b);
    char *sd = lt_data(s) + b * (int64_t)k * rsz;
    int r;
    if (!all_finite(a, off, m, n)) {
      r = -4;
      memset(sd, 0, (size_t)k * rsz);
      if (jobz != 'N') {
        memset(buf[1], 0, (size_t)ldu * ucols * isz);
        memset(buf[2], 0, (size_t)ldvt * n * isz);
      }
    } else if (m == 0 || n == 0) {
      r = 0;
      /* LAPACK leaves U / Vh untouched when the other side is empty: identity */
      if (jobz != 'N') {
        memset(buf[1], 0, (size_t)ldu * ucols * isz);
        memset(buf[2], 0, (size_t)ldvt * n * isz);
        for (int i = 0; i < imin(m, ucols); i++) set_one(buf[1] + ((int64_t)i + (int64_t)i * ldu) * isz, rsz);
        for (int i = 0; i < imin(vrows, n); i++) set_one(buf[2] + ((int64_t)i + (int64_t)i * ldvt) * isz, rsz);
      }
    } else {
      pack_cm(buf[0], lda, a, off, m, n);
      r = lt_lapack_gesdd(dt, jobz, m, n, buf[0], lda, sd, buf[1], ldu, buf[2], ldvt, buf[3], (int)ws.work, buf[4],
                          (int *)buf[5]);
    }
    ((int32_t *)lt_data(info))[b] = r;
    if (jobz != 'N') {
      unpack_rm(lt_data(u) + b * (int64_t)m * ucols * isz, buf[1], ldu, m, ucols, isz);
      unpack_rm(lt_data(vh) + b * (int64_t)vrows * n * isz, buf[2], ldvt, vrows, n, isz);
    }
  }
  return 4;
}

/* ---- least squares ---------------------------------------------------------- */
/* _lapack_gels(A, B, driver, rcond) -> Xfull (..., max(m,n), k), rank (int64),
   singular values (real, (..., min(m, n))), info */
static int l_gels(lua_State *L) {
  const char *fn = "linalg.lstsq";
  lt_tensor *a = check_mat(L, 1, fn);
  lt_tensor *bt = check_mat(L, 2, fn);
  int nbd = a->ndim - 2;
  check_same_batch(L, fn, a, bt, nbd);
  const char *ds = ltl_checkstring(L, 3);
  char drv = strcmp(ds, "gels") == 0 ? 'l' : strcmp(ds, "gelsy") == 0 ? 'y' : strcmp(ds, "gelsd") == 0 ? 'd'
           : strcmp(ds, "gelss") == 0 ? 's' : 0;
  if (!drv) ltl_error(L, fn, "internal: driver");
  double rcond = ltl_checknumber(L, 4);
  int m = fits_int(L, fn, a->shape[nbd]), n = fits_int(L, fn, a->shape[nbd + 1]);
  if (bt->shape[nbd] != m) ltl_error(L, fn, "internal: B rows");
  int k = fits_int(L, fn, bt->shape[nbd + 1]), mx = imax(m, n), mn = imin(m, n);
  int lda = imax(1, m), ldb = imax(1, mx);
  ltensor_dtype dt = a->dtype, rt = real_of(dt);
  size_t isz = lt_itemsize(dt), rsz = lt_itemsize(rt);
  lt_lapack_ws ws;
  /* nrhs = 0 upsets gelsd (dlalsd reports an illegal argument): solve for one
     zero column instead, so that rank and singular values are still computed */
  int kk = imax(k, 1);
  lt_lapack_gels_ws(dt, drv, m, n, kk, &ws);
  if (ws.work > INT_MAX || ws.rwork > INT_MAX || ws.iwork > INT_MAX) ltl_error(L, fn, "workspace too large");
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)lda * imax(n, 1) * isz);
  carve_add(&c, (int64_t)ldb * imax(k, 1) * isz);
  carve_add(&c, (int64_t)(mn + 1) * rsz);
  carve_add(&c, (int64_t)(n + 1) * sizeof(int));
  carve_add(&c, ws.work * (int64_t)isz);
  carve_add(&c, ws.rwork * (int64_t)rsz);
  carve_add(&c, ws.iwork * (int64_t)sizeof(int));
  char *buf[7];
  carve_alloc(L, &c, buf);
  lt_tensor *x = push_batched(L, dt, a, nbd, 2, (int64_t)mx, (int64_t)k);
  lt_tensor *rank = push_batched(L, LTENSOR_INT64, a, nbd, 0);
  lt_tensor *sv = push_batched(L, rt, a, nbd, 1, (int64_t)mn);
  lt_tensor *info = push_batched(L, LTENSOR_INT32, a, nbd, 0);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], lda, a, batch_off(a, nbd, b), m, n);
    memset(buf[1], 0, (size_t)ldb * imax(k, 1) * isz);
    pack_cm(buf[1], ldb, bt, batch_off(bt, nbd, b), m, k);
    memset(buf[3], 0, (size_t)(n + 1) * sizeof(int));
    memset(buf[2], 0, (size_t)(mn + 1) * rsz);
    int rk = 0, r = 0;
    if (!all_finite(a, batch_off(a, nbd, b), m, n) || !all_finite(bt, batch_off(bt, nbd, b), m, k)) {
      /* the SVD drivers loop forever on inf and report NaN as a bad argument:
         a non-finite system has a NaN solution and NaN singular values */
      fill_nan(buf[1], (int64_t)ldb * kk, dt);
      fill_nan(buf[2], mn, rt);
    } else if (m > 0 && n > 0)
      r = lt_lapack_gels(dt, drv, m, n, kk, buf[0], lda, buf[1], ldb, buf[2], (int *)buf[3], rcond, &rk, buf[4],
                         (int)ws.work, buf[5], (int *)buf[6]);
    ((int32_t *)lt_data(info))[b] = r;
    ((int64_t *)lt_data(rank))[b] = rk;
    if (mn > 0) memcpy(lt_data(sv) + b * (int64_t)mn * rsz, buf[2], (size_t)mn * rsz);
    unpack_rm(lt_data(x) + b * (int64_t)mx * k * isz, buf[1], ldb, mx, k, isz);
  }
  return 4;
}

/* ---- triangular solve -------------------------------------------------------- */
/* _lapack_trsm(A, B, left, upper, trans, unit) -> X with op(A) X = B (left) or
   X op(A) = B; trans "N", "T" or "C" */
static int l_trsm(lua_State *L) {
  const char *fn = "linalg.solve_triangular";
  lt_tensor *a = check_mat(L, 1, fn);
  lt_tensor *bt = check_mat(L, 2, fn);
  int nbd = a->ndim - 2;
  check_same_batch(L, fn, a, bt, nbd);
  int left = lua_toboolean(L, 3), upper = lua_toboolean(L, 4), unit = lua_toboolean(L, 6);
  const char *ts = ltl_checkstring(L, 5);
  char trans = ts[0] == 'T' ? 'T' : ts[0] == 'C' ? 'C' : 'N';
  int na = square_n(L, fn, a, nbd);
  int m = fits_int(L, fn, bt->shape[nbd]), n = fits_int(L, fn, bt->shape[nbd + 1]);
  if ((left ? m : n) != na) ltl_error(L, fn, "internal: shapes");
  int lda = imax(1, na), ldb = imax(1, m);
  ltensor_dtype dt = a->dtype;
  size_t isz = lt_itemsize(dt);
  carve_t c = { { 0 }, 0 };
  carve_add(&c, (int64_t)lda * na * isz);
  carve_add(&c, (int64_t)ldb * n * isz);
  char *buf[2];
  carve_alloc(L, &c, buf);
  lt_tensor *x = push_batched(L, dt, bt, nbd, 2, (int64_t)m, (int64_t)n);
  int64_t nb = nbatch_of(a, nbd);
  for (int64_t b = 0; b < nb; b++) {
    pack_cm(buf[0], lda, a, batch_off(a, nbd, b), na, na);
    pack_cm(buf[1], ldb, bt, batch_off(bt, nbd, b), m, n);
    lt_lapack_trsm(dt, left ? 'L' : 'R', upper ? 'U' : 'L', trans, unit ? 'U' : 'N', m, n, buf[0], lda, buf[1], ldb);
    unpack_rm(lt_data(x) + b * (int64_t)m * n * isz, buf[1], ldb, m, n, isz);
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
