-- ltensor.onnx.util -- helpers shared by the operator files: ONNX axes
-- (0-based, negative from the end) to ltensor dims (1-based), shape tensors
-- to Lua lists and back, run-time errors.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math = compat.math

local U = {}

function U.rfail(msg) error("ltensor.onnx.forward: " .. msg, 0) end

-- ONNX axis a of a rank-r tensor -> ltensor's 1-based dim
function U.dim(a, r, what)
  local d = a < 0 and a + r or a
  if d < 0 or d >= r then
    U.rfail(("%s %d is out of range for a tensor of rank %d"):format(what or "axis", a, r))
  end
  return d + 1
end

-- the values of a (small, integral) tensor as a Lua list
function U.ints(t, what)
  if t == nil then return nil end
  if t.dtype.is_floating_point or t.dtype.is_complex then
    U.rfail((what or "input") .. " must be an integer tensor, got " .. tostring(t.dtype))
  end
  local v = t:reshape({ -1 }):totable()
  for i = 1, #v do
    if type(v[i]) == "boolean" then v[i] = v[i] and 1 or 0 end
  end
  return v
end

function U.scalar(t)
  if t:numel() ~= 1 then U.rfail("expected a tensor of one element, got " .. t:numel()) end
  return t:reshape({ -1 })[1]:item()
end

-- a one-element input that the op computes with: a real number (a complex
-- or bool tensor there is a malformed model, refused by name)
function U.number(t, what)
  local dt = t.dtype
  if dt.is_complex or dt == T.bool then
    U.rfail(("%s must be a real number, got a %s tensor"):format(what, tostring(dt):gsub("^ltensor%.", "")))
  end
  return U.scalar(t)
end

function U.shape_tensor(list)
  return T.tensor(list, { dtype = T.int64 }):reshape({ #list })
end

function U.prod(list, i, j)
  local p = 1
  for k = i or 1, j or #list do p = p * list[k] end
  return p
end

-- ONNX multidirectional broadcasting of two shapes (numpy's rule)
function U.broadcast(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local x = a[#a - n + i] or 1
    local y = b[#b - n + i] or 1
    if x == y or y == 1 then out[i] = x
    elseif x == 1 then out[i] = y
    else U.rfail(("shapes {%s} and {%s} cannot be broadcast"):format(table.concat(a, ", "), table.concat(b, ", "))) end
  end
  return out
end

-- sorted, normalised 1-based dims of a list of ONNX axes
function U.dims(axes, r)
  local out, seen = {}, {}
  for i, a in ipairs(axes) do
    local d = U.dim(a, r)
    if seen[d] then U.rfail("axis " .. a .. " is repeated") end
    seen[d] = true
    out[i] = d
  end
  table.sort(out)
  return out
end

function U.is_float(t) return t.dtype.is_floating_point end

return U
