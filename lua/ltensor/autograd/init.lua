-- ltensor.autograd: the Lua face of the engine in src/binding/l_autograd.c
-- (the hook, backward/grad, the tensor methods, autograd.Function,
-- gradcheck); the backward rules are in autograd/rules_*.lua.
--
-- How it hooks in: every differentiable C op is registered with LT_DIFF; when
-- grad mode is on and a tensor argument requires grad, the C trampoline calls
-- the C hook as hook(grad_name, raw_fn, args...) instead of the op.  The hook
-- runs the rule for grad_name from `rules` (an engine plus a table of small
-- rules, as in micrograd/tinygrad):
--
--   rule(raw, args...) -> spec, outputs...
--   spec = { name = "MulBackward0", inputs = {a, b}, saved = {...},
--            backward = function(spec, grad_out...) -> grad per input }
--
-- and the engine turns the spec into a Node (a C userdata): edges to the
-- inputs' nodes, their shapes and dtypes, the saved tensors' versions.  The
-- spec stays the node's Lua half: it loses `inputs` (a graph keeps alive only
-- what backward needs: the `saved` list, freed after backward unless
-- retain_graph) and is what `backward` receives.  Formulas read tensors only
-- through spec.saved so that freeing and version checks (in-place
-- modification of a saved tensor) cover them; need(spec, i) tells whether
-- input i wants a gradient.
--
-- The engine works like PyTorch's: gradients returned for an input are cast to
-- the input's dtype and summed back to its shape (sum_to, broadcasting's
-- backward) in one place, so the formulas below do not do it themselves.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table

local methods = T._methods
local getmeta = T._meta
local set_flag = T._set_requires_grad_flag
local set_grad = T._set_grad_enabled
local is_grad_enabled = T.is_grad_enabled
local pack, unpack, select = table.pack, table.unpack, select
local getmetatable, setmetatable, rawequal, type = getmetatable, setmetatable, rawequal, type

local autograd = {}
T.autograd = autograd

local H = require "ltensor.autograd.helpers"
local is_t, fail, argcheck, check_t = H.is_t, H.fail, H.argcheck, H.check_t
local check_flags, util_typename = require("ltensor.util").check_flags, require("ltensor.util").mtname
-- an options table: its type, its keys (the one checker) and its flags
local function check_opts(fname, n, o, known)
  argcheck(o == nil or type(o) == "table", fname, n, "options table", o)
  if o and known then
    T._check_opts(fname, o, known)
    check_flags(fail, fname, o)
  end
end

-- Run f with grad mode b, restoring the previous mode even when f raises.
local function finish_mode(prev, ok, ...)
  set_grad(prev)
  if not ok then error((...), 0) end
  return ...
end
local function with_mode(b, f, ...)
  local prev = set_grad(b)
  return finish_mode(prev, pcall(f, ...))
end

function T.no_grad(f, ...)
  argcheck(type(f) == "function" or (getmetatable(f) or {}).__call, "no_grad", 1, "function", f)
  return with_mode(false, f, ...)
end
function T.enable_grad(f, ...)
  argcheck(type(f) == "function" or (getmetatable(f) or {}).__call, "enable_grad", 1, "function", f)
  return with_mode(true, f, ...)
end
function T.set_grad_enabled(b) return set_grad(b and true or false) end
autograd.no_grad, autograd.enable_grad = T.no_grad, T.enable_grad

local numel_of = H.numel_of
local rules, inplace_rules, need = H.rules, H.inplace_rules, H.need
local is_opts = H.is_opts
autograd.rules = rules
autograd.sum_to = H.sum_to
-- the backward rules, one file per kind of op
require "ltensor.autograd.rules_elementwise"
require "ltensor.autograd.rules_reduce"
require "ltensor.autograd.rules_shape"
require "ltensor.autograd.rules_matmul"
autograd.index_add_into = H.index_add_into

-- out-of-place rules that do not read their first input in backward: their
-- in-place variants need no copy of the old value
local NO_SELF = { add = true, sub = true, neg = true, relu = true, sigmoid = true, tanh = true, exp = true,
  copy_ = true, fill_ = true, zero_ = true, setindex = true, clone = true }

---------------------------------------------------------------------------
-- the hook
---------------------------------------------------------------------------
local function unknown_rule(name)
  return function(raw, ...)
    local args = pack(...)
    local inputs = {}
    for i = 1, args.n do
      local a = args[i]
      if is_t(a) then inputs[#inputs + 1] = a
      elseif type(a) == "table" and getmetatable(a) == nil then
        for _, e in ipairs(a) do if is_t(e) then inputs[#inputs + 1] = e end end
      end
    end
    return { name = name .. "Backward", inputs = inputs, ninputs = #inputs,
      backward = function() fail("backward", "the derivative for '" .. name .. "' is not implemented") end },
      raw(...)
  end
end

local hook
autograd.inplace_rules = inplace_rules
-- the ops the engine's C rules (src/binding/l_grad_rules.c) compute gradients
-- with, by the names of AG_FNS (src/binding/l_autograd.h; T._ag_init checks
-- that the two agree)
local cfns = { mul = methods.mul, add = methods.add, sub = methods.sub, div = methods.div, neg = methods.neg,
  mm = methods.mm, t = methods.t, transpose = methods.transpose, reshape = methods.reshape,
  expand = methods.expand, pow = methods.pow, zeros_like = methods.zeros_like or T.zeros_like, where = T.where,
  le = methods.le, threshold_backward = T._threshold_backward, rsub = methods.rsub or T.rsub, sum = methods.sum,
  add_ = methods.add_, unsqueeze = methods.unsqueeze, squeeze = methods.squeeze, matmul = methods.matmul, eq = T.eq,
  ge = T.ge, log = T.log, logical_and = T.logical_and, real = T.real, imag = T.imag }
hook, autograd.Node, autograd.crules = T._ag_init { rules = rules, inplace_rules = inplace_rules, no_self = NO_SELF,
  unknown = unknown_rule, methods = methods, cfns = cfns }
T._set_autograd_hook(hook)
local spec_of = T._ag_spec

---------------------------------------------------------------------------
-- the engine's entry points (src/binding/l_autograd.c: T._ag_run)
---------------------------------------------------------------------------
local ERR_FREED = "Trying to backward through the graph a second time (or directly access saved tensors after they " ..
  "have already been freed). Saved intermediate values of the graph are freed when you call .backward() or " ..
  "autograd.grad(). Specify retain_graph=true if you need to backward through the graph a second time or if you " ..
  "need to access saved tensors after calling backward."

local run = T._ag_run

local function modes(opts)
  local create = opts.create_graph and true or false
  local retain = opts.retain_graph
  if retain == nil then retain = create end
  return retain and true or false, create
end

-- T.autograd.backward(tensors [, grad_tensors] [, opts])
function autograd.backward(tensors, grad_tensors, opts)
  if is_opts(grad_tensors) then grad_tensors, opts = nil, grad_tensors end
  argcheck(is_t(tensors) or type(tensors) == "table", "autograd.backward", 1, "tensor or list of tensors", tensors)
  check_opts("autograd.backward", 3, opts, { "retain_graph", "create_graph" })
  local retain, create = modes(opts or {})
  run("backward", tensors, grad_tensors, retain, create)
end

-- t:backward([grad] [, opts])
function methods.backward(t, grad, opts)
  check_t("backward", 1, t)
  if is_opts(grad) then grad, opts = nil, grad end
  argcheck(grad == nil or is_t(grad) or type(grad) == "number", "backward", 2, "tensor or number", grad)
  if opts then
    check_opts("backward", 3, opts, { "retain_graph", "create_graph" })
    local retain, create = modes(opts)
    run("backward", t, grad, retain, create)
  else
    run("backward", t, grad, false, false)
  end
end

-- T.autograd.grad(outputs, inputs [, grad_outputs] [, opts]) -> list of gradients
function autograd.grad(outputs, inputs, grad_outputs, opts)
  if is_opts(grad_outputs) then grad_outputs, opts = nil, grad_outputs end
  argcheck(is_t(outputs) or type(outputs) == "table", "autograd.grad", 1, "tensor or list of tensors", outputs)
  argcheck(is_t(inputs) or type(inputs) == "table", "autograd.grad", 2, "tensor or list of tensors", inputs)
  check_opts("autograd.grad", 4, opts, { "retain_graph", "create_graph", "allow_unused" })
  opts = opts or {}
  local retain, create = modes(opts)
  return run("grad", outputs, grad_outputs, retain, create, inputs or {}, opts.allow_unused)
end

---------------------------------------------------------------------------
-- tensor methods
---------------------------------------------------------------------------
function methods.detach(t) check_t("detach", 1, t) return t.data end
function methods.detach_(t)
  check_t("detach_", 1, t)
  local m = getmeta(t)
  if m then m.grad_fn, m.output_nr, m.base = nil, nil, nil end
  set_flag(t, false)
  return t
end
function methods.requires_grad_(t, b)
  check_t("requires_grad_", 1, t)
  if b == nil then b = true end
  t.requires_grad = b
  return t
end
function methods.retain_grad(t)
  check_t("retain_grad", 1, t)
  if not t.requires_grad then fail("retain_grad", "can't retain_grad on Tensor that has requires_grad=false") end
  local m = getmeta(t, true)
  local gf = m.grad_fn
  if not gf then return t end  -- leaves keep their grad anyway
  gf = spec_of(gf)
  gf.retained = gf.retained or setmetatable({}, { __mode = "v" })
  gf.retained[m.output_nr or 1] = t
  m.retains_grad = true
  return t
end
function methods.register_hook(t, fn)
  check_t("register_hook", 1, t)
  argcheck(type(fn) == "function" or (getmetatable(fn) or {}).__call, "register_hook", 2, "function", fn)
  if not t.requires_grad then fail("register_hook", "cannot register a hook on a tensor that doesn't require gradient") end
  local m = getmeta(t, true)
  local hs
  if m.grad_fn then
    local gf = spec_of(m.grad_fn)
    gf.pre_hooks = gf.pre_hooks or {}
    local nr = m.output_nr or 1
    gf.pre_hooks[nr] = gf.pre_hooks[nr] or {}
    hs = gf.pre_hooks[nr]
  else
    m.hooks = m.hooks or {}
    hs = m.hooks
  end
  hs[#hs + 1] = fn
  return { remove = function() for i, h in ipairs(hs) do if h == fn then table.remove(hs, i) break end end end }
end

---------------------------------------------------------------------------
-- autograd.Function
---------------------------------------------------------------------------
local Ctx = {}
Ctx.__index = function(ctx, k)
  if k == "saved_tensors" then
    local n = rawget(ctx, "_node")
    if n then
      if n.saved == false then fail("backward", ERR_FREED) end
      local s = n.saved or {}
      return { unpack(s, 1, s.n or #s) }
    end
    local s = rawget(ctx, "_saved") or {}
    return { unpack(s, 1, s.n or #s) }
  end
  return Ctx[k]
end
function Ctx:save_for_backward(...) rawset(self, "_saved", pack(...)) end
function Ctx:mark_non_differentiable(...)
  local nd = rawget(self, "_nondiff") or {}
  for i = 1, select("#", ...) do nd[select(i, ...)] = true end
  rawset(self, "_nondiff", nd)
end
function Ctx:set_materialize_grads(b) rawset(self, "_no_materialize", not b) end

-- The backward of an autograd.Function node: the values it needs are the
-- closure's (Function.apply's), not fields of the spec, which T._ag_attach
-- receives from any caller
local function function_backward(ctx, user_backward, ninputs, nout, out_dtypes, out_shapes, ...)
  local gs = pack(...)
  if not rawget(ctx, "_no_materialize") then
    for i = 1, nout do
      if gs[i] == nil and out_shapes[i] then gs[i] = T.zeros(out_shapes[i], { dtype = out_dtypes[i] }) end
    end
  end
  local r = pack(user_backward(ctx, unpack(gs, 1, nout)))
  local out = {}
  for i = 1, ninputs do out[i] = r[i] end
  return unpack(out, 1, ninputs)
end

function autograd.Function(def)
  if not (type(def) == "table" and type(def.forward) == "function" and type(def.backward) == "function") then
    fail("autograd.Function", "expected a table with forward and backward functions")
  end
  local F = { forward = def.forward, backward = def.backward, name = def.name or "Function" }
  function F.apply(...)
    local args = pack(...)
    local first = 1
    if rawequal(args[1], F) then first = 2 end
    local inputs = {}
    for i = first, args.n do inputs[i - first + 1] = args[i] end   -- (a nil argument keeps its place)
    local nin = args.n - first + 1
    local needs = {}
    local any = false
    if is_grad_enabled() then
      for i = 1, nin do
        local x = inputs[i]
        needs[i] = is_t(x) and x.requires_grad or false
        any = any or needs[i]
      end
    end
    local ctx = setmetatable({ needs_input_grad = needs }, Ctx)
    local outs = pack(with_mode(false, def.forward, ctx, unpack(inputs, 1, nin)))
    if not any then return unpack(outs, 1, outs.n) end
    for i = 1, outs.n do
      local o = outs[i]
      if is_t(o) then
        for k = 1, nin do
          if rawequal(o, inputs[k]) then outs[i] = o.data break end  -- an input returned as is: a new view
        end
      end
    end
    local out_dtypes, out_shapes = {}, {}
    for i = 1, outs.n do if is_t(outs[i]) then out_dtypes[i], out_shapes[i] = outs[i].dtype, outs[i].shape end end
    -- the node's name: "<name>Backward", or the name itself when it already
    -- is one (the library's own Functions take PyTorch's "EluBackward0")
    local gname = F.name:match("Backward%d*$") and F.name or F.name .. "Backward"
    local nout, user_backward = outs.n, def.backward
    local spec = { name = gname, inputs = inputs, ninputs = nin, saved = rawget(ctx, "_saved"),
      conj_aware = true,   -- a Function's backward gets PyTorch's gradients as they are
      nondiff = rawget(ctx, "_nondiff") and {} or nil,
      backward = function(_, ...) return function_backward(ctx, user_backward, nin, nout, out_dtypes, out_shapes, ...) end }
    local nd = rawget(ctx, "_nondiff")
    if nd then for i = 1, outs.n do if nd[outs[i]] then spec.nondiff[i] = true end end end
    rawset(ctx, "_node", spec)
    return T._ag_attach(spec, unpack(outs, 1, outs.n))
  end
  return setmetatable(F, { __call = function(_, ...) return F.apply(...) end })
end

---------------------------------------------------------------------------
-- gradcheck: central finite differences in float64 against autograd
---------------------------------------------------------------------------
local function flat_values(t)
  local v = t:reshape({ t:numel() }):totable()
  return v
end

function autograd.gradcheck(fn, inputs, opts)
  argcheck(type(fn) == "function" or (getmetatable(fn) or {}).__call, "autograd.gradcheck", 1, "function", fn)
  argcheck(is_t(inputs) or type(inputs) == "table", "autograd.gradcheck", 2, "tensor or list of tensors", inputs)
  check_opts("autograd.gradcheck", 3, opts, { "eps", "atol", "rtol", "raise_exception" })
  opts = opts or {}
  for _, k in ipairs({ "eps", "atol", "rtol" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "number" then
      fail("autograd.gradcheck", ("bad option '%s' (number expected, got %s)"):format(k, util_typename(opts[k])))
    end
  end
  local eps = opts.eps or 1e-6
  local atol = opts.atol or 1e-5
  local rtol = opts.rtol or 1e-3
  local raise = opts.raise_exception ~= false
  local single = is_t(inputs)
  local ins = single and { inputs } or inputs
  local function call()
    local r = pack(fn(unpack(ins, 1, #ins)))
    local outs = {}
    for i = 1, r.n do if is_t(r[i]) then outs[#outs + 1] = r[i] end end
    return outs
  end
  local function report(msg)
    if raise then fail("gradcheck", msg) end
    return false
  end
  for i, x in ipairs(ins) do
    if is_t(x) and x.requires_grad and x.dtype ~= T.float64 then
      return report("input " .. i .. " is " .. tostring(x.dtype) .. "; gradcheck needs float64 inputs")
    end
  end
  local nouts = #call()
  for oi = 1, nouts do
    -- a fresh graph per output: the numerical pass below writes into the inputs
    local out = call()[oi]
    if out.requires_grad then
      local no = out:numel()
      -- analytical jacobian rows, one backward per output element
      local ana = {}
      local diff_in = {}
      for i, x in ipairs(ins) do if is_t(x) and x.requires_grad then diff_in[#diff_in + 1] = i end end
      local xs = {}
      for k, i in ipairs(diff_in) do xs[k] = ins[i] end
      for j = 1, no do
        local go = T.zeros({ no }, { dtype = out.dtype })
        go:set(j, 1)
        local gs = autograd.grad({ out }, xs, { go:reshape(out.shape) }, { retain_graph = true, allow_unused = true })
        for k = 1, #xs do
          ana[k] = ana[k] or {}
          local gv = gs[k] and flat_values(gs[k]) or nil
          for p = 1, xs[k]:numel() do
            ana[k][p] = ana[k][p] or {}
            ana[k][p][j] = gv and gv[p] or 0.0
          end
        end
      end
      -- numerical jacobian
      for k, i in ipairs(diff_in) do
        local x = ins[i]
        local data = x.data
        local flat = data:is_contiguous() and data:reshape({ x:numel() }) or nil
        if not flat then fail("gradcheck", "input " .. i .. " must be contiguous") end
        for p = 1, x:numel() do
          local orig = flat:get(p)
          flat:set(p, orig + eps)
          local plus = T.no_grad(function() return flat_values(call()[oi]) end)
          flat:set(p, orig - eps)
          local minus = T.no_grad(function() return flat_values(call()[oi]) end)
          flat:set(p, orig)
          for j = 1, no do
            local num = (plus[j] - minus[j]) / (2 * eps)
            local a = ana[k][p][j]
            if not (math.abs(a - num) <= atol + rtol * math.abs(num)) then
              return report(string.format("Jacobian mismatch for output %d with respect to input %d,\n" ..
                "numerical: %.10g\nanalytical: %.10g\n(at input element %d, output element %d)", oi, i, num, a, p, j))
            end
          end
        end
      end
    end
  end
  return true
end

-- The module's own functions (they are also T's): package.loaded holds
-- this table, not T, so a traceback names T's other functions 'ltensor.*'
-- rather than through this module
-- (T.autograd: backward, grad, no_grad, Function, ...)
return T.autograd
