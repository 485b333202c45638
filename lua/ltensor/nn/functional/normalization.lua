-- ltensor.nn.functional.normalization: batch, instance, layer, group and
-- local response normalisation, normalize.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local math, table, F, is_t = H.math, H.table, H.F, H.is_t
local fail, typename, arg_fail, check_t, check_num = H.fail, H.typename, H.arg_fail, H.check_t, H.check_num
local util = require "ltensor.util"
local check_int = H.check_int
local check_bool, check_float, EPS = H.check_bool, H.check_float, H.EPS
local parse = H.parse
local shape_str, same_shape = H.shape_str, H.same_shape
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- normalisation
---------------------------------------------------------------------------
local function stat_dims(nd, from)   -- {from, ..., nd}
  local d = {}
  for i = from, nd do d[#d + 1] = i end
  return d
end
-- a (1, C, 1, ...) view of a per-channel vector for an nd-dim input
local function chan(v, nd, dtype)
  if v == nil then return nil end
  local shape = { 1 }
  for i = 2, nd do shape[i] = 1 end
  shape[2] = v:numel()
  v = v:reshape(shape)
  if dtype and v.dtype ~= dtype then v = v:to(dtype) end
  return v
end

-- the composite forms (differentiable by construction); the fused C kernels
-- replace them where they apply (see the bottom of this file)
local function norm_composite(x, dims, eps, w, b)
  local mu = T.mean(x, dims, true)
  local xc = x - mu
  local var = T.mean(xc * xc, dims, true)
  local y = xc * T.rsqrt(var + eps)
  if w ~= nil then y = y * w end
  if b ~= nil then y = y + b end
  return y, mu, var
end
F._norm_composite = norm_composite

local function check_vec(fname, n, name, v, C)
  if v == nil then return end
  check_t(fname, n, name, v)
  if v:numel() ~= C then
    fail(fname, ("%s should contain %d elements not %d"):format(name, C, v:numel()))
  end
end

-- batch_norm(x, running_mean, running_var [, weight [, bias]] [, opts]):
-- opts training (false), momentum (0.1), eps (1e-5).  Training normalises
-- with the batch statistics and, when running stats are given, updates them
-- in place: r = (1 - m) r + m stat, the variance unbiased.
function F.batch_norm(x, rm, rv, ...)
  local fname = "batch_norm"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 4, { "weight", "bias", "training", "momentum", "eps" }, ...)
  local w, b = o.weight, o.bias
  local training = o.training or false
  local momentum = o.momentum
  if momentum == nil then momentum = 0.1 end
  local eps = o.eps or 1e-5
  check_t(fname, 2, "running_mean", rm, true)
  check_t(fname, 3, "running_var", rv, true)
  check_bool(fname, 6, "training", training)
  check_num(fname, 7, "momentum", momentum)
  check_num(fname, 8, "eps", eps)
  check_float(fname, x, "batch_norm")
  local nd = x:dim()
  if nd < 2 then
    fail(fname, ("Expected 2D or more input (got %dD input)"):format(nd))
  end
  local C = x:size(2)
  check_vec(fname, 2, "running_mean", rm, C)
  check_vec(fname, 3, "running_var", rv, C)
  check_vec(fname, 4, "weight", w, C)
  check_vec(fname, 5, "bias", b, C)
  if training then
    local per = math.floor(x:numel() / math.max(C, 1))
    if per <= 1 and x:numel() > 0 then
      fail(fname, ("Expected more than 1 value per channel when training, got input size %s"):format(shape_str(x.shape)))
    end
  elseif rm == nil or rv == nil then
    fail(fname, "running_mean and running_var must be defined in evaluation mode")
  end
  local fused = F._bn_fused and x:numel() > 0 and F._bn_fused(x, rm, rv, w, b, training, momentum, eps)
  if fused then return fused end
  local dims = { 1 }
  for i = 3, nd do dims[#dims + 1] = i end
  local dt = x.dtype
  if training then
    local y, mu, var = norm_composite(x, dims, eps, chan(w, nd, dt), chan(b, nd, dt))
    if rm ~= nil or rv ~= nil then
      local n = math.floor(x:numel() / C)
      T.no_grad(function()
        if rm ~= nil then rm:mul_(1 - momentum):add_(mu:detach():reshape({ C }):to(rm.dtype) * momentum) end
        if rv ~= nil then
          local unb = var:detach():reshape({ C }) * (n / math.max(n - 1, 1))
          rv:mul_(1 - momentum):add_(unb:to(rv.dtype) * momentum)
        end
      end)
    end
    return y
  end
  local fe = F._bn_eval_fused and x:numel() > 0 and F._bn_eval_fused(x, rm, rv, w, b, eps)
  if fe then return fe end
  local y = (x - chan(rm, nd, dt)) * T.rsqrt(chan(rv, nd, dt) + eps)
  if w ~= nil then y = y * chan(w, nd, dt) end
  if b ~= nil then y = y + chan(b, nd, dt) end
  return y
end

-- instance_norm(x [, running_mean, running_var, weight, bias] [, opts]):
-- each (sample, channel) plane normalised over its spatial dims.
function F.instance_norm(x, ...)
  local fname = "instance_norm"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 2, { "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps" }, ...)
  local rm, rv, w, b = o.running_mean, o.running_var, o.weight, o.bias
  local use_input_stats = o.use_input_stats
  if use_input_stats == nil then use_input_stats = true end
  local momentum, eps = o.momentum or 0.1, o.eps or 1e-5
  check_float(fname, x, "instance_norm")
  local nd = x:dim()
  if nd < 3 then
    fail(fname, ("Expected 3D or more input (got %dD input)"):format(nd))
  end
  local N, C = x:size(1), x:size(2)
  check_vec(fname, 2, "running_mean", rm, C)
  check_vec(fname, 3, "running_var", rv, C)
  check_vec(fname, 4, "weight", w, C)
  check_vec(fname, 5, "bias", b, C)
  if use_input_stats then
    local per = math.floor(x:numel() / math.max(N * C, 1))
    if per <= 1 and x:numel() > 0 then
      fail(fname, ("Expected more than 1 spatial element when training, got input size %s"):format(shape_str(x.shape)))
    end
  end
  -- as PyTorch: batch_norm over the (1, N*C, spatial...) reshape
  local shape = x.shape
  local rs = { 1, N * C }
  for i = 3, nd do rs[i] = shape[i] end
  local xr = x:reshape(rs)
  local rm2, rv2
  if rm ~= nil then rm2 = rm:unsqueeze(1):expand({ N, C }):reshape({ N * C }):clone() end
  if rv ~= nil then rv2 = rv:unsqueeze(1):expand({ N, C }):reshape({ N * C }):clone() end
  local w2 = w and w:unsqueeze(1):expand({ N, C }):reshape({ N * C }) or nil
  local b2 = b and b:unsqueeze(1):expand({ N, C }):reshape({ N * C }) or nil
  local y = F.batch_norm(xr, rm2, rv2, w2, b2, { training = use_input_stats, momentum = momentum, eps = eps })
  if use_input_stats then
    T.no_grad(function()
      if rm ~= nil then rm:copy_(T.mean(rm2:reshape({ N, C }), 1)) end
      if rv ~= nil then rv:copy_(T.mean(rv2:reshape({ N, C }), 1)) end
    end)
  end
  return y:reshape(shape)
end

local function check_normalized_shape(fname, x, shape)
  local k = #shape
  local nd = x:dim()
  local ok = k >= 1 and nd >= k
  if ok then
    for i = 1, k do if x:size(nd - k + i) ~= shape[i] then ok = false end end
  end
  if not ok then
    local want = { "*" }
    for i = 1, k do want[#want + 1] = tostring(shape[i]) end
    fail(fname, ("Given normalized_shape=%s, expected input with shape %s, but got input of size%s"):format(
      shape_str(shape), "[" .. table.concat(want, ", ") .. "]", shape_str(x.shape)))
  end
end
local function shape_arg(fname, s)
  if math.type(s) == "integer" then return { s } end
  if type(s) ~= "table" or is_t(s) then
    arg_fail(fname, 2, "normalized_shape", "integer or table of integers expected, got " .. typename(s))
  end
  for i = 1, #s do
    if math.type(s[i]) ~= "integer" then arg_fail(fname, 2, "normalized_shape", "integer or table of integers expected") end
  end
  return s
end
local function check_affine(fname, n, name, v, shape)
  if v == nil then return end
  check_t(fname, n, name, v)
  if not same_shape(v.shape, shape) then
    fail(fname, ("Expected %s to be of same shape as normalized_shape, but got %s of shape %s and normalized_shape = %s"):format(
      name, name, shape_str(v.shape), shape_str(shape)))
  end
end

-- layer_norm(x, normalized_shape [, weight [, bias [, eps]]] [, {eps=}])
function F.layer_norm(x, normalized_shape, ...)
  local fname = "layer_norm"
  check_t(fname, 1, "input", x)
  local shape = shape_arg(fname, normalized_shape)
  local o = parse(fname, 3, { "weight", "bias", "eps" }, ...)
  local w, b, eps = o.weight, o.bias, o.eps or 1e-5
  check_num(fname, 5, "eps", eps)
  check_affine(fname, 3, "weight", w, shape)
  check_affine(fname, 4, "bias", b, shape)
  check_normalized_shape(fname, x, shape)
  check_float(fname, x, "LayerNormKernelImpl")
  local fused = F._ln_fused and x:numel() > 0 and F._ln_fused(x, #shape, w, b, eps)
  if fused then return fused end
  local k = #shape
  local dims = {}
  for i = 1, k do dims[i] = x:dim() - k + i end
  return (norm_composite(x, dims, eps, w, b))
end

-- rms_norm(x, normalized_shape [, weight] [, {eps=}]): x rsqrt(mean(x^2) + eps) weight,
-- eps the dtype's machine epsilon by default (PyTorch 2.x)
function F.rms_norm(x, normalized_shape, ...)
  local fname = "rms_norm"
  check_t(fname, 1, "input", x)
  local shape = shape_arg(fname, normalized_shape)
  local o = parse(fname, 3, { "weight", "eps" }, ...)
  local w, eps = o.weight, o.eps
  check_num(fname, 4, "eps", eps, true)
  check_affine(fname, 3, "weight", w, shape)
  check_normalized_shape(fname, x, shape)
  check_float(fname, x, "rms_norm")
  if eps == nil then eps = EPS[x.dtype.name] or EPS.float32 end
  local k = #shape
  local dims = {}
  for i = 1, k do dims[i] = x:dim() - k + i end
  local y = x * T.rsqrt(T.mean(x * x, dims, true) + eps)
  if w ~= nil then y = y * w end
  return y
end

-- group_norm(x, num_groups [, weight [, bias]] [, {eps=}])
function F.group_norm(x, num_groups, ...)
  local fname = "group_norm"
  check_t(fname, 1, "input", x)
  check_int(fname, 2, "num_groups", num_groups)
  local o = parse(fname, 3, { "weight", "bias", "eps" }, ...)
  local w, b, eps = o.weight, o.bias, o.eps or 1e-5
  check_num(fname, 5, "eps", eps)
  local nd = x:dim()
  if nd < 2 then fail(fname, ("Expected at least 2 dimensions for input tensor but received %d"):format(nd)) end
  local N, C = x:size(1), x:size(2)
  if num_groups <= 0 or C % num_groups ~= 0 then
    fail(fname, ("Expected number of channels in input to be divisible by num_groups, but got input of shape %s and num_groups=%d"):format(
      shape_str(x.shape), num_groups))
  end
  if w ~= nil then
    check_t(fname, 3, "weight", w)
    if w:dim() ~= 1 or w:numel() ~= C then
      fail(fname, ("Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape %s and input of shape %s"):format(shape_str(w.shape), shape_str(x.shape)))
    end
  end
  if b ~= nil then
    check_t(fname, 4, "bias", b)
    if b:dim() ~= 1 or b:numel() ~= C then
      fail(fname, ("Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape %s and input of shape %s"):format(shape_str(b.shape), shape_str(x.shape)))
    end
  end
  check_float(fname, x, "GroupNormKernelImpl")
  local fused = F._gn_fused and x:numel() > 0 and F._gn_fused(x, num_groups, w, b, eps)
  if fused then return fused end
  local shape = x.shape
  local xr = x:reshape({ N, num_groups, math.floor(C / num_groups) * math.floor(x:numel() / math.max(N * C, 1)) })
  local y = norm_composite(xr, { 3 }, eps):reshape(shape)
  local dt = x.dtype
  if w ~= nil then y = y * chan(w, nd, dt) end
  if b ~= nil then y = y + chan(b, nd, dt) end
  return y
end

-- local_response_norm(x, size [, alpha, beta, k]): across channels
function F.local_response_norm(x, size, ...)
  local fname = "local_response_norm"
  check_t(fname, 1, "input", x)
  check_int(fname, 2, "size", size)
  -- PyTorch's message comes from the avg_pool3d it runs; a size below 1 would
  -- leave the sliding sum empty here
  if size < 1 then fail(fname, ("kernel size should be greater than zero, but got size: %d"):format(size)) end
  local o = parse(fname, 3, { "alpha", "beta", "k" }, ...)
  local alpha, beta, k = o.alpha or 1e-4, o.beta or 0.75, o.k or 1.0
  local nd = x:dim()
  if nd < 3 then
    fail(fname, ("Expected 3D or higher dimensionality input (got %d dimensions)"):format(nd))
  end
  if T.is_complex(x) then   -- PyTorch's avg_pool refuses complex too
    fail(fname, ("\"avg_pool2d\" not implemented for '%s'"):format(x.dtype.name))
  end
  if x:numel() == 0 then return x end
  if x.dtype == T.float16 or x.dtype == T.bfloat16 then   -- the pool kernels are float32/float64
    return F.local_response_norm(x:float(), size, alpha, beta, k):to(x.dtype)
  end
  local C = x:size(2)
  local sq = x * x
  local before, after = math.floor(size / 2), math.floor((size - 1) / 2)
  -- as PyTorch: the squares zero-padded by size/2 before and (size-1)/2
  -- after along the channels, then a mean over a window of `size` channels
  -- (avg_pool2d over N x 1 x C x rest; integers truncate that mean, as
  -- PyTorch's avg_pool does): one C kernel each way, whatever the window (a
  -- sum of `size` shifted views made a graph of `size` nodes, and a
  -- backward quadratic in it)
  local shape = x.shape
  local sq4 = sq:reshape({ shape[1], 1, C, -1 })
  local padded = F.pad(sq4, { 0, 0, before, after })
  local acc = F.avg_pool2d(padded, { size, 1 }, { stride = 1 }):reshape(shape) * alpha
  local div = T.pow(acc + k, beta)
  return x / div
end

-- normalize(x [, {p=2, dim=2, eps=1e-12}]): x / max(||x||_p, eps) along dim
function F.normalize(x, ...)
  local fname = "normalize"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 2, { "p", "dim", "eps", "out" }, ...)
  local p, dim, eps = o.p or 2.0, o.dim or 2, o.eps or 1e-12
  check_num(fname, 2, "p", p)
  check_int(fname, 3, "dim", dim)
  util.check_out("nn.functional.normalize", o.out)
  if x:dim() == 0 then dim = 1 x = x:reshape({ 1 }) end
  local n = T.norm(x, p, dim, true)
  return util.into_out("nn.functional.normalize", o.out, x / T.clamp_min(n, eps):expand_as(x))
end
return true
