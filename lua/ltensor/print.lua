-- ltensor.print: tostring(t) in the format of PyTorch 1.13's repr
-- (torch/_tensor_str.py), and T.set_printoptions / T.get_printoptions.
--
-- Differences from PyTorch, on purpose: Lua spelling of booleans (`true`,
-- `false`, `requires_grad=true`) and dtypes named without a prefix
-- (`dtype=float64`).
--
-- Only the elements that are shown are read: a tensor with more than
-- `threshold` elements is summarised, and then only edgeitems rows/columns
-- per dim are fetched with t:get, so printing a 1000x1000 tensor is cheap.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local floor, huge, max = math.floor, math.huge, math.max
local concat, unpack = table.concat, table.unpack
local sfmt, srep = string.format, string.rep

-- The options live in this module instance, which is per lua_State.
local DEFAULTS = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80 }
local opts = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80, sci_mode = nil }

local PROFILES = {
  default = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80 },
  short = { precision = 2, threshold = 1000, edgeitems = 2, linewidth = 80 },
  full = { precision = 4, threshold = huge, edgeitems = 3, linewidth = 80 },
}

local function opt_error(msg, ...)
  error("ltensor.set_printoptions: " .. sfmt(msg, ...), 0)   -- level 0: callers are at different depths
end

local function check_count(o, name, lo, hi)
  local v = o[name]
  if v == nil then return nil end
  if type(v) ~= "number" then opt_error("%s must be a number, got %s", name, type(v)) end
  if v ~= huge and math.type(v) ~= "integer" then
    local i = math.tointeger(v)
    if not i then opt_error("%s must be an integer, got %s", name, tostring(v)) end
    v = i
  end
  if v < lo or v > hi then opt_error("%s must be in [%d, %s], got %s", name, lo, tostring(hi), tostring(v)) end
  return v
end

--- T.set_printoptions{precision=, threshold=, edgeitems=, linewidth=, profile=, sci_mode=}
-- As in PyTorch, sci_mode is reset to automatic unless it is given.
function T.set_printoptions(o)
  if o == nil then o = {} end
  if type(o) ~= "table" then opt_error("expected a table of options, got %s", type(o)) end
  -- the one checker: "unknown option 'precison' (did you mean 'precision'?)"
  T._check_opts("set_printoptions", o, { "precision", "threshold", "edgeitems", "linewidth", "profile", "sci_mode" })
  local new = {
    precision = check_count(o, "precision", 0, 99),   -- string.format allows 2 digits
    threshold = check_count(o, "threshold", 0, huge),
    edgeitems = check_count(o, "edgeitems", 0, math.maxinteger),
    linewidth = check_count(o, "linewidth", 0, math.maxinteger),
  }
  if o.sci_mode ~= nil and type(o.sci_mode) ~= "boolean" then
    opt_error("sci_mode must be a boolean or nil, got %s", type(o.sci_mode))
  end
  if o.profile ~= nil then
    local p = PROFILES[o.profile]
    if not p then opt_error("profile must be 'default', 'short' or 'full', got %s", tostring(o.profile)) end
    for k, v in pairs(p) do opts[k] = v end
  end
  for k, v in pairs(new) do opts[k] = v end
  opts.sci_mode = o.sci_mode
end

--- A copy of the current print options.
function T.get_printoptions()
  return { precision = opts.precision, threshold = opts.threshold, edgeitems = opts.edgeitems,
           linewidth = opts.linewidth, sci_mode = opts.sci_mode }
end

-- ---------------------------------------------------------------------------
-- scalar formatting (Python's str.format semantics)

local function fmt_fixed(v, prec)   -- "{:.Nf}"
  if v ~= v then return "nan" end   -- Python never prints a sign on nan
  if v == huge then return "inf" end
  if v == -huge then return "-inf" end
  return compat.fmt_num("f", prec, v)   -- printf's ties-to-even on LuaJIT too
end

local function fmt_sci(v, prec)     -- "{:.Ne}"
  if v ~= v then return "nan" end
  if v == huge then return "inf" end
  if v == -huge then return "-inf" end
  return compat.fmt_num("e", prec, v)
end

-- "{}" of a Python int/bool; uint64 values arrive wrapped to negative
local function fmt_plain(v, unsigned)
  if v == true then return "true" elseif v == false then return "false" end
  if unsigned and not compat.has_integers and v < 0 then return sfmt("%.0f", v + 18446744073709551616) end
  if unsigned and math.type(v) == "integer" and v < 0 then
    local q = compat.idiv(compat.shr(v, 1), 5)   -- v as unsigned, divided by 10
    return sfmt("%d%d", q, v - q * 10)
  end
  return sfmt("%d", v)
end

local function is_finite(v) return v == v and v ~= huge and v ~= -huge end

-- PyTorch's _Formatter: decides int/sci/fixed mode and the common width
-- from the (summarised) values.
local function make_formatter(vals, floating, unsigned)
  local f = { floating = floating, int_mode = true, sci_mode = false, max_width = 1, unsigned = unsigned }
  local prec = opts.precision
  if not floating then
    local w = 1
    for i = 1, #vals do
      local n = #fmt_plain(vals[i], unsigned)
      if n > w then w = n end
    end
    f.max_width = w
  else
    local nz, n = {}, 0
    for i = 1, #vals do
      local v = vals[i]
      if v ~= 0 and is_finite(v) then n = n + 1; nz[n] = v end
    end
    -- PyTorch returns early here, so sci_mode is not overridden either
    if n == 0 then return f end
    local amin, amax = huge, 0
    for i = 1, n do
      local a = nz[i] < 0 and -nz[i] or nz[i]
      if a < amin then amin = a end
      if a > amax then amax = a end
    end
    for i = 1, n do
      if nz[i] ~= math.ceil(nz[i]) then f.int_mode = false; break end
    end
    local w = 1
    if f.int_mode then
      if amax / amin > 1000.0 or amax > 1.0e8 then
        f.sci_mode = true
        for i = 1, n do w = max(w, #fmt_sci(nz[i], prec)) end
      else
        for i = 1, n do w = max(w, #fmt_fixed(nz[i], 0) + 1) end
      end
    else
      if amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4 then
        f.sci_mode = true
        for i = 1, n do w = max(w, #fmt_sci(nz[i], prec)) end
      else
        for i = 1, n do w = max(w, #fmt_fixed(nz[i], prec)) end
      end
    end
    f.max_width = w
  end
  if opts.sci_mode ~= nil then f.sci_mode = opts.sci_mode end
  return f
end

local function format_value(f, v)
  local ret
  if f.floating then
    if f.sci_mode then
      ret = fmt_sci(v, opts.precision)
    elseif f.int_mode then
      ret = fmt_fixed(v, 0)
      if is_finite(v) then ret = ret .. "." end
    else
      ret = fmt_fixed(v, opts.precision)
    end
  else
    ret = fmt_plain(v, f.unsigned)
  end
  local pad = f.max_width - #ret
  if pad > 0 then return srep(" ", pad) .. ret end
  return ret
end

-- ---------------------------------------------------------------------------
-- data gathering

-- Nested Lua tables of the shown elements: everything (totable) when not
-- summarising, else the first and last edgeitems of each long dim.
-- n > 2 * e without the overflow of 2 * e (edgeitems may be math.maxinteger)
local function long_dim(n, e) return n - e > e end

local function gather(t, shape, summarize, e)
  if not summarize then return t:totable() end
  local nd = #shape
  local idx = {}
  for d = 1, nd do
    local n, list = shape[d], {}
    if long_dim(n, e) then
      for i = 1, e do list[#list + 1] = i end
      for i = n - e + 1, n do list[#list + 1] = i end
    else
      for i = 1, n do list[i] = i end
    end
    idx[d] = list
  end
  local cur = {}
  local function rec(d)
    if d > nd then return t:get(unpack(cur, 1, nd)) end
    local out, list = {}, idx[d]
    for k = 1, #list do
      cur[d] = list[k]
      out[k] = rec(d + 1)
    end
    return out
  end
  return rec(1)
end

-- All leaves of the gathered data in order (complex: real and imag lists).
local function flatten(data, nd, complex)
  local re, im, n = {}, complex and {} or nil, 0
  local function rec(x, d)
    if d > nd then
      n = n + 1
      if complex then
        if type(x) == "table" then re[n], im[n] = x[1], x[2] else re[n], im[n] = x, 0.0 end
      else
        re[n] = x
      end
      return
    end
    for i = 1, #x do rec(x[i], d + 1) end
  end
  rec(data, 1)
  return re, im
end

-- ---------------------------------------------------------------------------
-- layout (PyTorch's _scalar_str/_vector_str/_tensor_str_with_formatter)

local function val_str(v, f1, f2)
  if not f2 then return format_value(f1, v) end
  local re, im
  if type(v) == "table" then re, im = v[1], v[2] else re, im = v, 0.0 end
  local real_str = format_value(f1, re)
  local imag_str = (format_value(f2, im) .. "j"):gsub("^%s+", "")
  local c = imag_str:sub(1, 1)
  if c == "+" or c == "-" then return real_str .. imag_str end
  return real_str .. "+" .. imag_str
end

local function tensor_lines(data, shape, d, indent, summarize, f1, f2)
  local nd = #shape
  local e = opts.edgeitems
  local cut = summarize and long_dim(shape[d], e)   -- this dim shows "..."
  if d == nd then
    local element_length = f1.max_width + 2
    if f2 then element_length = element_length + f2.max_width + 1 end
    local per_line = max(1, floor((opts.linewidth - indent) / element_length))
    local items = {}
    if cut and e == 0 then items[1] = " ..." end
    for i = 1, #data do
      items[#items + 1] = val_str(data[i], f1, f2)
      if cut and i == e then items[#items + 1] = " ..." end
    end
    local lines = {}
    -- (a step of at most #items: a float loop of a huge step, linewidth =
    -- math.maxinteger, starts at 0 on Lua 5.1/5.2, which compute 1 - step + step)
    per_line = max(1, math.min(per_line, #items))
    for i = 1, #items, per_line do
      lines[#lines + 1] = concat(items, ", ", i, math.min(i + per_line - 1, #items))
    end
    return "[" .. concat(lines, ",\n" .. srep(" ", indent + 1)) .. "]"
  end
  local slices = {}
  if cut and e == 0 then slices[1] = "..." end
  for i = 1, #data do
    slices[#slices + 1] = tensor_lines(data[i], shape, d + 1, indent + 1, summarize, f1, f2)
    if cut and i == e then slices[#slices + 1] = "..." end
  end
  return "[" .. concat(slices, "," .. srep("\n", nd - d) .. srep(" ", indent + 1)) .. "]"
end

local function tensor_str(t, shape, numel, indent)
  local dt = t.dtype
  local summarize = numel > opts.threshold
  local data = gather(t, shape, summarize, opts.edgeitems)
  local nd = #shape
  local complex = dt.is_complex
  local f1, f2
  if complex then
    local re, im = flatten(nd == 0 and data or data, nd, true)
    f1 = make_formatter(re, true)
    f2 = make_formatter(im, true)
  else
    local vals = flatten(data, nd, false)
    f1 = make_formatter(vals, dt.is_floating_point, dt == T.uint64)
  end
  if nd == 0 then return val_str(data, f1, f2) end
  return tensor_lines(data, shape, 1, indent, summarize, f1, f2)
end

local function tuple_str(shape)
  if #shape == 1 then return "(" .. shape[1] .. ",)" end
  return "(" .. concat(shape, ", ") .. ")"
end

local function add_suffixes(s, suffixes, indent)
  local out = { s }
  local last_nl = 0
  for i = #s, 1, -1 do
    if s:byte(i) == 10 then last_nl = i; break end
  end
  local last_line_len = #s - last_nl + 2    -- PyTorch's off-by-two, kept for identical wrapping
  for _, suffix in ipairs(suffixes) do
    if last_line_len + #suffix + 2 > opts.linewidth then
      out[#out + 1] = ",\n" .. srep(" ", indent) .. suffix
      last_line_len = indent + #suffix
    else
      out[#out + 1] = ", " .. suffix
      last_line_len = last_line_len + #suffix + 2
    end
  end
  out[#out + 1] = ")"
  return concat(out)
end

local function repr(t)
  local prefix = "tensor("
  local indent = #prefix
  local dt = t.dtype
  local shape = t.shape
  local numel = t:numel()
  local default = T.get_default_dtype()
  local default_complex = default == T.float64 and T.complex128 or T.complex64
  local suffixes = {}
  local body
  if numel == 0 then
    if #shape ~= 1 then suffixes[#suffixes + 1] = "size=" .. tuple_str(shape) end
    -- no element tells the dtype, so it is shown unless it is the default
    if dt ~= default then suffixes[#suffixes + 1] = "dtype=" .. dt.name end
    body = "[]"
  else
    if dt ~= default and dt ~= default_complex and dt ~= T.int64 and dt ~= T.bool then
      suffixes[#suffixes + 1] = "dtype=" .. dt.name
    end
    body = tensor_str(t, shape, numel, indent)
  end
  local gf = t.grad_fn
  if gf ~= nil then
    local name = type(gf) == "table" and gf.name or nil
    suffixes[#suffixes + 1] = "grad_fn=<" .. tostring(name or gf) .. ">"
  elseif t.requires_grad then
    suffixes[#suffixes + 1] = "requires_grad=true"
  end
  return add_suffixes(prefix .. body, suffixes, indent)
end

-- (the C side's __tostring calls repr with a live tensor; T._repr, reachable
-- from any script, checks its argument first)
T._repr = function(t)
  if getmetatable(t) ~= T._metatable then
    error("ltensor._repr: bad argument #1 (Tensor expected, got " .. type(t) .. ")", 0)
  end
  return tostring(t)
end
T._set_tostring(repr)

-- The module's own functions (they are also T's): package.loaded holds
-- this table, not T, so a traceback names T's other functions 'ltensor.*'
-- rather than through this module
return { set_printoptions = T.set_printoptions, get_printoptions = T.get_printoptions }
