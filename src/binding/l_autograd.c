/* l_autograd.c -- the reverse-mode autograd engine: graph nodes, recording
   and backward.  The backward *rules* are C for the common ops
   (l_grad_rules.c, l_grad_shape.c) and small Lua functions in
   lua/ltensor/autograd/ for the rest (an engine plus a table of rules, as
   in micrograd/tinygrad), each formula in one of the two; everything
   structural lives here:

   Recording.  The op trampoline (l_core.c) calls the hook installed by
   T._ag_init as hook(grad_name, raw, args...).  The hook runs the rule
   (rule(raw, args...) -> spec, outputs...), then `attach` turns the spec into
   a Node userdata: one edge per input (next node + its output number, or the
   leaf's AccumulateGrad node), the input shapes/dtypes that gradients are cast
   and summed back to, and the version counters of the saved tensors.  The
   outputs get requires_grad and grad_fn; an in-place op rebases its target
   onto the new node.

   Backward.  Dependency counts over the graph reachable from the roots are
   computed breadth-first through an explicit list (no C recursion: a chain of
   100,000 ops is fine), then nodes run from a ready stack once all their
   consumers have run.  Gradients for a node's outputs wait in one Lua table
   (slot = the node's base for this run + output number).

   Memory.  A node references Lua values only through its user values
   (1 = the spec table, or the variable of an AccumulateGrad; 1+i = the next
   node of input i); the only C pointers to nodes are held during a run while
   the run's `order` table keeps them alive.  Nothing global refers to a
   graph: it goes when its tensors do. */
#include <stdio.h>
#include "l_autograd.h"

const char ltl_ag_ctx_key = 'a';

/* ---------------------------------------------------------------------- */
/* recording                                                              */
/* ---------------------------------------------------------------------- */
/* Mark the outputs at first..last (absolute, left in place) as produced by
   the node at `node`: requires_grad, grad_fn, output_nr, base (for views:
   the stack slot view_of, 0 if none).  The op's inputs, to skip an output
   that is one of them, are the list at `inputs` (a table) or, when inidx is
   not NULL, the stack slots inidx[0..nin-1] (0: not a tensor).  nondiff: a
   table slot of output numbers that get no gradient, or 0. */
void ag_mark_outputs(lua_State *L, int node, int first, int last, int target, int view_of, int nondiff, int inputs,
                     int nin, const int *inidx) {
  for (int i = first; i <= last; i++) {
    lt_tensor *o = ltl_test(L, i);
    if (!o || !(lt_is_floating(o->dtype) || lt_is_complex(o->dtype))) continue;
    int k = i - first + 1;
    if (nondiff && !lua_isnil(L, nondiff)) {
      int nd = lua_rawgeti(L, nondiff, k) != LUA_TNIL && lua_toboolean(L, -1);
      lua_pop(L, 1);
      if (nd) continue;
    }
    if (!target) {
      /* an op that handed back one of its inputs unchanged records nothing for it */
      int same = 0;
      for (int j = 1; j <= nin && !same; j++) {
        if (inidx) {
          same = inidx[j - 1] && lua_rawequal(L, inidx[j - 1], i);
        } else {
          lua_rawgeti(L, inputs, j);
          same = lua_rawequal(L, -1, i);
          lua_pop(L, 1);
        }
      }
      if (same) continue;
    }
    ltl_set_requires_grad(L, o, true);
    int fresh = push_meta(L, i, 1) == 2;
    int m = lua_gettop(L);
    lua_pushvalue(L, node);
    lua_setfield(L, m, "grad_fn");
    if (k > 1) { lua_pushinteger(L, k); lua_setfield(L, m, "output_nr"); }
    else if (!fresh) { lua_pushnil(L); lua_setfield(L, m, "output_nr"); }
    if (!fresh) { lua_pushnil(L); lua_setfield(L, m, "retains_grad"); }
    lt_tensor *vo = !view_of || lua_isnil(L, view_of) ? NULL : ltl_test(L, view_of);
    if (vo && vo->storage == o->storage) {
      if (push_meta(L, view_of, 0) && lua_getfield(L, -1, "base") != LUA_TNIL) {
        lua_remove(L, -2);
      } else {
        lua_settop(L, m);
        lua_pushvalue(L, view_of);
      }
      lua_setfield(L, m, "base");
    } else if (!target && !fresh) {
      lua_pushnil(L);
      lua_setfield(L, m, "base");
    }
    lua_settop(L, m - 1);
  }
}

static void check_inputs(lua_State *L, const char *fname, int nin, int inputs) {
  if (nin > 0 && !lua_istable(L, inputs))
    ltl_error(L, fname, "spec.inputs must be a table of %d inputs (got %s)", nin, luaL_typename(L, inputs));
}

/* Turn the spec table at `spec` into a node and attach it to the outputs at
   first..last (left in place).  target: the tensor an in-place op wrote (0
   if none).  alias: a tensor whose saved version is v0 (the in-place target
   also passed as an operand: the rule saved its value before the write). */
static void attach(lua_State *L, const char *fname, int spec, int target, int first, int last, int alias,
                   lua_Integer v0) {
  int top0 = lua_gettop(L);
  lua_getfield(L, spec, "inputs");
  int inputs = lua_gettop(L);
  int nin;
  if (lua_getfield(L, spec, "ninputs") == LUA_TNUMBER) nin = (int)lua_tointeger(L, -1);   /* checked (check_spec) */
  else nin = lua_istable(L, inputs) ? (int)lua_rawlen(L, inputs) : 0;
  lua_pop(L, 1);
  /* a spec with ninputs but no inputs table (T._ag_attach's callers build
     it in Lua): lua_rawgeti on a non-table crashed */
  check_inputs(L, fname, nin, inputs);
  int any = 0, nedge = 0, ndims = 0;
  for (int i = 1; i <= nin; i++) {
    lua_rawgeti(L, inputs, i);
    lt_tensor *x = ltl_test(L, -1);
    if (x && x->requires_grad) { any = 1; nedge++; ndims += x->ndim; }
    lua_pop(L, 1);
  }
  if (!any) { lua_settop(L, top0); return; }
  /* each edge is a user value of the node, whose count Lua keeps in an
     unsigned short: past it Lua would truncate the count and drop the edges
     (T.cat of 70,000 tensors requiring grad crashed in backward) */
  if (nedge > AG_MAX_EDGES)
    ltl_error(L, fname, "autograd records at most %d inputs that require grad per operation (got %d)", AG_MAX_EDGES,
              nedge);
  int nsaved = 0, has_saved = 0;
  if (lua_getfield(L, spec, "saved") == LUA_TTABLE) {
    has_saved = 1;
    if (lua_getfield(L, -1, "n") == LUA_TNUMBER) nsaved = (int)lua_tointeger(L, -1);
    else nsaved = (int)lua_rawlen(L, -2);
    lua_pop(L, 1);
  }
  int saved = lua_gettop(L);
  lua_getfield(L, spec, "view_of");
  int view_of = lua_gettop(L);
  lua_getfield(L, spec, "nondiff");
  int nondiff = lua_gettop(L);
  luaL_checkstack(L, 8, "autograd");

  ag_node *n = new_node(L, nin, nedge, nsaved, ndims, 0);
  int node = lua_gettop(L);
  n->nout = last - first + 1;
  if (has_saved) n->flags |= AG_HAS_SAVED;
  lua_pushvalue(L, spec);
  lua_setiuservalue(L, node, 1);
  lua_Integer mask = 0;
  int full = 1, uv = 1, soff = 0;
  for (int i = 1; i <= nin; i++) {
    ag_in *in = &n->in[i - 1];
    lua_rawgeti(L, inputs, i);
    lt_tensor *x = ltl_test(L, -1);
    if (x && x->requires_grad) {
      set_input(L, node, n, in, x, lua_gettop(L), &uv, &soff);
      if (i <= 62) mask |= (lua_Integer)1 << (i - 1);
    } else {
      full = 0;
    }
    lua_pop(L, 1);
  }
  int64_t *vers = node_versions(n);
  for (int i = 1; i <= nsaved; i++) {
    lua_rawgeti(L, saved, i);
    lt_tensor *s = ltl_test(L, -1);
    /* a freed tensor has no storage to take the version of (it crashed:
       also the long fuzz run's seed 602 #294118) */
    if (s && !s->storage)
      ltl_error(L, fname, "saved tensor %d was freed (with :free() or a <close> variable) before it was saved", i);
    if (!s) vers[i - 1] = -1;
    else if (alias && lua_rawequal(L, -1, alias)) vers[i - 1] = v0;
    else vers[i - 1] = (int64_t)atomic_load(&s->storage->version);
    lua_pop(L, 1);
  }
  /* the rules' need(n, i): which inputs want a gradient */
  if (!full) {
    if (nin <= LTC_MASK_BITS) {
      lua_pushinteger(L, mask);
    } else {
      lua_createtable(L, nin, 0);
      for (int i = 1; i <= nin; i++) {
        lua_pushboolean(L, n->in[i - 1].nr != 0);
        lua_rawseti(L, -2, i);
      }
    }
    lua_setfield(L, spec, "need");
  }
  /* a graph keeps alive only what backward needs */
  lua_pushnil(L);
  lua_setfield(L, spec, "inputs");
  if (!lua_isnil(L, view_of)) { lua_pushnil(L); lua_setfield(L, spec, "view_of"); }

  ag_mark_outputs(L, node, first, last, target, view_of, nondiff, inputs, nin, NULL);
  lua_settop(L, top0);
}

/* fake raw for in-place ops that reuse an out-of-place rule: the rule calls
   raw(src, ...) on a copy; this writes into the target instead and returns
   it.  upvalues: 1 raw, 2 target (3: the op's name, for inplace_crule) */
static int fake_raw(lua_State *L) {
  int n = lua_gettop(L);
  if (n < 1) { lua_settop(L, 1); n = 1; }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, 0);
  lua_pushvalue(L, lua_upvalueindex(2));
  return 1;
}

/* hook upvalues: 1 settings, 2 ctx */
#define HOOK_CTX lua_upvalueindex(2)

/* pushes ctx[slot][key at idx]; for rules, falls back to unknown(key) */
static void push_rule(lua_State *L, int slot, int key_idx) {
  lua_rawgeti(L, HOOK_CTX, slot);
  lua_pushvalue(L, key_idx);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_rawgeti(L, HOOK_CTX, CTX_UNKNOWN);
    lua_pushvalue(L, key_idx);
    lua_call(L, 1, 1);
  }
  lua_remove(L, -2);
}

/* pushes a copy of the tensor at idx, made with grad mode off (the old value
   of an in-place op's target, for the rule to read; not recorded) */
static void push_old_value(lua_State *L, int idx) {
  ltl_settings *S = ltl_settings_of(L);
  int prev = S->grad_enabled;
  S->grad_enabled = 0;
  lua_rawgeti(L, HOOK_CTX, CTX_METHODS);
  lua_getfield(L, -1, "clone");
  lua_remove(L, -2);
  lua_pushvalue(L, idx);
  int st = lua_pcall(L, 1, 1, 0);
  S->grad_enabled = prev;
  if (st != LUA_OK) lua_error(L);
}

/* does the out-of-place op (its name at idx) read its first input in
   backward?  (no_self lists those that do not: no copy needed) */
static int reads_self(lua_State *L, int idx) {
  lua_rawgeti(L, HOOK_CTX, CTX_NOSELF);
  lua_pushvalue(L, idx);
  int copy = lua_rawget(L, -2) == LUA_TNIL || !lua_toboolean(L, -1);
  lua_pop(L, 2);
  return copy;
}

/* the C rule of the out-of-place op named at idx, or NULL */
static const ag_crule *crule_of(lua_State *L, int idx) {
  lua_rawgeti(L, HOOK_CTX, CTX_CRULES);
  lua_pushvalue(L, idx);
  const ag_crule *cr = lua_rawget(L, -2) == LUA_TNUMBER ? &ag_crules[lua_tointeger(L, -1)] : NULL;
  lua_pop(L, 2);
  return cr;
}

/* In-place op recorded by the C rule of its out-of-place op (add_ by
   add's).  Stack 1 name, 2 raw, 3 target, 4..n args becomes 1 target, 2 raw
   writing into the target, 3 the value the rule reads for input 1 (the
   target, or a copy of its old value), 4..n args.  Returns the rule's
   result count, or -1 with the stack back as it was (up to n) when the
   rule does not take the call. */
static int inplace_crule(lua_State *L, const ag_crule *cr, int n, int copy, int alias, lua_Integer v0) {
  lua_settop(L, n);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 1);                 /* (the name rides along for the way back) */
  lua_pushcclosure(L, fake_raw, 3);
  lua_replace(L, 2);
  lua_pushvalue(L, 3);
  lua_replace(L, 1);
  if (copy) {
    push_old_value(L, 3);
    lua_replace(L, 3);
  }
  ag_rec R = {1, alias, v0};
  int k = cr->record(L, n - 2, &R);
  if (k >= 0) return k;
  lua_pushvalue(L, 1);
  lua_replace(L, 3);
  lua_getupvalue(L, 2, 3);
  lua_replace(L, 1);
  lua_getupvalue(L, 2, 1);
  lua_replace(L, 2);
  return -1;
}

static int hook_inplace(lua_State *L, const char *name, size_t len) {
  /* 1 name, 2 raw, 3 target, 4.. args */
  int n = lua_gettop(L);
  lt_tensor *a = ltl_test(L, 3);
  if (!a) {
    lua_remove(L, 1);
    lua_call(L, n - 2, LUA_MULTRET);
    return lua_gettop(L);
  }
  luaL_checkstack(L, n + 8, "autograd");
  int has_meta = push_meta(L, 3, 0);
  int m = lua_gettop(L);
  if (a->requires_grad) {
    if (!has_meta || lua_getfield(L, m, "grad_fn") == LUA_TNIL) return ltl_error(L, name, "%s", ERR_LEAF);
    lua_pop(L, 1);
  }
  if (has_meta && lua_getfield(L, m, "base") != LUA_TNIL) {
    lt_tensor *b = ltl_test(L, -1);
    if (b && b->requires_grad) {
      int bm = push_meta(L, lua_gettop(L), 0);
      if (!bm || lua_getfield(L, -1, "grad_fn") == LUA_TNIL) return ltl_error(L, name, "%s", ERR_VIEW_LEAF);
      return ltl_error(L, name, "an in-place operation on a view of a tensor that requires grad is not supported "
                      "(write into the base tensor with t[key] = v, or use out-of-place ops)");
    }
  }
  lua_settop(L, n);
  lua_pushlstring(L, name, len > 0 ? len - 1 : 0);     /* n+1: the out-of-place name */
  /* the op's own in-place rule (special), else the out-of-place op's rule,
     in C or (n+2) in Lua, which reads a copy of the target's old value
     unless no_self says it does not read it */
  lua_rawgeti(L, HOOK_CTX, CTX_INPLACE);
  lua_pushvalue(L, 1);
  int special = lua_rawget(L, -2) != LUA_TNIL;
  lua_remove(L, -2);
  int copy = !special && reads_self(L, n + 1);
  int alias = 0;
  for (int i = 4; i <= n && !alias; i++) alias = lua_rawequal(L, i, 3);
  lua_Integer v0 = (lua_Integer)atomic_load(&a->storage->version);
  if (!special) {
    const ag_crule *cr = crule_of(L, n + 1);
    if (cr) {
      int k = inplace_crule(L, cr, n, copy, alias, v0);
      if (k >= 0) return k;
      lua_pushlstring(L, name, len > 0 ? len - 1 : 0);
    } else {
      lua_pop(L, 1);
    }
    push_rule(L, CTX_RULES, n + 1);
  }
  /* rule(raw or fake, src, args...) */
  if (special) {
    lua_pushvalue(L, 2);
  } else {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_pushcclosure(L, fake_raw, 2);
  }
  if (copy) push_old_value(L, 3);
  else lua_pushvalue(L, 3);
  for (int i = 4; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n - 3 + 2, LUA_MULTRET);
  int r = n + 2;                                         /* spec, outputs... */
  int top = lua_gettop(L);
  if (top < r || lua_isnil(L, r)) return top < r ? 0 : top - r;
  if (lua_getfield(L, r, "inputs") == LUA_TTABLE) {
    lua_pushvalue(L, 3);
    lua_rawseti(L, -2, 1);   /* the edge goes to the target's history before this op */
  }
  lua_pop(L, 1);
  attach(L, name, r, 3, r + 1, top, alias ? 3 : 0, v0);
  return top - r;
}

/* hook(grad_name, raw, args...): run the rule, record a node */
static int ag_hook(lua_State *L) {
  size_t len;
  const char *name = lua_tolstring(L, 1, &len);
  if ((len > 0 && name[len - 1] == '_') || (len == 8 && memcmp(name, "setindex", 8) == 0)) return hook_inplace(L, name, len);
  /* a rule in C for this form of the call? (the name is an interned string:
     one hash lookup, no string comparison) */
  lua_rawgeti(L, HOOK_CTX, CTX_CRULES);
  lua_pushvalue(L, 1);
  if (lua_rawget(L, -2) == LUA_TNUMBER) {
    const ag_crule *cr = &ag_crules[lua_tointeger(L, -1)];
    lua_pop(L, 2);
    static const ag_rec plain = {0, 0, 0};
    int k = cr->record(L, lua_gettop(L) - 2, &plain);
    if (k >= 0) return k;
  } else {
    lua_pop(L, 2);
  }
  char fname[64];   /* slot 1 is replaced by the rule below */
  snprintf(fname, sizeof fname, "%s", name);
  push_rule(L, CTX_RULES, 1);
  lua_replace(L, 1);                      /* rule, raw, args... */
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  int top = lua_gettop(L);
  if (top == 0) return 0;
  if (lua_isnil(L, 1)) return top - 1;    /* the rule recorded nothing */
  attach(L, fname, 1, 0, 2, top, 0, 0);
  return top - 1;
}

/* The fields of a spec T._ag_attach reads (here and in the backward pass),
   checked as a public function's arguments would be: the entry point is
   reachable from any script.  A count is capped at Lua's own stack limit
   (no call passes more values), so a huge one cannot make attach loop or
   allocate for nothing. */
#define AG_SPEC_MAX 1000000
static void check_count_field(lua_State *L, const char *fname, int t, const char *field, const char *what) {
  int ty = lua_getfield(L, t, field);
  if (ty != LUA_TNIL) {
    int isint;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    if (ty != LUA_TNUMBER || !isint || v < 0 || v > AG_SPEC_MAX)
      ltl_error(L, fname, "%s must be an integer in 0..%d (got %s)", what, AG_SPEC_MAX,
                ty == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}
static void check_table_field(lua_State *L, const char *fname, int spec, const char *field, int allow_false) {
  int ty = lua_getfield(L, spec, field);
  if (ty != LUA_TNIL && ty != LUA_TTABLE && !(allow_false && ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)))
    ltl_error(L, fname, "spec.%s must be a table (got %s)", field, luaL_typename(L, -1));
  lua_pop(L, 1);
}
static void check_spec(lua_State *L, const char *fname, int spec) {
  check_count_field(L, fname, spec, "ninputs", "spec.ninputs");
  check_table_field(L, fname, spec, "saved", 1);
  check_table_field(L, fname, spec, "nondiff", 0);
  if (lua_getfield(L, spec, "saved") == LUA_TTABLE) check_count_field(L, fname, lua_gettop(L), "n", "spec.saved.n");
  lua_pop(L, 1);
  if (lua_getfield(L, spec, "view_of") != LUA_TNIL && !ltl_test(L, -1))
    ltl_error(L, fname, "spec.view_of must be a tensor (got %s)", luaL_typename(L, -1));
  lua_pop(L, 1);
}
/* the fields a node's backward reads */
static void check_spec_rule(lua_State *L, const char *fname, int spec) {
  if (lua_getfield(L, spec, "name") != LUA_TSTRING)
    ltl_error(L, fname, "spec.name must be a string (got %s)", luaL_typename(L, -1));
  if (lua_getfield(L, spec, "backward") != LUA_TFUNCTION)
    ltl_error(L, fname, "spec.backward must be a function (got %s)", luaL_typename(L, -1));
  lua_pop(L, 2);
}

/* T._ag_attach(spec, outputs...) -> outputs (autograd.Function) */
static int l_ag_attach(lua_State *L) {
  ltl_checktype(L, 1, LUA_TTABLE);
  const char *fname = "autograd.Function";
  check_spec(L, fname, 1);
  /* the inputs before the rest, as attach checks them (ninputs is valid) */
  int ti = lua_getfield(L, 1, "inputs");
  if (lua_getfield(L, 1, "ninputs") == LUA_TNUMBER && ti != LUA_TTABLE)
    check_inputs(L, fname, (int)lua_tointeger(L, -1), lua_gettop(L) - 1);
  lua_pop(L, 2);
  check_spec_rule(L, fname, 1);
  int top = lua_gettop(L);
  attach(L, "autograd.Function", 1, 0, 2, top, 0, 0);
  return top - 1;
}

/* ---------------------------------------------------------------------- */
/* nodes seen from Lua                                                     */
/* ---------------------------------------------------------------------- */
static ag_node *check_node(lua_State *L, int idx) { return (ag_node *)ltl_checkudata(L, idx, NODE_MT); }

const char *ag_node_name(lua_State *L, ag_node *n, int idx) {
  (void)L; (void)idx;
  if (n->flags & AG_ACC) return "AccumulateGrad";
  if (n->flags & AG_C) return ag_crules[n->rule].names[n->variant];
  return NULL;
}

static void push_node_name(lua_State *L, int idx, ag_node *n) {
  const char *nm = ag_node_name(L, n, idx);
  if (nm) { lua_pushstring(L, nm); return; }
  lua_getiuservalue(L, idx, 1);
  lua_getfield(L, -1, "name");
  lua_remove(L, -2);
}

static int node_index(lua_State *L) {
  ag_node *n = check_node(L, 1);
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "name") == 0) { push_node_name(L, 1, n); return 1; }
  if (k && strcmp(k, "next_functions") == 0) {
    /* {{node, output_nr}, ...}; {} for an input without an edge */
    lua_createtable(L, n->nin, 0);
    for (int i = 0; i < n->nin; i++) {
      lua_createtable(L, 2, 0);
      if (n->in[i].nr) {
        lua_getiuservalue(L, 1, n->in[i].uv);
        lua_rawseti(L, -2, 1);
        lua_pushinteger(L, n->in[i].nr);
        lua_rawseti(L, -2, 2);
      }
      lua_rawseti(L, -2, i + 1);
    }
    return 1;
  }
  if (n->flags & AG_ACC) {
    if (k && strcmp(k, "variable") == 0) { lua_getiuservalue(L, 1, 1); return 1; }
    lua_pushnil(L);
    return 1;
  }
  if ((n->flags & AG_C) ? ag_push_ctab(L, n, 1) != LUA_TTABLE : lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
    lua_pushnil(L);   /* a C node without a table */
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_gettable(L, -2);
  return 1;
}

static int node_tostring(lua_State *L) {
  /* the bare name, as tensors print it in grad_fn=<...> */
  push_node_name(L, 1, check_node(L, 1));
  return 1;
}

/* T._ag_spec(node) -> the rule's spec table (nil for AccumulateGrad) */
static int l_ag_spec(lua_State *L) {
  ag_node *n = check_node(L, 1);
  if (n->flags & AG_ACC) { lua_pushnil(L); return 1; }
  if (!(n->flags & AG_C)) { lua_getiuservalue(L, 1, 1); return 1; }
  if (ag_push_ctab(L, n, 1) == LUA_TTABLE) return 1;
  /* a C node gets its Lua table only when asked (hooks, retain_grad), kept
     in the engine's weak-keyed table rather than in every node */
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, ag_crules[n->rule].names[n->variant]);
  lua_setfield(L, -2, "name");
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_ag_ctx_key);
  lua_rawgeti(L, -1, CTX_CTABS);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, -4);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  n->flags |= AG_TAB;
  return 1;
}

/* ctx[CTX_FNS]: the by-name table cfns (AG_FNS, l_autograd.h) becomes an
   array by AGF_* index; a missing, misspelt or extra name is an error here,
   at load time, not a wrong function called during some backward pass. */
static void bind_cfns(lua_State *L, int ctx) {
#define AGF_NAME(id, name) name,
  static const char *const names[] = {AG_FNS(AGF_NAME)};
#undef AGF_NAME
  int n = (int)(sizeof names / sizeof names[0]);
  lua_rawgeti(L, ctx, CTX_FNS);
  int by_name = lua_gettop(L);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    if (lua_getfield(L, by_name, names[i]) != LUA_TFUNCTION)
      ltl_error(L, "_ag_init", "cfns.%s must be a function", names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  int count = 0;
  for (lua_pushnil(L); lua_next(L, by_name); lua_pop(L, 1)) count++;
  if (count != n) ltl_error(L, "_ag_init", "cfns has %d entries, the C rules use %d (AG_FNS)", count, n);
  lua_rawseti(L, ctx, CTX_FNS);
  lua_pop(L, 1);
}

/* T._ag_init{rules=, inplace_rules=, no_self=, unknown=, methods=} -> hook, Node metatable */
static int l_ag_init(lua_State *L) {
  ltl_checktype(L, 1, LUA_TTABLE);
  lua_createtable(L, CTX_CTABS, 0);
  int ctx = lua_gettop(L);
  static const char *const fields[] = {"rules", "inplace_rules", "no_self", "unknown", "methods", "cfns"};
  for (int i = 0; i < 6; i++) {
    int want = i == CTX_UNKNOWN - 1 ? LUA_TFUNCTION : LUA_TTABLE;
    if (lua_getfield(L, 1, fields[i]) != want)
      return ltl_error(L, "_ag_init", "field '%s' must be a %s", fields[i], lua_typename(L, want));
    lua_rawseti(L, ctx, i + 1);
  }
  bind_cfns(L, ctx);
  /* name -> index into ag_crules */
  lua_newtable(L);
  for (int i = 0; ag_crules[i].key; i++) {
    lua_pushinteger(L, i);
    lua_setfield(L, -2, ag_crules[i].key);
  }
  lua_rawseti(L, ctx, CTX_CRULES);
  ag_state *st = (ag_state *)lua_newuserdatauv(L, sizeof(ag_state), 0);
  memset(st, 0, sizeof *st);
  lua_rawseti(L, ctx, CTX_STATE);
  /* C node -> its Lua table (hooks, retain_grad): weak keys, so a table
     lives as long as its node (an ephemeron: the table may refer to it) */
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawseti(L, ctx, CTX_CTABS);
  lua_pushvalue(L, ctx);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ltl_ag_ctx_key);
  luaL_newmetatable(L, NODE_MT);
  lua_pushcfunction(L, node_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, node_tostring);
  lua_setfield(L, -2, "__tostring");
  int mt = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, ctx);
  lua_pushcclosure(L, ag_hook, 2);
  lua_pushvalue(L, mt);
  /* the grad names a C rule records, name -> true (a copy: the engine's
     name -> index table stays out of Lua's reach) */
  lua_newtable(L);
  for (int i = 0; ag_crules[i].key; i++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, ag_crules[i].key);
  }
  return 3;
}

const ltl_reg ltl_reg_autograd[] = {
  {"_ag_init", l_ag_init, LT_MODULE, NULL},
  {"_ag_attach", l_ag_attach, LT_MODULE, NULL},
  {"_ag_spec", l_ag_spec, LT_MODULE, NULL},
  {"_linear", ltl_linear_fn, LT_MODULE | LT_DIFF, NULL},
  {NULL, NULL, 0, NULL}
};
