/* l_oplist.h -- the op list: one line per op of the list families, read by
   the code (X-macros).  Private to the binding.

   A line is X(name, arity, family, rule, diff, inplace):
     arity    tensor operands (weak Lua scalars count as operands);
     family   OPF_UNARY / OPF_BINARY (an elementwise kernel table lt_k_<name>
              run by the driver l_ew.c), OPF_REDUCE (over a dim list),
              OPF_DIM (along one dim: scans, softmax), OPF_SORT;
     rule     the result dtype: R_SAME (the common / input dtype), R_BOOL,
              R_FLOAT (floating: integral input gives the default dtype),
              R_INT64 (integral and bool give int64, as sum/cumsum),
              R_INDEX (int64 positions), R_REAL (complex gives its real
              dtype, as abs/var/norm), R_LOGICAL (bool, but uint8 stays
              uint8: PyTorch's all/any);
              "same" is the common dtype of the operands, Lua numbers
              included (clamp(bool, 0, 2) is int64, as in PyTorch);
     diff     1: differentiable (registered LT_DIFF, grad name = name; the
              autograd rule rules[name] must exist: spec/oplist_spec.lua
              checks every line against T._diff_ops() and the rules);
     inplace  1: also the method t:name_ (registered LT_METHOD, grad name
              name_).
   From the list come: the descriptors and functions of the plain unary,
   plain binary and comparison/bitwise ops (src/binding/l_ops.c), the registration entries of every
   line (l_ops.c, l_reduce.c), and T._op_list() (src/binding/l_ops.c) for the spec.
   Ops outside the list (creation, views, linear algebra, nn) and the
   irregular forms (aliases, operators, max/min's two entries) are
   registered by hand in their areas. */
#ifndef L_OPLIST_H
#define L_OPLIST_H

/* result-dtype rules (the elementwise driver reads the first three) */
enum { R_SAME = 0, R_BOOL = 1, R_FLOAT = 2, R_INT64 = 3, R_INDEX = 4, R_REAL = 5, R_LOGICAL = 6 };
enum { OPF_UNARY, OPF_BINARY, OPF_REDUCE, OPF_DIM, OPF_SORT };

/* Plain unary ops: descriptor E_<name> = {name, lt_k_<name>, rule, heavy=1}
   (libm-class, compute-bound), l_<name> / l_<name>_ and both entries. */
#define LT_OPS_UNARY(X)                                                                    \
  X(reciprocal, 1, OPF_UNARY, R_FLOAT, 1, 1) X(sqrt, 1, OPF_UNARY, R_FLOAT, 1, 1)          \
  X(rsqrt, 1, OPF_UNARY, R_FLOAT, 1, 1) X(exp, 1, OPF_UNARY, R_FLOAT, 1, 1)                \
  X(exp2, 1, OPF_UNARY, R_FLOAT, 1, 1) X(expm1, 1, OPF_UNARY, R_FLOAT, 1, 1)               \
  X(log, 1, OPF_UNARY, R_FLOAT, 1, 1) X(log2, 1, OPF_UNARY, R_FLOAT, 1, 1)                 \
  X(log10, 1, OPF_UNARY, R_FLOAT, 1, 1) X(log1p, 1, OPF_UNARY, R_FLOAT, 1, 1)              \
  X(sin, 1, OPF_UNARY, R_FLOAT, 1, 1) X(cos, 1, OPF_UNARY, R_FLOAT, 1, 1)                  \
  X(tan, 1, OPF_UNARY, R_FLOAT, 1, 1) X(asin, 1, OPF_UNARY, R_FLOAT, 1, 1)                 \
  X(acos, 1, OPF_UNARY, R_FLOAT, 1, 1) X(atan, 1, OPF_UNARY, R_FLOAT, 1, 1)                \
  X(sinh, 1, OPF_UNARY, R_FLOAT, 1, 1) X(cosh, 1, OPF_UNARY, R_FLOAT, 1, 1)                \
  X(tanh, 1, OPF_UNARY, R_FLOAT, 1, 1) X(sigmoid, 1, OPF_UNARY, R_FLOAT, 1, 1)             \
  X(erf, 1, OPF_UNARY, R_FLOAT, 1, 1) X(silu, 1, OPF_UNARY, R_SAME, 1, 1)                 \
  X(asinh, 1, OPF_UNARY, R_FLOAT, 1, 1) X(acosh, 1, OPF_UNARY, R_FLOAT, 1, 1)              \
  X(atanh, 1, OPF_UNARY, R_FLOAT, 1, 1) X(erfc, 1, OPF_UNARY, R_FLOAT, 1, 1)               \
  X(sinc, 1, OPF_UNARY, R_FLOAT, 1, 1) X(frac, 1, OPF_UNARY, R_SAME, 1, 1)

/* Unary ops with their own argument handling (l_<name>[_] written by hand). */
#define LT_OPS_UNARY_CUSTOM(X)                                                             \
  X(neg, 1, OPF_UNARY, R_SAME, 1, 1) X(abs, 1, OPF_UNARY, R_REAL, 1, 1)                    \
  X(square, 1, OPF_UNARY, R_SAME, 1, 1) X(relu, 1, OPF_UNARY, R_SAME, 1, 1)                \
  X(gelu, 1, OPF_UNARY, R_SAME, 1, 1) X(floor, 1, OPF_UNARY, R_SAME, 1, 1)                 \
  X(ceil, 1, OPF_UNARY, R_SAME, 1, 1) X(round, 1, OPF_UNARY, R_SAME, 1, 1)                 \
  X(trunc, 1, OPF_UNARY, R_SAME, 1, 1) X(clamp, 1, OPF_UNARY, R_SAME, 1, 1)                \
  X(clamp_min, 1, OPF_UNARY, R_SAME, 1, 1) X(clamp_max, 1, OPF_UNARY, R_SAME, 1, 1)        \
  X(logical_not, 1, OPF_UNARY, R_BOOL, 0, 0) X(isnan, 1, OPF_UNARY, R_BOOL, 0, 0)          \
  X(isinf, 1, OPF_UNARY, R_BOOL, 0, 0) X(isfinite, 1, OPF_UNARY, R_BOOL, 0, 0)             \
  X(bitwise_not, 1, OPF_UNARY, R_SAME, 0, 1)                                               \
  X(deg2rad, 1, OPF_UNARY, R_FLOAT, 1, 1) X(rad2deg, 1, OPF_UNARY, R_FLOAT, 1, 1)          \
  X(sgn, 1, OPF_UNARY, R_SAME, 1, 1) X(logit, 1, OPF_UNARY, R_FLOAT, 1, 1)                 \
  X(nan_to_num, 1, OPF_UNARY, R_SAME, 1, 1) X(signbit, 1, OPF_UNARY, R_BOOL, 0, 0)         \
  X(isposinf, 1, OPF_UNARY, R_BOOL, 0, 0) X(isneginf, 1, OPF_UNARY, R_BOOL, 0, 0)

/* Binary arithmetic (l_<name>[_] written by hand: alpha, scalar and
   rounding-mode forms). */
#define LT_OPS_BINARY(X)                                                                   \
  X(add, 2, OPF_BINARY, R_SAME, 1, 1) X(sub, 2, OPF_BINARY, R_SAME, 1, 1)                  \
  X(mul, 2, OPF_BINARY, R_SAME, 1, 1) X(div, 2, OPF_BINARY, R_FLOAT, 1, 1)                 \
  X(remainder, 2, OPF_BINARY, R_SAME, 1, 1) X(fmod, 2, OPF_BINARY, R_SAME, 1, 1)           \
  X(pow, 2, OPF_BINARY, R_SAME, 1, 1) X(atan2, 2, OPF_BINARY, R_FLOAT, 1, 1)               \
  X(maximum, 2, OPF_BINARY, R_SAME, 1, 0) X(minimum, 2, OPF_BINARY, R_SAME, 1, 0)          \
  X(lerp, 3, OPF_BINARY, R_SAME, 1, 1)

/* Plain binary functions (floating kernels only): descriptor {name,
   lt_k_<name>, rule, heavy=1}, l_<name>[_] and the entries come from here.
   Lua numbers are weak scalars on either side, as for every binary op. */
#define LT_OPS_BINARY_PLAIN(X)                                                             \
  X(hypot, 2, OPF_BINARY, R_SAME, 1, 1) X(copysign, 2, OPF_BINARY, R_FLOAT, 1, 1)          \
  X(logaddexp, 2, OPF_BINARY, R_SAME, 1, 0) X(logaddexp2, 2, OPF_BINARY, R_SAME, 1, 0)     \
  X(xlogy, 2, OPF_BINARY, R_FLOAT, 1, 1)

/* Comparisons and logical ops: descriptor {name, lt_k_<name>, R_BOOL},
   l_<name> and the entry come from here. */
#define LT_OPS_COMPARE(X)                                                                  \
  X(eq, 2, OPF_BINARY, R_BOOL, 0, 0) X(ne, 2, OPF_BINARY, R_BOOL, 0, 0)                    \
  X(lt, 2, OPF_BINARY, R_BOOL, 0, 0) X(le, 2, OPF_BINARY, R_BOOL, 0, 0)                    \
  X(gt, 2, OPF_BINARY, R_BOOL, 0, 0) X(ge, 2, OPF_BINARY, R_BOOL, 0, 0)                    \
  X(logical_and, 2, OPF_BINARY, R_BOOL, 0, 0) X(logical_or, 2, OPF_BINARY, R_BOOL, 0, 0)   \
  X(logical_xor, 2, OPF_BINARY, R_BOOL, 0, 0)

/* Bitwise ops (integral and bool): descriptor, l_<name>[_] and entries from
   here; the kernel of each is lt_k_<kernel> (second macro). */
#define LT_OPS_BITWISE(X)                                                                  \
  X(bitwise_and, 2, OPF_BINARY, R_SAME, 0, 1) X(bitwise_or, 2, OPF_BINARY, R_SAME, 0, 1)   \
  X(bitwise_xor, 2, OPF_BINARY, R_SAME, 0, 1)                                              \
  X(bitwise_left_shift, 2, OPF_BINARY, R_SAME, 0, 1)                                       \
  X(bitwise_right_shift, 2, OPF_BINARY, R_SAME, 0, 1)

/* Reductions, scans, softmax and sorting (src/binding/l_reduce.c: l_<name>). */
#define LT_OPS_REDUCE(X)                                                                   \
  X(sum, 1, OPF_REDUCE, R_INT64, 1, 0) X(mean, 1, OPF_REDUCE, R_FLOAT, 1, 0)               \
  X(prod, 1, OPF_REDUCE, R_INT64, 1, 0) X(amax, 1, OPF_REDUCE, R_SAME, 1, 0)               \
  X(amin, 1, OPF_REDUCE, R_SAME, 1, 0) X(argmax, 1, OPF_REDUCE, R_INDEX, 0, 0)             \
  X(argmin, 1, OPF_REDUCE, R_INDEX, 0, 0) X(all, 1, OPF_REDUCE, R_LOGICAL, 0, 0)              \
  X(any, 1, OPF_REDUCE, R_LOGICAL, 0, 0) X(std, 1, OPF_REDUCE, R_REAL, 1, 0)                  \
  X(var, 1, OPF_REDUCE, R_REAL, 1, 0) X(norm, 1, OPF_REDUCE, R_REAL, 1, 0)                 \
  X(logsumexp, 1, OPF_REDUCE, R_FLOAT, 1, 0)                                               \
  X(cumsum, 1, OPF_DIM, R_INT64, 1, 0) X(cumprod, 1, OPF_DIM, R_INT64, 1, 0)               \
  X(softmax, 1, OPF_DIM, R_FLOAT, 1, 0) X(log_softmax, 1, OPF_DIM, R_FLOAT, 1, 0)          \
  X(sort, 1, OPF_SORT, R_SAME, 1, 0) X(topk, 1, OPF_SORT, R_SAME, 1, 0)                    \
  X(argsort, 1, OPF_SORT, R_INDEX, 0, 0)

/* The dtype rule of each line as a constant, LT_RULE_<name>: descriptors
   written by hand in l_ops.c take their rule from here rather than
   restating it, so changing a line changes what T.<name> does. */
#define LT_OP_RULE_CONST(nm, arity, fam, rule, diff, inpl) LT_RULE_##nm = (rule),

/* Every line, for T._op_list(). */
#define LT_OPS_ALL(X)                                                                      \
  LT_OPS_UNARY(X) LT_OPS_UNARY_CUSTOM(X) LT_OPS_BINARY(X) LT_OPS_BINARY_PLAIN(X)          \
  LT_OPS_COMPARE(X)                                                                        \
  LT_OPS_BITWISE(X) LT_OPS_REDUCE(X)

enum { LT_OPS_ALL(LT_OP_RULE_CONST) LT_RULE_END_ };

/* The registration entries of a line: T.name / t:name, and t:name_ when
   inplace; LT_DIFF with the op's name as grad name when diff. */
#define LT_OP_REG(nm, arity, fam, rule, diff, inpl)                                        \
  {#nm, l_##nm, LT_BOTH | ((diff) ? LT_DIFF : 0), (diff) ? #nm : NULL},
#define LT_OP_REG_INPLACE(nm, arity, fam, rule, diff, inpl)                                \
  {#nm "_", l_##nm##_, LT_METHOD | ((diff) ? LT_DIFF : 0), (diff) ? #nm "_" : NULL},
/* both, the in-place one only where the line's inplace column is 1 (the
   column is pasted onto LT_OP_REG_IP_: 0 gives nothing) */
#define LT_OP_REG_ALL(nm, arity, fam, rule, diff, inpl)                                    \
  LT_OP_REG(nm, arity, fam, rule, diff, inpl) LT_OP_REG_IP_##inpl(nm, arity, fam, rule, diff, inpl)
#define LT_OP_REG_IP_0(nm, arity, fam, rule, diff, inpl)
#define LT_OP_REG_IP_1 LT_OP_REG_INPLACE

#endif
