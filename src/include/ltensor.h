/*
 * ltensor.h -- public C API of ltensor, for hosts that embed Lua 5.4.
 *
 * Tutorial
 * --------
 *   #include "ltensor.h"
 *
 *   lua_State *L = luaL_newstate();
 *   luaL_openlibs(L);
 *   luaL_requiref(L, "ltensor", luaopen_ltensor, 0);   -- T is now on the stack
 *   lua_pop(L, 1);
 *
 *   // hand a host buffer to Lua without copying; release() runs exactly once
 *   int64_t shape[2] = {480, 640};
 *   ltensor_push_external(L, pixels, LTENSOR_FLOAT32, 2, shape, NULL, free_pixels, pixels);
 *   lua_setglobal(L, "frame");
 *
 *   // read a tensor produced by a script
 *   ltensor_info info;
 *   lua_getglobal(L, "result");
 *   if (ltensor_get(L, -1, &info)) { ... info.data, info.shape, info.strides ... }
 *
 * Build: compile with -Isrc $(pkg-config --cflags lua5.4) and link
 * build/libltensor.a $(pkg-config --libs lua5.4 openblas) -lm -lpthread.
 *
 * Every failure is a Lua error raised on the given state; the library never
 * prints, exits or aborts.  All settings (default dtype, promotion mode, grad
 * mode, print options, random generator) live per lua_State, so independent
 * states may run on different threads at the same time.
 */
#ifndef LTENSOR_H
#define LTENSOR_H

#include <signal.h>
#include <lua.h>
#include "ltensor_types.h"   /* version, ltensor_dtype, ltensor_info: Lua-free */

/* Opens the whole library, its Lua modules included (no files needed), and
   returns 1 with the module table on the stack; usable with luaL_requiref. */
int luaopen_ltensor(lua_State *L);

/* Opens only the C core (what `require "ltensor.core"` loads). */
int luaopen_ltensor_core(lua_State *L);

/* Pushes a tensor that uses host memory without copying.  strides in
   elements, NULL for contiguous.  release(ud) is called exactly once: when
   the last tensor viewing this memory is collected, or at once if the push
   fails (a push with bad arguments raises a Lua error).  release may be NULL
   when the host keeps the memory alive for the state's whole life. */
void ltensor_push_external(lua_State *L, void *data, ltensor_dtype dtype,
                           int ndim, const int64_t *shape, const int64_t *strides,
                           void (*release)(void *ud), void *ud);

/* 1 and *info filled if the value at idx is a tensor, else 0; never raises.
   The pointers stay valid while the tensor is reachable. */
int ltensor_get(lua_State *L, int idx, ltensor_info *info);

/* Caps the tensor memory of this state at bytes (0: no limit, the
   default).  What counts: the heap blocks holding tensor data (every tensor
   of more than 256 bytes; smaller ones live in the Lua heap, which the
   host's lua_Alloc bounds; ltensor_push_external memory is the host's).  An
   allocation that would take the live bytes beyond the limit first gives
   back cached blocks and runs one full collection, then raises
   "ltensor.<function>: not enough memory (N bytes requested, limit L
   bytes, U in use)"; the state stays usable.  Lowering the limit below the
   live bytes frees nothing live: later allocations fail until tensors are
   collected.  Same as T.set_memory_limit(bytes) from Lua. */
void ltensor_set_memory_limit(lua_State *L, size_t bytes);

/* The state's interrupt flag, for stopping a long computation from outside:
   a SIGINT handler (the ltensor program's Ctrl-C) or another host thread
   stores a non-zero value; the op running on the state then stops at its
   next check and raises "ltensor.<function>: interrupted", clearing the
   flag.  Checked between the chunks of every parallel loop (elementwise,
   reductions, convolutions) and between panels of a large matrix product
   (a few hundred ms of work each: one OpenBLAS call cannot be stopped),
   and after each C function that records autograd.  Lua code itself is
   not stopped by the flag: a host that wants that too sets a hook, as
   lua.c does (lua_sethook with LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT,
   which is async-signal-safe).  Clear the flag after the pcall that was
   interrupted if nothing consumed it.  Storing to it is async-signal-safe;
   the pointer stays valid for the state's life.  NULL when ltensor is not
   open in L.  Never raises. */
volatile sig_atomic_t *ltensor_interrupt_flag(lua_State *L);

#endif
