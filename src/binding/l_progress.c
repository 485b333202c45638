/*
 * l_progress.c -- what T.utils.progress (lua/ltensor/utils/progress.lua) needs
 * from the host and Lua's libraries lack:
 *
 *   T._isatty(fd_or_file) -> boolean
 *   T._monotonic() -> seconds on a monotonic clock
 *   T._term_columns(fd_or_file) -> the terminal's width in columns, or nil
 */
#include <stdio.h>
#include <sys/ioctl.h>
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

/* the descriptor of an integer or an open Lua file at idx, else -1 */
static int fd_arg(lua_State *L, int idx) {
  if (lua_isinteger(L, idx)) return (int)lua_tointeger(L, idx);
  luaL_Stream *s = (luaL_Stream *)luaL_testudata(L, idx, LUA_FILEHANDLE);
  return s && ltc_stream_open(s) ? fileno(s->f) : -1;
}

static int l_isatty(lua_State *L) {
  int fd = fd_arg(L, 1);
  lua_pushboolean(L, fd >= 0 && isatty(fd));
  return 1;
}

/* The window width the terminal reports (TIOCGWINSZ), so that a redrawn
   line never wraps; nil when fd is no terminal or reports no width. */
static int l_term_columns(lua_State *L) {
  int fd = fd_arg(L, 1);
  struct winsize ws;
  if (fd < 0 || ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, ws.ws_col);
  return 1;
}

const ltl_reg ltl_reg_progress[] = {
  {"_isatty", l_isatty, LT_MODULE, NULL},
  {"_monotonic", l_monotonic, LT_MODULE, NULL},
  {"_term_columns", l_term_columns, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
