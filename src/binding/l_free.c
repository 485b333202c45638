/* l_free.c -- t:free() and __close: releasing a tensor's storage early, and
   deferring that release while an ltensor function may be using it.

   A C function reads its tensor arguments through lt_tensor pointers for
   its whole run, and between two reads it allocates: a userdata for its
   result, a block (l_tensor.c's alloc_block may run a collection step), a
   message.  Any allocation can run a step of the collector, and the step
   runs the finalizers (__gc) of the objects it found dead, so a finalizer
   such as `function() x:free() end` can run in the middle of `x + 1`:
   dropping x's storage there left the op reading freed memory (or a NULL
   storage).  So a free() made by a finalizer (or a debug hook) while a
   function of ltensor is on the stack below it (found by walking the
   stack: our C functions carry the settings as upvalue 1) is deferred: the
   tensor goes into a weak set and keeps its storage, valid and usable,
   until the next free() or __close made outside any ltensor function
   carries it out (or the collector frees the tensor, unreachable by then,
   as any other).  Lua 5.1-5.3 and LuaJIT do not name finalizer frames:
   there any free() under one of our C functions waits, but for the ones
   that run the caller's code and check their tensors after it. */
#include <string.h>
#include "l_lua.h"

static const char pending_key = 'f';

/* Is the function on top of the stack a C function of this state? */
static int is_ours(lua_State *L, const ltl_settings *S) {
  if (!lua_iscfunction(L, -1) || !lua_getupvalue(L, -1, 1)) return 0;
  int ours = lua_touserdata(L, -1) == (const void *)S;
  lua_pop(L, 1);
  return ours;
}

#if LUA_VERSION_NUM >= 504
/* Lua 5.4 names the frames the collector and the debug hooks start
   ("metamethod" __gc, "hook"): a free() runs inside an op without the op's
   knowledge exactly when such a frame lies between it and one of our C
   functions.  A callback an op calls itself (a backward hook, a custom
   Function's backward, T.with_promotion's function) frees at once: the op
   checks its tensors again when the callback returns. */
static int op_in_flight(lua_State *L, const ltl_settings *S) {
  lua_Debug ar;
  int unasked = 0;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "nf", &ar)) continue;
    if (ar.namewhat && ((strcmp(ar.namewhat, "metamethod") == 0 && ar.name && strcmp(ar.name, "__gc") == 0) ||
                        strcmp(ar.namewhat, "hook") == 0))
      unasked = 1;
    int ours = unasked && is_ours(L, S);
    lua_pop(L, 1);
    if (ours) return 1;
  }
  return 0;
}
#else
/* The registered name of the C function on top of the stack, or NULL. */
static const char *closure_name(lua_State *L) {
  const char *name = NULL;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_names) == LUA_TTABLE) {
    lua_pushvalue(L, -2);
    lua_rawget(L, -2);
    name = lua_tostring(L, -1);   /* interned by the names table: stays valid */
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return name;
}

/* Older hosts do not name finalizer frames: any of our C functions below
   counts, except the ones that call the caller's Lua code themselves and
   check their tensors after it (the autograd engine, T.with_promotion) and
   the unnamed closures (the engine's protected body, autograd plumbing). */
static int op_in_flight(lua_State *L, const ltl_settings *S) {
  static const char *const callers[] = {"_ag_run", "with_promotion", NULL};
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "f", &ar)) continue;
    int ours = is_ours(L, S);
    const char *name = ours ? closure_name(L) : NULL;
    for (int i = 0; name && callers[i]; i++)
      if (strcmp(name, callers[i]) == 0) name = NULL;
    lua_pop(L, 1);
    if (name) return 1;
  }
  return 0;
}
#endif

/* Drops the hold of the tensor at idx on its storage.  The heap block is
   released at once when no view of it was ever made; otherwise it goes
   when the last view is collected. */
static void free_now(lua_State *L, int idx) {
  lt_tensor *t = ltl_test(L, idx);
  if (!t || !t->storage) return;
  lt_storage *s = t->storage;
  t->storage = NULL;
  /* an explicit release returns the memory to the system, not to the cache */
  if (atomic_load(&s->refcount) == 1 && (s->block || s->release)) {
    if (s->block) lt_alloc_returned(s->pool, s->block_size);
    lt_storage_free(s);
  }
  lua_pushnil(L);
  lua_setiuservalue(L, idx, 2);
}

/* The deferred frees, now that no ltensor function is running. */
static void flush_pending(lua_State *L, ltl_settings *S) {
  S->free_pending = 0;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &pending_key) != LUA_TTABLE) { lua_pop(L, 1); return; }
  int set = lua_gettop(L);
  lua_newtable(L);   /* the set is cleared first: no insertion during a traversal */
  lua_rawsetp(L, LUA_REGISTRYINDEX, &pending_key);
  for (lua_pushnil(L); lua_next(L, set); lua_pop(L, 1)) {
    lua_pushvalue(L, -2);
    free_now(L, lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void defer(lua_State *L, ltl_settings *S, int idx) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &pending_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);   /* weak keys: an unreachable tensor is collected as usual */
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &pending_key);
  }
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  S->free_pending = 1;
}

/* The first free() of a state installs lua/ltensor/freed_guard.lua's
   wrappers (a public Lua function then names a freed argument in its own
   name; the installer is the module's value, loaded by ltensor/init.lua):
   until a tensor has been freed no argument can be, so a program that never
   frees pays nothing for the check (0.1-0.15 us a call).  Nothing when only
   ltensor.core is loaded; an error inside the installer is dropped (the C
   functions still refuse a freed tensor, under their own names). */
static void install_freed_guard(lua_State *L, ltl_settings *S) {
  S->freed_guard_on = 1;
  if (!lua_checkstack(L, 4)) return;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_getfield(L, -1, "ltensor.freed_guard");
    if (lua_type(L, -1) == LUA_TFUNCTION) (void)lua_pcall(L, 0, 0, 0);
  }
  lua_settop(L, top);
}

/* t:free() and __close.  Idempotent. */
int ltl_tensor_free(lua_State *L) {
  lt_tensor *t = ltl_test(L, 1);
  ltl_settings *S = ltl_settings_of(L);
  int busy = op_in_flight(L, S);
  if (t && t->storage) {
    if (busy) defer(L, S, 1);
    else free_now(L, 1);
    if (!S->freed_guard_on) install_freed_guard(L, S);
  }
  if (!busy && S->free_pending) flush_pending(L, S);
  return 0;
}
