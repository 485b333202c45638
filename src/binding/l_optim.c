/*
 * l_optim.c -- the binding of the fused optimizer update kernels
 * (src/core/lt_optim.c), the C half of lua/ltensor/optim/: argument checks,
 * contiguous copies, version bumps.
 *
 *   T._optim_update(kind, p, grad, b1, b2, b3, h1, ..., h9)
 *
 * One call updates one parameter p (float32/float64) in place from its
 * gradient and its state buffers b1..b3 (tensors of p's shape and dtype, or
 * nil where the variant has none), in one pass over the elements.  The
 * scalars h1..h9 are the group's hyper-parameters and the per-step
 * quantities (bias corrections, step sizes) that optim/first_order.lua computes once per
 * parameter, so the kernels hold no optimizer logic beyond PyTorch 1.13's
 * per-element formulas.
 *
 * The per-element arithmetic follows the order of PyTorch 1.13's
 * _single_tensor_<name> functions op by op, in the parameter's precision
 * with the Python scalars rounded to it (as PyTorch's CPU kernels do), so a
 * float32 trajectory stays within float rounding of PyTorch's:
 *   add_(x, alpha=a)        s + a*x
 *   addcmul_(x, y, value=a) s + (a*x)*y
 *   addcdiv_(x, y, value=a) s + (a*x)/y
 * Buffers are always contiguous (optim/first_order.lua makes them); a non-contiguous
 * gradient is read through a contiguous copy, and a non-contiguous
 * parameter is updated through a copy written back at the end.
 */
#include "l_lua.h"
#include "lt_optim.h"
#include "lt_parallel.h"

static const char *const kind_fnames[LT_OPTIM_LAST + 1] = {
  "optim", "optim.SGD", "optim.Adam", "optim.RMSprop", "optim.Adagrad", "optim.Adadelta", "optim.Adamax",
  "optim.NAdam", "optim.RAdam", "optim.AdamW"
};

/* A buffer argument: nil, or a contiguous tensor of p's dtype and numel. */
static lt_tensor *check_buf(lua_State *L, int idx, const lt_tensor *p, const char *fname,
                            const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  lt_tensor *b = ltl_check(L, idx);
  if (b->dtype != p->dtype || lt_numel(b) != lt_numel(p) || !lt_is_contiguous(b))
    ltl_error(L, fname, "state '%s' does not match its parameter (expected a contiguous %s tensor of "
             "%I elements)", what, lt_dtypes[p->dtype].name, (lua_Integer)lt_numel(p));
  if (lt_has_internal_overlap(b) && lt_numel(b) > 1)
    ltl_error(L, fname, "state '%s' overlaps itself", what);
  return b;
}

static int same_shape(const lt_tensor *a, const lt_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* One update over a range of elements (the kernels are elementwise, so the
   ranges give the bits of one call): the optimizer step of a large
   parameter is split over the state's pool.  The SGD step of resnet18
   (11.7M parameters) ran on the calling thread alone, 2.2% of a training
   step's samples while the pool's worker waited. */
typedef struct {
  int kind;
  ltensor_dtype dt;
  char *p;
  const char *g;
  char *b[3];
  const double *h;
} optim_job;
static void optim_range(void *ctx, int64_t lo, int64_t hi, int part) {
  (void)part;
  const optim_job *j = (const optim_job *)ctx;
  size_t es = lt_itemsize(j->dt), off = (size_t)lo * es;
  void *bp[3] = { j->b[0] ? j->b[0] + off : NULL, j->b[1] ? j->b[1] + off : NULL, j->b[2] ? j->b[2] + off : NULL };
  lt_optim_update(j->kind, j->dt, hi - lo, j->p + off, j->g + off, bp, j->h);
}

static int l_optim_update(lua_State *L) {
  lua_Integer kind = ltl_checkinteger(L, 1);
  if (kind < 1 || kind > LT_OPTIM_LAST) return ltl_error(L, "optim", "unknown optimizer kernel %d", (int)kind);
  /* the error-message name, "optim.<Name>"; messages are built only on errors */
  const char *fname = kind_fnames[kind];
  lt_tensor *p = ltl_check(L, 2);
  lt_tensor *g = ltl_check(L, 3);
  if (p->dtype != LTENSOR_FLOAT32 && p->dtype != LTENSOR_FLOAT64)
    return ltl_error(L, fname, "parameters of dtype %s are not supported (float32 and float64 are)",
                    lt_dtypes[p->dtype].name);
  if (g->dtype != p->dtype)
    return ltl_error(L, fname, "the gradient's dtype (%s) differs from the parameter's (%s)",
                    lt_dtypes[g->dtype].name, lt_dtypes[p->dtype].name);
  if (!same_shape(p, g))
    return ltl_error(L, fname, "the gradient's shape differs from the parameter's");
  if (lt_has_internal_overlap(p) && lt_numel(p) > 1)
    return ltl_error(L, fname, "unsupported operation: a parameter that overlaps itself (an expanded "
                    "view) can't be updated in place");
  lt_tensor *b[3];
  static const char *const bn[3] = {"buffer 1", "buffer 2", "buffer 3"};
  for (int i = 0; i < 3; i++) b[i] = check_buf(L, 4 + i, p, fname, bn[i]);
  double h[LT_OPTIM_NH];
  for (int i = 0; i < LT_OPTIM_NH; i++) h[i] = ltl_optnumber(L, 7 + i, 0);
  lua_settop(L, 6 + LT_OPTIM_NH);
  int need[LT_OPTIM_LAST + 1] = {0, 0, 2, 1, 1, 2, 2, 2, 2, 2};   /* buffers each kind requires */
  for (int i = 0; i < need[kind]; i++)
    if (!b[i]) return ltl_error(L, fname, "missing state buffer %d", i + 1);
  if (kind == LT_OPTIM_SGD && h[1] != 0 && !b[0]) return ltl_error(L, fname, "missing momentum buffer");

  int64_t n = lt_numel(p);
  if (n == 0) return 0;
  /* every operand as contiguous memory; all work below is allocation-free */
  lt_tensor *gc = g, *pc = p;
  if (!lt_is_contiguous(g)) gc = ltl_push_clone(L, g);
  if (!lt_is_contiguous(p)) pc = ltl_push_clone(L, p);
  optim_job j = { (int)kind, p->dtype, lt_data(pc), lt_data(gc),
                  { b[0] ? lt_data(b[0]) : NULL, b[1] ? lt_data(b[1]) : NULL, b[2] ? lt_data(b[2]) : NULL }, h };
  /* (each element's update reads and writes a few arrays: a memory-bound
     loop, LT_GRAIN's policy) */
  lt_parallel_for(ltl_settings_of(L)->pool, n, LT_GRAIN, optim_range, &j);
  if (pc != p) lt_copy_into(p, pc);
  lt_bump_version(p);
  for (int i = 0; i < 3; i++)
    if (b[i]) lt_bump_version(b[i]);
  return 0;
}

const ltl_reg ltl_reg_optim[] = {
  {"_optim_update", l_optim_update, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
