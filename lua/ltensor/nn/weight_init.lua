-- ltensor.nn.weight_init: T.nn.init, PyTorch's torch.nn.init.
--
-- Every function fills its tensor in place without recording autograd (as
-- PyTorch's, under no_grad) and returns it.  The sampling ones take an
-- options table last, {generator = g}, passed on to uniform_/normal_.
-- Fans (PyTorch's _calculate_fan_in_and_fan_out): for a weight of shape
-- (out, in, k1, k2, ...) fan_in = in * k1 * k2 * ..., fan_out = out * k1 * ...
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn

local init = {}
nn.init = init

local fail = util.failer("ltensor.nn.init.")
local typename = util.mtname
local checks = util.arg_checks(fail)
local check_num = checks.check_num
local function check_t(fname, t) checks.check_t(fname, 1, "tensor", t) end
-- the trailing options table, if any: {generator = g}
local function gen_opts(fname, opts)
  if opts == nil then return nil end
  if type(opts) ~= "table" then fail(fname, "bad argument 'opts' (table expected, got " .. typename(opts) .. ")") end
  T._check_opts("nn.init." .. fname, opts, { "generator" })   -- the one checker
  if opts.generator == nil then return nil end
  return { generator = opts.generator }
end
local function no_grad(f) return T.no_grad(f) end
local function float_check(fname, t)
  if not (t.dtype.is_floating_point or t.dtype.is_complex) then
    fail(fname, "expected a floating point tensor, got " .. t.dtype.name)
  end
end

-- calculate_gain(nonlinearity [, param]): the recommended gain
function init.calculate_gain(nonlinearity, param)
  local linear = { linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
    conv_transpose2d = true, conv_transpose3d = true }
  if linear[nonlinearity] or nonlinearity == "sigmoid" then return 1 end
  if nonlinearity == "tanh" then return 5.0 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2.0) end
  if nonlinearity == "leaky_relu" then
    local slope
    if param == nil then slope = 0.01
    elseif type(param) == "number" and type(param) ~= "boolean" then slope = param
    else fail("calculate_gain", "negative_slope " .. tostring(param) .. " not a valid number") end
    return math.sqrt(2.0 / (1 + slope * slope))
  end
  if nonlinearity == "selu" then return 3.0 / 4 end
  fail("calculate_gain", "Unsupported nonlinearity " .. tostring(nonlinearity))
end

function init._calculate_fan_in_and_fan_out(t)
  check_t("_calculate_fan_in_and_fan_out", t)
  local s = t.shape
  if #s < 2 then
    fail("_calculate_fan_in_and_fan_out", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
  end
  local rf = 1
  for i = 3, #s do rf = rf * s[i] end
  return s[2] * rf, s[1] * rf
end
local fans = init._calculate_fan_in_and_fan_out

local function correct_fan(fname, t, mode)
  mode = mode:lower()
  if mode ~= "fan_in" and mode ~= "fan_out" then
    fail(fname, "Mode " .. mode .. " not supported, please use one of fan_in, fan_out")
  end
  if t:dim() < 2 then
    fail(fname, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
  end
  local fi, fo = fans(t)
  return mode == "fan_in" and fi or fo
end

-- uniform_(t [, a = 0, b = 1] [, opts]) and normal_(t [, mean = 0, std = 1]
-- [, opts]): the tensor method of that name under no_grad
local function sampler(fname, n1, d1, n2, d2)
  return function(t, a, b, opts)
    if type(a) == "table" then a, b, opts = nil, nil, a end
    check_t(fname, t)
    a, b = a or d1, b or d2
    check_num(fname, 2, n1, a) check_num(fname, 3, n2, b)
    local o = gen_opts(fname, opts)
    no_grad(function() if o then t[fname](t, a, b, o) else t[fname](t, a, b) end end)
    return t
  end
end
init.uniform_ = sampler("uniform_", "a", 0.0, "b", 1.0)
init.normal_ = sampler("normal_", "mean", 0.0, "std", 1.0)
function init.constant_(t, val)
  check_t("constant_", t)
  if type(val) ~= "number" and type(val) ~= "boolean" then
    fail("constant_", "bad argument #2 'val' (number expected, got " .. typename(val) .. ")")
  end
  no_grad(function() t:fill_(val) end)
  return t
end
function init.ones_(t) check_t("ones_", t) no_grad(function() t:fill_(1) end) return t end
function init.zeros_(t) check_t("zeros_", t) no_grad(function() t:zero_() end) return t end

function init.eye_(t)
  check_t("eye_", t)
  if t:dim() ~= 2 then fail("eye_", "Only tensors with 2 dimensions are supported") end
  no_grad(function() t:copy_(T.eye(t.shape[1], t.shape[2], { dtype = t.dtype })) end)
  return t
end

-- dirac_(t [, groups]): identity-preserving conv weights (3-, 4- or 5-D)
function init.dirac_(t, groups)
  check_t("dirac_", t)
  groups = groups or 1
  if math.type(groups) ~= "integer" or groups < 1 then fail("dirac_", "groups must be a positive integer") end
  local nd = t:dim()
  if nd < 3 or nd > 5 then fail("dirac_", "Only tensors with 3, 4, or 5 dimensions are supported") end
  local s = t.shape
  if s[1] % groups ~= 0 then fail("dirac_", "dim 0 must be divisible by groups") end
  local out_per = math.floor(s[1] / groups)
  local min_dim = math.min(out_per, s[2])
  no_grad(function()
    t:zero_()
    -- a few entries (min_dim * groups of them): set one by one
    for g = 0, groups - 1 do
      for d = 1, min_dim do
        local idx = { g * out_per + d, d }
        for k = 3, nd do idx[k] = math.floor(s[k] / 2) + 1 end
        local v = t
        for k = 1, nd - 1 do v = v:select(1, idx[k]) end
        v[idx[nd]] = 1
      end
    end
  end)
  return t
end

-- xavier_uniform_ and xavier_normal_'s shared arguments: (t [, gain = 1] [, opts]);
-- the std gain * sqrt(2 / (fan_in + fan_out)) and opts
local function xavier_std(fname, t, gain, opts)
  if type(gain) == "table" then gain, opts = nil, gain end
  check_t(fname, t)
  gain = gain or 1.0
  check_num(fname, 2, "gain", gain)
  if t:dim() < 2 then
    fail(fname, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
  end
  local fi, fo = fans(t)
  return gain * math.sqrt(2.0 / (fi + fo)), opts
end
function init.xavier_uniform_(t, gain, opts)
  local std, o = xavier_std("xavier_uniform_", t, gain, opts)
  local a = math.sqrt(3.0) * std
  return init.uniform_(t, -a, a, o)
end
function init.xavier_normal_(t, gain, opts)
  local std, o = xavier_std("xavier_normal_", t, gain, opts)
  return init.normal_(t, 0.0, std, o)
end

-- kaiming_uniform_(t [, a = 0] [, mode = "fan_in"] [, nonlinearity = "leaky_relu"] [, opts])
-- or kaiming_uniform_(t, {a =, mode =, nonlinearity =, generator =}):
-- the gain, the fan and the sampler's options (nil for an empty t)
local function kaiming_args(fname, t, a, mode, nonlinearity, opts)
  check_t(fname, t)
  if type(a) == "table" then
    local o = a
    T._check_opts("nn.init." .. fname, o, { "a", "mode", "nonlinearity", "generator" })   -- the one checker
    a, mode, nonlinearity, opts = o.a, o.mode, o.nonlinearity, o.generator and { generator = o.generator } or nil
  end
  a = a or 0
  check_num(fname, 2, "a", a)
  mode = mode or "fan_in"
  nonlinearity = nonlinearity or "leaky_relu"
  if type(mode) ~= "string" then fail(fname, "bad argument #3 'mode' (string expected, got " .. typename(mode) .. ")") end
  if t:numel() == 0 then return nil end
  local fan = correct_fan(fname, t, mode)
  return init.calculate_gain(nonlinearity, a), fan, opts
end
function init.kaiming_uniform_(t, a, mode, nonlinearity, opts)
  local gain, fan, o = kaiming_args("kaiming_uniform_", t, a, mode, nonlinearity, opts)
  if not gain then return t end
  local bound = math.sqrt(3.0) * gain / math.sqrt(fan)
  return init.uniform_(t, -bound, bound, o)
end
function init.kaiming_normal_(t, a, mode, nonlinearity, opts)
  local gain, fan, o = kaiming_args("kaiming_normal_", t, a, mode, nonlinearity, opts)
  if not gain then return t end
  return init.normal_(t, 0, gain / math.sqrt(fan), o)
end

-- trunc_normal_(t [, mean = 0, std = 1, a = -2, b = 2] [, opts]): normal
-- values redrawn until they fall in [a, b] (rejection over whole tensors:
-- exact truncated normal; each round redraws only what is still outside)
function init.trunc_normal_(t, mean, std, a, b, opts)
  if type(mean) == "table" then
    local o = mean
    mean, std, a, b, opts = o.mean, o.std, o.a, o.b, o.generator and { generator = o.generator } or nil
  end
  check_t("trunc_normal_", t)
  float_check("trunc_normal_", t)
  mean, std, a, b = mean or 0.0, std or 1.0, a or -2.0, b or 2.0
  for i, v in ipairs({ mean, std, a, b }) do check_num("trunc_normal_", i + 1, ({ "mean", "std", "a", "b" })[i], v) end
  if not (a < b) then fail("trunc_normal_", "a must be smaller than b") end
  local o = gen_opts("trunc_normal_", opts)
  no_grad(function()
    local n = t:numel()
    if n == 0 then return end
    local cur = T.empty(t.shape, { dtype = t.dtype })
    if o then cur:normal_(mean, std, o) else cur:normal_(mean, std) end
    local mass_ok = false
    for _ = 1, 1000 do
      local bad = T.logical_or(T.lt(cur, a), T.gt(cur, b))
      if not T.any(bad):item() then mass_ok = true break end
      local fresh = T.empty(t.shape, { dtype = t.dtype })
      if o then fresh:normal_(mean, std, o) else fresh:normal_(mean, std) end
      cur = T.where(bad, fresh, cur)
    end
    -- an interval far in the tail: what is left is clamped (PyTorch's
    -- inverse-CDF method clamps too)
    if not mass_ok then cur = T.clamp(cur, a, b) end
    t:copy_(cur)
  end)
  return t
end

-- Q of a QR decomposition of m (rows >= cols), columns sign-fixed so that
-- diag(R) > 0: T.linalg.qr when present, else modified Gram-Schmidt over
-- column tensors.
local function orth_q(m)
  if T.linalg and T.linalg.qr then
    local q, r = T.linalg.qr(m)
    local d = T.sign(T.diagonal and T.diagonal(r) or r:diagonal())
    d = T.where(T.eq(d, 0), T.ones_like(d), d)
    return q * d
  end
  local rows, cols = m.shape[1], m.shape[2]
  local qs = {}
  for j = 1, cols do
    local v = m:select(2, j):clone()
    for k = 1, j - 1 do
      v = v - qs[k] * T.sum(qs[k] * v)
    end
    -- reorthogonalise once: Gram-Schmidt twice is orthogonal to working precision
    for k = 1, j - 1 do
      v = v - qs[k] * T.sum(qs[k] * v)
    end
    local nv = T.norm(v):item()
    if nv == 0 then
      v = T.zeros({ rows }, { dtype = m.dtype })
    else
      v = v / nv
    end
    qs[j] = v
  end
  if cols == 0 then return T.zeros({ rows, 0 }, { dtype = m.dtype }) end
  return T.stack(qs, 2)
end

-- orthogonal_(t [, gain = 1] [, opts]): a (semi-)orthogonal matrix, t seen as
-- (size(1), numel / size(1))
function init.orthogonal_(t, gain, opts)
  if type(gain) == "table" then gain, opts = nil, gain end
  check_t("orthogonal_", t)
  float_check("orthogonal_", t)
  if t:dim() < 2 then fail("orthogonal_", "Only tensors with 2 or more dimensions are supported") end
  gain = gain or 1
  check_num("orthogonal_", 2, "gain", gain)
  if t:numel() == 0 then return t end
  local o = gen_opts("orthogonal_", opts)
  no_grad(function()
    local rows = t.shape[1]
    local cols = math.floor(t:numel() / rows)
    -- drawn and orthogonalised in float64, then converted
    local flat = T.empty({ rows, cols }, { dtype = T.float64 })
    if o then flat:normal_(0, 1, o) else flat:normal_(0, 1) end
    if rows < cols then flat = flat:t():contiguous() end
    local q = orth_q(flat)
    if rows < cols then q = q:t() end
    t:copy_((q * gain):reshape(t.shape))
  end)
  return t
end

-- sparse_(t, sparsity [, std = 0.01] [, opts]): 2-D, each column has
-- ceil(sparsity * rows) zeros, the rest N(0, std)
function init.sparse_(t, sparsity, std, opts)
  if type(std) == "table" then std, opts = nil, std end
  check_t("sparse_", t)
  if t:dim() ~= 2 then fail("sparse_", "Only tensors with 2 dimensions are supported") end
  check_num("sparse_", 2, "sparsity", sparsity)
  std = std or 0.01
  local o = gen_opts("sparse_", opts)
  local rows, cols = t.shape[1], t.shape[2]
  local nz = math.ceil(sparsity * rows)
  no_grad(function()
    if o then t:normal_(0, std, o) else t:normal_(0, std) end
    for c = 1, cols do
      local perm = T.randperm(rows, o)
      local col = t:select(2, c)
      if nz > 0 then col:index_fill_(1, perm:narrow(1, 1, nz), 0) end
    end
  end)
  return t
end

-- PyTorch's deprecated un-underscored names
for _, n in ipairs({ "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
  "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse" }) do
  init[n] = init[n .. "_"]
end

return init
