-- A memory budget per state (T.set_memory_limit, ltensor_set_memory_limit)
-- and what T.memory_stats reports.
local T = require "ltensor"
local MB = 1024 * 1024

local function msg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("T.set_memory_limit", function()
  local prev
  before_each(function() collectgarbage() prev = T.set_memory_limit(nil) end)
  after_each(function() T.set_memory_limit(prev) end)

  it("refuses tensor memory beyond the limit, naming the function, and the state stays usable", function()
    local live = T.memory_stats().live
    T.set_memory_limit(live + 6 * MB)
    local e = msg(T.zeros, 4 * MB)   -- 16 MB of float32
    assert.matches("^ltensor%.zeros: not enough memory %(%d+ bytes requested, limit %d+ bytes, %d+ in use%)$",
                   (e:gsub("^[^:]*:%d+: ", "")))
    assert.matches("ltensor%.randn: not enough memory", msg(T.randn, 4 * MB))
    local a = T.ones(MB)   -- 4 MB fits
    assert.matches("ltensor%.add: not enough memory", msg(function() return a + a end))
    assert.matches("ltensor%.cat: not enough memory", msg(T.cat, { a, a, a }, 1))
    assert.matches("ltensor%.exp: not enough memory", msg(function() return a:exp() end))
    -- still usable: smaller work goes on
    assert.are.equal(MB, a:sum():item())
    local b = T.ones(math.floor(MB / 8)) + 1
    assert.are.equal(math.floor(MB / 4), b:sum():item())
    assert.are.equal(3, T.tensor({ 1, 2 }):sum():item())
  end)

  it("collects garbage once before refusing: dropped tensors make room", function()
    T.set_memory_limit(T.memory_stats().live + 40 * MB)
    for _ = 1, 20 do
      local t = T.ones(4 * MB)   -- 16 MB each, dropped at once: 320 MB in total
      t:add_(1)
    end
    assert.is_true(T.memory_stats().live <= T.memory_stats().limit)
  end)

  it("gives cached blocks back to make room under the limit", function()
    local a = T.ones(4 * MB)
    local d = a * 2
    d = nil
    collectgarbage()   -- d's block is cached
    assert.is_true(T.memory_stats().cached >= 16 * MB)
    T.set_memory_limit(T.memory_stats().live + 24 * MB)   -- trims the cache to fit
    local s = T.memory_stats()
    assert.is_true(s.live + s.cached <= s.limit)
    local e = T.zeros(4 * MB + 1)   -- another size class (20 MB): new memory, within the limit
    assert.are.equal(0, e:sum():item())
    s = T.memory_stats()
    assert.is_true(s.live + s.cached <= s.limit)
  end)

  it("nil or 0 removes the limit and returns the previous one", function()
    assert.are.equal(0, T.set_memory_limit(12345678))
    assert.are.equal(12345678, T.memory_stats().limit)
    assert.are.equal(12345678, T.set_memory_limit(0))
    assert.are.equal(0, T.memory_stats().limit)
    T.set_memory_limit(5)
    assert.are.equal(5, T.set_memory_limit())
    assert.are.equal(0, T.memory_stats().limit)
  end)

  it("checks its argument", function()
    assert.matches("ltensor%.set_memory_limit: bad argument #1 %(the limit must be >= 0 bytes, got %-1%)",
                   msg(T.set_memory_limit, -1))
    assert.matches("ltensor%.set_memory_limit: bad argument #1 %(number expected, got string%)",
                   msg(T.set_memory_limit, "x"))
    assert.matches("ltensor%.set_memory_limit: bad argument #1 %(number has no integer representation%)",
                   msg(T.set_memory_limit, 1.5))
  end)

  it("leaves small tensors (inline in their userdata) outside the budget", function()
    T.set_memory_limit(1)
    local t = T.ones(64)   -- 256 bytes: Lua heap memory
    assert.are.equal(64, t:sum():item())
    assert.matches("not enough memory", msg(T.ones, 65))
  end)
end)

describe("T.memory_stats", function()
  it("reports live, cached and peak bytes of heap tensor data", function()
    collectgarbage()
    local s0 = T.memory_stats()
    for _, k in ipairs { "live", "cached", "peak", "limit", "cached_blocks", "cache_hits", "cache_misses",
                         "collections", "released", "collect_at" } do
      assert.are.equal("number", type(s0[k]), k)
      assert.is_true(s0[k] >= 0, k)
    end
    assert.are.equal("boolean", type(s0.huge_pages))
    local t = T.empty(MB)   -- 4 MB: one block of its size class
    local s1 = T.memory_stats()
    assert.is_true(s1.live - s0.live >= 4 * MB and s1.live - s0.live <= 5 * MB)
    assert.is_true(s1.peak >= s1.live)
    t:free()
    assert.are.equal(s0.live, T.memory_stats().live)
  end)

  it("starts the peak again with reset_peak", function()
    local t = T.empty(4 * MB)
    t:free()
    local s = T.memory_stats({ reset_peak = true })
    assert.is_true(s.peak >= 16 * MB)
    assert.are.equal(T.memory_stats().live, T.memory_stats().peak)
  end)

  it("checks its options", function()
    assert.matches("ltensor%.memory_stats: unknown option 'reset_pek' %(did you mean 'reset_peak'%?%)",
                   msg(T.memory_stats, { reset_pek = true }))
    assert.matches("ltensor%.memory_stats: bad argument #1 %(table expected, got number%)", msg(T.memory_stats, 1))
  end)
end)

describe("ltensor_set_memory_limit", function()
  local asan = os.getenv("LTENSOR_ASAN") == "1"
  local LIB = asan and "build/asan/libltensor.a" or "build/libltensor.a"
  local SAN = asan and "-fsanitize=address,undefined -fno-sanitize-recover=all -g" or ""

  it("caps a host's state from C", function()
    local exe = os.tmpname()
    local src = exe .. ".c"
    local f = assert(io.open(src, "w"))
    f:write([[
#include <stdio.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"
int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "ltensor", luaopen_ltensor, 1);
  lua_pop(L, 1);
  ltensor_set_memory_limit(L, (size_t)8 << 20);
  if (luaL_dostring(L, "local T = require 'ltensor'; return T.zeros(4 * 1024 * 1024)")) printf("refused: %s\n", lua_tostring(L, -1));
  lua_settop(L, 0);
  if (luaL_dostring(L, "local T = require 'ltensor'; return T.zeros(1024 * 1024):sum():item() // 1") == 0) printf("then: %lld\n", (long long)lua_tointeger(L, -1));
  ltensor_set_memory_limit(L, 0);
  if (luaL_dostring(L, "local T = require 'ltensor'; return T.zeros(4 * 1024 * 1024):numel()") == 0) printf("unlimited: %lld\n", (long long)lua_tointeger(L, -1));
  lua_close(L);
  return 0;
}
]])
    f:close()
    local p = assert(io.popen(("cc -std=c11 -Wall -Wextra -Werror %s -Isrc $(pkg-config --cflags lua5.4) %s -o %s %s "
      .. "$(pkg-config --libs lua5.4 openblas) -lz -lm -lpthread -ldl 2>&1 && cd / && LUA_PATH= LUA_CPATH= %s 2>&1"):format(SAN, src, exe, LIB, exe)))
    local out = p:read("*a")
    p:close()
    os.remove(exe)
    os.remove(src)
    assert.matches("refused: [^\n]*ltensor%.zeros: not enough memory %(1677%d+ bytes requested, limit 8388608 bytes", out)
    assert.matches("then: 0", out)
    assert.matches("unlimited: 4194304", out)
  end)

  -- A host's own lua_Alloc keeps seeing tensor memory (blocks included) and
  -- may refuse it; the error names the function and the state goes on.
  it("routes blocks through a host's lua_Alloc, which may refuse them", function()
    local exe = os.tmpname()
    local src = exe .. ".c"
    local f = assert(io.open(src, "w"))
    f:write([[
#include <stdio.h>
#include <stdlib.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"
static size_t used, most;
static void *counting(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) { if (p) used -= osize; free(p); return NULL; }
  size_t before = p ? osize : 0;
  if (used - before + nsize > (size_t)64 << 20) return NULL;   /* a 64 MB budget */
  void *q = realloc(p, nsize);
  if (q) { used = used - before + nsize; if (used > most) most = used; }
  return q;
}
int main(void) {
  lua_State *L = lua_newstate(counting, NULL);
  luaL_openlibs(L);
  luaL_requiref(L, "ltensor", luaopen_ltensor, 1);
  lua_pop(L, 1);
  size_t base = used;
  if (luaL_dostring(L, "local T = require 'ltensor'; x = T.zeros(4 * 1024 * 1024); return T.memory_stats().huge_pages") == 0)
    printf("huge pages: %d, seen: %d\n", lua_toboolean(L, -1), used - base >= ((size_t)16 << 20));
  lua_settop(L, 0);
  if (luaL_dostring(L, "local T = require 'ltensor'; return T.ones(16 * 1024 * 1024)")) printf("refused: %s\n", lua_tostring(L, -1));
  lua_settop(L, 0);
  if (luaL_dostring(L, "local T = require 'ltensor'; return (x + 1):sum():item() // 1") == 0) printf("then: %lld\n", (long long)lua_tointeger(L, -1));
  lua_close(L);
  printf("left: %zu\n", used);
  return 0;
}
]])
    f:close()
    local p = assert(io.popen(("cc -std=c11 -Wall -Wextra -Werror %s -Isrc $(pkg-config --cflags lua5.4) %s -o %s %s "
      .. "$(pkg-config --libs lua5.4 openblas) -lz -lm -lpthread -ldl 2>&1 && cd / && LUA_PATH= LUA_CPATH= %s 2>&1"):format(SAN, src, exe, LIB, exe)))
    local out = p:read("*a")
    p:close()
    os.remove(exe)
    os.remove(src)
    assert.matches("huge pages: 0, seen: 1", out)
    assert.matches("refused: [^\n]*ltensor%.ones: not enough memory %(67108928 bytes requested%)", out)
    assert.matches("then: 4194304", out)
    assert.matches("left: 0\n", out)
  end)
end)
