/*
 * lt_lapack_portable.c -- lt_lapack.h in portable C, for `make BLAS=none`
 * (the Makefile compiles this file instead of lt_lapack.c).
 *
 * Algorithms (per dtype from lt_lapack_portable_impl.h):
 *   getrf   right-looking LU with partial pivoting (LAPACK's pivot choice,
 *           |re| + |im| for complex); getrs/gesv/trsm by substitution
 *   potrf   column Cholesky, info = first non-positive leading minor
 *   geqrf   Householder QR with LAPACK's reflectors (larfg), so Q and R
 *   orgqr   match LAPACK's signs; gels through QR (or QR of A^H for m < n)
 *   syevd   cyclic Jacobi (accurate; eigenvalues ascending, orthonormal
 *           vectors, which may differ from LAPACK's by a phase)
 *   gesdd   one-sided (Hestenes) Jacobi on A or A^H; zero singular values'
 *           and 'A''s extra vectors completed by Gram-Schmidt
 *   gelsy/gelsd/gelss  through that SVD (rank = singular values > rcond s_max)
 *   geev    Hessenberg reduction and implicit single-shift complex QR
 *           (Wilkinson shifts), vectors by back-substitution on the Schur
 *           form; a real matrix's conjugate pairs are paired and packed as
 *           LAPACK's dgeev packs them (unit vectors, largest component real)
 * LAPACK's info conventions are kept (singular U(i,i) = 0 -> info = i, ...),
 * and the *_ws functions report this file's own workspace needs.
 * Everything is O(n^3) without blocking: correct and accurate, slower than
 * LAPACK on large matrices.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "lt_lapack.h"

/* One instantiation per dtype: the element type, the name prefix, and
   whether it is complex and single precision; lt_lapack_portable_impl.h
   derives the rest (real type, conj/abs/sqrt, epsilon) and undefines all. */
#define T float
#define P s
#define CPLX 0
#define SINGLE 1
#include "lt_lapack_portable_impl.h"

#define T lt_cfloat
#define P c
#define CPLX 1
#define SINGLE 1
#include "lt_lapack_portable_impl.h"

#define T double
#define P d
#define CPLX 0
#define SINGLE 0
#include "lt_lapack_portable_impl.h"

#define T lt_cdouble
#define P z
#define CPLX 1
#define SINGLE 0
#include "lt_lapack_portable_impl.h"

/* X(E, prefix, T, R) */
#define PORT_ALL(X) \
  X(FLOAT32, s, float, float) X(FLOAT64, d, double, double) X(COMPLEX64, c, lt_cfloat, float) \
  X(COMPLEX128, z, lt_cdouble, double)

int lt_lapack_dtype(ltensor_dtype dt) {
  return dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT64 || dt == LTENSOR_COMPLEX64 || dt == LTENSOR_COMPLEX128;
}

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

int lt_lapack_getrf(ltensor_dtype dt, int m, int n, void *a, int lda, int *ipiv) {
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: return p##_getrf(m, n, (T *)a, lda, ipiv);
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

int lt_lapack_getrs(ltensor_dtype dt, char trans, int n, int nrhs, const void *a, int lda, const int *ipiv,
                    void *b, int ldb) {
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: p##_getrs(trans, n, nrhs, (const T *)a, lda, ipiv, (T *)b, ldb); return 0;
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

int lt_lapack_gesv(ltensor_dtype dt, int n, int nrhs, void *a, int lda, int *ipiv, void *b, int ldb) {
  int info = lt_lapack_getrf(dt, n, n, a, lda, ipiv);
  if (info != 0) return info;
  return lt_lapack_getrs(dt, 'N', n, nrhs, a, lda, ipiv, b, ldb);
}

int lt_lapack_potrf(ltensor_dtype dt, char uplo, int n, void *a, int lda) {
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: return p##_potrf(uplo, n, (T *)a, lda);
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- QR ------------------------------------------------------------------- */
void lt_lapack_geqrf_ws(ltensor_dtype dt, int m, int n, int ncols, lt_lapack_ws *ws) {
  (void)dt; (void)m; (void)n; (void)ncols;
  ws->work = 1;   /* geqrf and orgqr work in place */
  ws->rwork = ws->iwork = 0;
}

int lt_lapack_geqrf(ltensor_dtype dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork) {
  (void)work; (void)lwork;
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: p##_geqrf(m, n, (T *)a, lda, (T *)tau); return 0;
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

int lt_lapack_orgqr(ltensor_dtype dt, int m, int ncols, int k, void *a, int lda, const void *tau, void *work,
                    int lwork) {
  (void)work; (void)lwork;
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: p##_orgqr(m, ncols, k, (T *)a, lda, (const T *)tau); return 0;
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- Hermitian eigen ------------------------------------------------------- */
void lt_lapack_syevd_ws(ltensor_dtype dt, char jobz, int n, lt_lapack_ws *ws) {
  (void)dt;
  ws->work = jobz == 'V' ? (int64_t)n * n : 1;   /* the accumulated rotations */
  if (ws->work < 1) ws->work = 1;
  ws->rwork = ws->iwork = 1;
}

int lt_lapack_syevd(ltensor_dtype dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work,
                    int lwork, void *rwork, int lrwork, int *iwork, int liwork) {
  (void)lwork; (void)rwork; (void)lrwork; (void)iwork; (void)liwork;
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: return p##_syevd(jobz, uplo, n, (T *)a, lda, (R *)w, (T *)work);
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- general eigen ------------------------------------------------------------- */
void lt_lapack_geev_ws(ltensor_dtype dt, char jobvr, int n, lt_lapack_ws *ws) {
  (void)jobvr;
  /* H, Z, the vectors and a column, in the complex type (twice the elements
     for a real dtype), plus n ints of pairing flags */
  int64_t c = 3 * (int64_t)n * n + 2 * (int64_t)n + 2;
  ws->work = lt_is_complex(dt) ? c : 2 * c + 1;
  ws->rwork = 1;
  ws->iwork = 0;
}

int lt_lapack_geev(ltensor_dtype dt, char jobvr, int n, void *a, int lda, void *w, void *vr, int ldvr,
                   void *work, int lwork, void *rwork) {
  (void)lwork; (void)rwork;
  switch (dt) {
    case LTENSOR_FLOAT32: return s_geev(jobvr, n, (float *)a, lda, (float *)w, (float *)vr, ldvr, work);
    case LTENSOR_FLOAT64: return d_geev(jobvr, n, (double *)a, lda, (double *)w, (double *)vr, ldvr, work);
    case LTENSOR_COMPLEX64:
      return c_geev(jobvr, n, (lt_cfloat *)a, lda, (lt_cfloat *)w, (lt_cfloat *)vr, ldvr, (lt_cfloat *)work);
    case LTENSOR_COMPLEX128:
      return z_geev(jobvr, n, (lt_cdouble *)a, lda, (lt_cdouble *)w, (lt_cdouble *)vr, ldvr, (lt_cdouble *)work);
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- SVD ---------------------------------------------------------------------- */
void lt_lapack_gesdd_ws(ltensor_dtype dt, char jobz, int m, int n, lt_lapack_ws *ws) {
  (void)dt;
  ws->work = s_svd_work(jobz, m, n);   /* the same count for every dtype */
  ws->rwork = 1;
  ws->iwork = (int64_t)m + n + 1;
}

int lt_lapack_gesdd(ltensor_dtype dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu,
                    void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork) {
  (void)lwork; (void)rwork;
  switch (dt) {
#define X(E, p, T, R)                                                                                   \
  case LTENSOR_##E:                                                                                     \
    return p##_svd(jobz, m, n, (const T *)a, lda, (R *)s, (T *)u, ldu, (T *)vt, ldvt, (T *)work, iwork);
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- least squares ---------------------------------------------------------------- */
void lt_lapack_gels_ws(ltensor_dtype dt, char driver, int m, int n, int nrhs, lt_lapack_ws *ws) {
  (void)dt;
  int64_t k = imin(m, n);
  if (driver == 'l') ws->work = (int64_t)n * m + imax(m, n) + 1;
  else ws->work = s_svd_work('S', m, n) + (int64_t)m * k + k * n + k * nrhs + (int64_t)m * nrhs + 1;
  ws->rwork = 1;
  ws->iwork = (int64_t)m + n + 1;
}

int lt_lapack_gels(ltensor_dtype dt, char driver, int m, int n, int nrhs, void *a, int lda, void *b, int ldb,
                   void *s, int *jpvt, double rcond, int *rank, void *work, int lwork, void *rwork, int *iwork) {
  (void)jpvt; (void)lwork; (void)rwork;
  switch (dt) {
#define X(E, p, T, R)                                                                                        \
  case LTENSOR_##E:                                                                                          \
    if (driver == 'l') return p##_gels_qr(m, n, nrhs, (T *)a, lda, (T *)b, ldb, (T *)work);                   \
    return p##_gels_svd(m, n, nrhs, (const T *)a, lda, (T *)b, ldb, (R *)s, rcond, rank, (T *)work, iwork);
    PORT_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
}

/* ---- triangular solve ---------------------------------------------------------------- */
void lt_lapack_trsm(ltensor_dtype dt, char side, char uplo, char trans, char diag, int m, int n, const void *a,
                    int lda, void *b, int ldb) {
  if (m == 0 || n == 0) return;
  switch (dt) {
#define X(E, p, T, R) case LTENSOR_##E: p##_trsm(side, uplo, trans, diag, m, n, (const T *)a, lda, (T *)b, ldb); break;
    PORT_ALL(X)
#undef X
    default: break;
  }
}
