-- tools/fuzz_gen.lua -- the structure-aware generator behind the randomized
-- run of tools/fuzz_api.lua (script mode).
--
-- Targets are discovered, not listed: every function of T (internal T._*
-- entry points included), Tensor methods, T.linalg, T.nn.functional,
-- T.autograd, T.nn.init/utils, T.fft (if present), T.distributions, every
-- callable class of T.nn, T.optim, T.optim.lr_scheduler, T.distributions,
-- T.utils.data (constructor and each method), plus every name of
-- help.public_names() not reached that way.
--
-- Valid calls are captured, not written: the reference examples
-- (lua/ltensor/docs/*.lua, help.entries()) run with every target wrapped by
-- a recorder, once as written and once more with their float tensors
-- requiring grad and backward() through the results, so that the calls the
-- Lua layer makes into T._* and the backward entry points are captured too.
-- Each record keeps a private copy of its arguments (tensors cloned,
-- instances as the constructor call that built them).
--
-- A fuzz call replays a record (fresh copies) with 0-4 mutations: a tensor
-- argument gets another dtype (all 16), a non-contiguous / expanded /
-- zero-size / 0-dim layout, NaN/inf or the dtype's integer extremes, a size
-- off by one, an extra or a missing dim, requires_grad; a number becomes a
-- negative dim, 0, an int extreme, NaN/inf, a huge size; strings, options
-- and lists are mutated field by field; arguments are dropped, added,
-- swapped or given the wrong type; a method call may get a mutated
-- constructor.  Every tensor result that requires grad is then backward()ed
-- with a valid, broadcast, non-contiguous, wrong-dtype or NaN gradient.
-- Targets without a record get argument lists drawn from the value pool of
-- fuzz_api.lua and the captured tensors.
--
-- Each call i draws its randomness from (seed, i) only: FUZZ_ONLY=i replays
-- call i alone (after the same capture), which is how a crash logged as
-- "#i ..." is reproduced.
local G = {}

local DTYPES = { "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                 "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128" }
G.DTYPES = DTYPES

-- Targets that touch the file system, the terminal or process-wide state
-- the run depends on (the loaders have their own fuzzer, fuzz_loaders.lua).
local DENY = {
  ["T.save"] = true, ["T.save_npy"] = true, ["T.save_image"] = true, ["T.write_csv"] = true,
  ["T.load"] = true, ["T.load_npy"] = true, ["T.load_image"] = true, ["T.read_csv"] = true,
  ["T._atomic_write"] = true, ["T._create_file"] = true, ["T._fsync"] = true, ["T._fsync_dir"] = true,
  ["T._write_in_place"] = true, ["T._write_new"] = true, ["T._path_info"] = true,
  ["T.set_memory_limit"] = true, ["T._set_tostring"] = true, ["T._set_autograd_hook"] = true,
  ["T._ag_init"] = true, ["T.help"] = true, ["T.seed"] = true,
}
local DENY_PREFIX = { "T.plot.", "T.utils.progress", "T.testing.", "T.repl" }
function G.denied(name)
  if DENY[name] then return true end
  for _, p in ipairs(DENY_PREFIX) do if name:sub(1, #p) == p then return true end end
  return false
end

local function is_callable_table(v)
  local mt = type(v) == "table" and getmetatable(v)
  return mt and mt.__call ~= nil
end

-- The namespaces walked for targets, in the order names are given.
local function namespaces(T)
  local nn = T.nn or {}
  local list = {}
  local function add(prefix, t) if type(t) == "table" then list[#list + 1] = { prefix, t } end end
  add("T.", T)
  add("Tensor:", T._methods)
  add("T.linalg.", T.linalg)
  add("T.fft.", T.fft)
  add("T.nn.functional.", nn.functional)
  add("T.nn.init.", nn.init)
  add("T.nn.utils.", nn.utils)
  add("T.nn.utils.rnn.", nn.utils and nn.utils.rnn)
  add("T.autograd.", T.autograd)
  add("T.distributions.", T.distributions)
  add("T.nn.", nn)
  add("T.optim.", T.optim)
  add("T.optim.lr_scheduler.", T.optim and T.optim.lr_scheduler)
  add("T.utils.data.", T.utils and T.utils.data)
  return list
end
G.namespaces = namespaces

-- The method tables of a class: itself and its ancestors (nn's _super,
-- or a metatable's __index table).
local function method_tables(C)
  local out, seen, tbl = {}, {}, C
  for _ = 1, 6 do
    if type(tbl) ~= "table" or seen[tbl] then break end
    seen[tbl] = true
    out[#out + 1] = tbl
    local mt = getmetatable(tbl)
    tbl = rawget(tbl, "_super") or (mt and type(mt.__index) == "table" and mt.__index) or nil
  end
  return out
end

local SKIP_METHODS = { new = true, extend = true, init = true, _init = true }

-- Discover the targets: a list of {name, kind = "fn"|"ctor"|"method", ...}.
function G.discover(T)
  local out, by_name, seen_fn, seen_mt = {}, {}, {}, {}
  local function add(t)
    if by_name[t.name] or G.denied(t.name) then return end
    by_name[t.name] = t
    out[#out + 1] = t
  end
  local classes = {}
  for _, ns in ipairs(namespaces(T)) do
    local prefix, tbl = ns[1], ns[2]
    local keys = {}
    for k in pairs(tbl) do if type(k) == "string" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = tbl[k]
      -- (a leading "_" outside T is a Lua module's private helper, not an
      -- entry point; T._* are the C entry points the Lua layer calls)
      local private = k:sub(1, 1) == "_" and prefix ~= "T."
      if type(v) == "function" and not seen_fn[v] and not private then
        seen_fn[v] = true
        add({ name = prefix .. k, kind = "fn", fn = v, ns = tbl, key = k })
      elseif is_callable_table(v) and k:match("^%u") then
        local cname = prefix .. k
        classes[#classes + 1] = { name = cname, cls = v, ns = tbl, key = k }
        add({ name = cname, kind = "ctor", cls = v, ns = tbl, key = k })
      end
    end
  end
  -- methods: per method table, each function once
  for _, c in ipairs(classes) do
    for depth, mt in ipairs(method_tables(c.cls)) do
      if not seen_mt[mt] then
        seen_mt[mt] = true
        local cname = depth == 1 and c.name or (rawget(mt, "_classname") and ("T.nn." .. rawget(mt, "_classname")))
                      or (c.name .. "^" .. (depth - 1))
        local keys = {}
        for k, v in pairs(mt) do
          if type(k) == "string" and type(v) == "function" and k:sub(1, 1) ~= "_" and not SKIP_METHODS[k] then
            keys[#keys + 1] = k
          end
        end
        table.sort(keys)
        for _, k in ipairs(keys) do
          add({ name = cname .. ":" .. k, kind = "method", fn = mt[k], mt = mt, key = k, family = c.name:match("^(.*)%."),
                class = depth == 1 and c.name or nil })
        end
      end
    end
  end
  -- help's public names not reached above (a name documented elsewhere)
  local okh, help = pcall(require, "ltensor.help")
  if okh then
    for _, n in ipairs(help.public_names()) do
      if not by_name[n] then
        local v
        local meth = n:match("^Tensor:([%w_]+)$")
        if meth then v = T._methods[meth]
        elseif not n:find(":", 1, true) then
          v = T
          for part in n:gmatch("[^%.]+") do if part ~= "T" then v = type(v) == "table" and v[part] or nil end end
        end
        if type(v) == "function" and not seen_fn[v] then
          seen_fn[v] = true
          add({ name = n, kind = "fn", fn = v })
        end
      end
    end
  end
  return out
end

-- ---- capture ---------------------------------------------------------------

local MAX_RECORDS = 24          -- per target
local MAX_NUMEL = 65536         -- bigger tensors are not kept

function G.new_capture(T)
  local C = { T = T, records = {}, inst2rec = setmetatable({}, { __mode = "k" }), busy = false, strings = {},
              keys = {}, tensors = {} }
  return C
end

local function tensor_ok(T, v)
  return T.is_tensor(v) and pcall(function() return v:numel() end)
end

-- A private, replayable copy of a value.
local function freeze(C, v, depth)
  local T = C.T
  if T.is_tensor(v) then
    local ok, n = pcall(function() return v:numel() end)
    if not ok or n > MAX_NUMEL then return nil, false end
    local okc, c = pcall(function() return v:detach():clone() end)
    if not okc then return nil, false end
    local rg = v.requires_grad
    local node = { k = "t", t = c, rg = rg }
    if #C.tensors < 4000 then C.tensors[#C.tensors + 1] = node end
    return node, true
  end
  local tv = type(v)
  if tv == "table" then
    local rec = C.inst2rec[v]
    if rec then return { k = "inst", rec = rec }, true end
    if getmetatable(v) ~= nil or depth > 4 then return { k = "ref", v = v }, true end
    local fields = {}
    for key, val in pairs(v) do
      local f, ok = freeze(C, val, depth + 1)
      if not ok then return nil, false end
      fields[key] = f
      if type(key) == "string" then C.keys[key] = true end
    end
    return { k = "tab", f = fields }, true
  end
  if tv == "string" and #v < 64 then C.strings[v] = true end
  return { k = "v", v = v }, true
end

local function freeze_args(C, n, ...)
  local a = {}
  for i = 1, n do
    local f, ok = freeze(C, (select(i, ...)), 0)
    if not ok then return nil end
    a[i] = f
  end
  return a
end

local function signature_of(T, n, ...)
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    if T.is_tensor(v) then
      local ok, s = pcall(function() return tostring(v.dtype) .. table.concat(v.shape, "x") end)
      parts[i] = ok and s or "t?"
    else
      parts[i] = type(v) == "table" and "tab" or tostring(v)
    end
  end
  return table.concat(parts, ",")
end

local function record(C, name, selfrec, n, ...)
  local list = C.records[name]
  if not list then list = {} C.records[name] = list end
  if #list >= MAX_RECORDS then return nil end
  local sig = signature_of(C.T, n, ...)
  list.sigs = list.sigs or {}
  if list.sigs[sig] then return nil end
  local args = freeze_args(C, n, ...)
  if not args then return nil end
  list.sigs[sig] = true
  local rec = { name = name, self = selfrec, args = args, n = n }
  list[#list + 1] = rec
  return rec
end

local function pack(...) return { n = select("#", ...), ... } end

-- Install recorders on every target; returns the function that removes them.
function G.install(C, targets)
  local undo = {}
  local function set(tbl, k, v)
    undo[#undo + 1] = { tbl, k, rawget(tbl, k) }
    rawset(tbl, k, v)
  end
  local fn_name = {}
  for _, t in ipairs(targets) do if t.kind == "fn" then fn_name[t.fn] = fn_name[t.fn] or t.name end end
  -- functions: wherever the same function value sits in a namespace
  for _, ns in ipairs(namespaces(C.T)) do
    local tbl = ns[2]
    local keys = {}
    for k, v in pairs(tbl) do if type(v) == "function" and fn_name[v] then keys[#keys + 1] = k end end
    for _, k in ipairs(keys) do
      local orig, name = tbl[k], fn_name[tbl[k]]
      set(tbl, k, function(...)
        if not C.busy then
          C.busy = true
          pcall(record, C, name, nil, select("#", ...), ...)
          C.busy = false
        end
        return orig(...)
      end)
    end
  end
  for _, t in ipairs(targets) do
    if t.kind == "ctor" then
      local orig, name = t.cls, t.name
      local proxy = setmetatable({}, {
        __index = orig,
        __call = function(_, ...)
          local res = pack(orig(...))
          if not C.busy and type(res[1]) == "table" then
            C.busy = true
            local ok, rec = pcall(record, C, name, nil, select("#", ...), ...)
            if ok and rec then C.inst2rec[res[1]] = rec end
            C.busy = false
          end
          return table.unpack(res, 1, res.n)
        end,
      })
      t.orig_cls = orig
      set(t.ns, t.key, proxy)
    elseif t.kind == "method" then
      local orig, name = t.fn, t.name
      set(t.mt, t.key, function(self, ...)
        if not C.busy then
          local srec = type(self) == "table" and C.inst2rec[self]
          if srec then
            C.busy = true
            pcall(record, C, name, srec, select("#", ...), ...)
            C.busy = false
          end
        end
        return orig(self, ...)
      end)
    end
  end
  return function()
    for i = #undo, 1, -1 do rawset(undo[i][1], undo[i][2], undo[i][3]) end
  end
end

-- Run the reference examples under the recorders: as written, then with
-- grad on their float tensors and backward() through what they return.
function G.capture_examples(C, quiet)
  local T = C.T
  local okh, help = pcall(require, "ltensor.help")
  if not okh then return 0 end
  local n = 0
  for _, e in ipairs(help.entries()) do
    if type(e.example) == "string" and not G.denied(e.name) and not e.example:find("save", 1, true)
       and not e.example:find("write", 1, true) and not e.example:find("io%.") and not e.example:find("os%.") then
      local env = setmetatable({ T = T, F = T.nn.functional, print = function() end }, { __index = _G })
      local f = load(e.example, "=" .. e.name, "t", env)
      if f then
        T.manual_seed(0)
        if pcall(f) then n = n + 1 end
      end
    end
  end
  if not quiet then io.stderr:write(("[fuzz] %d examples ran\n"):format(n)) end
  return n
end

-- ---- values ------------------------------------------------------------------

local function R(n) return math.random(n) end
local function pick(t) return t[math.random(#t)] end

local function is_float(T, t)
  local ok, r = pcall(function() return t.dtype.is_floating_point or t.dtype.is_complex end)
  return ok and r
end

local INT_LIMITS = {
  bool = { 0, 1 }, uint8 = { 0, 255 }, int8 = { -128, 127 }, int16 = { -32768, 32767 }, uint16 = { 0, 65535 },
  int32 = { -2147483648, 2147483647 }, uint32 = { 0, 4294967295 },
  int64 = { math.mininteger, math.maxinteger }, uint64 = { 0, math.maxinteger },
}
local FLOAT_SPECIAL = { 0 / 0, math.huge, -math.huge, 1e38, -1e38, 1e308, 5e-324, -0.0, 65504, 3.4e38 }

local function dtype_name(t)
  local ok, s = pcall(function() return tostring(t.dtype):match("ltensor%.(%w+)") end)
  return ok and s or "float32"
end

-- Tensor mutations: name -> function(T, t) returning a new tensor.
local TMUT = {
  dtype = function(T, t) local d = pick(DTYPES) return t:to(T[d]), "dtype=" .. d end,
  lowp = function(T, t) local d = pick({ "float16", "bfloat16", "complex64", "complex128", "complex32" })
    return t:to(T[d]), "dtype=" .. d end,
  noncontig = function(T, t)
    if t:dim() >= 2 then return t:transpose(1, 2):contiguous():transpose(1, 2), "noncontig" end
    if t:dim() == 1 then return T.stack({ t, t }, 2):select(2, 1), "strided" end
    return t, "noncontig(0-dim)"
  end,
  expanded = function(T, t)
    if t:dim() == 0 or t:numel() == 0 then return t, "expanded(no)" end
    local d = R(t:dim())
    return t:narrow(d, 1, 1):expand(table.unpack(t.shape)), "expanded@" .. d
  end,
  zero = function(T, t)
    local s = t.shape
    if #s == 0 then return T.zeros(0):to(t.dtype), "zero-size" end
    s[R(#s)] = 0
    return T.zeros(s):to(t.dtype), "zero-size"
  end,
  zerodim = function(T, t)
    if t:numel() > 0 then return t:reshape(-1):select(1, 1):clone(), "0-dim" end
    return T.tensor(0.5):to(t.dtype), "0-dim"
  end,
  special = function(T, t)
    if t:numel() == 0 then return t, "special(empty)" end
    local c = t:contiguous():clone()
    local flat = c:view(-1)
    local dn = dtype_name(c)
    local lim = INT_LIMITS[dn]
    local k = R(math.min(4, c:numel()))
    local vals = {}
    for _ = 1, k do
      local v = lim and lim[R(2)] or pick(FLOAT_SPECIAL)
      if dn == "bool" then v = (v == 1) end
      local i = R(c:numel())
      pcall(function() flat[i] = v end)
      vals[#vals + 1] = tostring(v)
    end
    return c, "special=" .. table.concat(vals, "/")
  end,
  resize = function(T, t)
    local s = t.shape
    if #s == 0 then return T.ones(R(3)):to(t.dtype), "resize" end
    local d = R(#s)
    s[d] = math.max(0, s[d] + pick({ -1, 1, 2, s[d] }))
    return T.randn(s):to(t.dtype), ("resize@%d=%d"):format(d, s[d])
  end,
  -- past one reduction chunk / the threading threshold (up to 2^17 elements)
  large = function(T, t)
    local s = t.shape
    if #s == 0 then return T.randn(pick({ 300, 5000, 70000 })):to(t.dtype), "large" end
    local d = R(#s)
    local other = math.max(1, t:numel() / math.max(1, s[d]))
    s[d] = math.max(1, math.floor(pick({ 300, 5000, 70000 }) / other))
    return T.randn(s):to(t.dtype), ("large@%d=%d"):format(d, s[d])
  end,
  unsqueeze = function(T, t) return t:unsqueeze(1):expand(pick({ 1, 2, 3 }), table.unpack(t.shape)), "extra-dim" end,
  drop_dim = function(T, t)
    if t:dim() == 0 then return t, "drop-dim(0)" end
    if t.shape[1] == 0 then return t:reshape(-1), "flatten" end
    return t:select(1, 1), "drop-dim"
  end,
  permute = function(T, t)
    if t:dim() < 2 then return t:flip(1), "flip" end
    local p = {}
    for i = 1, t:dim() do p[i] = i end
    for i = #p, 2, -1 do local j = R(i) p[i], p[j] = p[j], p[i] end
    return t:permute(p), "permute"
  end,
  grad = function(T, t)
    if not is_float(T, t) then return t:to(T.float32):requires_grad_(true), "grad(float32)" end
    return t:detach():requires_grad_(true), "grad"
  end,
  big = function(T, t) return T.ones(1):to(t.dtype):expand(pick({ 65536, 4096 * 3, 300 })), "expanded-big" end,
  freed = function(T, t) local c = t:clone() c:free() return c, "freed" end,
  nontensor = function(T, t) local v = pick({ 1, 2.5, "x", true, {}, { 1, 2 } }) return v, "non-tensor=" .. tostring(v) end,
}
local TMUT_W = { dtype = 6, lowp = 4, noncontig = 5, expanded = 4, zero = 5, zerodim = 3, special = 6, resize = 5,
                 unsqueeze = 3, drop_dim = 3, permute = 2, grad = 4, big = 1, large = 3, freed = 1, nontensor = 2 }
local TMUT_LIST = {}
for k, w in pairs(TMUT_W) do for _ = 1, w do TMUT_LIST[#TMUT_LIST + 1] = k end end
table.sort(TMUT_LIST)

local NUMS = { 0, -1, -2, 1, 2, 3, -100, 100, 1.5, 0.5, -0.5, 0 / 0, math.huge, -math.huge, 1e300,
               math.maxinteger, math.mininteger, 2147483647, -2147483648, 4294967296, 1099511627776, 4611686018427387904, 65536 }

local function mutate_number(v)
  local r = R(4)
  if r == 1 and math.type(v) == "integer" then
    local n = v + pick({ -1, 1, -v - 1, -2 * v, v })
    return n, "num=" .. n
  end
  local n = pick(NUMS)
  return n, "num=" .. tostring(n)
end

local BAD_STRINGS = { "", "nope", "mean", "sum", "none", "same", "valid", "reflect", "circular", "replicate",
                      "nearest", "bilinear", "linear", "bicubic", "area", "fro", "nuc", "inf", "floor", "trunc",
                      "float32", "L", "U", "reduced", "complete", "r", "gelu", "relu", "tanh", "zeros",
                      "jax", "torch", "\0", ("x"):rep(300) }

-- Mutate one live value; returns the new value and a description.
local mutate_value
local function mutate_table(C, v, depth)
  local T = C.T
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local r = R(6)
  if (#keys == 0 or r == 1) then   -- a new field: a known option name, or an element
    local key
    if R(2) == 1 then
      local pool = {}
      for k in pairs(C.keys) do pool[#pool + 1] = k end
      table.sort(pool)
      key = #pool > 0 and pick(pool) or "dim"
    else
      key = #v + 1
    end
    local val = pick({ 0, -1, 1, 2, 0 / 0, math.maxinteger, true, "x", T.ones(2), pick(DTYPES) })
    if type(val) == "string" and T[val] and val ~= "x" then val = T[val] end
    v[key] = val
    return v, ("+[%s]=%s"):format(tostring(key), tostring(val))
  end
  if r == 2 then
    local k = pick(keys)
    if type(k) == "number" then table.remove(v, k) else v[k] = nil end
    return v, "-[" .. tostring(k) .. "]"
  end
  local k = pick(keys)
  local nv, d = mutate_value(C, v[k], depth + 1)
  v[k] = nv
  return v, "[" .. tostring(k) .. "]" .. d
end

function mutate_value(C, v, depth)
  local T = C.T
  depth = depth or 0
  if T.is_tensor(v) then
    if not tensor_ok(T, v) then return T.ones(2), "tensor" end
    local m = pick(TMUT_LIST)
    local ok, nv, d = pcall(TMUT[m], T, v)
    if ok then return nv, d end
    return v, m .. "(n/a)"
  end
  local tv = type(v)
  if tv == "number" then return mutate_number(v) end
  if tv == "string" then
    local pool = {}
    for s in pairs(C.strings) do pool[#pool + 1] = s end
    table.sort(pool)
    local s = (R(2) == 1 and #pool > 0) and pick(pool) or pick(BAD_STRINGS)
    return s, "str=" .. s:sub(1, 12)
  end
  if tv == "boolean" then return not v, "bool" end
  if tv == "nil" then
    local nv = pick({ 1, -1, T.ones(2, 3), "x", {}, true })
    return nv, "nil->" .. tostring(nv)
  end
  if tv == "table" and getmetatable(v) == nil and depth < 4 then return mutate_table(C, v, depth) end
  if tv == "userdata" and not T.is_tensor(v) then   -- a dtype (or another userdata)
    local d = pick(DTYPES)
    return T[d], "dtype=" .. d
  end
  return pick({ 1, "x", nil }), "wrong-type"
end

-- Fresh live values from a frozen record.
local thaw
local function build(C, rec, mutate, descs)
  local args, n = G.thaw_args(C, rec, mutate, descs, "ctor")
  local t = C.by_name[rec.name]
  local cls = t and (t.orig_cls or t.cls)
  if not cls then return nil end
  local ok, inst = pcall(cls, table.unpack(args, 1, n))
  if ok then return inst end
  return nil, inst
end
G.build = build

function thaw(C, node)
  local T = C.T
  local k = node.k
  if k == "t" then
    local c = node.t:clone()
    if node.rg and is_float(T, c) then c:requires_grad_(true) end
    return c
  elseif k == "inst" then
    return (build(C, node.rec, false))
  elseif k == "tab" then
    local o = {}
    for key, f in pairs(node.f) do o[key] = thaw(C, f) end
    return o
  elseif k == "ref" or k == "v" then
    return node.v
  end
end

-- Arguments of a record, thawed; with mutate, 1-4 mutations of the list.
function G.thaw_args(C, rec, mutate, descs, label)
  local a = {}
  for i = 1, rec.n do a[i] = thaw(C, rec.args[i]) end
  local n = rec.n
  if not mutate then return a, n end
  for _ = 1, pick({ 1, 1, 1, 2, 2, 3, 4 }) do
    local r = R(20)
    if r == 1 then                     -- drop the last argument
      if n > 0 then a[n] = nil n = n - 1 end
      descs[#descs + 1] = label .. ":drop"
    elseif r == 2 then                 -- one more argument
      n = n + 1
      a[n] = pick({ 1, -1, 0 / 0, "x", true, {}, C.T.ones(2) })
      descs[#descs + 1] = label .. ":extra=" .. tostring(a[n])
    elseif r == 3 and n >= 2 then      -- swap two
      local i, j = R(n), R(n)
      a[i], a[j] = a[j], a[i]
      descs[#descs + 1] = ("%s:swap(%d,%d)"):format(label, i, j)
    elseif r == 4 and n >= 1 then      -- nil in the middle
      local i = R(n)
      a[i] = nil
      descs[#descs + 1] = ("%s:#%d=nil"):format(label, i)
    elseif n >= 1 then
      local i = R(n)
      local nv, d = mutate_value(C, a[i], 0)
      a[i] = nv
      descs[#descs + 1] = ("%s:#%d %s"):format(label, i, d)
    end
  end
  return a, n
end

-- Every float input requiring grad (a leaf copy): drives the backward
-- entry points of the results.
function G.grad_inputs(C, a, n)
  local T = C.T
  for i = 1, n do
    local v = a[i]
    if T.is_tensor(v) and tensor_ok(T, v) and is_float(T, v) and not v.requires_grad then
      local ok, c = pcall(function() return v:detach():clone():requires_grad_(true) end)
      if ok then a[i] = c end
    end
  end
end

-- Gradients for backward(): valid, broadcast, non-contiguous, wrong dtype...
local function gradient_for(T, out, r)
  if r == 1 then return nil, "grad=nil" end
  if r == 2 then return T.ones_like(out), "grad=ones" end
  if r == 3 then return T.ones(1):to(out.dtype), "grad=broadcast{1}" end
  if r == 4 then return T.ones(1):to(out.dtype):expand(table.unpack(out.shape)), "grad=expanded" end
  if r == 5 then
    local g = T.randn_like(out)
    if g:dim() >= 2 then g = g:transpose(1, 2):contiguous():transpose(1, 2) end
    return g, "grad=noncontig"
  end
  if r == 6 then local d = pick(DTYPES) return T.ones(out.shape):to(T[d]), "grad-dtype=" .. d end
  if r == 7 then return T.full_like(out, 0 / 0), "grad=nan" end
  if r == 8 then return T.ones(out:numel() + 1), "grad=wrong-shape" end
  return T.ones_like(out), "grad=ones"
end

-- backward() through each tensor result that requires grad; returns the
-- list of {ok, err, desc} outcomes.
-- an output worth a backward: a live tensor that requires grad and is not
-- a huge (expanded) view, whose backward is a legitimately endless loop in
-- C that no Lua watchdog can stop (T.broadcast_to(x, {2^40}) then
-- backward: seed 601 #328171)
local BACKWARD_MAX_NUMEL = 1e8
local function backward_ok(T, v)
  if not (T.is_tensor(v) and tensor_ok(T, v) and v.requires_grad) then return false end
  return v:numel() <= BACKWARD_MAX_NUMEL
end
function G.backward_results(C, res, descs)
  local T = C.T
  local outs = {}
  for i = 1, math.min(res.n or #res, 6) do
    local v = res[i]
    if backward_ok(T, v) then outs[#outs + 1] = v end
    if type(v) == "table" and getmetatable(v) == nil then
      for _, w in ipairs(v) do if backward_ok(T, w) then outs[#outs + 1] = w end end
    end
  end
  local results = {}
  for j = 1, math.min(#outs, 3) do
    local out = outs[j]
    local ok, g, gd = pcall(gradient_for, T, out, R(9))
    if ok then
      descs[#descs + 1] = "backward " .. gd
      local okb, err = pcall(function()
        if g == nil then
          local s = out:sum()
          if s.dtype.is_complex then s = s:abs() end
          return s:backward()
        end
        return out:backward(g)
      end)
      results[#results + 1] = { okb, err }
    end
  end
  return results
end

-- Every captured call again with grad on its float inputs and backward()
-- through the results: records the calls the Lua layer makes into T._*
-- and the backward entry points.  after() runs after each call (the
-- fuzzer restores T's settings there).
function G.replay_with_grad(C, after)
  local names = {}
  for name in pairs(C.records) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local t = C.by_name[name]
    if t and t.kind == "fn" then
      for _, rec in ipairs(C.records[name]) do
        local a, n = G.thaw_args(C, rec, false)
        G.grad_inputs(C, a, n)
        local res = table.pack(pcall(t.fn, table.unpack(a, 1, n)))
        if res[1] then
          table.remove(res, 1)
          res.n = res.n - 1
          G.backward_results(C, res, {})
        end
        after()
      end
    end
  end
end

return G
