-- ltensor.nn.functional.pad: constant, reflect, replicate and circular
-- padding, composed from narrow/cat/index_select (so autograd covers it).
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local type = type
local fail, is_opts, check_t = C.fail, C.is_opts, C.check_t
local ck = C.ck
local check_int = C.check_int
local named = C.named
local shape_str = C.shape_str
---------------------------------------------------------------------------
-- nn.functional.pad
---------------------------------------------------------------------------
local function pad(t, pads, mode, value, ...)
  local fname = "nn.functional.pad"
  check_t(fname, 1, t)
  if is_opts(mode) then mode, value = ck(fname, mode, { "mode", "value" }).mode, mode.value end
  if is_opts(value) then value = ck(fname, value, { "value" }).value end
  mode = mode or "constant"
  if type(pads) ~= "table" then fail(fname, "pad must be a table of integers") end
  local np = #pads
  if np % 2 ~= 0 then fail(fname, "Padding length must be divisible by 2") end
  local nd = t:dim()
  if np / 2 > nd then fail(fname, "Padding length too large") end
  for i = 1, np do check_int(fname, "padding", pads[i]) end
  if mode == "constant" then
    value = value or 0
    local x = t
    for i = 1, np / 2 do
      local d = nd - i + 1
      local l, r = pads[2 * i - 1], pads[2 * i]
      local n = x:size(d)
      if n + l + r < 0 then
        fail(fname, ("The input size %d, plus negative padding %d and %d resulted in a negative output size, which is invalid. Check dimension %d of your input."):format(n, l, r, d))
      end
      if l < 0 then x = x:narrow(d, 1 - l, n + l); n = n + l; l = 0 end
      if r < 0 then x = x:narrow(d, 1, n + r); n = n + r; r = 0 end
      if l > 0 or r > 0 then
        local parts = {}
        local function filler(k)
          local s = x.shape
          s[d] = k
          return T.full(s, value, { dtype = x.dtype })
        end
        if l > 0 then parts[#parts + 1] = filler(l) end
        parts[#parts + 1] = x
        if r > 0 then parts[#parts + 1] = filler(r) end
        x = T.cat(parts, d)
      end
    end
    if rawequal(x, t) then x = t:clone() end
    return x
  end
  if mode ~= "reflect" and mode ~= "replicate" and mode ~= "circular" then
    fail(fname, ("invalid padding mode: %s (expected constant, reflect, replicate or circular)"):format(tostring(mode)))
  end
  if value ~= nil and value ~= 0 then
    fail(fname, ("Padding mode \"%s\" doesn't take in value argument"):format(mode))
  end
  local k = math.floor(np / 2)
  if k > 3 or nd < k + 1 or nd > k + 2 or (mode == "circular" and nd ~= k + 2) then
    fail(fname, ("invalid padding: %dD padding with mode %s expects a %dD or %dD input (got %dD)"):format(k, mode, k + 1, k + 2, nd))
  end
  local x = t
  for i = 1, k do
    local d = nd - i + 1
    local l, r = pads[2 * i - 1], pads[2 * i]
    local n = x:size(d)
    if mode == "reflect" and (l >= n or r >= n) then
      fail(fname, ("invalid padding: Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%d, %d) at dimension %d of input %s"):format(l, r, d, shape_str(t.shape)))
    end
    if mode == "circular" and (l > n or r > n) then
      fail(fname, "invalid padding: Padding value causes wrapping around more than once.")
    end
    if mode == "replicate" and n == 0 and (l > 0 or r > 0) then
      fail(fname, "invalid padding: cannot replicate an empty dimension")
    end
    if n + l + r < 0 then fail(fname, "invalid padding: negative output size") end
    if mode == "circular" and (l < 0 or r < 0) then
      -- PyTorch crops first and wraps around what is left: pad (2, -1) of
      -- {0, 1, 2} is {0, 1, 0, 1}, not a window of the uncropped wrap
      local a, b = math.max(-l, 0), math.max(-r, 0)
      x = x:narrow(d, a + 1, n - a - b)
      n, l, r = n - a - b, math.max(l, 0), math.max(r, 0)
      if l > n or r > n then fail(fname, "invalid padding: Padding value causes wrapping around more than once.") end
    end
    local idx = T.arange(0 - l, n + r)   -- (0 - l: -l of 0 is -0.0, a float, on Lua 5.1/LuaJIT)
    if mode == "reflect" then
      idx = (n - 1) - T.abs((n - 1) - T.abs(idx))
    elseif mode == "replicate" then
      idx = T.clamp(idx, 0, n - 1)
    else
      idx = T.remainder(idx, n)
    end
    x = x:index_select(d, idx + 1)
  end
  return x
end
pad = named("nn.functional.pad", pad)
require("ltensor.nn.functional.common").F.pad = pad
return pad
