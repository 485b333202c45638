-- The examples of the reference entries run: every entry of the areas whose
-- examples are self-contained (they build their own inputs) is loaded and
-- run with T and F = T.nn.functional in scope, so that a renamed option or
-- a changed call form shows up here rather than in a user's REPL.
local T = require "ltensor"
local help = require "ltensor.help"

-- Where numbers have no integer subtype (Lua 5.1, 5.2, LuaJIT) an example
-- that writes a whole-valued float (1.0, 2.) builds an int64 tensor: such an
-- example failing there is listed on the case's pending line (spec/host.lua),
-- any other failure fails.
local host = dofile("spec/host.lua")

-- areas whose every example is self-contained
local RUNNABLE = { structural = true, composites = true, linalg = true, random = true, nn = true, nn_modules = true, optim = true, onnx = true }

describe("the reference examples", function()
  -- an entry for a name that does not exist is docs_spec's failure, not this one's
  local public = {}
  for _, n in ipairs(help.public_names()) do public[n] = true end
  local by_area = {}
  for _, e in ipairs(help.entries()) do
    local method = e.name:match("^Tensor:(.*)$")
    if RUNNABLE[e.area] and (public[e.name] or (method and T._methods[method])) then
      by_area[e.area] = by_area[e.area] or {}
      table.insert(by_area[e.area], e)
    end
  end
  for area in pairs(RUNNABLE) do
    it("of the " .. area .. " area run", function()
      local failed, skipped = {}, {}
      for _, e in ipairs(by_area[area] or {}) do
        local env = setmetatable({ T = T, F = T.nn.functional, print = function() end }, { __index = _G })
        local f, err = load(e.example, "=" .. e.name, "t", env)
        if not f then
          failed[#failed + 1] = e.name .. ": " .. err
        else
          T.manual_seed(0)
          local ok, msg = pcall(f)
          if not ok and not host.has_integers and host.writes_whole_float(e.example) then
            skipped[#skipped + 1] = e.name
          elseif not ok then
            failed[#failed + 1] = e.name .. ": " .. tostring(msg)
          end
        end
      end
      assert.equal(0, #failed, table.concat(failed, "\n"))
      if #skipped > 0 then
        host.needs_integers(#skipped .. " examples write whole-valued float literals (1.0): " .. table.concat(skipped, ", "))
      end
    end)
  end
end)
