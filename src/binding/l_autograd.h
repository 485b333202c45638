/* l_autograd.h -- the autograd engine's node type and helpers, shared by
   recording (l_autograd.c) and backward (l_backward.c).  Private. */
#ifndef L_AUTOGRAD_H
#define L_AUTOGRAD_H

#include <stddef.h>
#include <string.h>
#include "l_lua.h"

#define NODE_MT "ltensor.Node"

/* AG_TAB: a C node whose Lua table (hooks, retain_grad) T._ag_spec made;
   AG_SC / AG_SC_INT: a C node's scalar argument is present / an integer */
enum { AG_ACC = 1, AG_RELEASED = 2, AG_HAS_SAVED = 4, AG_C = 8, AG_TAB = 16, AG_SC = 32, AG_SC_INT = 64 };

/* edges of one node.  5.2+: user values, which Lua counts in an unsigned
   short.  5.1 and LuaJIT: backward hands a node's gradients over on the Lua
   stack, and their lua_checkstack refuses more than LUAI_MAXCSTACK (8000)
   slots. */
#if LUA_VERSION_NUM <= 501
#define AG_MAX_EDGES 7900
#else
#define AG_MAX_EDGES 65000
#endif

/* One input of a node.  Its shape lives in the node's trailing int64 area
   (node_shape), so that a node costs what its inputs need rather than
   LT_MAX_DIMS per input (issue 13: a deep chain is mostly nodes). */
typedef struct ag_in {
  int32_t nr;                  /* output number of the next node (1-based); 0 = no edge */
  int32_t soff;                /* offset of the shape in the node's shape area */
  uint16_t uv;                 /* the node's user value holding the next node (0 = no edge) */
  int8_t dtype, ndim;
} ag_in;

/* A scalar argument of a C rule, kept as Lua had it (integer or float). */
typedef union ag_num { lua_Number d; lua_Integer i; } ag_num;
typedef struct ag_scalar {
  ag_num v;
  int8_t isint, present;
} ag_scalar;

/* User values of a node: for Lua rules and AccumulateGrad, 1 = the rule's
   spec table or the variable, then one per input with an edge (ag_in.uv).
   A C rule's node has no table: its edges are user values 1..nedge, its
   saved tensors the next ones (ag_saved_uv); the Lua table that hooks or
   retain_grad need is made on demand and kept in ctx[CTX_CTABS] (AG_TAB).
   Every byte here is paid once per op of a graph: a 1,000,000-op chain of
   `y * 2` is 1,000,000 of these (issue 13), so the fields are packed. */
typedef struct ag_node {
  uint64_t run_id;             /* the run that last visited this node */
  ag_num sv;                   /* C rule's scalar argument (AG_SC), or sum/mean's reduced dims (a bit each) */
  int32_t run_deps, run_idx, run_base;
  int32_t nin, nout, nsaved;
  uint16_t nedge;              /* <= AG_MAX_EDGES */
  int16_t rule;                /* C rule (AG_C): index into ag_crules */
  uint8_t flags;
  int8_t variant;              /* C rule: which of its names */
  int8_t aux, aux2;            /* C rule's integer arguments: dims (raw checked them), the scalar's side */
  ag_in in[];                  /* then int64_t versions[nsaved] (-1: not a tensor; 8-aligned), then the shapes */
} ag_node;

/* the user value of a C node's saved tensor j (0-based) */
static inline int ag_saved_uv(const ag_node *n, int j) { return n->nedge + 1 + j; }
static inline void ag_set_scalar(ag_node *n, const ag_scalar *s) {
  n->sv = s->v;
  n->flags = (uint8_t)((n->flags & ~(AG_SC | AG_SC_INT)) | (s->present ? AG_SC : 0) | (s->isint ? AG_SC_INT : 0));
}
static inline ag_scalar ag_get_scalar(const ag_node *n) {
  ag_scalar s;
  s.v = n->sv;
  s.isint = (n->flags & AG_SC_INT) != 0;
  s.present = (n->flags & AG_SC) != 0;
  return s;
}

/* the int64 area after in[nin], 8-aligned */
static inline size_t node_vers_off(int nin) {
  return (offsetof(ag_node, in) + (size_t)nin * sizeof(ag_in) + 7) & ~(size_t)7;
}
static inline int64_t *node_versions(ag_node *n) { return (int64_t *)(void *)((char *)n + node_vers_off(n->nin)); }
static inline int64_t *node_shape(ag_node *n, const ag_in *in) { return node_versions(n) + n->nsaved + in->soff; }

/* per-state engine data (a userdata in the ctx table; no C globals) */
typedef struct ag_state {
  uint64_t runs;               /* run ids handed out */
  int active;                  /* runs in progress (a hook may start a nested one) */
} ag_state;

extern const char ltl_ag_ctx_key;   /* the engine's ctx table in the registry (l_autograd.c) */
/* ctx table slots */
enum { CTX_RULES = 1, CTX_INPLACE, CTX_NOSELF, CTX_UNKNOWN, CTX_METHODS, CTX_FNS, CTX_STATE, CTX_CRULES, CTX_RUNP,
       CTX_CTABS };

/* Pushes the Lua table of the C node at (absolute) idx, or nil when it has
   none; returns the type pushed. */
static inline int ag_push_ctab(lua_State *L, ag_node *n, int idx) {
  if (!(n->flags & AG_TAB)) { lua_pushnil(L); return LUA_TNIL; }
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_ag_ctx_key);
  lua_rawgeti(L, -1, CTX_CTABS);
  lua_pushvalue(L, idx);
  int t = lua_rawget(L, -2);
  lua_replace(L, -3);
  lua_pop(L, 1);
  return t;
}

/* ---- rules in C (l_grad_rules.c, l_grad_shape.c) ------------------------
   The common ops record a node with no Lua table: saved tensors in the
   node's user values, scalars and dims in the node itself, and a C backward
   that computes the gradients through the ops of the function table (so
   that create_graph records them like any other op). */
typedef struct ag_bw {
  int fns;                     /* stack slot of the function table (AGF_*) */
  int create;                  /* create_graph */
} ag_bw;
/* An in-place call recorded by the rule of its out-of-place op (add_ by
   add's): raw writes into the tensor at stack slot `target`, whose history
   before the write is input 1's edge; slot 3 holds the value the rule saves
   for input 1 (a copy of the old value, or the target itself for the ops
   whose backward does not read it).  alias: the target is also one of the
   other arguments, so a saved tensor that is it gets version v0 (its
   version before the write).  All 0 for an ordinary call. */
typedef struct ag_rec {
  int target, alias;
  lua_Integer v0;
} ag_rec;
/* record(L, nargs, R): stack 1 name (or R->target), 2 raw, 3.. the nargs
   arguments.  Returns -1 (stack untouched) when the arguments are not ones
   the op takes (raw is then left to raise), else runs raw, records a node
   when an input requires grad and returns the number of outputs, left on
   top. */
typedef int (*ag_record_fn)(lua_State *L, int nargs, const ag_rec *R);
/* backward(L, n, node, g): the gradient of output 1 at stack slot g (the
   rules here have one output); pushes exactly n->nin values (nil: none). */
typedef void (*ag_backward_fn)(lua_State *L, ag_node *n, int node, int g, const ag_bw *B);
typedef struct ag_crule {
  const char *key;             /* the grad name the trampoline passes */
  ag_record_fn record;
  ag_backward_fn backward;
  const char *names[5];        /* node names by variant */
} ag_crule;
extern const ag_crule ag_crules[];

/* The Lua functions the C rules call: AGF_<NAME> indexes ctx[CTX_FNS]
   (no string lookup per gradient).  autograd/init.lua hands them over by name
   (`cfns`, a table keyed by the second column); T._ag_init checks that
   every name is there and no other, and stores them by index. */
#define AG_FNS(X)                                                                                      \
  X(MUL, "mul") X(ADD, "add") X(SUB, "sub") X(DIV, "div") X(NEG, "neg") X(MM, "mm") X(T, "t")          \
  X(TRANSPOSE, "transpose") X(RESHAPE, "reshape") X(EXPAND, "expand") X(POW, "pow")                    \
  X(ZEROS_LIKE, "zeros_like") X(WHERE, "where") X(LE, "le") X(THRESHOLD_BW, "threshold_backward")      \
  X(RSUB, "rsub") X(SUM, "sum") X(ADD_, "add_") X(UNSQUEEZE, "unsqueeze") X(SQUEEZE, "squeeze")          \
  X(MATMUL, "matmul") X(EQ, "eq") X(GE, "ge") X(LOG, "log") X(LOGICAL_AND, "logical_and")              \
  X(REAL, "real") X(IMAG, "imag")
#define AGF_ENUM(id, name) AGF_##id,
enum { AGF_NONE_ = 0, AG_FNS(AGF_ENUM) AGF_END_ };
#define AGF_LAST (AGF_END_ - 1)

void ag_mark_outputs(lua_State *L, int node, int first, int last, int target, int view_of, int nondiff, int inputs,
                     int nin, const int *inidx);
const char *ag_node_name(lua_State *L, ag_node *n, int idx);
int ltl_linear_fn(lua_State *L);   /* T._linear (l_grad_linear.c) */
/* l_grad_linear.c: raises a message naming nn.functional.linear when the
   running matmul was called by F.linear (a != b dtypes); else returns. */
void ltl_linear_dtype_check(lua_State *L, ltensor_dtype a, ltensor_dtype b);

#define ERR_FREED                                                                                        \
  "Trying to backward through the graph a second time (or directly access saved tensors after they "  \
  "have already been freed). Saved intermediate values of the graph are freed when you call .backward() or "  \
  "autograd.grad(). Specify retain_graph=true if you need to backward through the graph a second time or if you "  \
  "need to access saved tensors after calling backward."
#define ERR_LEAF "a leaf Variable that requires grad is being used in an in-place operation."
#define ERR_VIEW_LEAF "a view of a leaf Variable that requires grad is being used in an in-place operation."

/* a node for nin inputs, nedge of them with an edge, nsaved saved values
   (versions), ndims shape entries in all; cnode: a C rule's node (no user
   value 1; its nsaved saved tensors are user values) */
static inline ag_node *new_node(lua_State *L, int nin, int nedge, int nsaved, int ndims, int cnode) {
  size_t sz = node_vers_off(nin) + (size_t)(nsaved + ndims) * sizeof(int64_t);
  ag_node *n = (ag_node *)lua_newuserdatauv(L, sz, cnode ? nedge + nsaved : 1 + nedge);
  memset(n, 0, sz);
  n->nin = nin;
  n->nsaved = nsaved;
  n->nedge = nedge;
  n->nout = 1;
  luaL_setmetatable(L, NODE_MT);
  return n;
}

/* Pushes the autograd table of the tensor at (absolute) idx; with create,
   makes one if missing.  Returns 0: nil pushed, 1: existing, 2: new. */
static inline int push_meta(lua_State *L, int idx, int create) {
  if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) return 1;
  if (!create) return 0;
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, idx, 1);
  return 2;
}

/* Tensor at idx requires grad: pushes the node its gradient flows to and
   returns the output number (grad_fn, or the leaf's AccumulateGrad). */
static inline int push_edge(lua_State *L, int idx) {
  push_meta(L, idx, 1);
  if (lua_getfield(L, -1, "grad_fn") != LUA_TNIL) {
    int nr = 1;
    if (lua_getfield(L, -2, "output_nr") == LUA_TNUMBER) nr = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_remove(L, -2);
    return nr;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, -1, "acc") == LUA_TNIL) {
    lua_pop(L, 1);
    ag_node *a = new_node(L, 0, 0, 0, 0, 0);
    a->flags = AG_ACC;
    lua_pushvalue(L, idx);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "acc");
  }
  lua_remove(L, -2);
  return 1;
}

/* Input `in` of node n (at absolute stack index node) is the tensor x at
   idx, which requires grad: its edge becomes the node's next user value
   (++*uv), and its dtype and shape are recorded (the shape at *soff). */
static inline void set_input(lua_State *L, int node, ag_node *n, ag_in *in, const lt_tensor *x, int idx, int *uv,
                             int *soff) {
  in->nr = push_edge(L, idx);
  in->uv = (uint16_t)++*uv;
  lua_setiuservalue(L, node, in->uv);
  in->dtype = (int8_t)x->dtype;
  in->ndim = (int8_t)x->ndim;
  in->soff = *soff;
  *soff += x->ndim;
  memcpy(node_shape(n, in), x->shape, (size_t)x->ndim * sizeof(int64_t));
}

static inline int same_shape(int nda, const int64_t *a, int ndb, const int64_t *b) {
  if (nda != ndb) return 0;
  for (int i = 0; i < nda; i++) if (a[i] != b[i]) return 0;
  return 1;
}

static inline void push_shape_str(lua_State *L, int nd, const int64_t *s) {
  char buf[LT_SHAPE_STR_MAX];
  lua_pushstring(L, lt_shape_str(buf, sizeof buf, nd, s, "{}"));
}


#endif
