-- T.utils.progress: yields the wrapped values; plain lines (no \r) when the
-- output is not a terminal, a bar redrawn in place when it is.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local H = dofile("spec/helpers.lua")
local progress = T.utils.progress

local function capture(fn)
  local f = assert(io.tmpfile())
  fn(f)
  f:seek("set")
  local s = f:read("*a")
  f:close()
  return s
end

describe("progress", function()
  it("yields 1..n and writes no carriage return to a file", function()
    local got = {}
    local out = capture(function(f)
      for i in progress(100, { file = f, desc = "train" }) do got[#got + 1] = i end
    end)
    assert.equal(100, #got)
    for i = 1, 100 do assert.equal(i, got[i]) end
    assert.is_nil(out:find("\r", 1, true))
    -- one final line (the loop took less than the interval)
    assert.truthy(out:find("^train: 100/100 %(100%%%) %[%d%d:%d%d<00:00, [^%]]+it/s%]\n$"), out)
  end)

  it("detects that a file is not a terminal", function()
    local f = assert(io.tmpfile())
    assert.is_false(T._isatty(f))
    f:close()
    assert.is_false(T._isatty(-1))
  end)

  it("writes a line every interval seconds", function()
    local out = capture(function(f)
      for _ in progress(5, { file = f, interval = 0 }) do end
    end)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(5, #lines)   -- after each item; the final one is not repeated
    assert.truthy(lines[1]:find("^1/5 %(20%%%)"))
    assert.truthy(lines[5]:find("^5/5 %(100%%%)"))
    assert.is_nil(out:find("\r", 1, true))
  end)

  it("wraps a DataLoader, yielding each batch's values, with #loader as total", function()
    local ds = T.utils.data.TensorDataset(T.arange(1, 11), T.arange(11, 21))
    local loader = T.utils.data.DataLoader(ds, { batch_size = 4 })
    local xs, ys = {}, {}
    local out = capture(function(f)
      for xb, yb in progress(loader, { file = f }) do
        xs[#xs + 1] = xb:numel()
        ys[#ys + 1] = yb[1]:item()
      end
    end)
    assert.same({ 4, 4, 2 }, xs)
    assert.same({ 11, 15, 19 }, ys)
    assert.truthy(out:find("^3/3 "))
  end)

  it("wraps lists and iterator functions", function()
    local seen = {}
    local out = capture(function(f)
      for v, i in progress({ "a", "b", "c" }, { file = f }) do seen[i] = v end
    end)
    assert.same({ "a", "b", "c" }, seen)
    assert.truthy(out:find("^3/3"))
    local k = 0
    out = capture(function(f)
      for v in progress(function() k = k + 1 if k <= 4 then return k * 10 end end, { file = f, unit = "batch" }) do
        seen[#seen + 1] = v
      end
    end)
    assert.equal(40, seen[#seen])
    assert.truthy(out:find("^4batch %["), out)
  end)

  it("finishes the line when the loop is left by break", function()
    host.needs_lua54("a for-in loop closes its iterator's to-be-closed value on break")
    local out = capture(function(f)
      for i in progress(10, { file = f }) do if i == 3 then break end end
    end)
    assert.truthy(out:find("^2/10 %(20%%%)"), out)
  end)

  it("draws a bar in place on a terminal, with postfix values", function()
    local out = capture(function(f)
      local bar = progress(4, { file = f, tty = true, refresh = 0, desc = "ep 1", width = 8 })
      for i in bar do bar:set_postfix({ loss = 1 / i }) end
    end)
    assert.truthy(out:find("\r", 1, true))
    assert.truthy(out:find("ep 1:   0%|........| 0/4", 1, true), out)
    assert.truthy(out:find("ep 1: 100%|########| 4/4 [", 1, true), out)
    assert.truthy(out:find("loss=0.25]", 1, true), out)
    assert.equal("\n", out:sub(-1))
  end)

  it("write prints a line above the bar", function()
    local out = capture(function(f)
      local bar = progress(2, { file = f, tty = true, refresh = 0, width = 4 })
      for i in bar do bar:write("step " .. i) end
    end)
    assert.truthy(out:find("\r%s+\rstep 1\n\r  0%%|....| 0/2"), out)
    local plain = capture(function(f)
      local bar = progress(2, { file = f })
      for i in bar do bar:write("step " .. i) end
    end)
    assert.truthy(plain:find("^step 1\nstep 2\n2/2 "), plain)
  end)

  it("disable writes nothing; zero counts are fine", function()
    local out = capture(function(f)
      for _ in progress(3, { file = f, disable = true }) do end
      for _ in progress(0, { file = f, tty = false }) do error("no item") end
    end)
    assert.truthy(out == "" or out:find("^0/0"))
  end)

  it("checks its arguments", function()
    H.raises("ltensor.utils.progress: unknown option 'descr' (did you mean 'desc'?)", function() progress(3, { descr = "x" }) end)
    H.raises("ltensor.utils.progress: expected a count, a list, a DataLoader or an iterator function, got string",
      function() progress("x") end)
    H.raises("ltensor.utils.progress: count must be non-negative, got -1", function() progress(-1) end)
  end)
end)
