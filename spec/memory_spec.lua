-- Tensor memory is visible to the collector: a loop of large temporaries
-- stays bounded without collectgarbage, and <close> frees at once.
-- Runs examples/memory.lua in a fresh lua5.4 so the peak RSS is its own.
local function run_memory(count, mode)
  local cmd = ("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' "
    .. "lua5.4 examples/memory.lua %d %s 2>&1; echo \"rc=$?\""):format(count, mode)
  local p = assert(io.popen(cmd))
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("rc=(%d+)"))
end

describe("tensor memory", function()
  -- 80 tensors of 32 MB are 2.5 GB in total: without GC hints they pile up
  -- far beyond the bound.
  for _, mode in ipairs { "incremental", "generational" } do
    it("stays below 1 GB peak RSS for 80 dropped 32 MB tensors (" .. mode .. " GC)", function()
      local out, rc = run_memory(80, mode)
      assert.are.equal(0, rc, out)
      local peak = tonumber(out:match("peak RSS: (%d+) MB"))
      assert.is_truthy(peak, out)
      assert.is_true(peak < 1024, out)
      assert.is_true(peak >= 32, "the tensors did not take memory: " .. out)   -- the test can see them
    end)
  end

  it("frees a <close> tensor at scope exit", function()
    local out, rc = run_memory(1, "incremental")
    assert.are.equal(0, rc, out)
    local before, during, after = out:match("<close>: RSS (%d+) MB %-> (%d+) MB inside the scope %-> (%d+) MB")
    before, during, after = tonumber(before), tonumber(during), tonumber(after)
    assert.is_truthy(after, out)
    assert.is_true(during >= 30 and before <= during, out)   -- 32 MB resident in the scope (maybe a cached block)
    assert.is_true(during - after >= 24, out)    -- and returned at once
  end)

  -- Operator results (a * a) are metamethod temporaries that generational
  -- mode promotes to old; without the forced full collection they piled up
  -- at 4 MB per iteration.
  for _, mode in ipairs { "incremental", "generational" } do
    it("stays bounded for 300 metamethod temporaries of 4 MB (" .. mode .. " GC)", function()
      local code = ([[
        collectgarbage("%s")
        local T = require "ltensor"
        local a = T.ones(1024 * 1024)
        for i = 1, 300 do local d = a * a end
        local f = io.open("/proc/self/status"); local s = f:read("*a"); f:close()
        print("peak " .. s:match("VmHWM:%%s*(%%d+)"))
      ]]):format(mode)
      local p = assert(io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 -e '"
        .. code:gsub("'", "'\\''") .. "' 2>&1"))
      local out = p:read("*a")
      p:close()
      local peak = tonumber(out:match("peak (%d+)"))
      assert.is_truthy(peak, out)
      assert.is_true(peak < 200 * 1024, out)   -- 300 x 4 MB = 1.2 GB if nothing is freed
    end)
  end

  -- In a fresh state: within the spec run, other specs' dead blocks (and the
  -- library's own forced collections) change the cache under the test.
  local function fresh_state(script)
    local f = os.tmpname()
    local h = assert(io.open(f, "w")) h:write(script) h:close()
    local p = assert(io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 " .. f .. " 2>&1"))
    local out = p:read("*a")
    p:close()
    os.remove(f)
    return out
  end

  it("reuses released large blocks through the state's cache", function()
    local out = fresh_state [[
      local T = require "ltensor"
      local a = T.ones(1024 * 1024)
      local d = a * a
      d = nil
      collectgarbage()   -- d's block goes to the cache
      local n, bytes = T._cache_info()
      local hits = T.memory_stats().cache_hits
      local e = T.zeros(1024 * 1024)   -- takes the cached block
      local n2 = T._cache_info()
      print(n, bytes, n2, e:sum():item(), T.memory_stats().cache_hits - hits)
    ]]
    local n, bytes, n2, sum, hits = out:match("^(%d+)\t(%d+)\t(%d+)\t(%S+)\t(%d+)")
    assert.is_truthy(n, out)
    n, bytes, n2 = tonumber(n), tonumber(bytes), tonumber(n2)
    assert.is_true(n >= 1 and bytes >= 4 * 1024 * 1024, out)
    assert.are.equal(n - 1, n2, out)
    assert.are.equal("0.0", sum, out)   -- a reused block is initialised like a fresh one
    assert.are.equal("1", hits, out)
  end)

  -- A block is given back once it stayed unused for a whole collection
  -- cycle: the cycle that frees a tensor caches its block, the next one
  -- (two at most, depending on the order of the finalizers) frees it.
  for _, mode in ipairs { "incremental", "generational" } do
    it("gives idle cached blocks back to the system on collectgarbage() (" .. mode .. " GC)", function()
      local out = fresh_state(([[
        collectgarbage("%s")
        local T = require "ltensor"
        local a = T.ones(4 * 1024 * 1024)
        local d = a * a
        d = nil
        collectgarbage()
        local cached = T.memory_stats().cached
        collectgarbage() collectgarbage()
        local s = T.memory_stats()
        print(cached, s.cached, s.live)
      ]]):format(mode))
      local c1, c2, live = out:match("^(%d+)\t(%d+)\t(%d+)")
      assert.is_truthy(c1, out)
      assert.is_true(tonumber(c1) >= 16 * 1024 * 1024, out)
      assert.are.equal(0, tonumber(c2), out)
      assert.is_true(tonumber(live) >= 16 * 1024 * 1024 and tonumber(live) < 17 * 1024 * 1024, out)   -- a alone
    end)
  end

  -- The fresh-output loop of the benchmark: each result is dropped at once;
  -- the blocks come back through the paced collections, so after the first
  -- few the loop allocates no new memory.
  for _, mode in ipairs { "incremental", "generational" } do
    it("runs a loop of fresh 64 MB results from the cache (" .. mode .. " GC)", function()
      local out = fresh_state(([[
        collectgarbage("%s")
        local T = require "ltensor"
        local n = 16 * 1024 * 1024
        local a, b = T.ones(n), T.ones(n)
        for i = 1, 10 do local c = a + b end
        local s0 = T.memory_stats()
        for i = 1, 40 do local c = a + b end
        local s = T.memory_stats()
        print(s.cache_misses - s0.cache_misses, s.cache_hits - s0.cache_hits, s.peak)
      ]]):format(mode))
      local misses, hits, peak = out:match("^(%d+)\t(%d+)\t(%d+)")
      assert.is_truthy(misses, out)
      assert.is_true(tonumber(hits) >= 39, out)
      assert.is_true(tonumber(misses) <= 1, out)
      assert.is_true(tonumber(peak) <= 8 * 64 * 1024 * 1024, out)   -- a, b and a few results
    end)
  end

  -- A training loop's rhythm: a forward keeps 400 MB of activations live at
  -- once (more than the 256 MB the cache keeps beside little live data), a
  -- backward drops them, and the next step wants them all again; several
  -- paced collections run within one step.  Blocks stay cached across steps
  -- (within the program's own peak), so after the first steps no step faults
  -- in new memory: before, every step gave ~450 MB back and took it again
  -- (a third of a TransformerEncoder training step on this VM).
  for _, mode in ipairs { "incremental", "generational" } do
    it("keeps a training step's activations cached from one step to the next (" .. mode .. " GC)", function()
      local out = fresh_state(([[
        collectgarbage("%s")
        local T = require "ltensor"
        local x = T.ones(1024 * 1024)   -- 4 MB
        local function step()
          local acts = {}
          for i = 1, 100 do acts[i] = x * i end
          local g = x * 0
          for i = 100, 1, -1 do g = g + acts[i] acts[i] = nil end
          return g
        end
        for _ = 1, 4 do step() end
        local s0 = T.memory_stats()
        for _ = 1, 6 do step() end
        local s = T.memory_stats()
        print(s.cache_misses - s0.cache_misses, s.released - s0.released, s.peak)
      ]]):format(mode))
      local misses, released, peak = out:match("^(%d+)\t(%d+)\t(%d+)")
      assert.is_truthy(misses, out)
      assert.are.equal(0, tonumber(misses), out)
      assert.are.equal(0, tonumber(released), out)
      assert.is_true(tonumber(peak) < 1024 * 1024 * 1024, out)   -- 400 MB live, plus garbage between collections
    end)
  end

  -- Mid-size results (256 KB): in generational mode a miss runs a young
  -- collection first, which frees the last op's result, so the loop reuses
  -- a couple of warm blocks instead of walking through 64 MB of new ones
  -- before a full collection (the regression of session 3: matmul 256 0.2x).
  it("reuses a few warm blocks for a loop of 256 KB results (generational GC)", function()
    local out = fresh_state [[
      collectgarbage("generational")
      local T = require "ltensor"
      local a, b = T.ones(256, 256), T.ones(256, 256)
      for i = 1, 10 do local c = a + b end
      local s0 = T.memory_stats()
      for i = 1, 500 do local c = a + b; c = T.matmul(a, b) end
      local s = T.memory_stats()
      print(s.cache_misses - s0.cache_misses, s.collections - s0.collections, s.peak)
    ]]
    local misses, colls, peak = out:match("^(%d+)\t(%d+)\t(%d+)")
    assert.is_truthy(misses, out)
    assert.is_true(tonumber(misses) <= 8, out)
    assert.are.equal(0, tonumber(colls), out)   -- no full collection needed
    assert.is_true(tonumber(peak) <= 16 * 256 * 1024, out)
  end)

  -- An op's scratch (im2col, Winograd buffers) goes back to the cache when
  -- the op ends, without the collector: it is not garbage, so it does not
  -- bring the next paced full collection closer (batch-1 CNN passes are
  -- mostly scratch: counted, it ran a full collection every other pass).
  for _, mode in ipairs { "incremental", "generational" } do
    it("does not count an op's scratch toward the paced full collection (" .. mode .. " GC)", function()
      local out = fresh_state(([[
        collectgarbage("%s")
        local T = require "ltensor"
        T.set_num_threads(1)
        local F = T.nn.functional
        -- per call: 590 KB of im2col scratch, a 64 KB output left as garbage
        local x, w = T.ones(1, 256, 8, 8), T.ones(256, 256, 3, 3)
        local y = F.conv2d(x, w, nil, { padding = 1 })
        collectgarbage() collectgarbage()
        local s0 = T.memory_stats()
        for i = 1, 400 do y = F.conv2d(x, w, nil, { padding = 1 }) end
        local s = T.memory_stats()
        print(s.collections - s0.collections, s.cache_hits - s0.cache_hits)
      ]]):format(mode))
      local colls, hits = out:match("^(%d+)\t(%d+)")
      assert.is_truthy(colls, out)
      assert.is_true(tonumber(hits) >= 400, out)   -- 236 MB of scratch, from the cache
      -- 26 MB of garbage outputs: under the 64 MB between paced collections
      assert.are.equal(0, tonumber(colls), out)
    end)
  end

  -- In incremental mode a step is not a cheap young collection: the steps
  -- back off and the full collections keep the loop bounded.
  it("keeps a loop of 256 KB results bounded (incremental GC)", function()
    local out = fresh_state [[
      collectgarbage("incremental")
      local T = require "ltensor"
      local a, b = T.ones(256, 256), T.ones(256, 256)
      for i = 1, 2000 do local c = a + b end
      local s = T.memory_stats()
      print(s.peak, s.live)
    ]]
    local peak, live = out:match("^(%d+)\t(%d+)")
    assert.is_truthy(peak, out)
    assert.is_true(tonumber(peak) <= 200 * 1024 * 1024, out)
    assert.is_true(tonumber(live) <= 100 * 1024 * 1024, out)
  end)
end)
