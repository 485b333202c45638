-- LSTM training step (issue 8's case): LSTM 32->64, seq 20, batch 16, the
-- last step -> Linear(64, 10), cross entropy, Adam.  Prints the median
-- microseconds per step of N timed steps after a warm-up.
--   lua5.4 bench/lstm_train.lua [steps] [mode: lstm|gru|infer]
-- (bench/lstm_train.py is the same step in PyTorch; run both in one go with
-- sh bench/lstm_compare.sh and compare ratios)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
local nn = T.nn
local steps = tonumber(arg[1]) or 200
local mode = arg[2] or "lstm"
T.manual_seed(0)
local rnn = mode == "gru" and nn.GRU(32, 64) or nn.LSTM(32, 64)
local head = nn.Linear(64, 10)
local params = rnn:parameters()
for _, p in ipairs(head:parameters()) do params[#params + 1] = p end
local opt = T.optim.Adam(params, { lr = 1e-3 })
local x = T.randn({ 20, 16, 32 })
local y = T.randint(1, 11, { 16 })
local function step()
  if mode == "infer" then
    return T.no_grad(function() local out = rnn(x) return head(out[20]) end)
  end
  opt:zero_grad()
  local out = rnn(x)
  local loss = nn.functional.cross_entropy(head(out[20]), y)
  loss:backward()
  opt:step()
end
for _ = 1, 20 do step() end
local times = {}
-- BENCH_CPU=1: process CPU time (steadier than wall time on a loaded machine;
-- use with OPENBLAS_NUM_THREADS=1 and PyTorch at 1 thread)
local clock = os.getenv("BENCH_CPU") and os.clock or (T._clock or os.clock)
for i = 1, steps do
  local t0 = clock()
  step()
  times[i] = clock() - t0
end
table.sort(times)
print(string.format("%.1f", times[math.floor((#times + 1) / 2)] * 1e6))
