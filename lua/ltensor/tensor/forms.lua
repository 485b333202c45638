-- ltensor.tensor.forms: PyTorch spellings that ported code uses every day
-- (issue 21 item 7): T.finfo / T.iinfo, T.as_tensor, t:tolist(), and the
-- new_* constructors that take their dtype from an existing tensor.
local T = require "ltensor.core"
local util = require "ltensor.util"

local M = T._methods
local fail, is_tensor = util.fail, util.is_tensor

-- ---------------------------------------------------------------------------
-- T.finfo(dtype) / T.iinfo(dtype): the numeric limits of a dtype

-- bits, eps, max, smallest normal, resolution (10^-digits), as torch.finfo
local FLOAT_INFO = {
  float16 = { 16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001 },
  bfloat16 = { 16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01 },
  float32 = { 32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06 },
  float64 = { 64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15 },
}
-- a complex dtype has the limits of its parts
local PART = { complex32 = "float16", complex64 = "float32", complex128 = "float64" }

local function info_mt(kind)
  return { __name = "ltensor." .. kind, __tostring = function(i)
    local keys = kind == "finfo" and { "resolution", "min", "max", "eps", "smallest_normal", "tiny", "dtype" }
      or { "min", "max", "dtype" }
    local parts = {}
    for n, k in ipairs(keys) do parts[n] = k .. "=" .. tostring(i[k]) end
    return kind .. "(" .. table.concat(parts, ", ") .. ")"
  end }
end
local FINFO_MT, IINFO_MT = info_mt("finfo"), info_mt("iinfo")

function T.finfo(dt)
  if dt == nil then dt = T.get_default_dtype() end
  if getmetatable(dt) ~= getmetatable(T.float32) then
    fail("finfo", "bad argument #1 (dtype expected, got %s)", util.typename(dt))
  end
  local f = FLOAT_INFO[PART[dt.name] or dt.name]
  if not f then fail("finfo", "%s is not a floating point or complex dtype (use T.iinfo)", dt.name) end
  return setmetatable({ bits = f[1], eps = f[2], max = f[3], min = -f[3], tiny = f[4], smallest_normal = f[4],
    resolution = f[5], dtype = PART[dt.name] or dt.name }, FINFO_MT)
end

-- min and max of each integral dtype; int64's are exact integers on Lua
-- 5.3+ (math.mininteger/maxinteger), uint64's max is 2^64 - 1 as a float
local function int_limits(name)
  local big = math.maxinteger
  local t = {
    uint8 = { 8, 0, 255 }, int8 = { 8, -128, 127 }, int16 = { 16, -32768, 32767 },
    uint16 = { 16, 0, 65535 }, int32 = { 32, -2147483648, 2147483647 }, uint32 = { 32, 0, 4294967295 },
    int64 = { 64, big and math.mininteger or -2 ^ 63, big or 2 ^ 63 - 1 },
    uint64 = { 64, 0, 18446744073709551615.0 },
  }
  return t[name]
end

function T.iinfo(dt)
  if getmetatable(dt) ~= getmetatable(T.float32) then
    fail("iinfo", "bad argument #1 (dtype expected, got %s)", util.typename(dt))
  end
  local l = int_limits(dt.name)
  if not l then fail("iinfo", "%s is not an integer dtype (use T.finfo for floating point)", dt.name) end
  return setmetatable({ bits = l[1], min = l[2], max = l[3], dtype = dt.name }, IINFO_MT)
end

-- ---------------------------------------------------------------------------
-- T.as_tensor(data [, {dtype=}]): a tensor without a copy when data already
-- is one of the wanted dtype (PyTorch shares the memory then); else T.tensor

function T.as_tensor(data, opts)
  if opts ~= nil and (type(opts) ~= "table" or is_tensor(opts)) then
    fail("as_tensor", "bad argument #2 (options table expected, got %s)", util.typename(opts))
  end
  util.check_opts("as_tensor", opts, { "dtype", "device" })
  if opts and opts.device ~= nil and opts.device ~= "cpu" then
    fail("as_tensor", "device '%s' is not available: ltensor runs on the CPU (use \"cpu\")", tostring(opts.device))
  end
  local dtype = opts and opts.dtype
  if is_tensor(data) then
    if dtype == nil or dtype == data.dtype then return data end
    return data:to(dtype)
  end
  return T.tensor(data, dtype and { dtype = dtype } or nil)
end

-- ---------------------------------------------------------------------------
-- t:tolist(): nested Lua lists of the values (a number for a 0-dim tensor)

function M.tolist(t)
  if not is_tensor(t) then fail("tolist", "bad self (Tensor expected, got %s): call it as x:tolist()", util.typename(t)) end
  return t:totable()
end

-- ---------------------------------------------------------------------------
-- t:new_zeros(size... [, opts]) & co.: self's dtype unless opts say otherwise

local NEW_OPTS = { "dtype", "device", "requires_grad" }
-- size... [, opts] -> size list, opts table with self's dtype filled in
local function new_args(fname, self, ...)
  if not is_tensor(self) then
    fail(fname, "bad self (Tensor expected, got %s): call it as x:%s(...)", util.typename(self), fname)
  end
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  local opts
  if type(last) == "table" and not is_tensor(last) and getmetatable(last) == nil and next(last) ~= nil
      and last[1] == nil then
    opts, n = last, n - 1
  end
  util.check_opts(fname, opts, NEW_OPTS)
  if opts and opts.device ~= nil and opts.device ~= "cpu" then
    fail(fname, "device '%s' is not available: ltensor runs on the CPU (use \"cpu\")", tostring(opts.device))
  end
  local out = { dtype = opts and opts.dtype or self.dtype, requires_grad = opts and opts.requires_grad or nil }
  local size = {}
  for i = 1, n do size[i] = (select(i, ...)) end
  return size, out
end

function M.new_zeros(self, ...)
  local size, opts = new_args("new_zeros", self, ...)
  return T.zeros(#size == 1 and type(size[1]) == "table" and size[1] or size, opts)
end
function M.new_ones(self, ...)
  local size, opts = new_args("new_ones", self, ...)
  return T.ones(#size == 1 and type(size[1]) == "table" and size[1] or size, opts)
end
function M.new_empty(self, ...)
  local size, opts = new_args("new_empty", self, ...)
  return T.empty(#size == 1 and type(size[1]) == "table" and size[1] or size, opts)
end
-- t:new_full(size, value [, opts])
function M.new_full(self, size, value, opts)
  local _, o = new_args("new_full", self, opts)
  if type(size) ~= "table" then fail("new_full", "bad argument #1 (size table expected, got %s)", util.typename(size)) end
  return T.full(size, value, o)
end
-- t:new_tensor(data [, opts]): a copy of data with self's dtype
function M.new_tensor(self, data, opts)
  local _, o = new_args("new_tensor", self, opts)
  if is_tensor(data) then
    local r = data:to(o.dtype, { copy = true }):detach()
    if o.requires_grad then r.requires_grad = true end
    return r
  end
  return T.tensor(data, o)
end

return true
