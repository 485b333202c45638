/* l_ew.h -- the elementwise driver shared by the op files (l_ops.c,
   l_settings.c): operands (tensors or weak Lua scalars), dtype rules, and
   running a kernel through the TensorIterator.  Private to the binding. */
#ifndef L_EW_H
#define L_EW_H

#include "l_lua.h"
#include "lt_iter.h"
#include "lt_promote.h"
#include "l_oplist.h"

/* One operand: a tensor, or a weak Lua scalar held on the C stack as a
   0-dim tensor already converted to the compute dtype. */
typedef struct operand {
  lt_tensor *t;        /* the tensor, or &sc.t for a weak scalar */
  int idx;             /* stack index */
  int weak;            /* a Lua number/boolean */
  lt_pin pin;
  struct { lt_tensor t; lt_storage st; _Alignas(16) unsigned char buf[16]; } sc;
} operand;

/* An op's descriptor: its name (for errors), kernel table, result-dtype
   rule (R_SAME: the common dtype, R_BOOL: bool, R_FLOAT: floating; the
   rules are the op list's, l_oplist.h) and cost (heavy: compute-bound, for
   the grain policy). */

typedef struct ew {
  const char *name;      /* for errors */
  const lt_loop_fn *k;   /* kernel table */
  int rule;
  int heavy;             /* compute-bound kernel (lt_kctx.heavy) */
} ew;

int ew_binary(lua_State *L, const ew *op, int inplace);
void ew_classify(lua_State *L, int idx, const char *fname, operand *op);
ltensor_dtype ew_common_dtype(lua_State *L, const char *fname, operand *ops, int n);
int ew_fast_binary(lua_State *L, const ew *op, lt_kctx *ctx);
int ew_not_implemented(lua_State *L, const char *fname, ltensor_dtype dt);
void ew_op_dtypes(lua_State *L, const ew *op, ltensor_dtype common, int out_idx, ltensor_dtype *cdt,
                      ltensor_dtype *kout, ltensor_dtype *rdt);
int ew_opt_out(lua_State *L, int idx);
int ew_out_index(lua_State *L, int inplace, int opts_idx);
lt_tensor *ew_run(lua_State *L, const char *fname, lt_loop_fn k, operand *ops, int n, ltensor_dtype cdt,
                         ltensor_dtype kout, ltensor_dtype rdt, int out_idx, lt_kctx *ctx);
lt_tensor *ew_run_in(lua_State *L, const char *fname, lt_loop_fn k, operand *ops, int n, ltensor_dtype cdt,
                            const ltensor_dtype *in_kdt, ltensor_dtype kout, ltensor_dtype rdt, int out_idx,
                            lt_kctx *ctx);
int ew_unary(lua_State *L, const ew *op, int inplace);
int ew_unary_k(lua_State *L, const ew *op, int inplace, lt_kctx *ctx);

#endif
