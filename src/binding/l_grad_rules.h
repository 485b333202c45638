/* l_grad_rules.h -- what the C backward rules share: the rule indices of
   ag_crules and the recording/backward helpers (l_grad_rules.c), and the
   rules of the reductions, matrix products and shapes (l_grad_shape.c).
   Private to those two files. */
#ifndef L_GRAD_RULES_H
#define L_GRAD_RULES_H

#include "l_autograd.h"

enum {
  R_ADD, R_SUB, R_MUL, R_DIV, R_NEG, R_SUM, R_MEAN, R_MM, R_MATMUL, R_T, R_TRANSPOSE, R_SWAPAXES, R_SWAPDIMS,
  R_VIEW, R_RESHAPE, R_FLATTEN, R_UNSQUEEZE, R_SQUEEZE, R_EXPAND, R_EXP, R_LOG, R_TANH, R_SIGMOID, R_RELU, R_POW,
  R_LINEAR
};

int agr_call_raw(lua_State *L, int nargs);
ag_node *agr_node(lua_State *L, const ag_rec *R, int rule, int variant, int nin, const int *ins, int nsv,
                  const int *sv, int out, int view_of);
void agr_fcall(lua_State *L, const ag_bw *B, int f, int nargs);
static inline void agr_push_saved(lua_State *L, ag_node *n, int node, int j) {
  lua_getiuservalue(L, node, ag_saved_uv(n, j));
}
static inline int agr_need(const ag_node *n, int i) { return n->in[i].nr != 0; }
/* the shape of input `in` as a Lua list */
static inline void agr_push_shape(lua_State *L, ag_node *n, const ag_in *in) {
  const int64_t *s = node_shape(n, in);
  lua_createtable(L, in->ndim, 0);
  for (int i = 0; i < in->ndim; i++) { lua_pushinteger(L, s[i]); lua_rawseti(L, -2, i + 1); }
}

#define AGR_RULE(name)                                                                                   \
  int agr_rec_##name(lua_State *L, int nargs, const ag_rec *R);
#define AGR_BW(name) void agr_bw_##name(lua_State *L, ag_node *n, int node, int g, const ag_bw *B);
AGR_RULE(sum) AGR_RULE(mean) AGR_RULE(mm) AGR_RULE(matmul) AGR_RULE(t) AGR_RULE(transpose) AGR_RULE(swapaxes)
AGR_RULE(swapdims) AGR_RULE(view) AGR_RULE(reshape) AGR_RULE(flatten) AGR_RULE(unsqueeze) AGR_RULE(squeeze)
AGR_RULE(expand) AGR_RULE(linear)
AGR_BW(sum) AGR_BW(mean) AGR_BW(matmul) AGR_BW(t) AGR_BW(transpose) AGR_BW(shape) AGR_BW(expand) AGR_BW(linear)
#undef AGR_RULE
#undef AGR_BW

#endif
