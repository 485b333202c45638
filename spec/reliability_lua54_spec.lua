-- Reliability: a tensor freed by <close> while autograd needs it (Lua 5.4).
-- Lua 5.4 only (issue 12): these cases use `local x <close>`, which older
-- hosts cannot parse; t:free() is tested in the main file.

-- tensors freed while autograd still needs them, saves that never destroy
-- what stands at the path, and loader errors inside the contract.
local T = require "ltensor"

local tmpdir = os.tmpname()
os.remove(tmpdir)
os.execute("mkdir -p " .. tmpdir)
local function tmp(name) return tmpdir .. "/" .. name end

local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  assert.truthy(tostring(err):find(substr, 1, true), "error was: " .. tostring(err))
end

local function sh(cmd) local p = io.popen(cmd .. " 2>&1") local o = p:read("*a") p:close() return (o:gsub("\n$", "")) end
local function write(path, s) local f = assert(io.open(path, "wb")) f:write(s) f:close() end
local function read(path) local f = assert(io.open(path, "rb")) local s = f:read("*a") f:close() return s end


describe("a tensor freed while autograd still needs it", function()
  it("raises a clear error from backward (was a segfault) when freed by <close>", function()
    local a = T.randn(300, { requires_grad = true })
    local y
    do
      local b <close> = T.randn(300)
      y = a * b
    end
    raises("ltensor.backward: a tensor saved by MulBackward0 for the gradient computation was freed",
      function() y:sum():backward() end)
  end)
end)
