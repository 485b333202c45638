/*
 * lt_lapack_portable_impl.h -- one dtype's portable LAPACK routines, included
 * by lt_lapack_portable.c once per dtype with these macros defined:
 *   T  element type, P name prefix (s, d, c, z), CPLX 0/1, SINGLE 0/1
 *   (float/lt_cfloat or double/lt_cdouble).
 * From them this file defines R (the real type), CONJ(x) RE(x) IMAG(x)
 * ABS(x) ABS2(x) (|x|^2), SQRT(x) (real), EPS (unit roundoff), RMIN (least
 * normal), and CT with CABSX CCONJX CREX CIMX CSQRTX (the complex type of
 * the precision, for geev), and undefines them all, T P CPLX SINGLE
 * included, at its end.
 * Matrices are column-major with a leading dimension, as in LAPACK.  All
 * scratch memory comes from the caller's work arrays (sizes in the *_ws
 * functions of lt_lapack_portable.c).
 */
#if SINGLE
#define R float
#define SQRT(x) sqrtf(x)
#define EPS FLT_EPSILON
#define RMIN FLT_MIN
#define CT lt_cfloat
#define CABSX(x) cabsf(x)
#define CCONJX(x) conjf(x)
#define CREX(x) crealf(x)
#define CIMX(x) cimagf(x)
#define CSQRTX(x) csqrtf(x)
#else
#define R double
#define SQRT(x) sqrt(x)
#define EPS DBL_EPSILON
#define RMIN DBL_MIN
#define CT lt_cdouble
#define CABSX(x) cabs(x)
#define CCONJX(x) conj(x)
#define CREX(x) creal(x)
#define CIMX(x) cimag(x)
#define CSQRTX(x) csqrt(x)
#endif
#if CPLX
#define CONJ(x) CCONJX(x)
#define RE(x) CREX(x)
#define IMAG(x) CIMX(x)
#define ABS(x) CABSX(x)
#define ABS2(x) (CREX(x) * CREX(x) + CIMX(x) * CIMX(x))
#else
#define CONJ(x) (x)
#define RE(x) (x)
#if SINGLE
#define ABS(x) fabsf(x)
#else
#define ABS(x) fabs(x)
#endif
#define ABS2(x) ((x) * (x))
#endif

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(P, name)
#define AT(a, ld, i, j) (a)[(int64_t)(i) + (int64_t)(j) * (ld)]

/* |re| + |im|: LAPACK's pivot measure (i?amax uses it for complex) */
static R FN(cabs1)(T x) {
#if CPLX
  return (R)fabs((double)RE(x)) + (R)fabs((double)IMAG(x));
#else
  return (R)fabs((double)x);
#endif
}

/* ---- LU ------------------------------------------------------------------ */
/* Right-looking LU with partial pivoting (LAPACK's getf2 order); info = the
   first zero pivot (1-based), the factorization continues past it. */
static int FN(getrf)(int m, int n, T *a, int lda, int *ipiv) {
  int info = 0, k = m < n ? m : n;
  for (int j = 0; j < k; j++) {
    int p = j;
    R best = FN(cabs1)(AT(a, lda, j, j));
    for (int i = j + 1; i < m; i++) {
      R v = FN(cabs1)(AT(a, lda, i, j));
      if (v > best || (best != best)) { best = v; p = i; }
    }
    ipiv[j] = p + 1;
    if (AT(a, lda, p, j) != 0) {
      if (p != j)
        for (int c = 0; c < n; c++) { T t = AT(a, lda, j, c); AT(a, lda, j, c) = AT(a, lda, p, c); AT(a, lda, p, c) = t; }
      T d = AT(a, lda, j, j);
      if (ABS(d) >= RMIN) {
        T r = (T)1 / d;
        for (int i = j + 1; i < m; i++) AT(a, lda, i, j) *= r;
      } else {
        for (int i = j + 1; i < m; i++) AT(a, lda, i, j) /= d;
      }
    } else if (info == 0) {
      info = j + 1;
    }
    for (int c = j + 1; c < n; c++) {   /* trailing update, column by column */
      T u = AT(a, lda, j, c);
      if (u == 0) continue;
      T *col = &AT(a, lda, 0, c);
      const T *l = &AT(a, lda, 0, j);
      for (int i = j + 1; i < m; i++) col[i] -= l[i] * u;
    }
  }
  return info;
}

/* op(A) X = B (side 'L') or X op(A) = B (side 'R'), A triangular n x n. */
static void FN(trsm)(char side, char uplo, char trans, char diag, int m, int n, const T *a, int lda, T *b,
                     int ldb) {
  int tr = trans == 'T' || trans == 'C', cj = trans == 'C' && CPLX, unit = diag == 'U';
  int up = (uplo == 'U') != tr;   /* is op(A) upper triangular? */
#define OPA(i, j) (tr ? (cj ? CONJ(AT(a, lda, j, i)) : AT(a, lda, j, i)) : AT(a, lda, i, j))
  if (side == 'L') {   /* each column of B: op(A) x = b */
    for (int c = 0; c < n; c++) {
      T *x = &AT(b, ldb, 0, c);
      if (up) {
        for (int i = m - 1; i >= 0; i--) {
          T s = x[i];
          for (int j = i + 1; j < m; j++) s -= OPA(i, j) * x[j];
          x[i] = unit ? s : s / OPA(i, i);
        }
      } else {
        for (int i = 0; i < m; i++) {
          T s = x[i];
          for (int j = 0; j < i; j++) s -= OPA(i, j) * x[j];
          x[i] = unit ? s : s / OPA(i, i);
        }
      }
    }
  } else {   /* each row of B: x op(A) = b, op(A) is n x n */
    for (int r = 0; r < m; r++) {
      if (up) {
        for (int j = 0; j < n; j++) {
          T s = AT(b, ldb, r, j);
          for (int i = 0; i < j; i++) s -= AT(b, ldb, r, i) * OPA(i, j);
          AT(b, ldb, r, j) = unit ? s : s / OPA(j, j);
        }
      } else {
        for (int j = n - 1; j >= 0; j--) {
          T s = AT(b, ldb, r, j);
          for (int i = j + 1; i < n; i++) s -= AT(b, ldb, r, i) * OPA(i, j);
          AT(b, ldb, r, j) = unit ? s : s / OPA(j, j);
        }
      }
    }
  }
#undef OPA
}

static void FN(getrs)(char trans, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, int ldb) {
  if (trans == 'N') {
    for (int i = 0; i < n; i++) {
      int p = ipiv[i] - 1;
      if (p != i)
        for (int c = 0; c < nrhs; c++) { T t = AT(b, ldb, i, c); AT(b, ldb, i, c) = AT(b, ldb, p, c); AT(b, ldb, p, c) = t; }
    }
    FN(trsm)('L', 'L', 'N', 'U', n, nrhs, a, lda, b, ldb);
    FN(trsm)('L', 'U', 'N', 'N', n, nrhs, a, lda, b, ldb);
  } else {
    FN(trsm)('L', 'U', trans, 'N', n, nrhs, a, lda, b, ldb);
    FN(trsm)('L', 'L', trans, 'U', n, nrhs, a, lda, b, ldb);
    for (int i = n - 1; i >= 0; i--) {
      int p = ipiv[i] - 1;
      if (p != i)
        for (int c = 0; c < nrhs; c++) { T t = AT(b, ldb, i, c); AT(b, ldb, i, c) = AT(b, ldb, p, c); AT(b, ldb, p, c) = t; }
    }
  }
}

/* ---- Cholesky -------------------------------------------------------------- */
/* A = L L^H ('L') or U^H U ('U'); info = order of the first leading minor
   that is not positive definite (its diagonal entry holds the bad value). */
static int FN(potrf)(char uplo, int n, T *a, int lda) {
  for (int j = 0; j < n; j++) {
    if (uplo == 'U') {
      R d = RE(AT(a, lda, j, j));
      for (int k = 0; k < j; k++) d -= ABS2(AT(a, lda, k, j));
      if (!(d > 0)) { AT(a, lda, j, j) = d; return j + 1; }
      R dj = SQRT(d);
      AT(a, lda, j, j) = dj;
      for (int i = j + 1; i < n; i++) {
        T s = AT(a, lda, j, i);
        const T *ui = &AT(a, lda, 0, i), *uj = &AT(a, lda, 0, j);
        for (int k = 0; k < j; k++) s -= CONJ(uj[k]) * ui[k];
        AT(a, lda, j, i) = s / dj;
      }
    } else {
      R d = RE(AT(a, lda, j, j));
      for (int k = 0; k < j; k++) d -= ABS2(AT(a, lda, j, k));
      if (!(d > 0)) { AT(a, lda, j, j) = d; return j + 1; }
      R dj = SQRT(d);
      AT(a, lda, j, j) = dj;
      /* column j below the diagonal: a(i,j) - sum_k L(i,k) conj(L(j,k)) */
      for (int k = 0; k < j; k++) {
        T ljk = CONJ(AT(a, lda, j, k));
        if (ljk == 0) continue;
        const T *lk = &AT(a, lda, 0, k);
        T *cj = &AT(a, lda, 0, j);
        for (int i = j + 1; i < n; i++) cj[i] -= lk[i] * ljk;
      }
      for (int i = j + 1; i < n; i++) AT(a, lda, i, j) /= dj;
    }
  }
  return 0;
}

/* ---- Householder QR ------------------------------------------------------------ */
/* LAPACK's larfg: H^H (alpha; x) = (beta; 0) with H = I - tau v v^H, v(1) = 1,
   beta real; x is overwritten with v(2:), *alpha with beta. */
static T FN(larfg)(int n, T *alpha, T *x) {
  R xn2 = 0;
  for (int i = 0; i < n; i++) xn2 += ABS2(x[i]);
  R xnorm = SQRT(xn2);
#if CPLX
  R ai = IMAG(*alpha);
#else
  R ai = 0;
#endif
  if (xnorm == 0 && ai == 0) return 0;
  R ar = RE(*alpha);
  R beta = (R)hypot(hypot((double)ar, (double)ai), (double)xnorm);
  if (ar >= 0) beta = -beta;
  T tau;
#if CPLX
  tau = (beta - ar) / beta - ai / beta * (T)I;
#else
  tau = (beta - ar) / beta;
#endif
  T scal = (T)1 / (*alpha - beta);
  for (int i = 0; i < n; i++) x[i] *= scal;
  *alpha = beta;
  return tau;
}

/* Apply (I - tau v v^H) to the rows r0.. of columns c0..c1-1 of A from the
   left; v = (1, a(r0+1.., vc)) is column vc of A below its diagonal. */
static void FN(larf_left)(T tau, const T *v, int len, T *a, int lda, int r0, int c0, int c1) {
  if (tau == 0) return;
  for (int c = c0; c < c1; c++) {
    T *col = &AT(a, lda, r0, c);
    T w = col[0];
    for (int i = 1; i < len; i++) w += CONJ(v[i]) * col[i];
    w *= tau;
    col[0] -= w;
    for (int i = 1; i < len; i++) col[i] -= v[i] * w;
  }
}

static void FN(geqrf)(int m, int n, T *a, int lda, T *tau) {
  int k = m < n ? m : n;
  for (int i = 0; i < k; i++) {
    tau[i] = FN(larfg)(m - i - 1, &AT(a, lda, i, i), &AT(a, lda, i + 1 < m ? i + 1 : i, i));
    if (i + 1 < n) {
      T d = AT(a, lda, i, i);
      AT(a, lda, i, i) = 1;
      FN(larf_left)(CONJ(tau[i]), &AT(a, lda, i, i), m - i, a, lda, i, i + 1, n);
      AT(a, lda, i, i) = d;
    }
  }
}

/* Q's first ncols columns from geqrf's k reflectors (LAPACK's org2r/ung2r). */
static void FN(orgqr)(int m, int ncols, int k, T *a, int lda, const T *tau) {
  for (int j = k; j < ncols; j++) {
    for (int i = 0; i < m; i++) AT(a, lda, i, j) = 0;
    if (j < m) AT(a, lda, j, j) = 1;
  }
  for (int i = k - 1; i >= 0; i--) {
    if (i + 1 < ncols) {
      AT(a, lda, i, i) = 1;
      FN(larf_left)(tau[i], &AT(a, lda, i, i), m - i, a, lda, i, i + 1, ncols);
    }
    for (int r = i + 1; r < m; r++) AT(a, lda, r, i) *= -tau[i];
    AT(a, lda, i, i) = (T)1 - tau[i];
    for (int r = 0; r < i; r++) AT(a, lda, r, i) = 0;
  }
}

/* ---- Hermitian eigen: cyclic Jacobi ------------------------------------------------ */
/* A Jacobi step's plane rotation of n pairs (x[k inc], y[k inc]):
   x <- c x - s f y, y <- s x + c f y */
static void FN(rot)(int n, T *x, T *y, int64_t inc, R c, R s, T f) {
  for (int k = 0; k < n; k++) {
    T u = x[k * inc], v = y[k * inc];
    x[k * inc] = c * u - s * f * v;
    y[k * inc] = s * u + c * f * v;
  }
}

/* The 2x2 Hermitian Jacobi step on (p, q): with h = a(p,q) = |h| e, the
   unitary V = diag(1, conj e) [c s; -s c] makes V^H A V diagonal in (p, q)
   (Golub & Van Loan's sym.schur2 after the phase).  Returns c, s, e, t. */
static void FN(jacobi_rot)(R app, R aqq, T h, R *c, R *s, T *e, R *t) {
  R habs = ABS(h);
  *e = h / habs;
  R theta = (aqq - app) / (2 * habs);
  R tt;
  if (fabs((double)theta) > 1e150) tt = (R)(0.5 / theta);
  else tt = (R)((theta >= 0 ? 1.0 : -1.0) / (fabs((double)theta) + sqrt((double)theta * theta + 1.0)));
  *t = tt;
  *c = (R)(1.0 / sqrt((double)tt * tt + 1.0));
  *s = tt * *c;
}

/* w ascending; with jobz 'V' the orthonormal eigenvectors replace a
   (column j for w[j]).  work: n*n elements. */
static int FN(syevd)(char jobz, char uplo, int n, T *a, int lda, R *w, T *v) {
  if (n == 0) return 0;
  /* the referenced triangle made Hermitian, diagonal real */
  for (int j = 0; j < n; j++) {
    AT(a, lda, j, j) = RE(AT(a, lda, j, j));
    for (int i = j + 1; i < n; i++) {
      if (uplo == 'L') AT(a, lda, j, i) = CONJ(AT(a, lda, i, j));
      else AT(a, lda, i, j) = CONJ(AT(a, lda, j, i));
    }
  }
  int vec = jobz == 'V';
  if (vec)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) AT(v, n, i, j) = i == j ? 1 : 0;
  R nrm2 = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) nrm2 += ABS2(AT(a, lda, i, j));
  /* off-diagonal entries below eps * ||A||_F are rounding noise (rotating
     them could go on forever); backward-stable, as LAPACK's result */
  R floor_ = SQRT(nrm2) * EPS;
  int converged = 0;
  for (int sweep = 0; sweep < 80 && !converged; sweep++) {
    converged = 1;
    for (int p = 0; p < n - 1; p++)
      for (int q = p + 1; q < n; q++) {
        T h = AT(a, lda, p, q);
        R habs = ABS(h);
        R app = RE(AT(a, lda, p, p)), aqq = RE(AT(a, lda, q, q));
        if (habs <= floor_ || habs <= EPS * SQRT((R)fabs((double)app)) * SQRT((R)fabs((double)aqq)) * (R)0.5)
          continue;
        converged = 0;
        R c, s, t;
        T e;
        FN(jacobi_rot)(app, aqq, h, &c, &s, &e, &t);
        T ec = CONJ(e);
        FN(rot)(n, &AT(a, lda, 0, p), &AT(a, lda, 0, q), 1, c, s, ec);     /* A <- A V (columns p, q) */
        FN(rot)(n, &AT(a, lda, p, 0), &AT(a, lda, q, 0), lda, c, s, e);   /* A <- V^H A (rows p, q) */
        AT(a, lda, p, q) = 0;
        AT(a, lda, q, p) = 0;
        AT(a, lda, p, p) = app - t * habs;
        AT(a, lda, q, q) = aqq + t * habs;
        if (vec) FN(rot)(n, &AT(v, n, 0, p), &AT(v, n, 0, q), 1, c, s, ec);
      }
  }
  for (int i = 0; i < n; i++) w[i] = RE(AT(a, lda, i, i));
  /* ascending, vectors alongside (selection sort: n swaps at most) */
  for (int i = 0; i < n - 1; i++) {
    int mi = i;
    for (int j = i + 1; j < n; j++) if (w[j] < w[mi]) mi = j;
    if (mi != i) {
      R tw = w[i]; w[i] = w[mi]; w[mi] = tw;
      if (vec) for (int k = 0; k < n; k++) { T x = AT(v, n, k, i); AT(v, n, k, i) = AT(v, n, k, mi); AT(v, n, k, mi) = x; }
    }
  }
  if (vec)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) AT(a, lda, i, j) = AT(v, n, i, j);
  return converged ? 0 : 1;
}

/* ---- SVD: one-sided (Hestenes) Jacobi ----------------------------------------------- */
/* Make column j of the M x ncol matrix u (ld M) a unit vector orthogonal to
   the columns listed in `have` (count nh): Gram-Schmidt, twice, on the
   standard basis vectors until one survives. */
static void FN(complete)(int M, T *u, int j, const int *have, int nh) {
  T *x = &AT(u, M, 0, j);
  for (int r = 0; r < M; r++) {
    for (int i = 0; i < M; i++) x[i] = i == r ? 1 : 0;
    for (int pass = 0; pass < 2; pass++)
      for (int h = 0; h < nh; h++) {
        const T *y = &AT(u, M, 0, have[h]);
        T d = 0;
        for (int i = 0; i < M; i++) d += CONJ(y[i]) * x[i];
        for (int i = 0; i < M; i++) x[i] -= d * y[i];
      }
    R nn = 0;
    for (int i = 0; i < M; i++) nn += ABS2(x[i]);
    if (nn > (R)0.25) {
      R inv = 1 / SQRT(nn);
      for (int i = 0; i < M; i++) x[i] *= inv;
      return;
    }
  }
}

/* Workspace (elements of T) for svd(): W (M x N), V (N x N), U (M x M for
   'A', else M x N), one column; iwork: M + N ints. */
static int64_t FN(svd_work)(char jobz, int m, int n) {
  int64_t M = m > n ? m : n, N = m < n ? m : n;
  return M * N + N * N + (jobz == 'A' ? M * M : M * N) + M + 1;
}

/* A (m x n, not modified) = U S V^H; s descending (min(m, n)); u m x ucols,
   vt vrows x n ('S': ucols = vrows = min; 'A': m and n; 'N': none).
   Returns 0, or 1 when the sweeps did not converge. */
static int FN(svd)(char jobz, int m, int n, const T *a, int lda, R *s, T *u, int ldu, T *vt, int ldvt, T *work,
                   int *iwork) {
  int trans = m < n, M = trans ? n : m, N = trans ? m : n, vecs = jobz != 'N';
  if (N == 0) return 0;
  T *W = work, *V = W + (int64_t)M * N, *UF = V + (int64_t)N * N;
  int *perm = iwork, *have = iwork + N;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) AT(W, M, i, j) = trans ? CONJ(AT(a, lda, j, i)) : AT(a, lda, i, j);
  if (vecs)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) AT(V, N, i, j) = i == j ? 1 : 0;
  /* Columns are orthogonal enough when |w_p^H w_q| <= sqrt(M) eps |w_p| |w_q|
     (LAPACK's gesvj tolerance: the dot product's own rounding error), and a
     column below eps ||A||_F is a zero singular value's noise, not rotated. */
  R nrm2 = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) nrm2 += ABS2(AT(W, M, i, j));
  R ctol = SQRT((R)M) * EPS, zero2 = nrm2 * EPS * EPS;
  int converged = 0;
  for (int sweep = 0; sweep < 80 && !converged; sweep++) {
    converged = 1;
    for (int p = 0; p < N - 1; p++)
      for (int q = p + 1; q < N; q++) {
        T *wp = &AT(W, M, 0, p), *wq = &AT(W, M, 0, q);
        R al = 0, be = 0;
        T g = 0;
        for (int i = 0; i < M; i++) { al += ABS2(wp[i]); be += ABS2(wq[i]); g += CONJ(wp[i]) * wq[i]; }
        R gabs = ABS(g);
        if (gabs == 0 || al <= zero2 || be <= zero2 || gabs <= ctol * SQRT(al) * SQRT(be)) continue;
        converged = 0;
        R c, sn, t;
        T e;
        FN(jacobi_rot)(al, be, g, &c, &sn, &e, &t);
        T ec = CONJ(e);
        FN(rot)(M, wp, wq, 1, c, sn, ec);
        if (vecs) FN(rot)(N, &AT(V, N, 0, p), &AT(V, N, 0, q), 1, c, sn, ec);
      }
  }
  /* singular values are the column norms; order descending */
  for (int j = 0; j < N; j++) {
    R nn = 0;
    for (int i = 0; i < M; i++) nn += ABS2(AT(W, M, i, j));
    s[j] = SQRT(nn);
    perm[j] = j;
  }
  for (int i = 0; i < N - 1; i++) {
    int mi = i;
    for (int j = i + 1; j < N; j++) if (s[j] > s[mi]) mi = j;
    if (mi != i) { R ts = s[i]; s[i] = s[mi]; s[mi] = ts; int tp = perm[i]; perm[i] = perm[mi]; perm[mi] = tp; }
  }
  if (!vecs) return converged ? 0 : 1;
  /* the left vectors of W (M x ucw): normalised columns in sorted order, then
     the zero-singular-value columns (and, for 'A', the rest) completed */
  int ucw = jobz == 'A' ? M : N;
  T *UW = UF;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) AT(UW, M, i, j) = AT(W, M, i, perm[j]);
  /* a column at the noise level (not rotated above) gives no direction:
     its left vector is completed like those of exact zeros */
  R stol = SQRT(zero2) > RMIN ? SQRT(zero2) : RMIN;
  int nh = 0;
  for (int j = 0; j < N; j++)
    if (s[j] > stol) {
      R inv = 1 / s[j];
      for (int i = 0; i < M; i++) AT(UW, M, i, j) *= inv;
      have[nh++] = j;
    }
  for (int j = 0; j < ucw; j++)
    if (j >= N || !(s[j] > stol)) {
      FN(complete)(M, UW, j, have, nh);
      have[nh++] = j;
    }
  /* outputs: A = UW S V^H, or for the transposed problem A = V S UW^H */
  if (!trans) {
    for (int j = 0; j < ucw; j++)
      for (int i = 0; i < M; i++) AT(u, ldu, i, j) = AT(UW, M, i, j);
    for (int r = 0; r < N; r++)   /* vt = V(:, perm)^H */
      for (int c = 0; c < N; c++) AT(vt, ldvt, r, c) = CONJ(AT(V, N, c, perm[r]));
  } else {
    for (int j = 0; j < N; j++)   /* u (m = N rows, N cols) = V(:, perm) */
      for (int i = 0; i < N; i++) AT(u, ldu, i, j) = AT(V, N, i, perm[j]);
    for (int r = 0; r < ucw; r++)   /* vt (ucw x n = M) = UW^H */
      for (int c = 0; c < M; c++) AT(vt, ldvt, r, c) = CONJ(AT(UW, M, c, r));
  }
  return converged ? 0 : 1;
}

/* ---- general eigen: Hessenberg reduction + complex shifted QR --------------------- */
/* Works in the complex type CT for every dtype (a real matrix's complex
   pairs come out of the complex iteration and are paired afterwards).
   work: 3 n^2 + 2 n elements of CT.  Returns 0, or i > 0 when the QR
   iteration did not converge (LAPACK: eigenvalues i+1.. not computed). */
static R FN(cabs1c)(CT x) { return (R)fabs((double)CREX(x)) + (R)fabs((double)CIMX(x)); }

static int FN(geev_c)(int vec, int n, CT *h, CT *z, CT *xv, CT *tmp) {
  R nrm = 0;
  for (int64_t i = 0; i < (int64_t)n * n; i++) nrm += CREX(h[i]) * CREX(h[i]) + CIMX(h[i]) * CIMX(h[i]);
  nrm = SQRT(nrm);
  if (vec)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) AT(z, n, i, j) = i == j ? 1 : 0;
  /* Hessenberg: reflector k zeroes h(k+2.., k); H^H h H, z <- z H */
  for (int k = 0; k + 2 < n; k++) {
    int len = n - k - 1;
    CT *col = &AT(h, n, k + 1, k);
    R xn2 = 0;
    for (int i = 1; i < len; i++) xn2 += CREX(col[i]) * CREX(col[i]) + CIMX(col[i]) * CIMX(col[i]);
    if (xn2 == 0 && CIMX(col[0]) == 0) continue;
    R beta = (R)hypot((double)CABSX(col[0]), sqrt((double)xn2));
    if (CREX(col[0]) >= 0) beta = -beta;
    CT tau = (beta - col[0]) / beta, scal = (CT)1 / (col[0] - beta);
    tmp[0] = 1;
    for (int i = 1; i < len; i++) tmp[i] = col[i] * scal;
    col[0] = beta;
    for (int i = 1; i < len; i++) col[i] = 0;
    for (int c = k + 1; c < n; c++) {   /* rows k+1.. : (I - conj(tau) v v^H) */
      CT *hc = &AT(h, n, k + 1, c), w = 0;
      for (int i = 0; i < len; i++) w += CCONJX(tmp[i]) * hc[i];
      w *= CCONJX(tau);
      for (int i = 0; i < len; i++) hc[i] -= tmp[i] * w;
    }
    for (int pass = 0; pass < (vec ? 2 : 1); pass++) {   /* columns k+1.. : (I - tau v v^H) */
      CT *m = pass ? z : h;
      for (int r = 0; r < n; r++) {
        CT w = 0;
        for (int i = 0; i < len; i++) w += AT(m, n, r, k + 1 + i) * tmp[i];
        w *= tau;
        for (int i = 0; i < len; i++) AT(m, n, r, k + 1 + i) -= w * CCONJX(tmp[i]);
      }
    }
  }
  /* implicit single-shift QR (Wilkinson shift), full Schur form kept */
  int hi = n - 1, its = 0;
  int64_t total = 0;
  while (hi > 0) {
    if (total++ > 60 * (int64_t)n + 100) return hi + 1;
    int l;
    for (l = hi; l > 0; l--) {
      R sc = FN(cabs1c)(AT(h, n, l - 1, l - 1)) + FN(cabs1c)(AT(h, n, l, l));
      if (sc == 0) sc = nrm;
      if (FN(cabs1c)(AT(h, n, l, l - 1)) <= EPS * sc) { AT(h, n, l, l - 1) = 0; break; }
    }
    if (l == hi) { hi--; its = 0; continue; }
    its++;
    CT mu;
    if (its % 11 == 10) {
      mu = AT(h, n, hi, hi) + (R)0.75 * FN(cabs1c)(AT(h, n, hi, hi - 1));   /* exceptional shift */
    } else {
      CT a = AT(h, n, hi - 1, hi - 1), b = AT(h, n, hi - 1, hi), c = AT(h, n, hi, hi - 1), d = AT(h, n, hi, hi);
      CT t2 = (a + d) / 2, disc = CSQRTX((a - d) * (a - d) / 4 + b * c);
      CT m1 = t2 + disc, m2 = t2 - disc;
      mu = CABSX(m1 - d) < CABSX(m2 - d) ? m1 : m2;
    }
    CT xx = AT(h, n, l, l) - mu, yy = AT(h, n, l + 1, l);
    for (int k = l; k < hi; k++) {
      if (k > l) { xx = AT(h, n, k, k - 1); yy = AT(h, n, k + 1, k - 1); }
      R ax = CABSX(xx), r = (R)hypot((double)ax, (double)CABSX(yy));
      if (r == 0) continue;
      R c;
      CT sn;
      if (ax == 0) { c = 0; sn = 1; }
      else { c = ax / r; sn = (xx / ax) * CCONJX(yy) / r; }
      for (int col = k > l ? k - 1 : l; col < n; col++) {
        CT p = AT(h, n, k, col), q = AT(h, n, k + 1, col);
        AT(h, n, k, col) = c * p + sn * q;
        AT(h, n, k + 1, col) = -CCONJX(sn) * p + c * q;
      }
      if (k > l) AT(h, n, k + 1, k - 1) = 0;
      int rmax = k + 2 < hi ? k + 2 : hi;
      for (int row = 0; row <= rmax; row++) {
        CT p = AT(h, n, row, k), q = AT(h, n, row, k + 1);
        AT(h, n, row, k) = c * p + CCONJX(sn) * q;
        AT(h, n, row, k + 1) = -sn * p + c * q;
      }
      if (vec)
        for (int row = 0; row < n; row++) {
          CT p = AT(z, n, row, k), q = AT(z, n, row, k + 1);
          AT(z, n, row, k) = c * p + CCONJX(sn) * q;
          AT(z, n, row, k + 1) = -sn * p + c * q;
        }
    }
  }
  if (!vec) return 0;
  /* eigenvectors of the triangular form, back-transformed by z, unit norm,
     largest component real (as LAPACK's) */
  R smin = EPS * nrm > RMIN ? EPS * nrm : RMIN;
  for (int k = 0; k < n; k++) {
    CT lam = AT(h, n, k, k);
    for (int i = k + 1; i < n; i++) tmp[i] = 0;
    tmp[k] = 1;
    for (int j = k - 1; j >= 0; j--) {
      CT sum = 0;
      for (int l2 = j + 1; l2 <= k; l2++) sum += AT(h, n, j, l2) * tmp[l2];
      CT d = AT(h, n, j, j) - lam;
      if (CABSX(d) < smin) d = smin;
      tmp[j] = -sum / d;
    }
    CT *out = &AT(xv, n, 0, k);
    R nn = 0;
    for (int i = 0; i < n; i++) {
      CT sum = 0;
      for (int l2 = 0; l2 <= k; l2++) sum += AT(z, n, i, l2) * tmp[l2];
      out[i] = sum;
      nn += CREX(sum) * CREX(sum) + CIMX(sum) * CIMX(sum);
    }
    int big = 0;
    for (int i = 1; i < n; i++) if (CABSX(out[i]) > CABSX(out[big])) big = i;
    CT ph = CABSX(out[big]) > 0 ? CCONJX(out[big]) / CABSX(out[big]) : (CT)1;
    R inv = nn > 0 ? 1 / SQRT(nn) : 1;
    for (int i = 0; i < n; i++) out[i] *= ph * inv;
    if (CABSX(out[big]) > 0) out[big] = CREX(out[big]);
  }
  return 0;
}

#if CPLX
static int FN(geev)(char jobvr, int n, T *a, int lda, T *w, T *vr, int ldvr, T *work) {
  int vec = jobvr == 'V';
  T *h = work, *z = h + (int64_t)n * n, *xv = z + (int64_t)n * n, *tmp = xv + (int64_t)n * n;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) AT(h, n, i, j) = AT(a, lda, i, j);
  int info = FN(geev_c)(vec, n, h, z, xv, tmp);
  if (info) return info;
  for (int i = 0; i < n; i++) w[i] = AT(h, n, i, i);
  if (vec)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) AT(vr, ldvr, i, j) = AT(xv, n, i, j);
  return 0;
}
#else
/* Real input: LAPACK's packing -- w = (wr, wi), a complex pair adjacent with
   the positive imaginary part first, its vector as (real, imaginary) columns. */
static int FN(geev)(char jobvr, int n, T *a, int lda, R *w, T *vr, int ldvr, void *work) {
  int vec = jobvr == 'V';
  CT *h = work, *z = h + (int64_t)n * n, *xv = z + (int64_t)n * n, *tmp = xv + (int64_t)n * n;
  int *used = (int *)(tmp + n);
  R nrm = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) { AT(h, n, i, j) = AT(a, lda, i, j); nrm += AT(a, lda, i, j) * AT(a, lda, i, j); }
  int info = FN(geev_c)(vec, n, h, z, xv, tmp);
  if (info) return info;
  R tol = (R)(n > 1 ? n : 1) * EPS * SQRT(nrm) * 8;
  for (int i = 0; i < n; i++) used[i] = 0;
  int o = 0;
  for (int i = 0; i < n; i++) {
    if (used[i]) continue;
    CT lam = AT(h, n, i, i);
    int partner = -1;
    if ((R)fabs((double)CIMX(lam)) > tol) {   /* find the conjugate: the closest unused */
      R best = 0;
      for (int j = 0; j < n; j++) {
        if (j == i || used[j]) continue;
        R d = CABSX(AT(h, n, j, j) - CCONJX(lam));
        if (partner < 0 || d < best) { best = d; partner = j; }
      }
      if (partner >= 0 && CIMX(AT(h, n, partner, partner)) * CIMX(lam) >= 0) partner = -1;
    }
    used[i] = 1;
    if (partner < 0) {   /* a real eigenvalue; its vector's imaginary part is rounding */
      w[o] = CREX(lam); w[n + o] = 0;
      if (vec) {
        R nn = 0;
        for (int r = 0; r < n; r++) nn += CREX(AT(xv, n, r, i)) * CREX(AT(xv, n, r, i));
        R inv = nn > 0 ? 1 / SQRT(nn) : 1;
        for (int r = 0; r < n; r++) AT(vr, ldvr, r, o) = CREX(AT(xv, n, r, i)) * inv;
      }
      o++;
      continue;
    }
    used[partner] = 1;
    int pos = CIMX(lam) > 0 ? i : partner;
    CT lp = AT(h, n, pos, pos), lq = AT(h, n, pos == i ? partner : i, pos == i ? partner : i);
    R re = (CREX(lp) + CREX(lq)) / 2, im = ((R)fabs((double)CIMX(lp)) + (R)fabs((double)CIMX(lq))) / 2;
    w[o] = re; w[n + o] = im; w[o + 1] = re; w[n + o + 1] = -im;
    if (vec)
      for (int r = 0; r < n; r++) {
        AT(vr, ldvr, r, o) = CREX(AT(xv, n, r, pos));
        AT(vr, ldvr, r, o + 1) = CIMX(AT(xv, n, r, pos));
      }
    o += 2;
  }
  return 0;
}
#endif

/* ---- least squares ------------------------------------------------------------------- */
/* gels through QR (m >= n) or QR of A^H (m < n, the minimum-norm solution);
   info = i when R(i, i) is exactly zero, as LAPACK's trtrs reports.
   work: n*m + max(m, n) + 1 elements. */
static int FN(gels_qr)(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, T *work) {
  if (m >= n) {
    T *tau = work;
    FN(geqrf)(m, n, a, lda, tau);
    for (int i = 0; i < n; i++) {   /* B <- Q^H B = H_n^H ... H_1^H B */
      T d = AT(a, lda, i, i);
      AT(a, lda, i, i) = 1;
      FN(larf_left)(CONJ(tau[i]), &AT(a, lda, i, i), m - i, b, ldb, i, 0, nrhs);
      AT(a, lda, i, i) = d;
    }
    for (int i = 0; i < n; i++) if (AT(a, lda, i, i) == 0) return i + 1;
    FN(trsm)('L', 'U', 'N', 'N', n, nrhs, a, lda, b, ldb);
    return 0;
  }
  /* A^H = Q R (n x m): A = R^H Q^H, x = Q [R^-H b; 0] */
  T *ah = work, *tau = work + (int64_t)n * m;
  for (int j = 0; j < m; j++)
    for (int i = 0; i < n; i++) AT(ah, n, i, j) = CONJ(AT(a, lda, j, i));
  FN(geqrf)(n, m, ah, n, tau);
  for (int i = 0; i < m; i++) if (AT(ah, n, i, i) == 0) return i + 1;
  FN(trsm)('L', 'U', 'C', 'N', m, nrhs, ah, n, b, ldb);
  for (int c = 0; c < nrhs; c++)
    for (int i = m; i < n; i++) AT(b, ldb, i, c) = 0;
  for (int i = m - 1; i >= 0; i--) {
    T d = AT(ah, n, i, i);
    AT(ah, n, i, i) = 1;
    FN(larf_left)(tau[i], &AT(ah, n, i, i), n - i, b, ldb, i, 0, nrhs);
    AT(ah, n, i, i) = d;
  }
  return 0;
}

/* The SVD drivers (gelsy, gelsd, gelss): x = V S+ U^H b with singular values
   <= rcond * s_max dropped (rcond < 0: machine precision); rank counted.
   For m > n the rows n.. of b get the residual's norm (then zeros), so that
   their sum of squares is the residual sum of squares as LAPACK's.
   work: svd_work('S') + m*k + k*n + k*nrhs + m*nrhs elements. */
static int FN(gels_svd)(int m, int n, int nrhs, const T *a, int lda, T *b, int ldb, R *s, double rcond, int *rank,
                        T *work, int *iwork) {
  int k = m < n ? m : n;
  T *u = work + FN(svd_work)('S', m, n), *vt = u + (int64_t)m * k, *y = vt + (int64_t)k * n,
    *b0 = y + (int64_t)k * nrhs;
  int info = FN(svd)('S', m, n, a, lda, s, u, m, vt, k, work, iwork);
  R tol = (R)(rcond < 0 ? EPS : rcond) * (k > 0 ? s[0] : 0);
  int r = 0;
  while (r < k && s[r] > tol) r++;
  *rank = r;
  for (int c = 0; c < nrhs; c++)
    for (int i = 0; i < m; i++) AT(b0, m, i, c) = AT(b, ldb, i, c);
  for (int c = 0; c < nrhs; c++)   /* y = S+ U^H b */
    for (int j = 0; j < k; j++) {
      T d = 0;
      if (j < r) {
        for (int i = 0; i < m; i++) d += CONJ(AT(u, m, i, j)) * AT(b0, m, i, c);
        d /= s[j];
      }
      AT(y, k, j, c) = d;
    }
  for (int c = 0; c < nrhs; c++)   /* x = V y */
    for (int i = 0; i < n; i++) {
      T d = 0;
      for (int j = 0; j < r; j++) d += CONJ(AT(vt, k, j, i)) * AT(y, k, j, c);
      AT(b, ldb, i, c) = d;
    }
  if (m > n)
    for (int c = 0; c < nrhs; c++) {
      R rss = 0;
      for (int i = 0; i < m; i++) {
        T d = AT(b0, m, i, c);
        for (int j = 0; j < n; j++) d -= AT(a, lda, i, j) * AT(b, ldb, j, c);
        rss += ABS2(d);
      }
      AT(b, ldb, n, c) = SQRT(rss);
      for (int i = n + 1; i < m; i++) AT(b, ldb, i, c) = 0;
    }
  return info;
}

#undef AT
#undef FN
#undef CAT
#undef CAT2
#undef T
#undef P
#undef CPLX
#undef SINGLE
#undef R
#undef SQRT
#undef EPS
#undef RMIN
#undef CT
#undef CABSX
#undef CCONJX
#undef CREX
#undef CIMX
#undef CSQRTX
#undef CONJ
#undef RE
#undef IMAG
#undef ABS
#undef ABS2
