-- ltensor_interrupt_flag (src/include/ltensor.h): a host thread stops a
-- long operation running on its state; the op raises
-- "ltensor.<fn>: interrupted", the flag is consumed and the state goes on.
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

local HOST = [[
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"

static void *stopper(void *p) {
  struct timespec ts = {0, 300 * 1000 * 1000};
  nanosleep(&ts, NULL);
  *(volatile sig_atomic_t *)p = 1;
  return NULL;
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "ltensor", luaopen_ltensor, 0);
  lua_setglobal(L, "T");
  volatile sig_atomic_t *flag = ltensor_interrupt_flag(L);
  if (!flag) { printf("no flag\n"); return 1; }
  if (luaL_dostring(L, "a = T.randn(6000, 6000); s = T.ones(3000, 3000, {dtype = T.int64})") != LUA_OK) return 1;
  const char *cases[] = { "return a:matmul(a)", "return T.matmul(s, s)", NULL };
  for (int i = 0; cases[i]; i++) {
    pthread_t th;
    pthread_create(&th, NULL, stopper, (void *)flag);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = luaL_dostring(L, cases[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(th, NULL);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%s | %s | %s | flag %d\n", cases[i], st == LUA_OK ? "ok" : lua_tostring(L, -1),
           took < 4.0 ? "fast" : "slow", (int)*flag);
    lua_settop(L, 0);
  }
  /* the state goes on: the flag was consumed */
  int st = luaL_dostring(L, "return T.ones(4, 4):matmul(T.ones(4, 4)):sum():item()");
  printf("after: %s\n", st == LUA_OK ? lua_tostring(L, -1) : lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
]]

describe("ltensor_interrupt_flag", function()
  local exe = os.tmpname()
  local src = exe .. ".c"
  teardown(function() os.remove(exe); os.remove(src) end)

  it("lets a host thread stop a long matmul, which raises and leaves the state usable", function()
    local f = assert(io.open(src, "w"))
    f:write(HOST)
    f:close()
    local out, rc = sh(("cc -std=c11 -Wall -Wextra -Werror %s -Isrc/include $(pkg-config --cflags lua5.4) %s -o %s %s "
      .. "$(pkg-config --libs lua5.4 openblas) -lm -lpthread"):format(SAN, src, exe, LIB))
    assert.are.equal(0, rc, out)
    out, rc = sh(exe)
    assert.are.equal(0, rc, out)
    assert.truthy(out:find("return a:matmul(a) | ltensor.matmul: interrupted | fast | flag 0", 1, true), out)
    assert.truthy(out:find("return T.matmul(s, s) | ltensor.matmul: interrupted | fast | flag 0", 1, true), out)
    assert.truthy(out:find("after: 64", 1, true), out)
  end)
end)
