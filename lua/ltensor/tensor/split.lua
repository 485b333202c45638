-- ltensor.tensor.split: splitting and stacking: tensor_split, hsplit,
-- vsplit, dsplit, unflatten and the stack family.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local unpack, select, type = table.unpack, select, type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_at, ck = C.opts_at, C.ck
local check_int = C.check_int
local normdim = C.normdim
local named, def = C.named, C.def
local shape_str = C.shape_str
local into = C.into
---------------------------------------------------------------------------
-- Splitting and stacking
---------------------------------------------------------------------------
-- the pieces of dim d: `sections` nearly equal ones (the first n % sections
-- one longer), or pieces starting at the 1-based positions in `indices`
-- (PyTorch's split points + 1; negative from the end, clamped to the dim)
-- The pieces come back as several values, which every Lua host can return
-- up to some thousands of: more is refused rather than run out of stack.
local MAX_PIECES = 8192
local function split_pieces(fname, t, d, sections, indices)
  local n = t:size(d)
  local out = {}
  local pieces = sections or #indices + 1
  if sections and sections <= 0 then fail(fname, ("number of sections must be larger than 0, got %s"):format(compat.int_str(sections))) end
  if pieces > MAX_PIECES then
    fail(fname, ("too many pieces (%s; at most %d, returned as several values)"):format(compat.int_str(pieces), MAX_PIECES))
  end
  if sections then
    local base, extra = math.floor(n / sections), n % sections
    local start = 0
    for i = 1, sections do
      local len = base + (i <= extra and 1 or 0)
      out[i] = t:narrow(d, start + 1, len)
      start = start + len
    end
    return out
  end
  local function pos(i)   -- 1-based start position -> 0-based, clamped
    check_int(fname, "index", i)
    local p = i > 0 and i - 1 or (i < 0 and n + i or 0)
    if p < 0 then p = 0 end
    if p > n then p = n end
    return p
  end
  -- piece k runs from split point k-1 to split point k (empty when they
  -- are out of order), as PyTorch's slices
  local start = 0
  for k = 1, #indices do
    local stop = pos(indices[k])
    out[k] = t:narrow(d, start + 1, stop > start and stop - start or 0)
    start = stop
  end
  out[#indices + 1] = t:narrow(d, start + 1, n - start)
  return out
end
-- indices_or_sections as a number, a table, or an integer tensor
local function ios_of(fname, ios)
  if is_t(ios) then
    if ios.dtype ~= T.int64 then
      fail(fname, ("tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s"):format(torch_dtype_name(ios.dtype)))
    end
    if ios:dim() > 1 then
      fail(fname, ("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with %d dims"):format(ios:dim()))
    end
    if ios:dim() == 0 then return ios:item(), nil end
    return nil, ios:totable()
  end
  if type(ios) == "table" then return nil, ios end
  check_int(fname, "sections", ios)
  return ios, nil
end
def("tensor_split", function(t, ios, dim, ...)
  check_t("tensor_split", 1, t)
  local o
  if is_opts(dim) then o, dim = dim, nil else o = opts_at("tensor_split", 4, ...) end
  ck("tensor_split", o, { "dim" })
  if dim == nil then dim = o.dim end
  if t:dim() == 0 then
    fail("tensor_split", "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
  end
  local d = normdim("tensor_split", dim == nil and 1 or dim, t:dim())
  local sections, indices = ios_of("tensor_split", ios)
  return unpack(split_pieces("tensor_split", t, d, sections, indices))
end)
local function dsplit_like(fname, mind, dim_of)
  return function(t, ios)
    check_t(fname, 1, t)
    if t:dim() < mind then
      fail(fname, ("%s requires a tensor with at least %d dimension, but got a tensor with %d dimensions!"):format(fname, mind, t:dim()))
    end
    local d = dim_of(t)
    local sections, indices = ios_of(fname, ios)
    if sections then
      if sections == 0 or t:size(d) % sections ~= 0 then
        fail(fname, ("%s attempted to split along dimension %d, but the size of the dimension %d is not divisible by the split_size %d!"):format(
          fname, d, t:size(d), sections))
      end
    end
    return unpack(split_pieces(fname, t, d, sections, indices))
  end
end
def("hsplit", dsplit_like("hsplit", 1, function(t) return t:dim() == 1 and 1 or 2 end))
def("vsplit", dsplit_like("vsplit", 2, function() return 1 end))
def("dsplit", dsplit_like("dsplit", 3, function() return 3 end))

local function stack_list(fname, list, ...)
  if not (type(list) == "table" and not is_t(list)) then
    fail(fname, ("bad argument #1 (a list of tensors expected, got %s)"):format(is_t(list) and "ltensor.Tensor" or type(list)))
  end
  if select("#", ...) > 0 and (...) ~= nil then fail(fname, "bad argument #2 (unexpected extra argument)") end
  if #list == 0 then fail(fname, ("%s expects a non-empty TensorList"):format(fname)) end
  for i, t in ipairs(list) do check_t(fname, i, t) end
  return list
end
function T.hstack(list, ...)
  local ts = T.atleast_1d(stack_list("hstack", list, ...))
  return T.cat(ts, ts[1]:dim() == 1 and 1 or 2)
end
function T.vstack(list, ...) return T.cat(T.atleast_2d(stack_list("vstack", list, ...)), 1) end
function T.row_stack(list, ...) return T.cat(T.atleast_2d(stack_list("row_stack", list, ...)), 1) end
function T.dstack(list, ...) return T.cat(T.atleast_3d(stack_list("dstack", list, ...)), 3) end
function T.column_stack(list, ...)
  local ts = {}
  for i, t in ipairs(stack_list("column_stack", list, ...)) do
    ts[i] = t:dim() <= 1 and t:reshape({ t:numel(), 1 }) or t
  end
  return T.cat(ts, 2)
end
for _, n in ipairs({ "hstack", "vstack", "row_stack", "dstack", "column_stack" }) do T[n] = named(n, T[n]) end

-- dim split into sizes (one of them may be -1); a view where possible
def("unflatten", function(t, dim, sizes)
  check_t("unflatten", 1, t)
  local d = normdim("unflatten", dim, t:dim())
  if type(sizes) ~= "table" or is_t(sizes) then
    fail("unflatten", ("bad argument #3 (a table of sizes expected, got %s)"):format(type(sizes)))
  end
  if #sizes == 0 then fail("unflatten", "unflatten: sizes must be non-empty") end
  local n, known, infer = t:size(d), 1, nil
  for i = 1, #sizes do
    check_int("unflatten", "size", sizes[i])
    if sizes[i] == -1 and infer == nil then infer = i
    elseif sizes[i] < 0 then infer = false
    else known = known * sizes[i] end
  end
  local s = { unpack(sizes) }
  local ok = infer ~= false
  if ok and infer then
    ok = known ~= 0 and n % known == 0
    if ok then s[infer] = math.floor(n / known) end
  elseif ok then
    ok = known == n
  end
  if not ok then
    fail("unflatten", ("unflatten: Provided sizes %s don't multiply up to the size of dim %d (%d) in the input tensor"):format(
      shape_str(sizes), d, n))
  end
  local shape = t.shape
  local out = {}
  for i = 1, d - 1 do out[#out + 1] = shape[i] end
  for i = 1, #s do out[#out + 1] = s[i] end
  for i = d + 1, #shape do out[#out + 1] = shape[i] end
  return t:reshape(out)
end)
return true
