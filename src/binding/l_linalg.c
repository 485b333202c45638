/* l_linalg.c -- matmul, mm, bmm, mv, dot, outer.
 *
 * Shapes, broadcasting, dtype rules and error messages follow PyTorch 1.13
 * (1-based dims in messages): matmul, mm, bmm, mv and dot refuse operands of
 * different dtypes and bool operands (once there is something to compute),
 * outer is an elementwise product and promotes.  The arithmetic is lt_mm
 * (lt_blas.c): OpenBLAS for float32/float64/complex64/complex128, reading
 * transposed or strided operands in place through the transpose flags and
 * leading dimensions; an operand BLAS cannot read (no unit stride, or an
 * expanded stride-0 matrix) is first copied to a contiguous temporary, so
 * that the fast path is always taken.  Other dtypes use an exact C loop.
 */
#include <string.h>
#include "l_lua.h"
#include "l_autograd.h"   /* ltl_linear_dtype_check */
#include "lt_blas.h"
#include "lt_iter.h"
#include "lt_mv_split.h"
#include "lt_parallel.h"
#include "lt_promote.h"

static ltensor_dtype result_dtype(lua_State *L, const char *fname, const lt_tensor *a, const lt_tensor *b) {
  ltl_settings *S = ltl_settings_of(L);
  lt_pin p[2] = { { a->dtype, LT_TIER_DIM }, { b->dtype, LT_TIER_DIM } };
  ltensor_dtype out;
  lt_promo_err err;
  if (lt_result_type(S->promotion, p, 2, S->default_dtype, &out, &err) != LT_PROMO_OK)
    ltl_error(L, fname, "expected both operands to have the same dtype, but got %s and %s",
             lt_dtypes[a->dtype].name, lt_dtypes[b->dtype].name);
  return out;
}

/* PyTorch's checks for mm/bmm/mv/matmul: the kernels read the second
   operand as the first one's scalar type; bool has no kernel, which only
   shows when the result is non-empty and the inner dimension is not
   (otherwise the result is filled without a dispatch). */
static ltensor_dtype same_dtype(lua_State *L, const char *fname, const char *kernel, const lt_tensor *a,
                                const lt_tensor *b, int64_t out_numel, int64_t K) {
  if (a->dtype != b->dtype) {
    ltl_linear_dtype_check(L, a->dtype, b->dtype);   /* a layer's input: say which layer and what to do */
    ltl_error(L, fname, "expected scalar type %s but found %s", lt_torch_name(a->dtype), lt_torch_name(b->dtype));
  }
  if (a->dtype == LTENSOR_BOOL && out_numel > 0 && K > 0)
    ltl_error(L, fname, "\"%s\" not implemented for '%s'", kernel, lt_torch_name(a->dtype));
  return a->dtype;
}

/* Can BLAS read t's trailing matrix (or vector) without a copy? */
static int blas_readable(const lt_tensor *t) {
  if (t->ndim == 1) return t->shape[0] <= 1 || t->stride[0] >= 1;
  int n = t->ndim;
  return lt_blas_layout_ok(t->shape[n - 2], t->shape[n - 1], t->stride[n - 2], t->stride[n - 1]);
}

/* The operand at stack slot idx as dtype dt, copied to a new contiguous
   tensor (left on the stack) when the dtype differs, when BLAS could not
   read it, or when `contig` asks for it. */
static lt_tensor *prepare(lua_State *L, int idx, ltensor_dtype dt, int contig) {
  lt_tensor *t = ltl_check(L, idx);
  if (t->dtype == dt && !(contig && !lt_is_contiguous(t)) && (!lt_blas_dtype(dt) || blas_readable(t)))
    return t;
  lt_tensor *c = ltl_push_new_like(L, t, dt);
  lt_copy_into(c, t);
  return c;
}

/* Element strides of an operand seen as a matrix: a 1-D vector is a row
   (1 x K) or a column (K x 1); the stride of a size-1 dim is irrelevant. */
static void row_strides(const lt_tensor *t, int64_t *rs, int64_t *cs) {
  if (t->ndim == 1) { *rs = 0; *cs = t->stride[0]; }
  else { *rs = t->stride[t->ndim - 2]; *cs = t->stride[t->ndim - 1]; }
}

static void mm_into(lua_State *L, lt_tensor *out, const lt_tensor *a, int64_t M, int64_t K, int64_t ars, int64_t acs,
                    const lt_tensor *b, int64_t N, int64_t brs, int64_t bcs) {
  /* a single row or column (mv, a vector times a matrix) over the pool */
  if (lt_mv_split(ltl_settings_of(L)->pool, out->dtype, 0, M, N, K, lt_data(a), ars, acs, lt_data(b), brs, bcs,
                  lt_data(out), N, 1))
    return;
  /* a large product runs in panels so that Ctrl-C (the interrupt flag)
     stops it within a fraction of a second; the trampoline raises */
  lt_mm_stoppable(&ltl_settings_of(L)->interrupt, ltl_one_thread(L), out->dtype, M, N, K, lt_data(a), ars, acs,
                  lt_data(b), brs, bcs, lt_data(out), N, 1);
}

/* ---- mm / mv / dot / outer ---------------------------------------------- */
static int mm_error(lua_State *L, const char *fname, int64_t m1, int64_t k1, int64_t k2, int64_t n2) {
  return ltl_error(L, fname, "mat1 and mat2 shapes cannot be multiplied (%Ix%I and %Ix%I)",
                  (lua_Integer)m1, (lua_Integer)k1, (lua_Integer)k2, (lua_Integer)n2);
}

static int do_mm(lua_State *L, const char *fname) {
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  if (a->ndim != 2) return ltl_error(L, fname, "self must be a matrix");
  if (b->ndim != 2) return ltl_error(L, fname, "mat2 must be a matrix");
  if (a->shape[1] != b->shape[0]) return mm_error(L, fname, a->shape[0], a->shape[1], b->shape[0], b->shape[1]);
  ltensor_dtype dt = same_dtype(L, fname, "addmm_impl_cpu_", a, b, a->shape[0] * b->shape[1], a->shape[1]);
  lua_settop(L, 2);
  a = prepare(L, 1, dt, 0);
  b = prepare(L, 2, dt, 0);
  int64_t shape[2] = { a->shape[0], b->shape[1] };
  lt_tensor *out = ltl_push_new(L, dt, 2, shape);
  mm_into(L, out, a, a->shape[0], a->shape[1], a->stride[0], a->stride[1], b, b->shape[1], b->stride[0], b->stride[1]);
  return 1;
}
static int l_mm(lua_State *L) { ltl_check_nargs(L, 2); return do_mm(L, "mm"); }

static int l_mv(lua_State *L) {
  lt_tensor *a = ltl_check(L, 1), *v = ltl_check(L, 2);
  if (a->ndim != 2 || v->ndim != 1)
    return ltl_error(L, "mv", "vector + matrix @ vector expected, got 1, %d, %d", a->ndim, v->ndim);
  if (a->shape[1] != v->shape[0])
    return ltl_error(L, "mv", "size mismatch, got input (%I), mat (%Ix%I), vec (%I)", (lua_Integer)a->shape[0],
                    (lua_Integer)a->shape[0], (lua_Integer)a->shape[1], (lua_Integer)v->shape[0]);
  ltensor_dtype dt = same_dtype(L, "mv", "addmv_impl_cpu", a, v, a->shape[0], a->shape[1]);
  lua_settop(L, 2);
  a = prepare(L, 1, dt, 0);
  v = prepare(L, 2, dt, 0);
  lt_tensor *out = ltl_push_new(L, dt, 1, a->shape);
  mm_into(L, out, a, a->shape[0], a->shape[1], a->stride[0], a->stride[1], v, 1, v->stride[0], 1);
  return 1;
}

static int do_dot(lua_State *L, const char *fname) {
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  if (a->ndim != 1 || b->ndim != 1)
    return ltl_error(L, fname, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
  if (a->dtype != b->dtype)
    return ltl_error(L, fname, "expected both vectors to have same dtype, but found %s and %s",
                    lt_torch_name(a->dtype), lt_torch_name(b->dtype));
  if (a->shape[0] != b->shape[0])
    return ltl_error(L, fname, "inconsistent tensor size, expected tensor [%I] and src [%I] to have the same "
                    "number of elements, but got %I and %I elements respectively",
                    (lua_Integer)a->shape[0], (lua_Integer)b->shape[0], (lua_Integer)a->shape[0],
                    (lua_Integer)b->shape[0]);
  ltensor_dtype dt = a->dtype;
  if (dt == LTENSOR_BOOL) return ltl_error(L, fname, "\"dot\" not implemented for 'Bool'");
  lua_settop(L, 2);
  a = prepare(L, 1, dt, 0);
  b = prepare(L, 2, dt, 0);
  lt_tensor *out = ltl_push_new(L, dt, 0, NULL);
  mm_into(L, out, a, 1, a->shape[0], 0, a->stride[0], b, 1, b->stride[0], 1);
  return 1;
}
static int l_dot(lua_State *L) { return do_dot(L, "dot"); }

static int l_outer(lua_State *L) {
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  if (a->ndim != 1) return ltl_error(L, "outer", "expected 1-D argument self, but got %d-D", a->ndim);
  if (b->ndim != 1) return ltl_error(L, "outer", "expected 1-D argument vec2, but got %d-D", b->ndim);
  ltensor_dtype dt = result_dtype(L, "outer", a, b);
  lua_settop(L, 2);
  a = prepare(L, 1, dt, 0);
  b = prepare(L, 2, dt, 0);
  int64_t shape[2] = { a->shape[0], b->shape[0] };
  lt_tensor *out = ltl_push_new(L, dt, 2, shape);
  /* (M x 1) @ (1 x N): one product per element, exact as PyTorch's mul */
  mm_into(L, out, a, a->shape[0], 1, a->stride[0], 1, b, b->shape[0], 1, b->stride[0]);
  return 1;
}

/* ---- batched: bmm and matmul's general case ------------------------------ */
/* a is (batch..., M, K), b is (batch..., K, N) given as shapes/strides whose
   batch dims already have the output's batch shape (stride 0 where
   broadcast); out is contiguous (batch..., M, N) in row-major order. */
typedef struct {
  ltensor_dtype dt;
  int nbd, one_thread;   /* one_thread: every product on its caller's thread (lt_mm_1t) */
  const volatile sig_atomic_t *stop;   /* the state's interrupt flag */
  const int64_t *bshape, *abst, *bbst;
  int64_t M, N, K, ars, acs, brs, bcs, sz;
  const char *A, *B;
  char *C;
} batch_job;

/* the products of batch entries [k0, k1) */
static void batch_range(void *ctx, int64_t k0, int64_t k1, int part) {
  (void)part;
  const batch_job *j = (const batch_job *)ctx;
  lt_odo w;   /* the batch dims: A's offset in off[0], B's in off[1] */
  lt_odo_init_str(&w, j->nbd, j->bshape, j->abst, j->bbst, NULL);
  lt_odo_seek(&w, k0);
  for (int64_t k = k0; k < k1; k++, lt_odo_next(&w))
    if (lt_mm_stoppable(j->stop, j->one_thread, j->dt, j->M, j->N, j->K, j->A + w.off[0] * j->sz, j->ars, j->acs,
                        j->B + w.off[1] * j->sz, j->brs, j->bcs, j->C + k * j->M * j->N * j->sz, j->N, 1))
      return;   /* interrupted: the trampoline raises */
}

/* Products too small for OpenBLAS's own threads (below LT_BLAS_MT_MIN each:
   one thread inside OpenBLAS or the built-in gemm) are spread over the
   state's pool by batch entry, as PyTorch's bmm spreads its batch: a batch
   of 32 64x64 products runs on both cores instead of one.  Larger products
   stay in turn, each split by OpenBLAS. */
#define BATCH_PAR_MIN_FLOPS 1000000.0   /* per part: ~10-20 us of arithmetic, above the hand-off */
static void batched(lua_State *L, lt_tensor *out, int nbd, const int64_t *bshape, const lt_tensor *a,
                    const int64_t *abst, int64_t M, int64_t K, int64_t ars, int64_t acs, const lt_tensor *b,
                    const int64_t *bbst, int64_t N, int64_t brs, int64_t bcs) {
  int64_t nb = 1;
  for (int i = 0; i < nbd; i++) nb *= bshape[i];
  if (nb == 0 || M == 0 || N == 0) return;
  batch_job j = { out->dtype, nbd, ltl_one_thread(L), &ltl_settings_of(L)->interrupt, bshape, abst, bbst, M, N, K, ars, acs, brs, bcs,
                  (int64_t)lt_itemsize(out->dtype), lt_data(a), lt_data(b), lt_data(out) };
  double mnk = (double)M * (double)N * (double)K;
  int parts = 1;
  if (nb > 1 && mnk < (double)LT_BLAS_MT_MIN) {
    lt_pool *pool = ltl_settings_of(L)->pool;
    double work = 2.0 * mnk * (double)nb;
    parts = lt_pool_threads(pool);
    if ((double)parts > work / BATCH_PAR_MIN_FLOPS) parts = (int)(work / BATCH_PAR_MIN_FLOPS);
    if (parts > nb) parts = (int)nb;
    if (parts > 1) {
      j.one_thread = 1;   /* the pool's threads are the parallelism */
      lt_parallel_run(pool, parts, nb, batch_range, &j);
      return;
    }
  }
  batch_range(&j, 0, nb, 0);
}

static int l_bmm(lua_State *L) {
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  if (a->ndim != 3) return ltl_error(L, "bmm", "batch1 must be a 3D tensor");
  if (b->ndim != 3) return ltl_error(L, "bmm", "batch2 must be a 3D tensor");
  if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1])
    return ltl_error(L, "bmm", "expected size for first two dimensions of batch2 tensor to be: [%I, %I] but got: [%I, %I]",
                    (lua_Integer)a->shape[0], (lua_Integer)a->shape[2], (lua_Integer)b->shape[0],
                    (lua_Integer)b->shape[1]);
  ltensor_dtype dt = same_dtype(L, "bmm", "bmm", a, b, a->shape[0] * a->shape[1] * b->shape[2], a->shape[2]);
  lua_settop(L, 2);
  a = prepare(L, 1, dt, 0);
  b = prepare(L, 2, dt, 0);
  int64_t shape[3] = { a->shape[0], a->shape[1], b->shape[2] };
  lt_tensor *out = ltl_push_new(L, dt, 3, shape);
  batched(L, out, 1, shape, a, a->stride, a->shape[1], a->shape[2], a->stride[1], a->stride[2], b, b->stride,
          b->shape[2], b->stride[1], b->stride[2]);
  return 1;
}

/* matmul's rules (torch.matmul): 1-D . 1-D is dot; 2-D . 2-D is mm; 1-D
   operands are promoted to a row (left) or column (right) matrix and that
   dim is removed from the result; otherwise the batch dims broadcast. */
static int l_matmul(lua_State *L) {
  lt_tensor *a = ltl_check(L, 1), *b = ltl_check(L, 2);
  ltl_check_nargs(L, 2);   /* no out= here: an extra argument is a slip, not ignored */
  int da = a->ndim, db = b->ndim;
  if (da == 0 || db == 0)
    return ltl_error(L, "matmul", "both arguments to matmul need to be at least 1D, but they are %dD and %dD", da, db);
  if (da == 1 && db == 1) return do_dot(L, "matmul");
  if (da == 2 && db == 2) return do_mm(L, "matmul");
  int64_t K = a->shape[da - 1];
  int64_t Kb = db == 1 ? b->shape[0] : b->shape[db - 2];
  int64_t M = da == 1 ? 1 : a->shape[da - 2];
  int64_t N = db == 1 ? 1 : b->shape[db - 1];
  if (da == 2 && db == 1) {   /* mv */
    if (K != Kb)
      return ltl_error(L, "matmul", "size mismatch, got input (%I), mat (%Ix%I), vec (%I)", (lua_Integer)M,
                      (lua_Integer)M, (lua_Integer)K, (lua_Integer)Kb);
  } else if (da == 1 && db == 2) {
    if (K != Kb) return mm_error(L, "matmul", 1, K, Kb, N);
  }
  ltensor_dtype dt = same_dtype(L, "matmul", "addmm_impl_cpu_", a, b, 0, K);   /* bool: below */
  lua_settop(L, 2);
  int64_t oshape[LT_MAX_DIMS];
  int on = 0;
  if (da >= 3 && db <= 2) {
    /* fold a's batch dims into its rows: one gemm, as PyTorch does */
    int64_t rows = 1;
    for (int i = 0; i < da - 1; i++) rows *= a->shape[i];
    if (K != Kb) return mm_error(L, "matmul", rows, K, Kb, db == 1 ? 1 : N);
    a = prepare(L, 1, dt, 1);
    b = prepare(L, 2, dt, 0);
    for (int i = 0; i < da - 1; i++) oshape[on++] = a->shape[i];
    if (db == 2) oshape[on++] = N;
    lt_tensor *out = ltl_push_new(L, dt, on, oshape);
    same_dtype(L, "matmul", "addmm_impl_cpu_", a, b, lt_numel(out), K);
    int64_t brs, bcs;
    if (db == 1) { brs = b->stride[0]; bcs = 1; }
    else { brs = b->stride[0]; bcs = b->stride[1]; }
    mm_into(L, out, a, rows, K, K, 1, b, N, brs, bcs);
    return 1;
  }
  /* general case: broadcast the batch dims */
  int na = da > 2 ? da - 2 : 0, nb = db > 2 ? db - 2 : 0;
  int nbd = na > nb ? na : nb;
  int64_t bshape[LT_MAX_DIMS];
  for (int i = 0; i < nbd; i++) {
    int ia = i - (nbd - na), ib = i - (nbd - nb);
    int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return ltl_error(L, "matmul", "the size of tensor a (%I) must match the size of tensor b (%I) at non-singleton dimension %d",
                      (lua_Integer)sa, (lua_Integer)sb, i + 1);
    bshape[i] = sa == 1 ? sb : sa;
  }
  if (K != Kb) {
    int64_t total = 1;   /* broadcast batch dims (expanded views) may overflow int64 */
    for (int i = 0; i < nbd; i++) {
      if (bshape[i] != 0 && total > INT64_MAX / bshape[i])
        return ltl_error(L, "matmul", "tensor too large (the batch dims overflow int64)");
      total *= bshape[i];
    }
    return ltl_error(L, "matmul", "expected size for first two dimensions of batch2 tensor to be: [%I, %I] but got: [%I, %I]",
                    (lua_Integer)total, (lua_Integer)K, (lua_Integer)total, (lua_Integer)Kb);
  }
  a = prepare(L, 1, dt, 0);
  b = prepare(L, 2, dt, 0);
  int64_t abst[LT_MAX_DIMS], bbst[LT_MAX_DIMS];
  for (int i = 0; i < nbd; i++) {
    int ia = i - (nbd - na), ib = i - (nbd - nb);
    abst[i] = (ia >= 0 && a->shape[ia] != 1) ? a->stride[ia] : 0;
    bbst[i] = (ib >= 0 && b->shape[ib] != 1) ? b->stride[ib] : 0;
    oshape[on++] = bshape[i];
  }
  if (da > 1) oshape[on++] = M;
  if (db > 1) oshape[on++] = N;
  lt_tensor *out = ltl_push_new(L, dt, on, oshape);
  same_dtype(L, "matmul", nbd ? "bmm" : "addmm_impl_cpu_", a, b, lt_numel(out), K);
  int64_t ars, acs, brs, bcs;
  row_strides(a, &ars, &acs);
  if (db == 1) { brs = b->stride[0]; bcs = 1; }
  else { brs = b->stride[db - 2]; bcs = b->stride[db - 1]; }
  batched(L, out, nbd, bshape, a, abst, M, K, ars, acs, b, bbst, N, brs, bcs);
  return 1;
}

const ltl_reg ltl_reg_linalg[] = {
  {"matmul", l_matmul, LT_BOTH | LT_DIFF, "matmul"},
  {"mm", l_mm, LT_BOTH | LT_DIFF, "mm"},
  {"bmm", l_bmm, LT_BOTH | LT_DIFF, "bmm"},
  {"mv", l_mv, LT_BOTH | LT_DIFF, "mv"},
  {"dot", l_dot, LT_BOTH | LT_DIFF, "dot"},
  {"outer", l_outer, LT_BOTH | LT_DIFF, "outer"},
  {NULL, NULL, 0, NULL}
};
