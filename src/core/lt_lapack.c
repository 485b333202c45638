/*
 * lt_lapack.c -- LAPACK (inside OpenBLAS) for the four floating dtypes.
 *
 * The Fortran prototypes are declared here from one list per routine shape;
 * character arguments get their hidden length arguments (size_t, appended
 * after the others, as gfortran passes them), which the C-implemented
 * OpenBLAS routines simply ignore.  Every integer is LAPACK's 32-bit int
 * (Debian's libopenblas is LP64); callers check sizes fit.
 */
#include <limits.h>
#include "lt_lapack.h"

/* X(E, prefix, T, R, sy|he, or|un) */
#define LT_LAPACK_REAL(X) X(FLOAT32, s, float, float, sy, or) X(FLOAT64, d, double, double, sy, or)
#define LT_LAPACK_CPLX(X) \
  X(COMPLEX64, c, lt_cfloat, float, he, un) X(COMPLEX128, z, lt_cdouble, double, he, un)
#define LT_LAPACK_ALL(X) LT_LAPACK_REAL(X) LT_LAPACK_CPLX(X)

typedef size_t flen;  /* hidden CHARACTER length */

#define PROTO_ALL(E, p, T, R, sy, or)                                                                       \
  void p##getrf_(const int *, const int *, T *, const int *, int *, int *);                                \
  void p##gesv_(const int *, const int *, T *, const int *, int *, T *, const int *, int *);              \
  void p##getrs_(const char *, const int *, const int *, const T *, const int *, const int *, T *,          \
                 const int *, int *, flen);                                                                 \
  void p##potrf_(const char *, const int *, T *, const int *, int *, flen);                                 \
  void p##geqrf_(const int *, const int *, T *, const int *, T *, T *, const int *, int *);                 \
  void p##or##gqr_(const int *, const int *, const int *, T *, const int *, const T *, T *, const int *,    \
                   int *);                                                                                  \
  void p##gels_(const char *, const int *, const int *, const int *, T *, const int *, T *, const int *,    \
                T *, const int *, int *, flen);                                                             \
  void p##trsm_(const char *, const char *, const char *, const char *, const int *, const int *,          \
                const T *, const T *, const int *, T *, const int *, flen, flen, flen, flen);
LT_LAPACK_ALL(PROTO_ALL)

#define PROTO_REAL(E, p, T, R, sy, or)                                                                      \
  void p##sy##evd_(const char *, const char *, const int *, T *, const int *, R *, T *, const int *, int *, \
                   const int *, int *, flen, flen);                                                         \
  void p##geev_(const char *, const char *, const int *, T *, const int *, R *, R *, T *, const int *, T *,  \
                const int *, T *, const int *, int *, flen, flen);                                          \
  void p##gesdd_(const char *, const int *, const int *, T *, const int *, R *, T *, const int *, T *,      \
                 const int *, T *, const int *, int *, int *, flen);                                        \
  void p##gelsy_(const int *, const int *, const int *, T *, const int *, T *, const int *, int *,          \
                 const R *, int *, T *, const int *, int *);                                                \
  void p##gelsd_(const int *, const int *, const int *, T *, const int *, T *, const int *, R *, const R *,  \
                 int *, T *, const int *, int *, int *);                                                    \
  void p##gelss_(const int *, const int *, const int *, T *, const int *, T *, const int *, R *, const R *,  \
                 int *, T *, const int *, int *);
LT_LAPACK_REAL(PROTO_REAL)

#define PROTO_CPLX(E, p, T, R, sy, or)                                                                      \
  void p##sy##evd_(const char *, const char *, const int *, T *, const int *, R *, T *, const int *, R *,   \
                   const int *, int *, const int *, int *, flen, flen);                                     \
  void p##geev_(const char *, const char *, const int *, T *, const int *, T *, T *, const int *, T *,       \
                const int *, T *, const int *, R *, int *, flen, flen);                                     \
  void p##gesdd_(const char *, const int *, const int *, T *, const int *, R *, T *, const int *, T *,      \
                 const int *, T *, const int *, R *, int *, int *, flen);                                   \
  void p##gelsy_(const int *, const int *, const int *, T *, const int *, T *, const int *, int *,          \
                 const R *, int *, T *, const int *, R *, int *);                                           \
  void p##gelsd_(const int *, const int *, const int *, T *, const int *, T *, const int *, R *, const R *,  \
                 int *, T *, const int *, R *, int *, int *);                                               \
  void p##gelss_(const int *, const int *, const int *, T *, const int *, T *, const int *, R *, const R *,  \
                 int *, T *, const int *, R *, int *);
LT_LAPACK_CPLX(PROTO_CPLX)

int lt_lapack_dtype(ltensor_dtype dt) {
  return dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT64 || dt == LTENSOR_COMPLEX64 || dt == LTENSOR_COMPLEX128;
}

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

int lt_lapack_getrf(ltensor_dtype dt, int m, int n, void *a, int lda, int *ipiv) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) case LTENSOR_##E: p##getrf_(&m, &n, (T *)a, &lda, ipiv, &info); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

int lt_lapack_gesv(ltensor_dtype dt, int n, int nrhs, void *a, int lda, int *ipiv, void *b, int ldb) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) case LTENSOR_##E: p##gesv_(&n, &nrhs, (T *)a, &lda, ipiv, (T *)b, &ldb, &info); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

int lt_lapack_getrs(ltensor_dtype dt, char trans, int n, int nrhs, const void *a, int lda, const int *ipiv,
                    void *b, int ldb) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) \
  case LTENSOR_##E: p##getrs_(&trans, &n, &nrhs, (const T *)a, &lda, ipiv, (T *)b, &ldb, &info, 1); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

int lt_lapack_potrf(ltensor_dtype dt, char uplo, int n, void *a, int lda) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) case LTENSOR_##E: p##potrf_(&uplo, &n, (T *)a, &lda, &info, 1); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- workspace queries -----------------------------------------------------
   Every *_ws function asks LAPACK itself: the computing wrapper below is
   called with lwork = -1 and one-element stand-ins for the arrays (LAPACK
   only checks the arguments and writes the optimal sizes into work[0],
   rwork[0] and iwork[0]), so each routine's argument list is written once. */
typedef struct query_bufs {
  double a[4], work[2], rwork[2], s[4];   /* 4 doubles hold two complex128 */
  int iwork[2], ipiv[2];
} query_bufs;

/* A size LAPACK reported in the first element of a work array of dtype dt
   (the real part, as a float or a double). */
static int64_t work_size(ltensor_dtype dt, const double *q) {
  double v = (dt == LTENSOR_FLOAT32 || dt == LTENSOR_COMPLEX64) ? (double)*(const float *)q : *q;
  return (int64_t)(v + 0.5);
}
static int64_t real_work_size(ltensor_dtype dt, const double *q) {
  return work_size(dt == LTENSOR_COMPLEX64 ? LTENSOR_FLOAT32 : dt == LTENSOR_COMPLEX128 ? LTENSOR_FLOAT64 : dt, q);
}
static void at_least_one(lt_lapack_ws *ws) {
  if (ws->work < 1) ws->work = 1;
  if (ws->rwork < 1) ws->rwork = 1;
  if (ws->iwork < 1) ws->iwork = 1;
}

/* ---- QR ------------------------------------------------------------------ */
void lt_lapack_geqrf_ws(ltensor_dtype dt, int m, int n, int ncols, lt_lapack_ws *ws) {
  query_bufs q = { 0 };
  int lda = imax(1, m);
  int64_t w1, w2 = 1;
  lt_lapack_geqrf(dt, m, n, q.a, lda, q.s, q.work, -1);
  w1 = work_size(dt, q.work);
  if (ncols > 0 && m > 0) {
    lt_lapack_orgqr(dt, m, ncols, imin(m, n), q.a, lda, q.s, q.work, -1);
    w2 = work_size(dt, q.work);
  }
  ws->work = w1 > w2 ? w1 : w2;
  ws->rwork = ws->iwork = 0;
  if (ws->work < 1) ws->work = 1;
}

int lt_lapack_geqrf(ltensor_dtype dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) \
  case LTENSOR_##E: p##geqrf_(&m, &n, (T *)a, &lda, (T *)tau, (T *)work, &lwork, &info); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

int lt_lapack_orgqr(ltensor_dtype dt, int m, int ncols, int k, void *a, int lda, const void *tau, void *work,
                    int lwork) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or) \
  case LTENSOR_##E: p##or##gqr_(&m, &ncols, &k, (T *)a, &lda, (const T *)tau, (T *)work, &lwork, &info); break;
    LT_LAPACK_ALL(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- Hermitian eigen ------------------------------------------------------ */
void lt_lapack_syevd_ws(ltensor_dtype dt, char jobz, int n, lt_lapack_ws *ws) {
  query_bufs q = { 0 };
  lt_lapack_syevd(dt, jobz, 'L', n, q.a, imax(1, n), q.s, q.work, -1, q.rwork, -1, q.iwork, -1);
  ws->work = work_size(dt, q.work);
  ws->rwork = lt_is_complex(dt) ? real_work_size(dt, q.rwork) : 1;
  ws->iwork = q.iwork[0];
  at_least_one(ws);
}

int lt_lapack_syevd(ltensor_dtype dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work,
                    int lwork, void *rwork, int lrwork, int *iwork, int liwork) {
  int info = 0;
  (void)rwork; (void)lrwork;
  switch (dt) {
#define X(E, p, T, R, sy, or)                                                                             \
  case LTENSOR_##E:                                                                                       \
    p##sy##evd_(&jobz, &uplo, &n, (T *)a, &lda, (R *)w, (T *)work, &lwork, iwork, &liwork, &info, 1, 1); \
    break;
    LT_LAPACK_REAL(X)
#undef X
#define X(E, p, T, R, sy, or)                                                                             \
  case LTENSOR_##E:                                                                                       \
    p##sy##evd_(&jobz, &uplo, &n, (T *)a, &lda, (R *)w, (T *)work, &lwork, (R *)rwork, &lrwork, iwork,    \
                &liwork, &info, 1, 1);                                                                    \
    break;
    LT_LAPACK_CPLX(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- general eigen -------------------------------------------------------- */
void lt_lapack_geev_ws(ltensor_dtype dt, char jobvr, int n, lt_lapack_ws *ws) {
  query_bufs q = { 0 };
  lt_lapack_geev(dt, jobvr, n, q.a, imax(1, n), q.s, q.a, imax(1, n), q.work, -1, q.rwork);
  ws->work = work_size(dt, q.work);
  ws->rwork = 2 * (int64_t)n;
  ws->iwork = 0;
  at_least_one(ws);
  ws->iwork = 0;
}

int lt_lapack_geev(ltensor_dtype dt, char jobvr, int n, void *a, int lda, void *w, void *vr, int ldvr,
                   void *work, int lwork, void *rwork) {
  int info = 0, one = 1;
  char jobvl = 'N';
  switch (dt) {
#define X(E, p, T, R, sy, or)                                                                                 \
  case LTENSOR_##E:                                                                                           \
    /* wi follows wr in w; a workspace query (lwork -1) gets one-element stand-ins */ \
    p##geev_(&jobvl, &jobvr, &n, (T *)a, &lda, (R *)w, lwork == -1 ? (R *)w : (R *)w + n, NULL, &one,       \
             (T *)vr, &ldvr, (T *)work, &lwork, &info, 1, 1);                                                 \
    break;
    LT_LAPACK_REAL(X)
#undef X
#define X(E, p, T, R, sy, or)                                                                                 \
  case LTENSOR_##E:                                                                                           \
    p##geev_(&jobvl, &jobvr, &n, (T *)a, &lda, (T *)w, NULL, &one, (T *)vr, &ldvr, (T *)work, &lwork,        \
             (R *)rwork, &info, 1, 1);                                                                        \
    break;
    LT_LAPACK_CPLX(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- SVD ------------------------------------------------------------------ */
void lt_lapack_gesdd_ws(ltensor_dtype dt, char jobz, int m, int n, lt_lapack_ws *ws) {
  query_bufs q = { 0 };
  int64_t mn = imin(m, n), mx = imax(m, n);
  int ldvt = imax(1, jobz == 'A' ? n : imin(m, n));
  lt_lapack_gesdd(dt, jobz, m, n, q.a, imax(1, m), q.s, q.a, imax(1, m), q.a, ldvt, q.work, -1, q.rwork, q.iwork);
  ws->work = work_size(dt, q.work);
  ws->iwork = 8 * mn;
  /* LAPACK 3.7+ bounds for cgesdd/zgesdd's rwork */
  ws->rwork = jobz == 'N' ? 7 * mn : (5 * mn * mn + 5 * mn > 2 * mx * mn + 2 * mn * mn + mn
                                          ? 5 * mn * mn + 5 * mn : 2 * mx * mn + 2 * mn * mn + mn);
  at_least_one(ws);
}

int lt_lapack_gesdd(ltensor_dtype dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu,
                    void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork) {
  int info = 0;
  switch (dt) {
#define X(E, p, T, R, sy, or)                                                                                \
  case LTENSOR_##E:                                                                                          \
    p##gesdd_(&jobz, &m, &n, (T *)a, &lda, (R *)s, (T *)u, &ldu, (T *)vt, &ldvt, (T *)work, &lwork, iwork,  \
              &info, 1);                                                                                     \
    break;
    LT_LAPACK_REAL(X)
#undef X
#define X(E, p, T, R, sy, or)                                                                                \
  case LTENSOR_##E:                                                                                          \
    p##gesdd_(&jobz, &m, &n, (T *)a, &lda, (R *)s, (T *)u, &ldu, (T *)vt, &ldvt, (T *)work, &lwork,         \
              (R *)rwork, iwork, &info, 1);                                                                  \
    break;
    LT_LAPACK_CPLX(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- least squares ---------------------------------------------------------- */
void lt_lapack_gels_ws(ltensor_dtype dt, char driver, int m, int n, int nrhs, lt_lapack_ws *ws) {
  query_bufs q = { 0 };
  int rank = 0;
  lt_lapack_gels(dt, driver, m, n, nrhs, q.a, imax(1, m), q.a, imax(1, imax(m, n)), q.s, q.ipiv, 0.0, &rank,
                 q.work, -1, q.rwork, q.iwork);
  ws->work = work_size(dt, q.work);
  ws->rwork = driver == 'y' ? 2 * (int64_t)n : 5 * (int64_t)imin(m, n);
  ws->iwork = 1;
  if (driver == 'd') {
    ws->iwork = q.iwork[0];
    if (lt_is_complex(dt)) ws->rwork = real_work_size(dt, q.rwork);
  }
  at_least_one(ws);
}

int lt_lapack_gels(ltensor_dtype dt, char driver, int m, int n, int nrhs, void *a, int lda, void *b, int ldb,
                   void *s, int *jpvt, double rcond, int *rank, void *work, int lwork, void *rwork, int *iwork) {
  int info = 0;
  char tr = 'N';
  switch (dt) {
#define X(E, p, T, R, sy, or)                                                                                \
  case LTENSOR_##E: {                                                                                        \
    R rc = (R)rcond;                                                                                         \
    (void)rwork;                                                                                             \
    if (driver == 'l') p##gels_(&tr, &m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (T *)work, &lwork, &info, 1); \
    else if (driver == 'y')                                                                                  \
      p##gelsy_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, jpvt, &rc, rank, (T *)work, &lwork, &info);       \
    else if (driver == 'd')                                                                                  \
      p##gelsd_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (R *)s, &rc, rank, (T *)work, &lwork, iwork, &info); \
    else p##gelss_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (R *)s, &rc, rank, (T *)work, &lwork, &info);  \
    break;                                                                                                   \
  }
    LT_LAPACK_REAL(X)
#undef X
#define X(E, p, T, R, sy, or)                                                                                \
  case LTENSOR_##E: {                                                                                        \
    R rc = (R)rcond;                                                                                         \
    if (driver == 'l') p##gels_(&tr, &m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (T *)work, &lwork, &info, 1); \
    else if (driver == 'y')                                                                                  \
      p##gelsy_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, jpvt, &rc, rank, (T *)work, &lwork, (R *)rwork,   \
                &info);                                                                                      \
    else if (driver == 'd')                                                                                  \
      p##gelsd_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (R *)s, &rc, rank, (T *)work, &lwork, (R *)rwork, \
                iwork, &info);                                                                               \
    else p##gelss_(&m, &n, &nrhs, (T *)a, &lda, (T *)b, &ldb, (R *)s, &rc, rank, (T *)work, &lwork,         \
                   (R *)rwork, &info);                                                                       \
    break;                                                                                                   \
  }
    LT_LAPACK_CPLX(X)
#undef X
    default: return LT_LAPACK_BAD_DTYPE;
  }
  return info;
}

/* ---- triangular solve ---------------------------------------------------- */
void lt_lapack_trsm(ltensor_dtype dt, char side, char uplo, char trans, char diag, int m, int n, const void *a,
                    int lda, void *b, int ldb) {
  if (m == 0 || n == 0) return;
  switch (dt) {
#define X(E, p, T, R, sy, or)                                                                               \
  case LTENSOR_##E: {                                                                                       \
    T one = 1;                                                                                              \
    p##trsm_(&side, &uplo, &trans, &diag, &m, &n, &one, (const T *)a, &lda, (T *)b, &ldb, 1, 1, 1, 1);     \
    break;                                                                                                  \
  }
    LT_LAPACK_ALL(X)
#undef X
    default: break;
  }
}
