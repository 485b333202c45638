-- bench/ab_worker.lua: one side of bench/ab.py.  Runs in the checkout whose
-- library it times (BENCH_ROOT, the current directory) with the cases of the
-- checkout that runs ab.py (BENCH_HERE), so both builds time the same cases.
-- Reads case names on stdin, answers seconds per op (or "ERROR ...").
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
-- BENCH_THREADS=1: both builds on one thread (ab.py also sets
-- OPENBLAS_NUM_THREADS): the code paths compared without the 2-core
-- machine's thread placement, which moves 2-thread rows by +-40% per process
if os.getenv("BENCH_THREADS") then T.set_num_threads(tonumber(os.getenv("BENCH_THREADS"))) end
local cases = dofile(os.getenv("BENCH_HERE") .. "/bench/cases.lua")
local scale = tonumber(os.getenv("BENCH_SCALE") or "1")
local by_name = {}
for _, c in ipairs(cases) do by_name[c.name] = c end
-- wall time from date(1), the same for both builds (older ones lack
-- T._clock, and os.clock adds up the CPU time of every thread); a call
-- costs about a millisecond, so cases run long enough (BENCH_SCALE >= 0.3)
local function clock()
  local f = io.popen("date +%s.%N")
  local t = tonumber(f:read("*l"))
  f:close()
  return t
end

for name in io.lines() do
  local c, answer = by_name[name], "ERROR no such case"
  if c then
    local ok, s = pcall(c.setup, T)
    if ok then ok = pcall(c.op, s) end
    if ok then
      local iters = math.max(1, math.floor(c.iters * scale))
      local t0 = clock()
      for _ = 1, iters do c.op(s) end
      local t1 = clock()
      answer = ("%.6g"):format((t1 - t0) / iters)
    else
      answer = "ERROR setup or op failed"
    end
    s = nil
    collectgarbage()
  end
  io.write(answer, "\n")
  io.flush()
end
