-- bench/run.lua: time ltensor on bench/cases.lua; prints "name<TAB>seconds per op".
-- usage: lua5.4 bench/run.lua [filter]   (from the checkout root)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
local cases = dofile("bench/cases.lua")
local filter = arg[1]
local scale = tonumber(os.getenv("BENCH_SCALE") or "1")

for i, c in ipairs(cases) do
  if not filter or c.name:find(filter, 1, true) then
    io.stderr:write(string.format("[%d/%d] %s ...\n", i, #cases, c.name))
    local ok, s = pcall(c.setup, T)
    if not ok then
      print(c.name .. "\tERROR " .. tostring(s):gsub("\n", " "))
    else
      local op = c.op
      local okw, err = pcall(op, s)
      if not okw then
        print(c.name .. "\tERROR " .. tostring(err):gsub("\n", " "))
      else
        local iters = math.max(1, math.floor(c.iters * scale))
        local best = math.huge
        for _ = 1, 3 do
          local t0 = T._clock()
          for _ = 1, iters do op(s) end
          local dt = (T._clock() - t0) / iters
          if dt < best then best = dt end
        end
        print(string.format("%s\t%.6g", c.name, best))
      end
    end
  end
end
