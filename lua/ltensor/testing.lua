-- ltensor.testing: T.testing.assert_close, PyTorch's assertion with its
-- default tolerances and its message (mismatched elements, the greatest
-- absolute and relative difference and where), positions 1-based.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local testing = {}
T.testing = testing

local is_t = util.is_tensor
-- The error points at the line that called assert_close, however deep in
-- this file it is raised (as PyTorch's traceback ends at the caller's
-- assert): the level is that of the first frame outside this file.
local HERE = debug.getinfo(1, "S").source
local function fail(msg)
  local level = 2
  while true do
    local info = debug.getinfo(level + 1, "S")
    if not info or info.source ~= HERE then break end
    level = level + 1
  end
  error("ltensor.testing.assert_close: " .. msg, level + 1)
end

-- PyTorch's defaults (torch/testing/_comparison.py): rtol, atol per dtype.
local DEFAULT_TOL = {
  float16 = { 1e-3, 1e-5 }, bfloat16 = { 1.6e-2, 1e-5 }, float32 = { 1.3e-6, 1e-5 },
  float64 = { 1e-7, 1e-7 }, complex32 = { 1e-3, 1e-5 }, complex64 = { 1.3e-6, 1e-5 },
  complex128 = { 1e-7, 1e-7 },
}

local KNOWN = { rtol = true, atol = true, equal_nan = true, check_dtype = true, msg = true }

-- Shortest text that reads back as the same double (as Python's repr).
local function num(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  if math.type(x) == "integer" then return tostring(x) end
  for p = 1, 17 do
    local s = ("%." .. p .. "g"):format(x)
    if tonumber(s) == x then
      if not s:find("[%.eEn]") then s = s .. ".0" end
      return s
    end
  end
  return ("%.17g"):format(x)
end

local function as_tensor(x, which)
  if is_t(x) then return x, false end
  local tx = type(x)
  if tx == "number" or tx == "boolean" then return T.tensor(x), true end
  if tx == "table" then return T.tensor(x), false end
  fail(("bad argument '%s' (tensor, number, boolean or table expected, got %s)"):format(which, tx))
end

-- flat 1-based position -> "{i, j, ...}" in the given shape
local function position(flat, shape)
  if #shape == 0 then return "{}" end
  local idx, rem = {}, flat - 1
  for d = #shape, 1, -1 do
    idx[d] = rem % shape[d] + 1
    rem = math.floor(rem / shape[d])
  end
  return "{" .. table.concat(idx, ", ") .. "}"
end

local function dims_str(s) return "{" .. table.concat(s, ", ") .. "}" end

function testing.assert_close(actual, expected, opts)
  if opts ~= nil and type(opts) ~= "table" then
    fail(("bad argument #3 'opts' (options table expected, got %s)"):format(type(opts)))
  end
  opts = opts or {}
  for k in pairs(opts) do
    if not KNOWN[k] then   -- the one checker words it; raised here for the caller's line
      local _, err = pcall(T._check_opts, "testing.assert_close", { [k] = true }, KNOWN)
      fail((tostring(err):gsub("^ltensor%.testing%.assert_close: ", "")))
    end
  end
  local a, scalar_a = as_tensor(actual, "actual")
  local b, scalar_b = as_tensor(expected, "expected")
  local check_dtype = opts.check_dtype ~= false
  if (opts.rtol == nil) ~= (opts.atol == nil) then
    fail(("Both 'rtol' and 'atol' must be either specified or omitted, but got no %s.")
      :format(opts.rtol == nil and "rtol" or "atol"))
  end
  if dims_str(a.shape) ~= dims_str(b.shape) then
    fail(("The values for attribute 'shape' do not match: %s != %s."):format(dims_str(a.shape), dims_str(b.shape)))
  end
  if check_dtype and a.dtype ~= b.dtype and not (scalar_a or scalar_b) then
    fail(("The values for attribute 'dtype' do not match: %s != %s."):format(tostring(a.dtype), tostring(b.dtype)))
  end
  local rtol, atol = opts.rtol, opts.atol
  if rtol == nil then
    local ta, tb = DEFAULT_TOL[a.dtype.name] or { 0, 0 }, DEFAULT_TOL[b.dtype.name] or { 0, 0 }
    rtol, atol = math.max(ta[1], tb[1]), math.max(ta[2], tb[2])
  end
  local equal_nan = opts.equal_nan == true

  -- Compare in float64 (complex128 for complex): integers up to 2^53 exactly.
  local wide = (a.dtype.is_complex or b.dtype.is_complex) and T.complex128 or T.float64
  local af, bf = a:to(wide):flatten(), b:to(wide):flatten()
  local n = af:numel()
  if n == 0 then return true end
  local absdiff = (af - bf):abs()
  local absb = bf:abs()
  -- as torch.isclose: equal, or a finite error within atol + rtol * |expected|
  local close = T.logical_or(T.eq(af, bf), T.logical_and(T.isfinite(absdiff), T.le(absdiff, absb * rtol + atol)))
  if equal_nan then close = T.logical_or(close, T.logical_and(T.isnan(af), T.isnan(bf))) end
  local matched = close:sum():item()
  if matched == n then return true end

  local exact = rtol == 0 and atol == 0
  local mismatches = n - matched
  absdiff = T.where(close, 0.0, absdiff)
  local reldiff = T.where(close, 0.0, absdiff / absb)
  local max_abs, i_abs = absdiff:max(1)
  local max_rel, i_rel = reldiff:max(1)
  local shape = a.shape
  local scalars = a:dim() == 0 and b:dim() == 0
  local kind = scalars and "Scalars" or "Tensor-likes"
  local lines = { ("%s are not %s!"):format(kind, exact and "equal" or "close"), "" }
  local integral = not (a.dtype.is_floating_point or a.dtype.is_complex)
  local function val(x) if integral and x == math.floor(x) and x ~= math.huge then return num(math.tointeger(x) or x) end return num(x) end
  if scalars then
    lines[#lines + 1] = ("Absolute difference: %s%s"):format(val(max_abs:item()),
      exact and "" or (" (up to " .. num(atol) .. " allowed)"))
    lines[#lines + 1] = ("Relative difference: %s%s"):format(num(max_rel:item()),
      exact and "" or (" (up to " .. num(rtol) .. " allowed)"))
  else
    lines[#lines + 1] = ("Mismatched elements: %d / %d (%.1f%%)"):format(mismatches, n, 100 * mismatches / n)
    lines[#lines + 1] = ("Greatest absolute difference: %s at index %s%s"):format(val(max_abs:item()),
      position(i_abs:item(), shape), exact and "" or (" (up to " .. num(atol) .. " allowed)"))
    lines[#lines + 1] = ("Greatest relative difference: %s at index %s%s"):format(num(max_rel:item()),
      position(i_rel:item(), shape), exact and "" or (" (up to " .. num(rtol) .. " allowed)"))
  end
  local msg = table.concat(lines, "\n")
  if type(opts.msg) == "string" then msg = opts.msg .. "\n\n" .. msg end
  fail(msg)
end

return testing
