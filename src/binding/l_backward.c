/* l_backward.c -- the autograd engine's backward pass (see l_autograd.c for
   the design): dependency counts, running nodes from a ready stack,
   accumulating gradients, fitting them to each input (dtype and sum_to),
   hooks, retain_graph and create_graph. */
#include <string.h>
#include "l_autograd.h"

/* ---------------------------------------------------------------------- */
/* backward                                                               */
/* ---------------------------------------------------------------------- */
typedef struct ag_run {
  uint64_t id;
  int methods, fns, order, G, capture, results;   /* stack slots */
  int retain, create;
  int n;                                     /* nodes in order */
  int save;                                  /* nested run: table of the outer run's node states, or 0 */
  int nsave;
} ag_run;

/* methods[name](args on top) with nres results; methods: a stack slot */
static void mcall(lua_State *L, int methods, const char *name, int nargs, int nres) {
  lua_getfield(L, methods, name);
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, nres);
}
static void call_method(lua_State *L, ag_run *R, const char *name, int nargs, int nres) {
  lua_getfield(L, R->methods, name);
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, nres);
}

/* fns[f](args on top) with nres results */
static void fns_call(lua_State *L, ag_run *R, int f, int nargs, int nres) {
  lua_rawgeti(L, R->fns, f);
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, nres);
}

/* Complex gradients follow PyTorch's convention: a node passes its inputs
   grad * conj(df/dz).  The rules are written as for real numbers (grad *
   df/dz); for a holomorphic f, conj(rule(conj(grad))) is PyTorch's
   gradient, so the engine applies the rule that way whenever a gradient
   reaching the node is complex.  Rules that are not holomorphic (abs, real,
   imag, conj, angle, T.complex, sgn, ...) say `conj_aware = true` in their
   spec and get the gradients as they are. */
static int conj_rule(lua_State *L, ag_run *R, ag_node *p, int base, int spec) {
  int any = 0;
  for (int k = 1; k <= p->nout && !any; k++) {
    lua_rawgeti(L, R->G, base + k);
    lt_tensor *g = ltl_test(L, -1);
    any = g && lt_is_complex(g->dtype);
    lua_pop(L, 1);
  }
  if (!any || !spec) return any;
  int aware = lua_getfield(L, spec, "conj_aware") != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return !aware;
}
/* the tensor on top -> its conjugate (anything else is left as it is) */
static void conj_top(lua_State *L, ag_run *R) {
  lt_tensor *t = ltl_test(L, -1);
  if (!t || !lt_is_complex(t->dtype)) return;
  call_method(L, R, "conj", 1, 1);
}

/* gradient on top -> G[slot] (summed with what is there) */
static void g_add(lua_State *L, ag_run *R, int slot) {
  int gi = lua_gettop(L);
  if (lua_rawgeti(L, R->G, slot) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_rawseti(L, R->G, slot);
    return;
  }
  lua_rawgeti(L, R->fns, AGF_ADD);      /* g old add (by index: no string lookup per gradient) */
  lua_rotate(L, gi, 1);                 /* add g old */
  lua_rotate(L, gi + 1, 1);             /* add old g */
  lua_call(L, 2, 1);
  lua_rawseti(L, R->G, slot);
}

/* hooks: list of functions at idx; gradient on top, replaced */
static void run_hooks(lua_State *L, int hooks) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, hooks);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, hooks, i) == LUA_TNIL) { lua_pop(L, 1); break; }
    lua_pushvalue(L, -2);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) lua_pop(L, 1);
    else lua_remove(L, -2);
    /* the engine reads the gradient next: a hook that freed it (or returned
       a freed tensor) gets the blame, not the op that would read it */
    lt_tensor *g = ltl_test(L, -1);
    if (g && !g->storage)
      ltl_error(L, "backward", "hook %d freed the gradient it was given or returned a freed tensor", (int)i);
  }
}

static void push_node_name_of(lua_State *L, ag_node *n, int pi) {
  const char *nm = ag_node_name(L, n, pi);
  if (nm) { lua_pushstring(L, nm); return; }
  lua_getiuservalue(L, pi, 1);
  lua_getfield(L, -1, "name");
  lua_remove(L, -2);
}

/* gradient on top -> a tensor that owns its memory (contiguous, not g itself) */
static void fresh(lua_State *L, ag_run *R) {
  lua_pushvalue(L, -1);
  call_method(L, R, "contiguous", 1, 1);
  if (lua_rawequal(L, -1, -2)) {
    lua_pop(L, 1);
    call_method(L, R, "clone", 1, 1);
  } else {
    lua_remove(L, -2);
  }
}

/* gradient on top -> var.grad (a leaf's AccumulateGrad, or retain_grad) */
static void accumulate(lua_State *L, ag_run *R, int var, int with_hooks) {
  int g = lua_gettop(L);
  push_meta(L, var, 1);
  int m = g + 1;
  if (with_hooks) {
    if (lua_getfield(L, m, "hooks") == LUA_TTABLE) {
      lua_pushvalue(L, g);
      run_hooks(L, m + 1);
      lua_replace(L, g);
    }
    lua_settop(L, m);
  }
  if (lua_getfield(L, m, "grad") == LUA_TNIL) {
    lua_pushvalue(L, g);
    if (!R->create) fresh(L, R);
    lua_setfield(L, m, "grad");
  } else {
    lt_tensor *old = ltl_test(L, -1);
    if (old && !old->storage)
      ltl_error(L, "backward", "the .grad of a tensor was freed (set it to nil to drop it instead)");
    if (R->create || (old && old->requires_grad)) {
      lua_pushvalue(L, g);
      fns_call(L, R, AGF_ADD, 2, 1);
      lua_setfield(L, m, "grad");
    } else {
      lua_pushvalue(L, g);
      fns_call(L, R, AGF_ADD_, 2, 0);   /* in place into the existing .grad */
    }
  }
  lua_settop(L, g - 1);
}

/* sum_to, the backward of broadcasting (the one copy: autograd.sum_to calls
   it through T._sum_to): the tensor on top is summed over its leading extra
   dims and over the dims where shape has size 1, then reshaped to shape;
   it is replaced by the result.  methods: stack slot of the methods table. */
static void sum_to(lua_State *L, int methods, int snd, const int64_t *shape) {
  lt_tensor *g = ltl_check(L, -1);
  if (same_shape(g->ndim, g->shape, snd, shape)) return;
  int lead = g->ndim - snd;
  if (lead < 0) {
    push_shape_str(L, g->ndim, g->shape);
    push_shape_str(L, snd, shape);
    ltl_error(L, "backward", "gradient of shape %s cannot be summed to shape %s", lua_tostring(L, -2), lua_tostring(L, -1));
  }
  int64_t gs[LT_MAX_DIMS];
  int gnd = g->ndim;
  memcpy(gs, g->shape, sizeof gs);
  lua_createtable(L, gnd, 0);
  int nd = 0;
  for (int i = 0; i < lead; i++) { lua_pushinteger(L, i + 1); lua_rawseti(L, -2, ++nd); }
  for (int i = 0; i < snd; i++) {
    int64_t gi = gs[lead + i];
    if (shape[i] == 1 && gi != 1) {
      lua_pushinteger(L, lead + i + 1);
      lua_rawseti(L, -2, ++nd);
    } else if (shape[i] != gi) {
      push_shape_str(L, gnd, gs);
      push_shape_str(L, snd, shape);
      ltl_error(L, "backward", "gradient of shape %s is not expandable to shape %s", lua_tostring(L, -2),
               lua_tostring(L, -1));
    }
  }
  if (nd > 0) {
    lua_pushboolean(L, 1);
    mcall(L, methods, "sum", 3, 1);
  } else {
    lua_pop(L, 1);
  }
  if (lead > 0) {
    lua_createtable(L, snd, 0);
    for (int i = 0; i < snd; i++) { lua_pushinteger(L, shape[i]); lua_rawseti(L, -2, i + 1); }
    mcall(L, methods, "reshape", 2, 1);
  }
}

/* T._sum_to(g, shape) -> g summed to shape (autograd.sum_to checks the arguments) */
static int l_sum_to(lua_State *L) {
  int64_t shape[LT_MAX_DIMS];
  ltl_check(L, 1);
  int nd = ltl_checksize(L, 2, 2, shape, "autograd.sum_to");
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_methods);
  int methods = lua_gettop(L);
  lua_pushvalue(L, 1);
  sum_to(L, methods, nd, shape);
  return 1;
}

/* gradient on top: cast to the input's dtype and summed to its shape */
static void fit(lua_State *L, ag_run *R, ag_node *n, const ag_in *in) {
  lt_tensor *g = ltl_check(L, -1);
  if (g->dtype != (ltensor_dtype)in->dtype) {
    ltl_pushdtype(L, (ltensor_dtype)in->dtype);
    call_method(L, R, "to", 2, 1);
    g = ltl_check(L, -1);
  }
  sum_to(L, R->methods, in->ndim, node_shape(n, in));
}

/* saved tensors still there and unmodified?  node at pi; spec: its Lua
   spec (Lua rules) or 0 (C rules: the saved tensors are user values) */
static void check_saved(lua_State *L, ag_node *n, int pi, int spec) {
  if (n->flags & AG_RELEASED) ltl_error(L, "backward", "%s", ERR_FREED);
  if (n->nsaved == 0) return;
  int64_t *vers = node_versions(n);
  int saved = 0;
  if (spec) {
    lua_getfield(L, spec, "saved");
    saved = lua_gettop(L);
  }
  for (int i = 0; i < n->nsaved; i++) {
    if (vers[i] < 0) continue;
    if (spec) lua_rawgeti(L, saved, i + 1);
    else lua_getiuservalue(L, pi, ag_saved_uv(n, i));
    lt_tensor *s = ltl_test(L, -1);
    if (s && !s->storage) {
      /* freed early (t:free() or a <close> variable) while the graph still
         needed it: a clear error instead of reading released memory */
      push_node_name_of(L, n, pi);
      ltl_error(L, "backward", "a tensor saved by %s for the gradient computation was freed (with :free() or a "
                "<close> variable) before backward ran; keep it alive until backward, or clone it before freeing",
                lua_tostring(L, -1));
    }
    int64_t now = s ? (int64_t)atomic_load(&s->storage->version) : vers[i];
    if (now != vers[i]) {
      int si = lua_gettop(L);
      ltl_pushdtype(L, s->dtype);
      const char *dt = luaL_tolstring(L, -1, NULL);
      push_shape_str(L, s->ndim, s->shape);
      const char *shp = lua_tostring(L, -1);
      int wi = lua_gettop(L) + 1;
      lua_pushliteral(L, "");
      if (push_meta(L, si, 0) && lua_getfield(L, -1, "grad_fn") != LUA_TNIL) {
        int gf = lua_gettop(L);
        lua_Integer nr = 1;
        if (lua_getfield(L, gf - 1, "output_nr") == LUA_TNUMBER) nr = lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, gf, "name");
        lua_pushfstring(L, ", which is output %I of %s,", nr, lua_tostring(L, -1));
        lua_replace(L, wi);
      }
      lua_settop(L, wi);
      const char *which = lua_tostring(L, wi);
      push_node_name_of(L, n, pi);
      ltl_error(L, "backward", "one of the variables needed for gradient computation has been modified by an inplace "
               "operation: [%s %s]%s is at version %I; expected version %I instead. Hint: the variable was saved by "
               "%s; clone it before modifying it in place", dt, shp, which, (lua_Integer)now, (lua_Integer)vers[i],
               lua_tostring(L, -1));
    }
    lua_pop(L, 1);
  }
  if (spec) lua_pop(L, 1);
}

/* Stamp node p (on top of the stack) for this run.  Inside a nested run, the
   state of a node that an outer run is using is kept and put back at the end
   (restore_states), so that the outer run continues where it was. */
static void stamp(lua_State *L, ag_run *R, ag_node *p, int idx, int base) {
  if (R->save && p->run_id != 0) {
    lua_pushvalue(L, -1);
    lua_rawseti(L, R->save, ++R->nsave);
    lua_Integer v[4] = {(lua_Integer)p->run_id, p->run_deps, p->run_idx, p->run_base};
    for (int k = 0; k < 4; k++) { lua_pushinteger(L, v[k]); lua_rawseti(L, R->save, ++R->nsave); }
  }
  p->run_id = R->id;
  p->run_deps = 0;
  p->run_idx = idx;
  p->run_base = base;
}

static void restore_states(lua_State *L, int save) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, save);
  for (lua_Integer k = n - 4; k >= 1; k -= 5) {   /* newest first */
    lua_rawgeti(L, save, k);
    ag_node *p = (ag_node *)lua_touserdata(L, -1);
    lua_Integer v[4];
    for (int j = 0; j < 4; j++) { lua_rawgeti(L, save, k + 1 + j); v[j] = lua_tointeger(L, -1); lua_pop(L, 1); }
    lua_pop(L, 1);
    p->run_id = (uint64_t)v[0];
    p->run_deps = (int32_t)v[1];
    p->run_idx = (int32_t)v[2];
    p->run_base = (int32_t)v[3];
  }
}

static ag_node *run_node(lua_State *L, ag_run *R, int idx) {
  lua_rawgeti(L, R->order, idx);
  ag_node *p = (ag_node *)lua_touserdata(L, -1);
  if (p->run_id != R->id)
    ltl_error(L, "backward", "a nested backward went through this graph while it was being differentiated");
  return p;
}

/* A long backward makes garbage only: a gradient per node, while the graph
   it walks stays alive.  After the forward pass that grew the graph, Lua's
   generational collector is usually in its "bad collection" state (each
   major collection kept most of the heap), where it waits for the heap to
   double before collecting again: a 1,000,000-node backward peaked at
   2.4 times its graph (424 MB of Lua heap for 177 MB of nodes).  When the
   graph is most of the heap (at most 1 KB of heap per node, so that the
   cost is of the order of the walk itself), two collector steps first: the
   second finds the heap stable and returns to generational mode, whose
   minor collections free the gradients young (peak: the graph plus about a
   fifth).  In generational mode already they are two minor collections; in
   incremental mode, two small steps.  A stopped collector is left alone. */
static void settle_collector(lua_State *L, int n) {
  if (n < 65536) return;
#ifdef LUA_GCISRUNNING
  if (!lua_gc(L, LUA_GCISRUNNING, 0)) return;
#endif
  size_t heap_kb = (size_t)lua_gc(L, LUA_GCCOUNT, 0);
  if (heap_kb > (size_t)n) return;
  lua_gc(L, LUA_GCSTEP, 0);
  lua_gc(L, LUA_GCSTEP, 0);
}

/* Node p (on top of the stack, popped) joins `order` as node *n + 1, its
   gradient slots from *nslots, unless this run has stamped it already. */
static void enqueue(lua_State *L, ag_run *R, ag_node *p, int *n, int *nslots) {
  if (p->run_id != R->id) {
    stamp(L, R, p, ++*n, *nslots);
    *nslots += p->nout;
    lua_rawseti(L, R->order, *n);
  } else {
    lua_pop(L, 1);
  }
}

static void execute(lua_State *L, ag_run *R, int roots, int nroots) {
  uint64_t id = R->id;
  lua_newtable(L);
  R->order = lua_gettop(L);
  /* dependency counts, breadth-first through `order` (no recursion) */
  int n = 0, nslots = 0;
  for (int i = 0; i < nroots; i++) {
    lua_rawgeti(L, roots, 3 * i + 1);
    enqueue(L, R, (ag_node *)lua_touserdata(L, -1), &n, &nslots);
  }
  int nunique = n;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, R->order, i);
    ag_node *p = (ag_node *)lua_touserdata(L, -1);
    int pi = lua_gettop(L);
    for (int k = 0; k < p->nin; k++) {
      if (!p->in[k].nr) continue;
      lua_getiuservalue(L, pi, p->in[k].uv);
      ag_node *m = (ag_node *)lua_touserdata(L, -1);
      enqueue(L, R, m, &n, &nslots);
      m->run_deps++;
    }
    lua_pop(L, 1);
  }
  R->n = n;
  int *ready = (int *)lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof(int), 0);
  int nready = 0;
  /* pending gradients by slot: an array for a small graph; for a large one
     a hash part holding only the ones waiting (a chain has one at a time),
     not 16 bytes for every slot of the graph (16 MB for 1,000,000 nodes) */
  if (nslots <= 4096) lua_createtable(L, nslots, 0);
  else lua_createtable(L, 0, 64);
  R->G = lua_gettop(L);
  for (int i = 0; i < nroots; i++) {
    lua_rawgeti(L, roots, 3 * i + 1);
    ag_node *p = (ag_node *)lua_touserdata(L, -1);
    lua_rawgeti(L, roots, 3 * i + 2);
    int slot = p->run_base + (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    lua_rawgeti(L, roots, 3 * i + 3);
    g_add(L, R, slot);
  }
  for (int i = 1; i <= nunique; i++) {
    lua_rawgeti(L, R->order, i);
    ag_node *p = (ag_node *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (p->run_deps == 0) ready[nready++] = i;
  }
  settle_collector(L, n);
  int base_top = lua_gettop(L);
  while (nready > 0) {
    int idx = ready[--nready];
    ag_node *p = run_node(L, R, idx);
    int pi = lua_gettop(L);
    int base = p->run_base;
    if (R->capture) {
      lua_pushvalue(L, pi);
      if (lua_rawget(L, R->capture) == LUA_TTABLE) {
        int caps = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, caps)) {       /* nr -> slot in results */
          lua_rawgeti(L, R->G, base + (int)lua_tointeger(L, -2));
          lua_rawseti(L, R->results, lua_tointeger(L, -2));
          lua_pop(L, 1);
        }
      }
      lua_settop(L, pi);
    }
    if (p->flags & AG_ACC) {
      if (!R->capture && lua_rawgeti(L, R->G, base + 1) != LUA_TNIL) {
        lua_getiuservalue(L, pi, 1);
        lua_insert(L, -2);
        accumulate(L, R, pi + 1, 1);
      }
      lua_settop(L, pi);
      lua_pushnil(L);
      lua_rawseti(L, R->G, base + 1);
    } else {
      int isc = (p->flags & AG_C) != 0;
      /* the Lua spec, or a C node's table of hooks */
      int hastab = (isc ? ag_push_ctab(L, p, pi) : lua_getiuservalue(L, pi, 1)) == LUA_TTABLE;
      int spec = lua_gettop(L);
      if (hastab && lua_getfield(L, spec, "pre_hooks") == LUA_TTABLE) {
        int hooks = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, hooks)) {      /* nr -> list of hooks */
          int slot = base + (int)lua_tointeger(L, -2);
          if (lua_rawgeti(L, R->G, slot) != LUA_TNIL) {
            run_hooks(L, lua_gettop(L) - 1);
            lua_rawseti(L, R->G, slot);
          } else {
            lua_pop(L, 1);
          }
          lua_pop(L, 1);
        }
      }
      lua_settop(L, spec);
      if (hastab && !R->capture && lua_getfield(L, spec, "retained") == LUA_TTABLE) {
        int ret = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, ret)) {        /* nr -> tensor (weak) */
          int t = lua_gettop(L);
          if (lua_rawgeti(L, R->G, base + (int)lua_tointeger(L, t - 1)) != LUA_TNIL) accumulate(L, R, t, 0);
          lua_settop(L, t - 1);
        }
      }
      lua_settop(L, spec);
      int any = 0;
      for (int k = 1; k <= p->nout && !any; k++) {
        any = lua_rawgeti(L, R->G, base + k) != LUA_TNIL;
        lua_pop(L, 1);
      }
      if (any) {
        check_saved(L, p, pi, isc ? 0 : spec);
        luaL_checkstack(L, p->nout + p->nin + 8, "autograd");
        int nret;
        int cj = conj_rule(L, R, p, base, isc ? 0 : spec);
        if (isc) {
          lua_rawgeti(L, R->G, base + 1);
          if (cj) conj_top(L, R);
          int g = lua_gettop(L);
          ag_bw B = {R->fns, R->create};
          ag_crules[p->rule].backward(L, p, pi, g, &B);
          lua_remove(L, g);
          nret = lua_gettop(L) - spec;
        } else {
          lua_getfield(L, spec, "backward");
          lua_pushvalue(L, spec);
          for (int k = 1; k <= p->nout; k++) {
            lua_rawgeti(L, R->G, base + k);
            if (cj) conj_top(L, R);
          }
          lua_call(L, p->nout + 1, LUA_MULTRET);
          nret = lua_gettop(L) - spec;
        }
        int r0 = spec + 1;
        if (cj)
          for (int i = 0; i < nret; i++) {
            lua_pushvalue(L, r0 + i);
            conj_top(L, R);
            lua_replace(L, r0 + i);
          }
        for (int i = 0; i < p->nin && i < nret; i++) {
          if (!p->in[i].nr || lua_isnil(L, r0 + i)) continue;
          lt_tensor *gi = ltl_test(L, r0 + i);
          if (gi && !gi->storage) {   /* a custom Function's backward (fit reads it) */
            push_node_name_of(L, p, pi);
            ltl_error(L, "backward", "the gradient %s returned for its input %d was freed", lua_tostring(L, -1), i + 1);
          }
          lua_pushvalue(L, r0 + i);
          fit(L, R, p, &p->in[i]);
          lua_getiuservalue(L, pi, p->in[i].uv);
          ag_node *m = (ag_node *)lua_touserdata(L, -1);
          lua_pop(L, 1);
          if (m->run_id != id)
            ltl_error(L, "backward", "a nested backward went through this graph while it was being differentiated");
          g_add(L, R, m->run_base + p->in[i].nr);
        }
        lua_settop(L, spec);
        if (!R->retain && (p->flags & AG_HAS_SAVED)) {
          if (isc) {
            for (int i = 0; i < p->nsaved; i++) { lua_pushnil(L); lua_setiuservalue(L, pi, ag_saved_uv(p, i)); }
          } else {
            lua_pushboolean(L, 0);
            lua_setfield(L, spec, "saved");
          }
          p->flags |= AG_RELEASED;
        }
      }
      for (int k = 1; k <= p->nout; k++) { lua_pushnil(L); lua_rawseti(L, R->G, base + k); }
      for (int i = 0; i < p->nin; i++) {
        if (!p->in[i].nr) continue;
        lua_getiuservalue(L, pi, p->in[i].uv);
        ag_node *m = (ag_node *)lua_touserdata(L, -1);
        lua_pop(L, 1);
        if (--m->run_deps == 0 && m->run_id == id) ready[nready++] = m->run_idx;
      }
    }
    lua_settop(L, base_top);
  }
}

/* list argument: a tensor (or number) alone, or a list */
static int as_list(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) { lua_newtable(L); lua_replace(L, idx); return 0; }
  if (lua_type(L, idx) != LUA_TTABLE) {
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, idx);
    lua_rawseti(L, -2, 1);
    lua_replace(L, idx);
    return 1;
  }
  return (int)lua_rawlen(L, idx);
}

/* 1 fname, 2 outputs, 3 grads, 4 retain, 5 create, 6 inputs (grad) or nil, 7 allow_unused,
   8 run id, 9 save table (nested run) or nil */
static int run_protected(lua_State *L) {
  ag_run R;
  memset(&R, 0, sizeof R);
  R.id = (uint64_t)lua_tointeger(L, 8);
  R.save = lua_isnil(L, 9) ? 0 : 9;
  const char *fname = lua_tostring(L, 1);
  R.retain = lua_toboolean(L, 4);
  R.create = lua_toboolean(L, 5);
  int want_grad = !lua_isnil(L, 6);
  int allow_unused = lua_toboolean(L, 7);
  int nout = as_list(L, 2);
  as_list(L, 3);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_ag_ctx_key);
  lua_rawgeti(L, -1, CTX_METHODS);
  R.methods = lua_gettop(L);
  lua_rawgeti(L, -2, CTX_FNS);
  R.fns = lua_gettop(L);
  /* roots: node, output number, gradient */
  lua_createtable(L, 3 * nout, 0);
  int roots = lua_gettop(L);
  for (int i = 1; i <= nout; i++) {
    lua_rawgeti(L, 2, i);
    int ti = lua_gettop(L);
    lt_tensor *t = ltl_test(L, ti);
    if (!t || !t->requires_grad)
      return ltl_error(L, fname, "element %d of tensors does not require grad and does not have a grad_fn", i);
    if (!t->storage) return ltl_error(L, fname, "element %d of tensors was freed", i);
    int nr = push_edge(L, ti);
    lua_rawseti(L, roots, 3 * i - 2);
    lua_pushinteger(L, nr);
    lua_rawseti(L, roots, 3 * i - 1);
    int gt = lua_rawgeti(L, 3, i);
    if (gt == LUA_TNIL) {
      if (lt_numel(t) != 1) return ltl_error(L, fname, "grad can be implicitly created only for scalar outputs");
      lua_pop(L, 1);
      lua_pushvalue(L, ti);
      call_method(L, &R, "ones_like", 1, 1);
    } else if (gt == LUA_TNUMBER) {
      lua_pushvalue(L, ti);
      lua_insert(L, -2);
      call_method(L, &R, "full_like", 2, 1);
    } else {
      lt_tensor *g = ltl_test(L, -1);
      if (!g) return ltl_error(L, fname, "grad_tensors[%d] must be a tensor or a number (got %s)", (int)i,
                              luaL_typename(L, -1));
      if (!g->storage) return ltl_error(L, fname, "grad_tensors[%d] was freed", (int)i);
      if (!same_shape(g->ndim, g->shape, t->ndim, t->shape)) {
        push_shape_str(L, g->ndim, g->shape);
        push_shape_str(L, t->ndim, t->shape);
        return ltl_error(L, fname, "Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape "
                        "of %s.", i, lua_tostring(L, -2), i, lua_tostring(L, -1));
      }
    }
    lua_rawseti(L, roots, 3 * i);
    lua_settop(L, roots);
  }
  int nin = 0, dups = 0;
  if (want_grad) {
    nin = as_list(L, 6);
    lua_newtable(L);
    R.capture = lua_gettop(L);
    lua_newtable(L);
    R.results = lua_gettop(L);
    lua_newtable(L);
    dups = lua_gettop(L);
    for (int i = 1; i <= nin; i++) {
      lua_rawgeti(L, 6, i);
      int xi = lua_gettop(L);
      lt_tensor *x = ltl_test(L, xi);
      if (!x || !x->requires_grad) return ltl_error(L, fname, "one of the differentiated Tensors does not require grad");
      if (!x->storage) return ltl_error(L, fname, "inputs[%d] was freed", i);
      int nr = push_edge(L, xi);
      int node = lua_gettop(L);
      lua_pushvalue(L, node);
      if (lua_rawget(L, R.capture) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, node);
        lua_pushvalue(L, -2);
        lua_rawset(L, R.capture);
      }
      if (lua_rawgeti(L, -1, nr) != LUA_TNIL) {
        lua_rawseti(L, dups, i);     /* the same tensor twice: copied after the run */
      } else {
        lua_pop(L, 1);
        lua_pushinteger(L, i);
        lua_rawseti(L, -2, nr);
      }
      lua_settop(L, xi - 1);
    }
  }
  execute(L, &R, roots, nout);
  if (!want_grad) return 0;
  lua_pushnil(L);
  while (lua_next(L, dups)) {
    lua_rawgeti(L, R.results, lua_tointeger(L, -1));
    lua_rawseti(L, R.results, lua_tointeger(L, -3));
    lua_pop(L, 1);
  }
  for (int i = 1; i <= nin; i++) {
    if (lua_rawgeti(L, R.results, i) == LUA_TNIL) {
      if (!allow_unused)
        return ltl_error(L, fname, "One of the differentiated Tensors appears to not have been used in the graph. "
                        "Set allow_unused=true if this is the desired behavior.");
    } else if (!R.create) {
      lt_tensor *g = ltl_test(L, -1);
      if (g && g->requires_grad) {
        call_method(L, &R, "detach", 1, 1);
        lua_rawseti(L, R.results, i);
        continue;
      }
    }
    lua_pop(L, 1);
  }
  lua_pushinteger(L, nin);
  lua_setfield(L, R.results, "n");
  lua_pushvalue(L, R.results);
  return 1;
}

/* T._ag_run(fname, outputs, grads, retain_graph, create_graph [, inputs, allow_unused])
   backward (inputs nil: accumulate into leaves) or grad (returns the list);
   runs with grad mode = create_graph, restored even on error. */
static int l_ag_run(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  lua_settop(L, 7);
  ltl_checkstring(L, 1);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_ag_ctx_key);
  int ctx = lua_gettop(L);
  lua_rawgeti(L, ctx, CTX_STATE);
  ag_state *A = (ag_state *)lua_touserdata(L, -1);
  /* the protected body: one closure per state, made on first use (not one
     per backward call) */
  if (lua_rawgeti(L, ctx, CTX_RUNP) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, run_protected, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, ctx, CTX_RUNP);
  }
  lua_replace(L, 8);
  lua_settop(L, 8);
  int nested = A->active > 0;
  if (nested) lua_newtable(L); else lua_pushnil(L);      /* 9: outer runs' node states */
  lua_pushvalue(L, 8);
  for (int i = 1; i <= 7; i++) lua_pushvalue(L, i);
  lua_pushinteger(L, (lua_Integer)++A->runs);
  lua_pushvalue(L, 9);
  int prev = S->grad_enabled;
  S->grad_enabled = lua_toboolean(L, 5);
  A->active++;
  int st = lua_pcall(L, 9, 1, 0);
  A->active--;
  S->grad_enabled = prev;
  if (nested) restore_states(L, 9);
  if (st != LUA_OK) return lua_error(L);
  return 1;
}

const ltl_reg ltl_reg_backward[] = {
  {"_sum_to", l_sum_to, LT_MODULE, NULL},
  {"_ag_run", l_ag_run, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
