-- The examples of the reference entries run as written: every entry of every
-- area is loaded and run in a fresh environment where only T and
-- F = T.nn.functional are defined (as `help` shows them to a user who just
-- typed `T = require "ltensor"`), so an example that uses a name it never
-- builds (`model`, `x`, `losses`), a renamed option or a changed call form
-- shows up here rather than in a user's REPL.  The state's settings (default
-- dtype, promotion, grad mode, print options, threads, memory limit, seed)
-- are put back after each example, so no example depends on another; an
-- example that writes files writes them under os.tmpname() and removes them.
local T = require "ltensor"
local help = require "ltensor.help"

-- Where numbers have no integer subtype (Lua 5.1, 5.2, LuaJIT) an example
-- that writes a whole-valued float (1.0, 2.) builds an int64 tensor: such an
-- example failing there is listed on the case's pending line (spec/host.lua),
-- any other failure fails.
local host = dofile("spec/host.lua")

local function settings()
  return { dtype = T.get_default_dtype(), promotion = T.get_promotion(), grad = T.is_grad_enabled(),
           print = T.get_printoptions(), threads = T.get_num_threads() }
end
local function restore(s)
  T.set_default_dtype(s.dtype)
  T.set_promotion(s.promotion)
  T.set_grad_enabled(s.grad)
  T.set_printoptions(s.print)
  T.set_num_threads(s.threads)
  T.set_memory_limit(nil)
end

-- the files in the current directory (an example must not leave any)
local function listing()
  local p = io.popen("ls -A")
  local out = p:read("*a")
  p:close()
  return out
end

-- run one entry's example; nil, or the error message
-- (reading a global the example never defines, even one whose nil goes
-- unnoticed as in print(model), is a failure)
-- (a temporary name the example asked os.tmpname for, and the files named
-- after it, must be gone when it ends)
local function run(e)
  local undefined, temps = {}, {}
  local env_os = setmetatable({ tmpname = function()
    local p = os.tmpname()
    temps[#temps + 1] = p
    return p
  end }, { __index = os })
  local env = setmetatable({ T = T, F = T.nn.functional, print = function() end, os = env_os }, { __index = function(_, k)
    local v = _G[k]
    if v == nil then undefined[#undefined + 1] = tostring(k) end
    return v
  end })
  local f, err = load(e.example, "=" .. e.name, "t", env)
  if not f then return err end
  local saved = settings()
  T.manual_seed(0)
  local ok, msg = pcall(f)
  restore(saved)
  local left = {}
  for _, p in ipairs(temps) do
    local ls = io.popen("ls -d '" .. p .. "'* 2>/dev/null")
    for name in ls:lines() do left[#left + 1] = name os.remove(name) end
    ls:close()
  end
  if not ok then return tostring(msg) end
  if #undefined > 0 then return "uses undefined names: " .. table.concat(undefined, ", ") end
  if #left > 0 then return "left temporary files: " .. table.concat(left, ", ") end
  return nil
end

describe("the reference examples", function()
  local by_area = {}
  for _, e in ipairs(help.entries()) do
    by_area[e.area] = by_area[e.area] or {}
    table.insert(by_area[e.area], e)
  end
  for _, area in ipairs(help.AREAS) do
    it("of the " .. area .. " area run in a fresh environment with only T and F", function()
      local before = listing()
      local failed, skipped = {}, {}
      for _, e in ipairs(by_area[area] or {}) do
        local err = run(e)
        if err and not host.has_integers and host.writes_whole_float(e.example) then
          skipped[#skipped + 1] = e.name
        elseif err then
          failed[#failed + 1] = e.name .. ": " .. err
        end
      end
      collectgarbage()
      assert.equal(0, #failed, table.concat(failed, "\n"))
      assert.equal(before, listing(), "an example of the " .. area .. " area left files in the current directory")
      if #skipped > 0 then
        host.needs_integers(#skipped .. " examples write whole-valued float literals (1.0): " .. table.concat(skipped, ", "))
      end
    end)
  end
end)
