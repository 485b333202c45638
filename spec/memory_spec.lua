-- Tensor memory is visible to the collector: a loop of large temporaries
-- stays bounded without collectgarbage, and <close> frees at once.
-- Runs examples/memory.lua in a fresh lua5.4 so the peak RSS is its own.
local function run_memory(count, mode)
  local cmd = ("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' "
    .. "lua5.4 examples/memory.lua %d %s 2>&1; echo \"rc=$?\""):format(count, mode)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
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
    assert.is_true(during - before >= 24, out)   -- 32 MB were touched
    assert.is_true(during - after >= 24, out)    -- and returned at once
  end)
end)
