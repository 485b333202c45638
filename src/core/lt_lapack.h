/*
 * lt_lapack.h -- typed wrappers over the LAPACK inside OpenBLAS (Lua-free).
 *
 * OpenBLAS exports LAPACK's Fortran symbols (dgetrf_, zheevd_, sgesdd_, ...);
 * lt_lapack.c declares their prototypes itself (no lapack.h needed) and
 * dispatches on the dtype: float32, float64, complex64, complex128.  Every
 * matrix is column-major with a leading dimension, as LAPACK wants; the
 * binding (l_lapack.c) copies tensors into such scratch buffers.
 *
 * Each wrapper returns LAPACK's `info` (0 on success, > 0 a numerical
 * failure, < 0 a bad argument -- which the caller must make impossible:
 * LAPACK prints bad arguments on stdout).  A wrapper given a dtype it does
 * not handle returns LT_LAPACK_BAD_DTYPE without calling anything.
 *
 * Workspace: functions named *_ws fill an lt_lapack_ws with the sizes a call
 * needs (LAPACK's own workspace query where the size is not a formula), so
 * that the caller can allocate everything before the first call.
 */
#ifndef LT_LAPACK_H
#define LT_LAPACK_H

#include "lt_dtype.h"

#define LT_LAPACK_BAD_DTYPE (-1000)

/* 1 for the four dtypes LAPACK computes in. */
int lt_lapack_dtype(ltensor_dtype dt);

/* Workspace sizes: work in elements of the dtype, rwork in elements of its
   real dtype, iwork in ints. */
typedef struct lt_lapack_ws {
  int64_t work, rwork, iwork;
} lt_lapack_ws;

/* LU with partial pivoting of an m x n matrix (getrf); ipiv has min(m, n). */
int lt_lapack_getrf(ltensor_dtype dt, int m, int n, void *a, int lda, int *ipiv);
/* A X = B by LU (gesv): a and b are overwritten with the factors and X. */
int lt_lapack_gesv(ltensor_dtype dt, int n, int nrhs, void *a, int lda, int *ipiv, void *b, int ldb);
/* Solve op(A) X = B with getrf's factors; trans 'N', 'T' or 'C'. */
int lt_lapack_getrs(ltensor_dtype dt, char trans, int n, int nrhs, const void *a, int lda, const int *ipiv,
                    void *b, int ldb);
/* Cholesky (potrf), uplo 'L' or 'U'. */
int lt_lapack_potrf(ltensor_dtype dt, char uplo, int n, void *a, int lda);

/* QR: geqrf then orgqr/ungqr generating the first `ncols` columns of Q. */
void lt_lapack_geqrf_ws(ltensor_dtype dt, int m, int n, int ncols, lt_lapack_ws *ws);
int lt_lapack_geqrf(ltensor_dtype dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork);
int lt_lapack_orgqr(ltensor_dtype dt, int m, int ncols, int k, void *a, int lda, const void *tau, void *work,
                    int lwork);

/* Hermitian eigen-decomposition (syevd/heevd); w is real, ascending. */
void lt_lapack_syevd_ws(ltensor_dtype dt, char jobz, int n, lt_lapack_ws *ws);
int lt_lapack_syevd(ltensor_dtype dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work,
                    int lwork, void *rwork, int lrwork, int *iwork, int liwork);

/* General eigen-decomposition (geev, right vectors).  Real dtypes give wr, wi
   (w of 2n reals: wr then wi) and the packed real vectors LAPACK returns;
   complex dtypes give n complex values in w and complex vectors. */
void lt_lapack_geev_ws(ltensor_dtype dt, char jobvr, int n, lt_lapack_ws *ws);
int lt_lapack_geev(ltensor_dtype dt, char jobvr, int n, void *a, int lda, void *w, void *vr, int ldvr,
                   void *work, int lwork, void *rwork);

/* SVD by divide and conquer (gesdd), jobz 'N', 'S' or 'A'. */
void lt_lapack_gesdd_ws(ltensor_dtype dt, char jobz, int m, int n, lt_lapack_ws *ws);
int lt_lapack_gesdd(ltensor_dtype dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu,
                    void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork);

/* Least squares; driver 'l' (gels), 'y' (gelsy), 'd' (gelsd), 's' (gelss).
   b is max(m, n) x nrhs; s (min(m, n) reals) for gelsd/gelss; jpvt (n ints)
   for gelsy; *rank set by every driver but gels. */
void lt_lapack_gels_ws(ltensor_dtype dt, char driver, int m, int n, int nrhs, lt_lapack_ws *ws);
int lt_lapack_gels(ltensor_dtype dt, char driver, int m, int n, int nrhs, void *a, int lda, void *b, int ldb,
                   void *s, int *jpvt, double rcond, int *rank, void *work, int lwork, void *rwork, int *iwork);

/* B := op(A)^-1 B (side 'L') or B op(A)^-1 (side 'R') with triangular A (trsm;
   no singularity check, as PyTorch). */
void lt_lapack_trsm(ltensor_dtype dt, char side, char uplo, char trans, char diag, int m, int n, const void *a,
                    int lda, void *b, int ldb);

#endif
