/*
 * l_progress.c -- what T.utils.progress (lua/ltensor/utils/progress.lua) needs
 * from the host and Lua's libraries lack:
 *
 *   T._isatty(fd_or_file) -> boolean
 *   T._monotonic() -> seconds on a monotonic clock
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "l_lua.h"

/* Seconds from an arbitrary origin on a clock that never jumps (progress
   rates and ETAs; os.clock is CPU time, os.time has 1 s resolution). */
static int l_monotonic(lua_State *L) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
    lua_pushnumber(L, (lua_Number)time(NULL));
    return 1;
  }
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

static int l_isatty(lua_State *L) {
  int fd = -1;
  if (lua_isinteger(L, 1)) {
    fd = (int)lua_tointeger(L, 1);
  } else {
    luaL_Stream *s = (luaL_Stream *)luaL_testudata(L, 1, LUA_FILEHANDLE);
    if (s && ltc_stream_open(s)) fd = fileno(s->f);
  }
  lua_pushboolean(L, fd >= 0 && isatty(fd));
  return 1;
}

const ltl_reg ltl_reg_progress[] = {
  {"_isatty", l_isatty, LT_MODULE, NULL},
  {"_monotonic", l_monotonic, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
