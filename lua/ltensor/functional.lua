-- ltensor.functional (T.nn.functional): activations, losses and layer
-- functions built from tensor ops, so autograd differentiates them.
-- Class targets are 1-based int64, like every index in ltensor.
local T = require "ltensor.core"

local F = {}

local function is_t(x) return getmetatable(x) == T._metatable end
local function fail(fname, msg) error("ltensor.nn.functional." .. fname .. ": " .. msg, 0) end

-- Argument checks: a bad argument raises an error naming the function and
-- the argument instead of a Lua runtime error deep inside the computation.
local function typename(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(x)
end
local function arg_fail(fname, n, name, msg)
  fail(fname, ("bad argument #%d '%s' (%s)"):format(n, name, msg))
end
local function check_t(fname, n, name, x, optional)
  if x == nil and optional then return end
  if not is_t(x) then arg_fail(fname, n, name, "Tensor expected, got " .. typename(x)) end
end
local function check_num(fname, n, name, x, optional)
  if x == nil and optional then return end
  if type(x) ~= "number" then arg_fail(fname, n, name, "number expected, got " .. typename(x)) end
end
local function check_int(fname, n, name, x, optional)
  if x == nil and optional then return end
  if math.type(x) ~= "integer" then arg_fail(fname, n, name, "integer expected, got " .. typename(x)) end
end
local function check_opts(fname, n, opts)
  if opts ~= nil and type(opts) ~= "table" and type(opts) ~= "string" then
    arg_fail(fname, n, "opts", "table expected, got " .. typename(opts))
  end
end

function F.linear(x, w, b)
  check_t("linear", 1, "input", x)
  check_t("linear", 2, "weight", w)
  check_t("linear", 3, "bias", b, true)
  local out = T.matmul(x, w:t())
  if b ~= nil then out = out + b end
  return out
end

function F.relu(x) return T.relu(x) end
function F.sigmoid(x) return T.sigmoid(x) end
function F.tanh(x) return T.tanh(x) end
function F.silu(x)
  if T.silu then return T.silu(x) end
  return x * T.sigmoid(x)
end
function F.gelu(x, approximate)
  if type(approximate) == "table" then approximate = approximate.approximate end
  approximate = approximate or "none"
  if approximate ~= "none" and approximate ~= "tanh" then
    arg_fail("gelu", 2, "approximate", "\"none\" or \"tanh\" expected, got " ..
             (type(approximate) == "string" and approximate or typename(approximate)))
  end
  if approximate == "tanh" then
    check_t("gelu", 1, "input", x)
    local k = math.sqrt(2 / math.pi)
    return x * 0.5 * (T.tanh((x * x * x * 0.044715 + x) * k) + 1)
  end
  if T.gelu then return T.gelu(x) end
  return x * 0.5 * (T.erf(x / math.sqrt(2)) + 1)
end
function F.softmax(x, dim) return T.softmax(x, dim) end
function F.log_softmax(x, dim) return T.log_softmax(x, dim) end

function F.dropout(x, p, training)
  p = p or 0.5
  if training == nil then training = true end
  check_t("dropout", 1, "input", x)
  check_num("dropout", 2, "p", p)
  if not (p >= 0 and p <= 1) then fail("dropout", "dropout probability has to be between 0 and 1, but got " .. p) end
  if not training or p == 0 then return x end
  if p == 1 then return x * 0 end
  local keep = T.no_grad(function() return T.ge(T.rand(x.shape), p):to(x.dtype) * (1 / (1 - p)) end)
  return x * keep
end

local function reduction_of(opts, fname)
  local r = "mean"
  if type(opts) == "string" then r = opts elseif type(opts) == "table" and opts.reduction then r = opts.reduction end
  if r ~= "mean" and r ~= "sum" and r ~= "none" then
    fail(fname, (type(r) == "string" and r or typename(r)) .. " is not a valid value for reduction")
  end
  return r
end
local function reduce(loss, r)
  if r == "mean" then return T.mean(loss) elseif r == "sum" then return T.sum(loss) end
  return loss
end

function F.mse_loss(input, target, opts)
  check_t("mse_loss", 1, "input", input)
  check_t("mse_loss", 2, "target", target)
  check_opts("mse_loss", 3, opts)
  local d = input - target
  return reduce(d * d, reduction_of(opts, "mse_loss"))
end
function F.l1_loss(input, target, opts)
  check_t("l1_loss", 1, "input", input)
  check_t("l1_loss", 2, "target", target)
  check_opts("l1_loss", 3, opts)
  return reduce(T.abs(input - target), reduction_of(opts, "l1_loss"))
end

-- a bool mask (target's shape with C inserted at class_dim) selecting each target's class
local function class_mask(target, C, class_dim, nd)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[class_dim] = C
  return T.eq(target:unsqueeze(class_dim), T.arange(1, C + 1):reshape(shape))
end

-- nll_loss(input, target [, opts]): input (C), (N, C) or (N, C, d1, ...) log-probabilities;
-- target (), (N) or (N, d1, ...) int64 classes in 1..C.
-- opts: reduction ("mean" | "sum" | "none"), weight (C), ignore_index.
function F.nll_loss(input, target, opts)
  check_t("nll_loss", 1, "input", input)
  check_opts("nll_loss", 3, opts)
  opts = type(opts) == "table" and opts or { reduction = opts }
  local r = reduction_of(opts, "nll_loss")
  check_t("nll_loss", 3, "opts.weight", opts.weight, true)
  check_int("nll_loss", 3, "opts.ignore_index", opts.ignore_index, true)
  if not is_t(target) or target.dtype.is_floating_point or target.dtype == T.bool then
    fail("nll_loss", "expected target to be an int64 tensor of class indices")
  end
  local nd = input:dim()
  local class_dim = nd == 1 and 1 or 2
  if nd < 1 then fail("nll_loss", "input must have at least one dimension") end
  local C = input:size(class_dim)
  if target:dim() ~= nd - 1 then
    fail("nll_loss", string.format("expected target of %d dimensions for input of %d dimensions (got %d)", nd - 1, nd, target:dim()))
  end
  if nd > 1 and target:size(1) ~= input:size(1) then
    fail("nll_loss", string.format("Expected input batch_size (%d) to match target batch_size (%d).", input:size(1), target:size(1)))
  end
  local ignore = opts.ignore_index
  if target:numel() > 0 then
    T.no_grad(function()
      local valid = target
      if ignore ~= nil then valid = T.where(T.eq(target, ignore), 1, target) end
      local lo, hi = T.amin(valid):item(), T.amax(valid):item()
      if lo < 1 or hi > C then
        fail("nll_loss", "Target " .. (lo < 1 and lo or hi) .. " is out of bounds.")
      end
    end)
  end
  local mask = class_mask(target, C, class_dim, nd)
  if ignore ~= nil then mask = T.logical_and(mask, T.ne(target, ignore):unsqueeze(class_dim)) end
  local picked = T.sum(T.where(mask, input, 0), class_dim)
  local w
  if opts.weight ~= nil then
    local shape = {}
    for i = 1, nd do shape[i] = 1 end
    shape[class_dim] = C
    w = T.sum(T.where(mask, opts.weight:reshape(shape):to(input.dtype), 0), class_dim)
  elseif ignore ~= nil then
    w = T.any(mask, class_dim):to(input.dtype)
  end
  local loss = w and -(picked * w) or -picked
  if r == "none" then return loss end
  if r == "sum" then return T.sum(loss) end
  if w then return T.sum(loss) / T.sum(w) end
  return T.mean(loss)
end

-- cross_entropy(input, target [, opts]): log_softmax over the class dim then
-- nll_loss; a floating target of input's shape holds class probabilities.
-- opts: reduction, weight, ignore_index, label_smoothing.
function F.cross_entropy(input, target, opts)
  check_t("cross_entropy", 1, "input", input)
  check_opts("cross_entropy", 3, opts)
  opts = type(opts) == "table" and opts or { reduction = opts }
  check_num("cross_entropy", 3, "opts.label_smoothing", opts.label_smoothing, true)
  if opts.label_smoothing and not (opts.label_smoothing >= 0 and opts.label_smoothing <= 1) then
    fail("cross_entropy", "label_smoothing must be between 0.0 and 1.0. Got: " .. opts.label_smoothing)
  end
  local nd = input:dim()
  if nd < 1 then fail("cross_entropy", "input must have at least one dimension") end
  local class_dim = nd == 1 and 1 or 2
  local logp = T.log_softmax(input, class_dim)
  local ls = opts.label_smoothing or 0
  if is_t(target) and target.dtype.is_floating_point then
    local r = reduction_of(opts, "cross_entropy")
    local C = input:size(class_dim)
    if ls > 0 then target = target * (1 - ls) + ls / C end
    local loss = -T.sum(logp * target, class_dim)
    if r == "mean" then return T.sum(loss) / (input:numel() / C) end
    return reduce(loss, r)
  end
  local loss = F.nll_loss(logp, target, opts)
  if ls > 0 then
    local r = reduction_of(opts, "cross_entropy")
    local C = input:size(class_dim)
    local smooth = -T.sum(logp, class_dim) / C
    loss = loss * (1 - ls) + reduce(smooth, r) * ls
  end
  return loss
end

function F.binary_cross_entropy(input, target, opts)
  check_t("binary_cross_entropy", 1, "input", input)
  check_t("binary_cross_entropy", 2, "target", target)
  check_opts("binary_cross_entropy", 3, opts)
  local r = reduction_of(opts, "binary_cross_entropy")
  local l = -(target * T.clamp(T.log(input), -100) + (-target + 1) * T.clamp(T.log(-input + 1), -100))
  return reduce(l, r)
end

function F.embedding(idx, weight)
  check_t("embedding", 1, "input", idx)
  check_t("embedding", 2, "weight", weight)
  if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == T.bool then
    arg_fail("embedding", 1, "input", "expected an integer tensor of indices, got " .. idx.dtype.name)
  end
  return weight[idx]
end

function F.one_hot(t, num_classes)
  check_t("one_hot", 1, "input", t)
  check_int("one_hot", 2, "num_classes", num_classes, true)
  if t.dtype ~= T.int64 then fail("one_hot", "one_hot is only applicable to index tensor of type int64") end
  if num_classes == nil then
    if t:numel() == 0 then fail("one_hot", "Can not infer total number of classes from empty tensor.") end
    num_classes = T.amax(t):item()
  end
  if t:numel() > 0 then
    local lo, hi = T.amin(t):item(), T.amax(t):item()
    if lo < 1 then fail("one_hot", "Class values must be positive (1-based).") end
    if hi > num_classes then fail("one_hot", "Class values must not exceed num_classes.") end
  end
  return class_mask(t, num_classes, t:dim() + 1, t:dim() + 1):to(T.int64)
end

function F.layer_norm(x, normalized_shape, weight, bias, eps)
  check_t("layer_norm", 1, "input", x)
  if math.type(normalized_shape) == "integer" then normalized_shape = { normalized_shape } end
  if type(normalized_shape) ~= "table" then
    arg_fail("layer_norm", 2, "normalized_shape", "integer or table of integers expected, got " .. typename(normalized_shape))
  end
  check_t("layer_norm", 3, "weight", weight, true)
  check_t("layer_norm", 4, "bias", bias, true)
  eps = eps or 1e-5
  check_num("layer_norm", 5, "eps", eps)
  local k = #normalized_shape
  local dims = {}
  for i = 1, k do dims[i] = -i end
  local mu = T.mean(x, dims, true)
  local xc = x - mu
  local var = T.mean(xc * xc, dims, true)
  local y = xc / T.sqrt(var + eps)
  if weight ~= nil then y = y * weight end
  if bias ~= nil then y = y + bias end
  return y
end

return F
