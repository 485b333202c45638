-- The embedding C API (src/include/ltensor.h): examples/embed_host.c is a host that
-- links build/libltensor.a statically and checks zero-copy external memory,
-- release() exactly once, ltensor_get, error recovery, 0 bytes outstanding
-- after lua_close, and two states on two threads.  Under `make asan`
-- (LTENSOR_ASAN=1) it is built with the sanitizers against build/asan/.
local asan = os.getenv("LTENSOR_ASAN") == "1"
local LIB = asan and "build/asan/libltensor.a" or "build/libltensor.a"
local SAN = asan and "-fsanitize=address,undefined -fno-sanitize-recover=all -g" or ""

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local body, rc = out:match("^(.-)rc=(%d+)\n?$")
  return body, tonumber(rc)
end

local function build(src, exe)
  return sh(("cc -std=c11 -Wall -Wextra -Werror %s -Isrc $(pkg-config --cflags lua5.4) %s -o %s %s "
    .. "$(pkg-config --libs lua5.4 openblas) -lm -lpthread"):format(SAN, src, exe, LIB))
end

describe("the embedding C API", function()
  local exe = os.tmpname()
  local src = exe .. ".c"
  teardown(function() os.remove(exe); os.remove(src) end)

  it("builds the example host against the static library without warnings", function()
    local out, rc = build("examples/embed_host.c", exe)
    assert.are.equal(0, rc, out)
  end)

  it("runs the host: external memory, release once, errors, 0 bytes left, two threads", function()
    local out, rc = sh("cd / && LUA_PATH= LUA_CPATH= LUA_INIT= " .. exe)
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("0 outstanding after close", 1, true), out)
    assert.is_truthy(out:find("two threads: ok, ok", 1, true), out)
    assert.is_truthy(out:find("all embedding checks passed", 1, true), out)
  end)

  it("reports a missing package library instead of crashing", function()
    local f = assert(io.open(src, "w"))
    f:write([[
#include <stdio.h>
#include <string.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"
int main(void) {
  lua_State *L = luaL_newstate();
  luaL_requiref(L, "_G", luaopen_base, 1);   /* base library only: no require */
  lua_pop(L, 1);
  lua_pushcfunction(L, luaopen_ltensor);
  int st = lua_pcall(L, 0, 1, 0);
  const char *msg = lua_tostring(L, -1);
  int ok = st != LUA_OK && msg && strstr(msg, "package library");
  printf("%s\n", msg ? msg : "?");
  lua_close(L);
  return ok ? 0 : 1;
}
]])
    f:close()
    local out, rc = build(src, exe)
    assert.are.equal(0, rc, out)
    out, rc = sh(exe)
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:match("^ltensor: luaopen_ltensor needs the package library"), out)
  end)

  it("lets a host register the library through package.preload and require it", function()
    local f = assert(io.open(src, "w"))
    f:write([[
#include <stdio.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"
int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_ltensor);
  lua_setfield(L, -2, "ltensor");
  lua_pop(L, 1);
  int st = luaL_dostring(L,
    "package.path = '' package.cpath = ''\n"
    "local T = require 'ltensor'\n"
    "assert(require('ltensor.core') == T and require('ltensor.optim') == T.optim)\n"
    "local x = T.ones(2, 2)\n"
    "print(x:size(1) + x:size(2), tostring(x):match('^tensor') ~= nil)");
  if (st != LUA_OK) printf("%s\n", lua_tostring(L, -1));
  lua_close(L);
  return st;
}
]])
    f:close()
    local out, rc = build(src, exe)
    assert.are.equal(0, rc, out)
    out, rc = sh(exe)
    assert.are.equal(0, rc, out)
    assert.are.equal("4\ttrue\n", out)
  end)
end)
