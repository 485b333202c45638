-- ltensor.onnx.ops_shape -- shape, layout and indexing operators, including
-- the int64 shape arithmetic torch.onnx.export writes for dynamic axes
-- (Shape -> Gather -> Unsqueeze -> Concat -> Reshape ...).  Shape values
-- and indices inside the graph are ONNX's (0-based); the conversion to
-- ltensor's 1-based dims happens here.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math, table = compat.math, compat.table
local F = require "ltensor.nn.functional"
local U = require "ltensor.onnx.util"

local O = {}
local rfail = U.rfail

function O.Shape(node)
  node:allow("start", "end")
  local s0, e0 = node:int("start", 0), node:int("end", nil)
  return function(x)
    local s = x[1].shape
    local r = #s
    local a, b = s0, e0 or r
    if a < 0 then a = a + r end
    if b < 0 then b = b + r end
    a = math.max(0, math.min(a, r))
    b = math.max(0, math.min(b, r))
    local out = {}
    for i = a + 1, b do out[#out + 1] = s[i] end
    return U.shape_tensor(out)
  end
end

function O.Size(node)
  node:allow()
  return function(x) return T.tensor(x[1]:numel(), { dtype = T.int64 }) end
end

-- Reshape: 0 copies the input's dim (unless allowzero), -1 is inferred
function O.Reshape(node)
  node:allow("allowzero", "shape")
  if node.attrs.shape then node:fail("attribute 'shape' (opset < 5) is not supported") end
  node:min_inputs(2)
  local allowzero = node:int("allowzero", 0) ~= 0
  return function(x)
    local a = x[1]
    local want = U.ints(x[2], "shape")
    local s = a.shape
    local out, infer, known = {}, nil, 1
    for i, d in ipairs(want) do
      if d == 0 and not allowzero then
        if s[i] == nil then rfail("shape value 0 at position " .. (i - 1) .. " has no input dim to copy") end
        d = s[i]
      end
      if d == -1 then
        if infer then rfail("shape has more than one -1") end
        infer = i
      elseif d < 0 then rfail("shape value " .. d .. " is invalid")
      else known = known * d end
      out[i] = d
    end
    if infer then
      if known == 0 then rfail("cannot infer a -1 dim with a zero-sized shape") end
      out[infer] = math.floor(a:numel() / known)
    end
    if U.prod(out) ~= a:numel() then
      rfail(("cannot reshape a tensor of shape {%s} into {%s}"):format(table.concat(s, ", "), table.concat(want, ", ")))
    end
    return a:reshape(out)
  end
end

function O.Flatten(node)
  node:allow("axis")
  local axis = node:int("axis", 1)
  return function(x)
    local a = x[1]
    local r, s = a:dim(), a.shape
    local k = axis < 0 and axis + r or axis
    if k < 0 or k > r then rfail("axis " .. axis .. " is out of range for rank " .. r) end
    return a:reshape({ U.prod(s, 1, k), U.prod(s, k + 1, r) })
  end
end

function O.Transpose(node)
  node:allow("perm")
  local perm = node:ints("perm", nil)
  return function(x)
    local a = x[1]
    local r = a:dim()
    local p = {}
    if perm then
      if #perm ~= r then rfail(("perm has %d entries for a tensor of rank %d"):format(#perm, r)) end
      for i, v in ipairs(perm) do p[i] = U.dim(v, r, "perm entry") end
    else
      for i = 1, r do p[i] = r - i + 1 end
    end
    if r < 2 then return a end
    return a:permute(p)
  end
end

-- axes as an attribute before opset 13, as an (optional) input from 13
local function axes_of(node, x, idx)
  if node.opset >= 13 then return x[idx] and U.ints(x[idx], "axes") end
  return node:ints("axes", nil)
end

function O.Squeeze(node)
  node:allow(node.opset < 13 and "axes" or nil)
  return function(x)
    local a = x[1]
    local axes = axes_of(node, x, 2)
    local s = a.shape
    local drop = {}
    if axes == nil or #axes == 0 then
      for i = 1, #s do if s[i] == 1 then drop[i] = true end end
    else
      for _, ax in ipairs(axes) do
        local d = U.dim(ax, #s)
        if s[d] ~= 1 then rfail(("cannot squeeze axis %d of size %d"):format(ax, s[d])) end
        drop[d] = true
      end
    end
    local out = {}
    for i = 1, #s do if not drop[i] then out[#out + 1] = s[i] end end
    return a:reshape(out)
  end
end

function O.Unsqueeze(node)
  node:allow(node.opset < 13 and "axes" or nil)
  if node.opset >= 13 then node:min_inputs(2) end
  return function(x)
    local a = x[1]
    local axes = axes_of(node, x, 2)
    if axes == nil then rfail("axes are missing") end
    local s = a.shape
    local r = #s + #axes
    local ins = {}
    for _, ax in ipairs(axes) do
      local d = U.dim(ax, r)
      if ins[d] then rfail("axis " .. ax .. " is repeated") end
      ins[d] = true
    end
    local out, k = {}, 1
    for i = 1, r do
      if ins[i] then out[i] = 1 else out[i] = s[k]; k = k + 1 end
    end
    return a:reshape(out)
  end
end

function O.Concat(node)
  node:allow("axis")
  local axis = node:int("axis", nil)
  if axis == nil then node:fail("attribute 'axis' is missing") end
  return function(x)
    local list = {}
    for i = 1, x.n do
      if x[i] then list[#list + 1] = x[i] end
    end
    local r = list[1]:dim()
    local d = U.dim(axis, r)
    -- an empty operand may still differ in dtype (an int64 shape list): skip it
    local keep = {}
    for _, t in ipairs(list) do if t:numel() > 0 or #list == 1 then keep[#keep + 1] = t end end
    if #keep == 0 then keep = { list[1] } end
    if #keep == 1 then return keep[1] end
    return T.cat(keep, d)
  end
end

function O.Split(node)
  node:allow("axis", "split", "num_outputs")
  local axis = node:int("axis", 0)
  local attr_split = node:ints("split", nil)
  if node.opset >= 13 and attr_split then node:fail("attribute 'split' is an input from opset 13") end
  local nout = #node.outputs
  return function(x)
    local a = x[1]
    local d = U.dim(axis, a:dim())
    local n = a:size(d)
    local sizes = attr_split
    if node.opset >= 13 and x[2] then sizes = U.ints(x[2], "split") end
    if sizes == nil or #sizes == 0 then
      local each = math.ceil(n / nout)
      sizes = {}
      local left = n
      for i = 1, nout do sizes[i] = math.min(each, left); left = left - sizes[i] end
    end
    if #sizes ~= nout then rfail(("split has %d sizes for %d outputs"):format(#sizes, nout)) end
    local sum = 0
    for _, v in ipairs(sizes) do
      if v < 0 then rfail("negative split size " .. v) end
      sum = sum + v
    end
    if sum ~= n then rfail(("split sizes add up to %d, the axis has %d"):format(sum, n)) end
    local outs, start = {}, 1
    for i, v in ipairs(sizes) do
      outs[i] = a:narrow(d, start, v)
      start = start + v
    end
    return compat.unpack(outs, 1, nout)
  end
end

-- Slice: starts/ends/axes as attributes (opset < 10), then inputs with
-- steps.  ONNX clamps starts and ends (INT64_MAX / INT64_MIN mean "to the
-- end"); a negative step walks backwards (done here with a flip).
local function slice_axis(a, d, st, en, step)
  local n = a:size(d)
  if step == 0 then rfail("slice step cannot be 0") end
  if st < 0 then st = st + n end
  if en < 0 then en = en + n end
  if step > 0 then
    st = math.max(0, math.min(st, n))
    en = math.max(0, math.min(en, n))
    if en <= st then return a:narrow(d, 1, 0) end
    local v = a:narrow(d, st + 1, en - st)
    if step == 1 then return v end
    local idx = {}
    for i = 1, a:dim() do idx[i] = {} end
    idx[d] = { 1, en - st, step }
    return v[idx]
  end
  st = math.max(-1, math.min(st, n - 1))
  en = math.max(-1, math.min(en, n - 1))
  if st <= en then return a:narrow(d, 1, 0) end
  -- elements st, st+step, ... > en, i.e. positions en+1 .. st walked backwards
  local v = T.flip(a:narrow(d, en + 2, st - en), { d })
  if step == -1 then return v end
  local idx = {}
  for i = 1, a:dim() do idx[i] = {} end
  idx[d] = { 1, st - en, -step }
  return v[idx]
end

function O.Slice(node)
  local old = node.opset < 10
  if old then node:allow("starts", "ends", "axes") else node:allow() end
  if not old then node:min_inputs(3) end
  return function(x)
    local a = x[1]
    local starts, ends, axes, steps
    if old then
      starts, ends, axes = node:ints("starts", {}), node:ints("ends", {}), node:ints("axes", nil)
    else
      starts, ends = U.ints(x[2], "starts"), U.ints(x[3], "ends")
      axes = x[4] and U.ints(x[4], "axes")
      steps = x[5] and U.ints(x[5], "steps")
    end
    if #starts ~= #ends then rfail("starts and ends differ in length") end
    local r = a:dim()
    local seen = {}
    for i = 1, #starts do
      local d = U.dim(axes and axes[i] or (i - 1), r)
      if seen[d] then rfail("axis " .. (d - 1) .. " is sliced twice") end
      seen[d] = true
      a = slice_axis(a, d, starts[i], ends[i], steps and steps[i] or 1)
    end
    return a
  end
end

-- Gather: data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:];
-- indices 0-based, negative from the end
local function gather_index(idx, n)
  if idx.dtype.is_floating_point then rfail("indices must be integers") end
  idx = idx:to(T.int64)
  idx = T.where(T.lt(idx, 0), idx + n, idx)
  if idx:numel() > 0 then
    local lo, hi = T.amin(idx):item(), T.amax(idx):item()
    if lo < 0 or hi >= n then
      rfail(("index %d is out of range for an axis of size %d"):format(lo < 0 and lo - n or hi, n))
    end
  end
  return idx + 1
end

-- Gather's and GatherElements' attribute: axis (0-based); two inputs
local function gather_axis(node)
  node:allow("axis")
  node:min_inputs(2)
  return node:int("axis", 0)
end

function O.Gather(node)
  local axis = gather_axis(node)
  return function(x)
    local a, ind = x[1], x[2]
    local s = a.shape
    local d = U.dim(axis, #s)
    local idx = gather_index(ind, s[d])
    local flat = T.index_select(a, d, idx:reshape({ -1 }))
    local out = {}
    for i = 1, d - 1 do out[#out + 1] = s[i] end
    for _, v in ipairs(ind.shape) do out[#out + 1] = v end
    for i = d + 1, #s do out[#out + 1] = s[i] end
    return flat:reshape(out)
  end
end

function O.GatherElements(node)
  local axis = gather_axis(node)
  return function(x)
    local a = x[1]
    local d = U.dim(axis, a:dim())
    return T.gather(a, d, gather_index(x[2], a:size(d)))
  end
end

-- Expand: ONNX's bidirectional broadcast of the input against a shape
function O.Expand(node)
  node:allow()
  node:min_inputs(2)
  return function(x)
    local a = x[1]
    local out = U.broadcast(a.shape, U.ints(x[2], "shape"))
    local r = #out
    if a:dim() < r then
      local s = a.shape
      local pad = {}
      for i = 1, r - #s do pad[i] = 1 end
      for _, v in ipairs(s) do pad[#pad + 1] = v end
      a = a:reshape(pad)
    end
    return a:expand(out)
  end
end

function O.Tile(node)
  node:allow()
  node:min_inputs(2)
  return function(x)
    local reps = U.ints(x[2], "repeats")
    if #reps ~= x[1]:dim() then rfail("repeats must have one entry per input dim") end
    return T.tile(x[1], reps)
  end
end

function O.ConstantOfShape(node)
  node:allow("value")
  local v = node:tensor("value", nil)
  local value, dt = 0.0, T.float32
  if v then
    if v:numel() ~= 1 then node:fail("attribute 'value' must hold one element") end
    value, dt = v:reshape({ -1 })[1]:item(), v.dtype
  end
  return function(x)
    local shape = U.ints(x[1], "shape")
    for _, d in ipairs(shape) do if d < 0 then rfail("negative size " .. d) end end
    return T.full(shape, value, { dtype = dt })
  end
end

-- Range: max(ceil((limit - start) / delta), 0) values start + i * delta
function O.Range(node)
  node:allow()
  node:min_inputs(3)
  return function(x)
    local dt = x[1].dtype
    local s, l, d = U.number(x[1], "start"), U.number(x[2], "limit"), U.number(x[3], "delta")
    if d == 0 then rfail("delta cannot be 0") end
    local n = math.max(math.ceil((l - s) / d), 0)
    if dt.is_floating_point then
      return (T.arange(n, { dtype = T.float64 }) * d + s):to(dt)
    end
    return T.arange(n, { dtype = T.int64 }) * d + s
  end
end

function O.Dropout(node)   -- inference: the identity (and an all-true mask)
  node:allow("seed", "ratio", "is_test")
  return function(x)
    if x[3] and U.scalar(x[3]) then rfail("training_mode=true is not supported") end
    return x[1], T.ones_like(x[1], { dtype = T.bool })
  end
end

function O.NonZero(node)
  node:allow()
  return function(x)
    local a = x[1]
    if a:dim() == 0 then a = a:reshape({ 1 }) end
    local nz = T.nonzero(a)   -- [nnz, rank], 1-based
    return (nz - 1):t():contiguous()
  end
end

-- Pad (opset >= 11: pads and constant_value as inputs; 2: as attributes).
-- Negative pads crop.  reflect / edge: per dim, an index_select of the
-- positions ONNX's reference reads (any rank, unlike F.pad's modes).
local function pad_index(n, b, e, mode)
  local idx = {}
  for j = -b, n + e - 1 do
    local k = j
    if mode == "edge" then k = math.max(0, math.min(n - 1, j))
    else
      local period = 2 * (n - 1)
      if period == 0 then k = 0
      else
        k = j % period
        if k >= n then k = period - k end
      end
    end
    idx[#idx + 1] = k + 1
  end
  return T.tensor(idx, { dtype = T.int64 })
end

function O.Pad(node)
  local old = node.opset < 11
  node:allow("mode", old and "pads" or nil, old and "value" or nil)
  local mode = node:choice("mode", "constant", "constant", "reflect", "edge")
  return function(x)
    local a = x[1]
    local pads, value
    if old then pads, value = node:ints("pads", {}), node:number("value", 0.0)
    else
      pads = U.ints(x[2], "pads")
      value = x[3] and U.scalar(x[3]) or 0   -- (the data's type: complex data pads with a complex value)
      if x[4] then rfail("the axes input is not supported") end
    end
    local r = a:dim()
    if #pads ~= 2 * r then rfail(("pads has %d values for a tensor of rank %d"):format(#pads, r)) end
    if mode == "constant" then
      local fp, any = {}, false
      for i = r, 1, -1 do
        fp[#fp + 1] = pads[i]
        fp[#fp + 1] = pads[i + r]
        if pads[i] ~= 0 or pads[i + r] ~= 0 then any = true end
      end
      if not any then return a end
      return F.pad(a, fp, "constant", value)
    end
    for i = 1, r do
      local b, e = pads[i], pads[i + r]
      if b ~= 0 or e ~= 0 then
        local n = a:size(i)
        if n + b + e < 0 then rfail("pads leave a negative size") end
        if n == 0 then rfail(mode .. " padding of an empty dim") end
        if mode == "reflect" and (b >= n or e >= n) then
          rfail(("reflect pads %d, %d must be smaller than the dim's size %d"):format(b, e, n))
        end
        a = T.index_select(a, i, pad_index(n, b, e, mode))
      end
    end
    return a
  end
end

function O.Trilu(node)
  node:allow("upper")
  local upper = node:int("upper", 1) ~= 0
  return function(x)
    local k = x[2] and U.number(x[2], "k") or 0
    if upper then return T.triu(x[1], k) end
    return T.tril(x[1], k)
  end
end

function O.OneHot(node)
  node:allow("axis")
  local axis = node:int("axis", -1)
  node:min_inputs(3)
  return function(x)
    local ind, depth, vals = x[1], U.number(x[2], "depth"), x[3]
    depth = math.floor(depth)
    local ii = ind:to(T.int64)
    ii = T.where(T.lt(ii, 0), ii + depth, ii)
    local r = ind:dim() + 1
    local d = U.dim(axis, r)
    local classes = T.arange(depth, { dtype = T.int64 })
    local shape = {}
    for i = 1, r do shape[i] = 1 end
    shape[d] = depth
    local hit = T.eq(ii:unsqueeze(d), classes:reshape(shape))
    local v = vals:reshape({ -1 })
    return T.where(hit, v[2], v[1])
  end
end

function O.TopK(node)
  node:allow("axis", "largest", "sorted")
  node:min_inputs(2)
  local axis = node:int("axis", -1)
  local largest = node:int("largest", 1) ~= 0
  return function(x)
    local a = x[1]
    local d = U.dim(axis, a:dim())
    local k = U.number(x[2], "k")
    local v, i = T.topk(a, k, d, largest, true)
    return v, i - 1
  end
end

return O
