/*
 * luajit_host.c -- ltensor inside a LuaJIT host (issue 12), the way a game
 * engine or tool built on LuaJIT (LÖVE, Defold, OpenResty ...) embeds it.
 *
 * Build and run (make luajit-host does both):
 *   make LUA=luajit libs
 *   cc -std=c11 -Isrc $(pkg-config --cflags luajit) examples/luajit_host.c \
 *      build/luajit/libltensor.a $(pkg-config --libs luajit openblas) -lm -lpthread
 *
 * The host hands a frame buffer to Lua without copying, a script computes
 * on it with the JIT compiler on, and the host reads the result back.  The
 * 5.1 API has no luaL_requiref: the module is opened by calling
 * luaopen_ltensor as a Lua function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"

static int released;
static void release_frame(void *ud) { (void)ud; released++; }

static const char *script =
  "local T = frame_module\n"
  "assert(jit and jit.status(), 'the JIT compiler is on')\n"
  "-- every pixel times 2, then its mean: the loops run in C, not in the JIT\n"
  "local doubled = frame * 2\n"
  "result = doubled:mean(2)                    -- per-row means, 1-based dims\n"
  "-- Lua numbers on LuaJIT: whole-valued numbers are weak ints\n"
  "assert(T.tensor({ 1, 2 }).dtype == T.int64 and T.tensor({ 1.5 }).dtype == T.float32)\n"
  "-- no // or bitwise operators on LuaJIT: the methods instead\n"
  "assert(T.tensor({ 7 }):floor_divide(2):item() == 3)\n"
  "assert(T.tensor({ 6 }):bitwise_and(3):item() == 2)\n"
  "version = jit.version\n";

int main(void) {
  lua_State *L = luaL_newstate();
  if (!L) return 1;
  luaL_openlibs(L);

  /* require "ltensor" without files on disk: the library carries its modules */
  lua_pushcfunction(L, luaopen_ltensor);
  lua_pushliteral(L, "ltensor");
  if (lua_pcall(L, 1, 1, 0) != 0) { fprintf(stderr, "open: %s\n", lua_tostring(L, -1)); return 1; }
  lua_setglobal(L, "frame_module");

  /* a 2x4 float32 "frame" owned by the host, seen by Lua without a copy */
  static float pixels[2][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}};
  int64_t shape[2] = {2, 4};
  ltensor_push_external(L, pixels, LTENSOR_FLOAT32, 2, shape, NULL, release_frame, NULL);
  lua_setglobal(L, "frame");

  if (luaL_loadstring(L, script) != 0 || lua_pcall(L, 0, 0, 0) != 0) {
    fprintf(stderr, "script: %s\n", lua_tostring(L, -1));
    return 1;
  }

  ltensor_info info;
  lua_getglobal(L, "result");
  if (!ltensor_get(L, -1, &info) || info.ndim != 1 || info.shape[0] != 2) {
    fprintf(stderr, "result is not a 2-vector\n");
    return 1;
  }
  const float *m = (const float *)info.data;
  lua_getglobal(L, "version");
  printf("%s: row means of 2*frame = %g %g\n", lua_tostring(L, -1), m[0], m[1]);
  lua_pop(L, 2);
  int ok = m[0] == 5.0f && m[1] == 50.0f;

  lua_close(L);
  printf("frame released %d time(s)\n", released);
  ok = ok && released == 1;
  printf(ok ? "luajit host: ok\n" : "luajit host: FAILED\n");
  return ok ? 0 : 1;
}
