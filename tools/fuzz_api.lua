-- tools/fuzz_api.lua -- calls every public ltensor entry point with bad and
-- edge arguments and classifies what happens.
--
-- As a library (spec/robustness_spec.lua does `dofile "tools/fuzz_api.lua"`)
-- it returns the building blocks: the value matrix, the list of targets, the
-- deterministic call matrix and the classifier.
--
-- As a script (make fuzz runs it under ASan+UBSan) it discovers every
-- function, method, class and internal T._* entry point, captures valid
-- calls from the reference examples and replays them with mutations,
-- backward() through the results (tools/fuzz_gen.lua says how):
--   build/asan/bin/ltensor tools/fuzz_api.lua [calls] [seed] [name-filter]
--   LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' \
--     lua5.4 tools/fuzz_api.lua [calls] [seed] [name-filter]
-- With FUZZ_LOG=file each call is written (and flushed) to file before it
-- runs, as "#i target mutations", so the last line names the call when the
-- process crashes; FUZZ_ONLY=i replays call i alone (same seed);
-- FUZZ_SECONDS=s stops after s seconds; FUZZ_MATRIX=1 runs the
-- deterministic matrix below first (FUZZ_SKIP=file skips calls listed in
-- it, FUZZ_FROM=name starts it at that target); FUZZ_THREADS=n sets the
-- worker thread count; FUZZ_MEMORY=bytes the memory cap (1 GB);
-- FUZZ_CALL_SECONDS=s the per-call watchdog for Lua loops (10).
-- Prints every call whose error was a non-string, a Lua runtime error
-- ("attempt to ...") or a message that does not name the function, except
-- those tools/fuzz_known.txt lists (reported, shown as "known"), and a
-- summary ending "problems: N".

local M = {}

-- Under AddressSanitizer a failed huge allocation aborts the process
-- (allocator_may_return_null=0), so sizes that pass the overflow checks but
-- cannot be allocated (2^40 elements) are left out there.
function M.under_asan()
  local f = io.open("/proc/self/maps")
  if not f then return false end
  local s = f:read("*a")
  f:close()
  return s:find("libasan", 1, true) ~= nil or os.getenv("LTENSOR_ASAN") ~= nil
end

-- Settings a call may change; restored after every call so that the fuzz
-- run leaves the state (and the other specs) as it found them.
function M.snapshot(T)
  return {
    dtype = T.get_default_dtype(),
    promo = T.get_promotion and T.get_promotion(),
    grad = T.is_grad_enabled(),
    threads = T.get_num_threads and T.get_num_threads(),
    print = T.get_printoptions and T.get_printoptions(),
    rng = T.get_rng_state and T.get_rng_state(),
  }
end
function M.restore(T, s)
  T.set_default_dtype(s.dtype)
  if s.promo then T.set_promotion(s.promo) end
  T.set_grad_enabled(s.grad)
  if s.threads then T.set_num_threads(s.threads) end
  if s.print then
    local p = {}
    for k, v in pairs(s.print) do p[k] = v end
    T.set_printoptions(p)
  end
  if s.rng then T.set_rng_state(s.rng) end
end

-- Targets that may change a setting on purpose: the settings are restored
-- after each of their calls (after each target otherwise).
function M.changes_settings(name)
  for _, pat in ipairs { "set_", "seed", "promotion", "grad", "printoptions", "rng", "num_threads",
                         "tpl ", "autograd", "backward", "step" } do
    if name:find(pat, 1, true) then return true end
  end
  return false
end

local DTYPES = { "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                 "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128" }

-- Values: {name, maker}; makers return a fresh value per call (in-place ops,
-- free() and resize-like calls must not leak into the next call).
function M.values(T, asan)
  local V = {}
  local function add(name, mk) V[#V + 1] = { name = name, mk = mk } end
  local function const(name, v) add(name, function() return v end) end
  add("nil", function() return nil end)
  const("string", "/nonexistent_ltensor_dir/x")
  const("dtype-name", "float32")
  const("empty-string", "")
  add("table", function() return {} end)
  add("holes", function() return { 1, nil, 3 } end)
  add("ragged", function() return { { 1, 2 }, { 3 } } end)
  add("strings", function() return { "a", "b" } end)
  add("dims20", function() local t = {} for i = 1, 20 do t[i] = 1 end return t end)
  add("huge-sizes", function() return { 4611686018427387904, 4611686018427387904 } end)
  add("neg-sizes", function() return { 2, -1 } end)
  add("nan-sizes", function() return { 0 / 0, 2 } end)
  add("opts-dtype", function() return { dtype = T.int64 } end)
  add("opts-bool", function() return { dtype = T.bool } end)
  add("opts-c32", function() return { dtype = T.complex32 } end)
  add("opts-grad", function() return { requires_grad = true } end)
  add("opts-bad", function() return { dtype = "nope", dim = 17, keepdim = "x", lr = "x" } end)
  add("tensor-list", function() return { T.ones(2), T.zeros(3) } end)
  add("mixed-list", function() return { T.ones(2), 1, "x" } end)
  add("freed-list", function() local f = T.ones(2); f:free() return { T.ones(2), f } end)
  add("index-freed", function() local f = T.tensor({ 1 }); f:free() return { 1, f } end)
  add("function", function() return function() end end)
  add("erroring-fn", function() return function() error("boom", 0) end end)
  const("true", true)
  const("false", false)
  add("coroutine", function() return coroutine.create(function() end) end)
  add("userdata-io", function() return io.stderr end)
  const("0", 0)
  const("1", 1)
  const("2", 2)
  const("-1", -1)
  const("17", 17)
  const("-17", -17)
  if not asan then const("2^40", 1099511627776) end
  const("2^62", 4611686018427387904)
  const("mininteger", math.mininteger)
  const("maxinteger", math.maxinteger)
  const("nan", 0 / 0)
  const("inf", math.huge)
  const("-inf", -math.huge)
  const("1.5", 1.5)
  const("1e300", 1e300)
  const("dtype-f32", T.float32)
  const("dtype-bool", T.bool)
  const("dtype-c64", T.complex64)
  for _, d in ipairs(DTYPES) do
    add("t-" .. d, function() return T.ones(2, 3):to(T[d]) end)
  end
  add("t-0dim-f", function() return T.tensor(2.5) end)
  add("t-0dim-i", function() return T.tensor(3) end)
  add("t-0dim-b", function() return T.tensor(true) end)
  add("t-empty", function() return T.zeros(0) end)
  add("t-empty-2x0", function() return T.zeros(2, 0) end)
  add("t-empty-i64", function() return T.zeros({ 0 }, { dtype = T.int64 }) end)
  add("t-transposed", function() return T.arange(6):view(2, 3):float():t() end)
  add("t-expanded", function() return T.ones(1, 3):expand(4, 3) end)
  add("t-freed", function() local t = T.ones(2, 3); t:free() return t end)
  add("t-grad", function() local t = T.ones(2, 3); t.requires_grad = true return t end)
  add("t-index", function() return T.tensor({ 1, 2 }) end)
  -- (an index of 2^40 makes one_hot allocate 2^41 elements)
  local big = asan and 1000 or 1099511627776
  add("t-bad-index", function() return T.tensor({ 0, big }) end)
  add("t-mask", function() return T.tensor({ { true, false, true }, { false, true, false } }) end)
  add("t-nan", function() return T.tensor({ 0 / 0, math.huge, -math.huge }) end)
  add("t-4d", function() return T.ones(1, 2, 1, 3) end)
  return V
end

-- Names skipped: internal entry points (leading "_", not part of the
-- contract) and the dtype values.
local function public(name) return name:sub(1, 1) ~= "_" end

-- Targets: {name, fn}, each function value once (T.add and the method add
-- are the same closure).  Includes T.nn.functional, T.autograd, the
-- constructors of T.nn and T.optim.
function M.targets(T)
  local out, seen = {}, {}
  local function scan(prefix, tbl)
    local names = {}
    for k, v in pairs(tbl) do
      if type(k) == "string" and public(k) and type(v) == "function" then names[#names + 1] = k end
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local f = tbl[k]
      if not seen[f] then
        seen[f] = true
        out[#out + 1] = { name = prefix .. k, fn = f }
      end
    end
  end
  scan("T.", T)
  scan("Tensor:", T._methods)
  -- metamethods (operators, __index/__newindex, __len, __close, __tostring)
  local mm = {}
  for k, v in pairs(T._metatable) do
    if type(k) == "string" and type(v) == "function" and k:sub(1, 2) == "__" then mm[#mm + 1] = k end
  end
  table.sort(mm)
  for _, k in ipairs(mm) do
    local f = T._metatable[k]
    if not seen[f] then seen[f] = true; out[#out + 1] = { name = "Tensor." .. k, fn = f } end
  end
  scan("T.nn.functional.", T.nn.functional)
  scan("T.autograd.", T.autograd)
  -- classes: callable tables
  local function classes(prefix, tbl)
    local names = {}
    for k, v in pairs(tbl) do
      local mt = type(v) == "table" and getmetatable(v)
      if type(k) == "string" and public(k) and mt and mt.__call then names[#names + 1] = k end
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local cls = tbl[k]
      out[#out + 1] = { name = prefix .. k, fn = function(...) return cls(...) end }
    end
  end
  classes("T.nn.", T.nn)
  classes("T.optim.", T.optim)
  classes("T.autograd.", T.autograd)
  -- methods of fresh instances (a new one per call: a failed call must not
  -- change what the next call sees)
  local nn = T.nn
  local factories = {
    { "nn.Linear", function() return nn.Linear(3, 2) end },
    { "nn.Sequential", function() return nn.Sequential(nn.Linear(3, 2), nn.ReLU()) end },
    { "nn.Embedding", function() return nn.Embedding(4, 2) end },
    { "nn.LayerNorm", function() return nn.LayerNorm(3) end },
    { "nn.Dropout", function() return nn.Dropout(0.5) end },
    { "nn.Softmax", function() return nn.Softmax(2) end },
    { "nn.CrossEntropyLoss", function() return nn.CrossEntropyLoss() end },
    { "nn.ModuleList", function() return nn.ModuleList({ nn.ReLU() }) end },
    { "optim.SGD", function() return T.optim.SGD(nn.Linear(3, 2):parameters(), { lr = 0.1, momentum = 0.9 }) end },
    { "optim.Adam", function() return T.optim.Adam(nn.Linear(3, 2):parameters()) end },
  }
  local seen_fn = {}   -- a method inherited by several classes is fuzzed once
  for _, f in ipairs(factories) do
    local inst = f[2]()
    local names, seen_m = {}, {}
    local cls = rawget(inst, "_class") or (getmetatable(inst) and getmetatable(inst).__index)
    local function collect(tbl, depth)
      if type(tbl) ~= "table" or depth > 4 then return end
      for k, v in pairs(tbl) do
        if type(k) == "string" and type(v) == "function" and public(k) and k ~= "new" and k ~= "extend"
           and not seen_m[k] then
          seen_m[k] = true
          if not seen_fn[v] then seen_fn[v] = true; names[#names + 1] = k end
        end
      end
      local mt = getmetatable(tbl)
      if mt and type(mt.__index) == "table" then collect(mt.__index, depth + 1) end
    end
    collect(inst, 0)
    collect(cls, 0)
    table.sort(names)
    for _, k in ipairs(names) do
      local mk = f[2]
      out[#out + 1] = { name = f[1] .. ":" .. k, fn = function(...) local o = mk() return o[k](o, ...) end,
                        instance = true }
    end
    local mk = f[2]
    if f[1]:find("^nn%.") then
      out[#out + 1] = { name = f[1] .. "()", fn = function(...) local o = mk() return o(...) end, instance = true }
    end
  end
  return out
end

-- Functions whose string arguments are paths: only the nonexistent path is
-- passed there, so no file is ever written by the fuzz run.
local PATH_FUNCS = { ["T.save"] = true, ["T.save_npy"] = true, ["T.load"] = true, ["T.load_npy"] = true,
  ["T.write_csv"] = true, ["T.read_csv"] = true }

-- The deterministic call matrix: a list of {desc, args (array), n}.
-- Arguments are makers, instantiated at call time.
function M.matrix(T, V, name, instance)
  local calls = {}
  local function base_f() return T.ones(2, 3) end
  local function base_i() return T.ones({ 2, 3 }, { dtype = T.int64 }) end
  local function one() return 1 end
  local function grad_f() local t = T.ones(2, 3); t.requires_grad = true return t end
  local usable = {}
  for _, v in ipairs(V) do
    if not (PATH_FUNCS[name] and (v.name == "dtype-name")) then usable[#usable + 1] = v end
  end
  local function push(desc, ...) calls[#calls + 1] = { desc = desc, args = { ... }, n = select("#", ...) } end
  push("()")
  if instance then   -- self is a fresh valid instance: fewer forms
    for _, v in ipairs(usable) do
      push("(" .. v.name .. ")", v.mk)
      push("(float2x3, " .. v.name .. ")", base_f, v.mk)
      push("(" .. v.name .. ", float2x3)", v.mk, base_f)
    end
    return calls
  end
  for _, v in ipairs(usable) do
    push("(" .. v.name .. ")", v.mk)
    push("(float2x3, " .. v.name .. ")", base_f, v.mk)
    push("(int2x3, " .. v.name .. ")", base_i, v.mk)
    push("(" .. v.name .. ", float2x3)", v.mk, base_f)
    push("(float2x3, 1, " .. v.name .. ")", base_f, one, v.mk)
    push("(float2x3, float2x3, " .. v.name .. ")", base_f, base_f, v.mk)
    -- through the autograd hook: an argument requires grad
    push("(grad2x3, " .. v.name .. ")", grad_f, v.mk)
    push("(" .. v.name .. ", grad2x3)", v.mk, grad_f)
  end
  return calls
end

-- Templates: valid calls of the multi-argument entry points; the matrix
-- replaces one argument at a time with each bad value, so that the checks
-- deep inside (after the first arguments were accepted) are reached too.
function M.templates(T)
  local function f(...) return T.arange(12):view(3, 4):float() end
  local function idx() return T.tensor({ 1, 3 }) end
  local function idx2() return T.tensor({ { 1, 2, 3, 1 } }) end
  local function mask() return T.tensor({ true, false, true, false }) end
  local function n(v) return function() return v end end
  local function src() return T.ones(2, 4) end
  local function sq() return T.ones(3, 3) end
  local function b3() return T.ones(2, 3, 3) end
  local function v3() return T.ones(3) end
  local function v4() return T.ones(4) end
  local function mask2() return T.arange(12):view(3, 4):gt(5) end
  local function list() return { T.ones(2, 3), T.zeros(2, 3) } end
  return {
    { "index_add", f, n(1), idx, src }, { "index_copy", f, n(1), idx, src }, { "index_fill", f, n(1), idx, n(0.5) },
    { "index_select", f, n(1), idx }, { "scatter", f, n(1), idx2, f }, { "scatter_add", f, n(1), idx2, f },
    { "gather", f, n(1), idx2 }, { "narrow", f, n(1), n(1), n(2) }, { "unfold", f, n(1), n(2), n(1) },
    { "select", f, n(1), n(1) }, { "split", f, n(2), n(1) }, { "chunk", f, n(2), n(1) },
    { "topk", f, n(2), n(1) }, { "sort", f, n(1), n(true) }, { "argsort", f, n(1), n(true) },
    { "cumsum", f, n(1) }, { "cumprod", f, n(1) }, { "softmax", f, n(1) }, { "log_softmax", f, n(1) },
    { "where", mask, v4, v4 }, { "lerp", f, f, n(0.5) }, { "clamp", f, n(0), n(1) },
    { "masked_fill", f, mask, n(0) }, { "masked_select", f, mask }, { "multinomial", v3, n(2), n(true) },
    { "randint", n(0), n(10), n({ 2, 3 }) }, { "arange", n(0), n(10), n(2) }, { "linspace", n(0), n(1), n(5) },
    { "logspace", n(0), n(1), n(5) }, { "eye", n(3), n(4) }, { "full", n({ 2, 3 }), n(1.5) },
    { "cat", list, n(1) }, { "stack", list, n(1) }, { "matmul", f, function() return T.ones(4, 2) end },
    { "mm", f, function() return T.ones(4, 2) end }, { "bmm", b3, b3 }, { "mv", sq, v3 }, { "dot", v3, v3 },
    { "outer", v3, v3 }, { "movedim", f, n(1), n(2) }, { "permute", f, n({ 2, 1 }) }, { "transpose", f, n(1), n(2) },
    { "expand", function() return T.ones(1, 4) end, n(3), n(4) }, { "view", f, n(12) }, { "reshape", f, n(4), n(3) },
    { "flatten", f, n(1), n(2) }, { "squeeze", function() return T.ones(1, 3) end, n(1) }, { "unsqueeze", f, n(1) },
    { "std", f, n(1), n(true) }, { "var", f, n(1), n(true) }, { "norm", f, n(2), n(1) }, { "logsumexp", f, n(1) },
    { "max", f, n(1), n(true) }, { "min", f, n(1) }, { "sum", f, n(1), n(true) }, { "mean", f, n({ 1, 2 }) },
    { "prod", f, n(1) }, { "amax", f, n(1) }, { "argmax", f, n(1) }, { "all", f, n(1) }, { "any", f, n(1) },
    { "isclose", f, f }, { "allclose", f, f }, { "pow", f, n(2) }, { "div", f, f, n({ rounding_mode = "floor" }) },
    { "add", f, f, n({ alpha = 2 }) }, { "bernoulli", function() return T.full({ 3 }, 0.5) end },
    { "setindex", f, n({ 1, { 1, 2 } }), n(5) }, { "index", f, n({ 1, { 1, 2 } }) }, { "index", f, mask2 },
    { "repeat_interleave", f, n(2), n(1) }, { "roll", f, n(1), n(1) }, { "flip", f, n({ 1 }) },
    { "tril", f, n(1) }, { "triu", f, n(1) }, { "diagonal", f, n(0), n(1), n(2) }, { "trace", sq },
    { "masked_fill_", f, mask, n(0) }, { "index_add_", f, n(1), idx, src }, { "scatter_", f, n(1), idx2, f },
    { "normal_", f, n(0), n(1) }, { "uniform_", f, n(0), n(1) }, { "clamp_", f, n(0), n(1) },
    { "copy_", f, f }, { "fill_", f, n(2) }, { "set", f, n(1), n(1), n(5) }, { "get", f, n(1), n(1) },
    { "to", f, n(T.int32) }, { "type", f, n(T.int32) }, { "expand_as", v4, f },
    { "nonzero", f }, { "equal", f, f }, { "promote_types", n(T.int32), n(T.float32) },
    { "result_type", f, n(1) }, { "set_printoptions", n({ precision = 2 }) }, { "with_promotion", n("jax"), n(function() end) },
  }
end

-- The calls of one template: the valid call, then each argument replaced
-- by each bad value in turn.
function M.template_calls(T, V, tpl)
  local name = tpl[1]
  local fn = T[name] or T._methods[name]
  if not fn then return nil end
  local base = {}
  for i = 2, #tpl do base[i - 1] = tpl[i] end
  local calls = { { desc = "(valid)", args = base, n = #base } }
  for pos = 1, #base do
    for _, v in ipairs(V) do
      local args = {}
      for i = 1, #base do args[i] = base[i] end
      args[pos] = v.mk
      calls[#calls + 1] = { desc = ("(#%d=%s)"):format(pos, v.name), args = args, n = #base }
    end
  end
  return fn, calls
end

-- Known crashes, skipped so that the rest runs (see spec/robustness_spec.lua).
-- None today: the last one (the autograd hook reading a freed tensor) is
-- refused by the trampoline now.
function M.known_crash(desc)
  local _ = desc
  return false
end

-- Build the arguments of a call.
function M.args(call)
  local a = {}
  for i = 1, call.n do a[i] = call.args[i]() end
  return a
end

-- Classify the outcome of pcall(fn, ...).
--   "ok"          returned normally
--   "error"       a string error that names the function ("ltensor.x: ...";
--                 argument errors too: "ltensor.x: bad argument #n (...)")
--   "unnamed"     a string error that names no function
--   "runtime"     a Lua runtime error from inside Lua code ("attempt to ...")
--   "nonstring"   the error value is not a string
function M.classify(ok, err)
  if ok then return "ok" end
  if type(err) ~= "string" then return "nonstring" end
  -- a function of a reference example (chunk "=T.name" / "=F.name") raised
  if err:find("^[TF][%w_%.:]*:%d+: ") then return "error" end
  if err:find("attempt to ", 1, true) or err:find("stack overflow", 1, true) then return "runtime" end
  if err == "boom" then return "error" end   -- the caller's own function raised: passed through unchanged
  -- a position of the library's own source in the message (errors are
  -- raised at level 0: the traceback says where, not the message)
  if err:find("ltensor/[%w_/]+%.lua:%d+: ") then return "position" end
  if err:find("ltensor[%w_%.]*: ") then return "error" end
  -- internal entry points that take the caller's name (T._ag_run(name, ...))
  if err:find("^ltensor%.[^:%s]*: ") then return "error" end
  -- out of memory is not bad input: any allocation may fail
  if err:find("not enough memory", 1, true) or err:find("^ltensor: tensor too large") then return "error" end
  return "unnamed"
end

function M.call(fn, call)
  local a = M.args(call)
  return pcall(fn, table.unpack(a, 1, call.n))
end

function M.rss_kb()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)"))
end

-- Run the matrix for one target; returns a list of {desc, kind, err} for
-- every call that is not "ok"/"error".  skip[name .. desc] = true skips a
-- call; log (a file) gets every call before it runs.
function M.run_target(T, V, tgt, skip, log, snap)
  local bad = {}
  local each = snap and M.changes_settings(tgt.name)
  for _, call in ipairs(M.matrix(T, V, tgt.name, tgt.instance)) do
    local key = tgt.name .. call.desc
    if not (skip and skip[key]) and not M.known_crash(key) then
      if log then log:write(key, "\n"); log:flush() end
      local ok, err = M.call(tgt.fn, call)
      if each then M.restore(T, snap) end
      local kind = M.classify(ok, err)
      if kind ~= "ok" and kind ~= "error" then
        bad[#bad + 1] = { desc = key, kind = kind, err = tostring(err) }
      end
    end
  end
  if snap then M.restore(T, snap) end
  return bad
end

-- ---- script mode: a longer randomized run --------------------------------
-- The deterministic matrix above (FUZZ_MATRIX=1 runs it here too; the specs
-- run it anyway), then `iters` calls built by tools/fuzz_gen.lua: replays of
-- the captured valid calls with mutations, backward() through their results.
-- FUZZ_SECONDS=s stops the random calls after s seconds; FUZZ_ONLY=i runs
-- call i alone (its randomness depends on (seed, i) only).
local function here(file)
  local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tools"
  return dir .. "/" .. file
end

local function fallback_args(G, C, V, n)
  local a, names = {}, {}
  for i = 1, n do
    local r = math.random(10)
    if r <= 5 then
      local v = V[math.random(#V)]
      a[i], names[i] = v.mk(), v.name
    elseif r <= 8 and #C.tensors > 0 then
      local node = C.tensors[math.random(#C.tensors)]
      a[i], names[i] = node.t:clone(), "captured"
    else
      a[i] = math.random(-2, 4)
      names[i] = tostring(a[i])
    end
  end
  return a, table.concat(names, ", ")
end

local function main(iters, seed, filter)
  local T = require "ltensor"
  local G = dofile(here("fuzz_gen.lua"))
  if os.getenv("FUZZ_THREADS") then T.set_num_threads(tonumber(os.getenv("FUZZ_THREADS"))) end
  local seconds = tonumber(os.getenv("FUZZ_SECONDS") or "") or math.huge
  local only = tonumber(os.getenv("FUZZ_ONLY") or "")
  local call_limit = tonumber(os.getenv("FUZZ_CALL_SECONDS") or "") or 10
  local clock = T._clock or os.clock
  local t_start = clock()
  -- a state-wide cap: a huge size fails as "not enough memory" instead of
  -- taking the machine (ASan's allocator returns NULL past its own limit)
  T.set_memory_limit(tonumber(os.getenv("FUZZ_MEMORY") or "") or 1024 * 1024 * 1024)
  math.randomseed(seed)
  T.manual_seed(seed)
  local V = M.values(T, M.under_asan())
  local log = os.getenv("FUZZ_LOG") and assert(io.open(os.getenv("FUZZ_LOG"), "w"))
  local snap = M.snapshot(T)
  local bad, counts, known = {}, {}, {}
  -- tools/fuzz_known.txt: Lua-level findings reported to the owner of the
  -- module ("target<TAB>error text" a line): listed, not failing the run.
  -- Crashes and sanitizer reports are never excused.
  local known_list = {}
  local kf = io.open(here("fuzz_known.txt"))
  if kf then
    for l in kf:lines() do
      local tgt, txt = l:match("^([^#\t][^\t]*)\t([^\t]+)")
      if tgt then known_list[#known_list + 1] = { tgt, txt } end
    end
    kf:close()
  end
  local function is_known(desc, err)
    local name = desc:match("^#%d+ (%S+)")
    for _, k in ipairs(known_list) do
      if name == k[1] and tostring(err):find(k[2], 1, true) then return true end
    end
    return false
  end
  local function note(kind, desc, err)
    if kind ~= "ok" and kind ~= "error" and is_known(desc, err) then kind = "known" end
    counts[kind] = (counts[kind] or 0) + 1
    if kind == "known" then known[#known + 1] = { desc = desc, kind = kind, err = tostring(err) } end
    if kind ~= "ok" and kind ~= "error" and kind ~= "known" then bad[#bad + 1] = { desc = desc, kind = kind, err = tostring(err) } end
  end

  if os.getenv("FUZZ_MATRIX") == "1" then
    for _, tgt in ipairs(M.targets(T)) do
      if not filter or tgt.name:find(filter, 1, true) then
        for _, b in ipairs(M.run_target(T, V, tgt, nil, log, snap)) do bad[#bad + 1] = b end
      end
    end
  end

  -- targets and the capture of valid calls
  local all = G.discover(T)
  local C = G.new_capture(T)
  C.by_name = {}
  for _, t in ipairs(all) do C.by_name[t.name] = t end
  local uninstall = G.install(C, all)
  local ok_cap, cap_err = pcall(function()
    G.capture_examples(C)
    G.replay_with_grad(C, function() M.restore(T, snap) end)
  end)
  uninstall()
  M.restore(T, snap)
  if not ok_cap then io.stderr:write("[fuzz] capture stopped: " .. tostring(cap_err) .. "\n") end
  local targets, with_rec, nrec = {}, 0, 0
  for _, t in ipairs(all) do
    if not filter or t.name:find(filter, 1, true) then
      targets[#targets + 1] = t
      if C.records[t.name] then with_rec = with_rec + 1 nrec = nrec + #C.records[t.name] end
    end
  end
  if #targets == 0 then print("no targets") return end
  io.stderr:write(("[fuzz] %d targets, %d with captured valid calls (%d records)\n"):format(#targets, with_rec, nrec))

  -- family -> constructor records (instances for methods without a record)
  local ctors = {}
  for _, t in ipairs(all) do
    if t.kind == "ctor" and C.records[t.name] then
      local fam = t.name:match("^(.*)%.")
      ctors[fam] = ctors[fam] or {}
      for _, r in ipairs(C.records[t.name]) do table.insert(ctors[fam], r) end
    end
  end

  local done = 0
  local first, last = 1, iters
  if only then first, last = only, only end
  local report = clock()
  for i = first, last do
    if clock() - t_start > seconds then break end
    math.randomseed(seed, i)
    T.manual_seed(seed * 1000003 + i)
    local tgt = targets[math.random(#targets)]
    local recs = C.records[tgt.name]
    local descs = {}
    local a, n, self, fn
    -- the watchdog covers building the instance and arguments too (a
    -- mutated constructor record such as nn.RNN(4, 8, 2^32) builds layers
    -- for ever, outside the call)
    local tb = clock()
    debug.sethook(function()
      if clock() - tb > call_limit then error("fuzz: call timed out", 0) end
    end, "", 100000)
    local okb, berr = pcall(function()
      if recs then
        local rec = recs[math.random(#recs)]
        local mutate = math.random(6) ~= 1
        if tgt.kind == "method" then
          local err
          self, err = G.build(C, rec.self, math.random(5) == 1, descs)
          if self == nil then descs[#descs + 1] = "ctor failed: " .. tostring(err) end
        end
        a, n = G.thaw_args(C, rec, mutate, descs, "arg")
        if not mutate then descs[#descs + 1] = "valid" end
      else
        n = math.random(0, 4)
        local d
        a, d = fallback_args(G, C, V, n)
        descs[#descs + 1] = "(" .. d .. ")"
        if tgt.kind == "method" then
          -- an instance of the method's own class; a base class's method
          -- gets an instance of any class of its family
          local pool = (tgt.class and (C.records[tgt.class] or {})) or ctors[tgt.family or ""] or {}
          -- (an instance whose method of that name is this one)
          for _ = 1, 6 do
            if #pool == 0 then break end
            local inst = G.build(C, pool[math.random(#pool)], false, descs)
            if type(inst) == "table" and pcall(function() return inst[tgt.key] == tgt.fn end) and inst[tgt.key] == tgt.fn then
              self = inst
              break
            end
          end
        end
      end
      if math.random(2) == 1 then G.grad_inputs(C, a, n) descs[#descs + 1] = "grad-inputs" end
    end)
    debug.sethook()
    if only then io.stderr:write("[fuzz] build: ", tostring(okb), " ", tostring(berr), " ", table.concat(descs, "; "):sub(1, 3000), "\n") end
    local build_timeout = (not okb and tostring(berr) or table.concat(descs, " ")):find("fuzz: call timed out", 1, true) ~= nil
    if build_timeout then counts.timeout = (counts.timeout or 0) + 1 end
    if not okb then descs[#descs + 1] = "build failed: " .. tostring(berr) a, n = {}, 0 end
    if tgt.kind == "method" then
      if type(self) == "table" then
        fn = function(...) return tgt.fn(self, ...) end
      else
        fn = nil
      end
    else
      fn = tgt.fn or tgt.cls
    end
    if fn and not build_timeout then
      local key = ("#%d %s %s"):format(i, tgt.name, table.concat(descs, "; "))
      if log then log:write(key, "\n") log:flush() end
      local t0 = clock()
      -- a watchdog for legal but endless Lua loops (T.nn.RNN(4, 8, 65536)
      -- builds 65536 layers): the call is stopped after FUZZ_CALL_SECONDS
      debug.sethook(function()
        if clock() - t0 > call_limit then error("fuzz: call timed out", 0) end
      end, "", 100000)
      local res = table.pack(pcall(fn, table.unpack(a, 1, n)))
      debug.sethook()
      if res[2] == "fuzz: call timed out" then res[1], res[2] = true, nil counts.timeout = (counts.timeout or 0) + 1 end
      local slow = clock() - t0 > 2
      if slow then io.stderr:write(("[fuzz] slow (%.1f s): %s\n"):format(clock() - t0, key)) end
      note(M.classify(res[1], res[2]), key, res[2])
      -- no backward through a call that took seconds: its backward is as long
      -- or longer, in C, out of the watchdog's reach (local_response_norm with
      -- a 65536-wide window: seeds 1001 and 1002 stalled there)
      if res[1] and not slow then
        table.remove(res, 1)
        res.n = res.n - 1
        local bdesc = {}
        if log then log:write(key, " -> backward\n") log:flush() end
        for _, o in ipairs(G.backward_results(C, res, bdesc)) do
          note(M.classify(o[1], o[2]), key .. " " .. table.concat(bdesc, " "), o[2])
        end
      end
      done = done + 1
    end
    M.restore(T, snap)
    if done % 200 == 0 then collectgarbage() end
    if clock() - report > 30 then
      report = clock()
      io.stderr:write(("[fuzz] %d calls, %d problems, %.0f s\n"):format(done, #bad, report - t_start))
    end
  end
  local seen = {}
  for _, b in ipairs(known) do
    local k = b.desc:gsub("^#%d+ ", ""):match("^%S*") .. " " .. b.err:gsub("0x%x+", "0x")
    if not seen[k] then seen[k] = true print("known", b.desc, b.err) end
  end
  for _, b in ipairs(bad) do
    local k = b.kind .. " " .. b.desc:gsub("^#%d+ ", ""):match("^%S*") .. " " .. b.err:gsub("0x%x+", "0x")
    if not seen[k] then seen[k] = true print(b.kind, b.desc, b.err) end
  end
  local parts = {}
  for k, v in pairs(counts) do parts[#parts + 1] = k .. "=" .. v end
  table.sort(parts)
  print(("%d targets (%d with captured calls); %d calls in %.0f s; outcomes: %s; problems: %d")
    :format(#targets, with_rec, done, clock() - t_start, table.concat(parts, " "), #bad))
end

if arg and arg[0] and arg[0]:find("fuzz_api%.lua$") and not package.loaded["busted"] then
  main(tonumber(arg[1]) or 20000, tonumber(arg[2]) or 1, arg[3])
end

return M
