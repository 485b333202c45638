-- diff_runner.lua: build, run and check one differential case
-- (spec/fixtures/diff_cases.lua, generated from PyTorch 1.13 by
-- tools/gen_diff_cases.py).
--
-- The semantics are those of ../shared/conformance/run.lua (copied here so
-- that the test run does not depend on ../shared), with two extensions:
--   * a tensor operand may carry view = {{"method", args...}, ...}: steps
--     applied after building it, to get transposed/expanded/permuted operands;
--   * complex data are {re, im} pairs: complex operands are built through
--     T._frombytes (exact for inf/nan parts), complex results are read as the
--     {re, im} pairs totable() returns.
--
--   local R = require "diff_runner"   (with spec/ on package.path)
--   local why = R.run(T, case)        -- nil when the case passes, else a reason

local R = {}
local unpack, pack = table.unpack, table.pack

local T -- the module under test, set by R.run

local function rfail(msg) error({ runner = msg }, 0) end

local function errtext(e)
  if type(e) == "table" and e.runner then return "runner: " .. e.runner end
  local ok, s = pcall(tostring, e)
  if ok and type(s) == "string" then return s end
  return "<" .. type(e) .. " error>"
end

local function short(s, n)
  n = n or 200
  s = tostring(s):gsub("\n", " ")
  if #s > n then s = s:sub(1, n) .. "..." end
  return s
end

local function fmt(v)
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.9g", v)
  end
  if type(v) == "table" then
    local p = {}
    for i = 1, math.min(#v, 8) do p[i] = fmt(v[i]) end
    if #v > 8 then p[#p + 1] = "..." end
    return "{" .. table.concat(p, ",") .. "}"
  end
  return tostring(v)
end

local function deepcopy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = deepcopy(x) end
  return t
end

local function dtype_of(name)
  local ok, d = pcall(function() return T[name] end)
  if not ok or d == nil then rfail("missing dtype T." .. tostring(name)) end
  return d
end

local function is_complex_name(name) return name:sub(1, 7) == "complex" end

local function nest(shape, data)
  if #shape == 0 then return data[1] end
  local pos = 0
  local function rec(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then
        pos = pos + 1
        t[i] = data[pos]
      else
        t[i] = rec(d + 1)
      end
    end
    return t
  end
  return rec(1)
end

local function make_complex(op)
  local parts = {}
  for i, z in ipairs(op.data) do parts[i] = string.pack("<d<d", z[1], z[2]) end
  local t = T._frombytes(table.concat(parts), T.complex128, deepcopy(op.shape))
  if op.dtype ~= "complex128" then t = t:to(dtype_of(op.dtype)) end
  return t
end

local function make_tensor(op)
  local t
  local empty = false
  for _, s in ipairs(op.shape) do if s == 0 then empty = true end end
  if empty then
    t = T.zeros(deepcopy(op.shape), { dtype = dtype_of(op.dtype) })
  elseif is_complex_name(op.dtype) then
    t = make_complex(op)
  else
    t = T.tensor(nest(op.shape, op.data), { dtype = dtype_of(op.dtype) })
  end
  for _, st in ipairs(op.view or {}) do
    local m = t[st[1]]
    if m == nil then rfail("missing method " .. st[1]) end
    t = m(t, unpack(st, 2))
  end
  return t
end

local build

local function build_key(v)
  if type(v) ~= "table" then return v end
  if v.kind then return build(v) end
  local t = {}
  for i, x in ipairs(v) do t[i] = build_key(x) end
  return t
end

function build(op)
  local k = op.kind
  if k == "tensor" then return make_tensor(op)
  elseif k == "zerodim" then return T.tensor(op.value, { dtype = dtype_of(op.dtype) })
  elseif k == "int" or k == "float" or k == "bool" then return op.value
  elseif k == "dtype" then return dtype_of(op.name)
  elseif k == "list" or k == "data" then return deepcopy(op.value)
  elseif k == "opts" then
    local o = deepcopy(op.value)
    if o.dtype then o.dtype = dtype_of(o.dtype) end
    return o
  elseif k == "nil" then return nil
  elseif k == "seq" then
    local t = {}
    for i, x in ipairs(op.value) do t[i] = build(x) end
    return t
  elseif k == "index" then return build_key(op.value)
  end
  rfail("unknown operand kind " .. tostring(k))
end

local function build_args(list)
  local ok, a = pcall(function()
    local a = { n = #list }
    for i, op in ipairs(list) do a[i] = build(op) end
    return a
  end)
  if not ok then
    if type(a) == "table" and a.runner then error(a, 0) end
    rfail("building operands: " .. short(errtext(a)))
  end
  return a
end

local function getfield(obj, name)
  local ok, v = pcall(function() return obj[name] end)
  if ok then return v end
  return nil
end

local BIN = {
  ["+"] = function(a, b) return a + b end, ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end, ["/"] = function(a, b) return a / b end,
  ["%"] = function(a, b) return a % b end,
  ["^"] = function(a, b) return a ^ b end,
  ["=="] = function(a, b) return a == b end,
}
local UN = {
  unm = function(a) return -a end,
  len = function(a) return #a end,
}
-- Lua 5.3's integer operators: compiled with load() so that this file parses
-- on Lua 5.1/LuaJIT too, where the cases call the methods the operators
-- stand for (issue 12: those hosts have no // & | ~ << >>).
if (loadstring or load)("return 1 // 1") then   -- the parser knows 5.3's operators
  for _, op in ipairs({ "//", "&", "|", "~", "<<", ">>" }) do
    BIN[op] = (loadstring or load)("return function(a, b) return a " .. op .. " b end")()
  end
  UN.bnot = (loadstring or load)("return function(a) return ~a end")()
else
  local names = { ["//"] = "floor_divide", ["&"] = "bitwise_and", ["|"] = "bitwise_or", ["~"] = "bitwise_xor",
    ["<<"] = "bitwise_left_shift", [">>"] = "bitwise_right_shift" }
  for op, name in pairs(names) do BIN[op] = function(a, b) return T[name](a, b) end end
  UN.bnot = function(a) return T.bitwise_not(a) end
end

local function invoke(case)
  local call = case.call or "fn"
  local op = case.op
  local args = build_args(case.args)
  if call == "fn" then
    local f = T[op]
    if f == nil then rfail("missing function T." .. op) end
    return pack(f(unpack(args, 1, args.n)))
  elseif call == "method" then
    local self = args[1]
    local m = getfield(self, op)
    if m == nil then rfail("missing method " .. op) end
    local r = pack(m(unpack(args, 1, args.n)))
    if op:sub(-1) == "_" then return pack(self) end -- in-place: check the destination
    return r
  elseif call == "operator" then
    if UN[op] then return pack(UN[op](args[1])) end
    if not BIN[op] then rfail("unknown operator " .. op) end
    return pack(BIN[op](args[1], args[2]))
  elseif call == "index" then
    return pack(args[1][args[2]])
  elseif call == "setindex" then
    args[1][args[2]] = args[3]
    return pack(args[1])
  elseif call == "chain" then
    local x = args[1]
    for _, st in ipairs(case.chain) do
      local m = getfield(x, st[1])
      if m == nil then rfail("missing method " .. st[1]) end
      local p = {}
      for i = 2, #st do p[i - 1] = deepcopy(st[i]) end
      x = m(x, unpack(p, 1, #st - 1))
    end
    return pack(x)
  end
  rfail("unknown call kind " .. tostring(call))
end

-- ---------------------------------------------------------- result reading
local function dtype_ok(got, name)
  local want = T[name]
  if want ~= nil and rawequal(got, want) then return true end
  local ok, s = pcall(tostring, got)
  return ok and s == "ltensor." .. name
end

local function dtype_name(d)
  local ok, s = pcall(tostring, d)
  return ok and s or "?"
end

local function is_tensorlike(x)
  local tx = type(x)
  if tx ~= "userdata" and tx ~= "table" then return false end
  return getfield(x, "dtype") ~= nil and getfield(x, "shape") ~= nil
end

-- flatten nested tables down to `depth` levels (complex elements stay pairs)
local function flatten(v, depth, out)
  if depth > 0 and type(v) == "table" then
    for i = 1, #v do flatten(v[i], depth - 1, out) end
  else
    out[#out + 1] = v
  end
  return out
end

local function read_tensor(t)
  local shape = {}
  local sh = getfield(t, "shape")
  if type(sh) ~= "table" then rfail("t.shape is not a table") end
  for i = 1, #sh do shape[i] = sh[i] end
  local v = t:totable()
  local data
  if #shape == 0 then data = { v } else data = flatten(v, #shape, {}) end
  return shape, data
end

local function close(g, w, tol)
  if type(w) == "boolean" then return g == w end
  if type(w) == "table" then -- complex {re, im}
    if type(g) ~= "table" then return false end
    return close(g[1], w[1], tol) and close(g[2], w[2], tol)
  end
  if type(g) ~= "number" then return false end
  if w ~= w then return g ~= g end
  if g ~= g then return false end
  if math.type(w) == "integer" then
    return math.type(g) == "integer" and g == w
  end
  if g == w then return true end
  if w == math.huge or w == -math.huge or not tol then return false end
  return math.abs(g - w) <= (tol.atol or 0) + (tol.rtol or 0) * math.abs(w)
end

local function cmp_tensor(t, e, tol, what)
  what = what or "result"
  if not is_tensorlike(t) then return what .. " is not a tensor (" .. type(t) .. ")" end
  if not dtype_ok(getfield(t, "dtype"), e.dtype) then
    return what .. " dtype " .. dtype_name(getfield(t, "dtype")) .. ", want " .. e.dtype
  end
  if e.shape == nil then return nil end
  local shape, data = read_tensor(t)
  local same = #shape == #e.shape
  for i = 1, #e.shape do if shape[i] ~= e.shape[i] then same = false end end
  if not same then return what .. " shape " .. fmt(shape) .. ", want " .. fmt(e.shape) end
  if e.data == nil then return nil end
  if #data ~= #e.data then return what .. " has " .. #data .. " values, want " .. #e.data end
  for i = 1, #e.data do
    if not close(data[i], e.data[i], tol) then
      return string.format("%s value[%d] = %s (%s), want %s", what, i, fmt(data[i]),
        math.type(data[i]) or type(data[i]), fmt(e.data[i]))
    end
  end
  return nil
end

local function check(case, ok, res)
  local e = case.expect
  if e.error ~= nil then
    if ok then return "expected an error containing '" .. e.error .. "', got a result" end
    if type(res) == "table" and res.runner then return "runner: " .. res.runner end
    local msg = errtext(res)
    if msg:find("attempt to ", 1, true) then return "Lua error, not a deliberate one: " .. short(msg) end
    if e.error == "" then return nil end
    if msg:lower():find(e.error:lower(), 1, true) then return nil end
    return "error '" .. short(msg) .. "' lacks '" .. e.error .. "'"
  end
  if not ok then
    if type(res) == "table" and res.runner then return "runner: " .. res.runner end
    return "raised: " .. short(errtext(res))
  end
  local tol = case.tol
  if e.multi then
    if res.n < #e.multi then return "returned " .. res.n .. " values, want " .. #e.multi end
    for i, me in ipairs(e.multi) do
      local why = cmp_tensor(res[i], me, tol, "result " .. i)
      if why then return why end
    end
    return nil
  end
  local r = res[1]
  if e.value ~= nil then
    if is_tensorlike(r) then return "got a tensor, want the Lua value " .. fmt(e.value) end
    if type(r) ~= type(e.value) or r ~= e.value then
      return "got " .. fmt(r) .. " (" .. type(r) .. "), want " .. fmt(e.value)
    end
    return nil
  end
  return cmp_tensor(r, e, tol)
end

--- Run one case against module Tm; nil if it passes, else the reason.
function R.run(Tm, case)
  T = Tm
  local okcase, why = pcall(function()
    local ok, res = pcall(invoke, case)
    return check(case, ok, res)
  end)
  if not okcase then why = "runner error while checking: " .. short(errtext(why)) end
  return why
end

return R
