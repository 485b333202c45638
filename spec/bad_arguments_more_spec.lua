-- More kinds of bad arguments (issue 11, continued from bad_arguments_spec.lua):
-- each op takes exactly its own option keys, extra positional arguments are
-- refused (PyTorch: "takes N positional arguments"), sizes are required where
-- PyTorch requires them, squeeze's dim lists are checked, and every module
-- words an unknown option through the one checker.  Each error starts with
-- "ltensor.<function>:" and names the argument.
local T = require "ltensor"

-- Method calls below are not in tail position (`local r = x:f(...); return r`):
-- LuaJIT's debug info does not name a tail-called function, so there (as in
-- its own luaL_argerror) a method's self is not counted out of the numbers.
-- fn(...) raises; its message (less the "file:line: " position) starts with
-- "ltensor.<fname>:" and contains each of the texts
local function fails(fname, texts, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected ltensor." .. fname .. " to raise")
  err = tostring(err):gsub("^[^\n]-:%d+: ", "", 1)
  local prefix = "ltensor." .. fname .. ":"
  assert.equal(prefix, err:sub(1, #prefix), "error was: " .. err)
  if type(texts) == "string" then texts = { texts } end
  for _, t in ipairs(texts) do
    assert.truthy(err:find(t, 1, true), ("%q not in: %s"):format(t, err))
  end
end

local x = T.ones(2, 3)

describe("each elementwise op takes its own option keys", function()
  it("a key of another op raises (torch.exp(x, alpha=2) is a TypeError)", function()
    fails("exp", "unknown option 'alpha' (options: out)", T.exp, x, { alpha = 2 })
    fails("sqrt", "unknown option 'rounding_mode' (options: out)", T.sqrt, x, { rounding_mode = "floor" })
    fails("mul", "unknown option 'alpha' (options: out)", T.mul, x, 2, { alpha = 2 })
    fails("add", "unknown option 'rounding_mode' (options: alpha, out)", T.add, x, x, { rounding_mode = "floor" })
    fails("div", "unknown option 'alpha' (options: rounding_mode, out)", T.div, x, x, { alpha = 2 })
    fails("round", "unknown option 'approximate' (options: decimals, out)", T.round, x, { approximate = "tanh" })
    fails("gelu", "unknown option 'decimals' (options: approximate, out)", T.gelu, x, { decimals = 1 })
    fails("eq", "unknown option 'alpha' (options: out)", T.eq, x, x, { alpha = 1 })
  end)
  it("each op's own keys still work, positionally where PyTorch allows", function()
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, T.div(x, 2, { rounding_mode = "floor" }):totable())
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, T.div(x, 2, "trunc"):totable())
    assert.is_true(T.allclose(T.gelu(x, "tanh"), T.gelu(x, { approximate = "tanh" })))
    assert.same({ 1.25 }, T.round(T.tensor({ 1.254 }, { dtype = T.float64 }), { decimals = 2 }):totable())
    local out = T.empty(2, 3)
    T.exp(x, { out = out })
    assert.is_true(T.allclose(out, x:exp()))
    assert.same({ 3, 3 }, T.add(T.ones(2), 1, { alpha = 2 }):totable())
    assert.same({ -1, -1 }, (-T.ones(2)):totable())   -- __unm passes the operand twice
  end)
  it("in-place ops take no out= (they write into self)", function()
    fails("exp_", "unknown option 'out' (exp_ takes no options)", function() return T.ones(2):exp_({ out = T.ones(2) }) end)
    fails("add_", "unknown option 'out' (options: alpha)", function() return T.ones(2):add_(1, { out = T.ones(2) }) end)
    fails("div_", "unknown option 'out' (options: rounding_mode)",
      function() return T.ones(2):div_(2, { rounding_mode = "floor", out = T.ones(2) }) end)
    assert.same({ 0, 0 }, T.ones(2):div_(2, { rounding_mode = "floor" }):totable())
  end)
end)

describe("extra positional arguments are refused, not dropped", function()
  it("a value where an op takes only an options table", function()
    fails("exp", "bad argument #2 (options table expected, got number)", T.exp, x, 2)
    fails("mul", "bad argument #2 (options table expected, got number)", function() local r = x:mul(2, 3); return r end)
    fails("eq", "bad argument #3 (options table expected, got string)", T.eq, x, x, "zzz")
  end)
  it("an argument past the last one", function()
    fails("masked_fill", "bad argument #4 (unexpected extra argument (got number))",
      T.masked_fill, x, x:gt(0), 2, 5)
    fails("masked_fill_", "bad argument #3 (unexpected extra argument (got number))",
      function() local r = x:clone():masked_fill_(x:gt(0), 2, 5); return r end)
    fails("add", "bad argument #4 (unexpected extra argument (got number))", T.add, x, x, 1, 2)
    fails("exp", "bad argument #3 (unexpected extra argument (got string))", T.exp, x, {}, "zzz")
    fails("clone", "bad argument #1 (unexpected extra argument (got string))", function() local r = x:clone("zzz"); return r end)
    fails("numel", "unexpected extra argument", T.numel, x, 1)
    fails("t", "unexpected extra argument", T.t, x, 1)
    fails("matmul", "bad argument #3 (unexpected extra argument (got ltensor.Tensor))", T.matmul, x, x:t(), x)
    fails("view_as", "unexpected extra argument", T.view_as, x, x, 1)
    fails("clamp", "bad argument #4 (unexpected extra argument (got table))", T.clamp, x, 0, 1, { out = x })
    fails("clamp_min", "unexpected extra argument", T.clamp_min, x, 0, 1)
    fails("squeeze", "bad argument #3 (unexpected extra argument (got number))", T.squeeze, T.ones(1, 3, 1), 1, 3)
    fails("tril", "unexpected extra argument", T.tril, x, 0, 1)
    fails("isclose", "unexpected extra argument", T.isclose, x, x, { rtol = 1 }, 1)
  end)
  it("in the Lua-composed ops (structural, linalg) too", function()
    -- the count comes from debug.getinfo's nparams: Lua 5.2+ and LuaJIT 2.1;
    -- Lua 5.1 has no nparams and skips the check (documented)
    if debug.getinfo(function(a) return a end, "u").nparams ~= 1 then return end
    local A = T.eye(2, { dtype = T.float64 })
    fails("linalg.det", "bad argument #2 (unexpected extra argument (got number))", T.linalg.det, A, 5)
    fails("linalg.inv", "bad argument #2 (unexpected extra argument (got string))", function() local r = A:inverse("x"); return r end)
    fails("trace", "bad argument #2 (unexpected extra argument (got number))", T.trace, A, 1)
    fails("kron", "bad argument #3 (unexpected extra argument (got ltensor.Tensor))", T.kron, A, A, A)
    assert.equal(1, T.linalg.det(A, nil):item())
  end)
  it("sort's dim slot, equal, and the settings getters", function()
    fails("sort", "bad argument #1 (dim (integer), descending (boolean) or options table expected, got string)",
      function() local r = x:sort("zzz"); return r end)
    fails("argsort", "unexpected extra argument", T.argsort, x, 1, true, {}, 5)
    fails("equal", "bad argument #3 (unexpected extra argument (got number))", T.equal, x, x, 1)
    fails("get_default_dtype", "bad argument #1 (unexpected extra argument (got string))", T.get_default_dtype, "zzz")
    fails("get_num_threads", "unexpected extra argument", T.get_num_threads, 1)
    fails("is_grad_enabled", "unexpected extra argument", T.is_grad_enabled, true)
    assert.same({ { 1, 1, 1 }, { 1, 1, 1 } }, x:sort(2, true):totable())
  end)
  it("diagonal's dims and flip's list", function()
    local m = T.ones(3, 3)
    fails("diagonal", "dim1 must be an integer (got string)", function() local r = m:diagonal(0, "a"); return r end)
    fails("diag_embed", "dim2 must be an integer (got a non-integer number)", T.diag_embed, T.ones(3), 0, 1, 1.5)
    fails("diagonal", "bad argument #4 (unexpected extra argument (got number))", function() local r = m:diagonal(0, 1, 2, 7); return r end)
    fails("diagonal", "unexpected extra argument (got string)", function() local r = m:diagonal({ offset = 1 }, "zzz"); return r end)
    fails("flip", "bad argument #2 (unexpected extra argument (got number))", function() local r = m:flip({ 1 }, 2); return r end)
    assert.same({ 2 }, m:diagonal(1, 1, 2).shape)
    assert.same({ 2 }, m:diagonal({ offset = -1 }).shape)
  end)
  it("cat and stack take the list and a dim", function()
    fails("cat", "bad argument #3 (unexpected extra argument (got number))", T.cat, { x, x }, 1, 2)
    fails("stack", "bad argument #3 (unexpected extra argument (got ltensor.Tensor))", T.stack, { x }, 1, x)
    assert.same({ 2, 6 }, T.cat({ x, x }, 2, nil).shape)
  end)
  it("trailing nils are absent arguments and pass", function()
    assert.same({ 2, 3 }, T.exp(x, nil).shape)
    assert.same({ 2, 3 }, T.clone(x, nil, nil).shape)
    assert.same({ 2, 3 }, T.masked_fill(x, x:gt(0), 2, nil).shape)
  end)
  it("something that is not an options table where the options go", function()
    fails("tensor", "bad argument #2 (options table expected, got string)", T.tensor, { 1 }, "float64")
    fails("zeros_like", "bad argument #2 (options table expected, got ltensor.dtype)", T.zeros_like, x, T.float64)
    fails("rand_like", "bad argument #2 (options table expected, got number)", T.rand_like, x, 3)
    fails("nonzero", "bad argument #1 (options table expected, got boolean)", function() local r = x:nonzero(true); return r end)
  end)
end)

describe("creation functions require their sizes, as PyTorch does", function()
  it("no size at all raises (torch.rand() and torch.rand(dtype=...) do)", function()
    for _, name in ipairs({ "rand", "randn", "zeros", "ones", "empty" }) do
      fails(name, "missing required argument 'size' (integers or one table of integers; {} for a 0-dim tensor)", T[name])
    end
    fails("rand", "missing required argument 'size'", T.rand, { dtype = T.float64 })
    fails("randn", "missing required argument 'size'", T.randn, { dtype = T.float64, requires_grad = true })
  end)
  it("an empty size table is the 0-dim tensor", function()
    assert.same({}, T.rand({}).shape)
    assert.same({}, T.zeros({}, { dtype = T.int32 }).shape)
    assert.equal(T.float64, T.randn({}, { dtype = T.float64 }).dtype)
    assert.equal(7, T.full({}, 7):item())
  end)
end)

describe("squeeze takes one dim or a list of dims (PyTorch 2's squeeze(dims))", function()
  local s = T.ones(1, 3, 1)
  it("squeezes the listed size-1 dims and keeps the others", function()
    assert.same({ 3 }, s:squeeze({ 1, 3 }).shape)
    assert.same({ 3, 1 }, s:squeeze({ 1 }).shape)
    assert.same({ 1, 3 }, s:squeeze({ -1, 2 }).shape)
    assert.same({ 1, 3, 1 }, s:squeeze({}).shape)
    assert.same({}, T.ones(1):squeeze({ 1 }).shape)
  end)
  it("refuses duplicates, bad entries, out-of-range dims and options", function()
    fails("squeeze", "dim 1 appears multiple times in the list of dims", T.squeeze, s, { 1, 1 })
    fails("squeeze", "dim 3 appears multiple times in the list of dims", T.squeeze, s, { 3, -1 })
    fails("squeeze", "dim must be an integer or a list of integers (element 2 is string)", T.squeeze, s, { 1, "3" })
    fails("squeeze", "dim must be an integer or a list of integers (element 1 is number)", T.squeeze, s, { 1.5 })
    fails("squeeze", "dimension out of range (expected to be in range of [-3, 3], but got 7)", T.squeeze, s, { 1, 7 })
    fails("squeeze", "(dims are 1-based: 1 is the first, -1 the last)", T.squeeze, s, { 0 })
    fails("squeeze", "got a string key 'dim': squeeze takes no options", T.squeeze, s, { dim = 1 })
    fails("squeeze", "dim must be an integer or a list of integers (got string)", T.squeeze, s, "1")
    fails("squeeze", "dim must be an integer or a list of integers (got a tensor)", T.squeeze, s, T.tensor({ 1 }))
  end)
end)

describe("one checker words every unknown option", function()
  it("functions that take no options say so", function()
    fails("index_copy", "unknown option 'alpha' (index_copy takes no options)",
      function() local r = x:index_copy(1, T.tensor({ 1 }), T.ones(1, 3), { alpha = 2 }); return r end)
    fails("exp_", "(exp_ takes no options)", function() local r = x:clone():exp_({ decimals = 1 }); return r end)
  end)
  it("names from other libraries are suggested where the option exists", function()
    fails("optim.Adam", "unknown option 'learningRate' (did you mean 'lr'?)",
      T.optim.Adam, { T.ones(2, { requires_grad = true }) }, { learningRate = 0.1 })
    fails("nn.LayerNorm", "unknown option 'epsilon' (did you mean 'eps'?)", T.nn.LayerNorm, 4, { epsilon = 1e-3 })
    fails("sum", "unknown option 'axis' (did you mean 'dim'?)", T.sum, x, { axis = 1 })
  end)
  it("the Lua modules use it: nn, optim, data, progress, lr_scheduler, functional, plot, image", function()
    local p = { T.ones(2, { requires_grad = true }) }
    fails("nn.Linear", "unknown option 'bais' (did you mean 'bias'?)", T.nn.Linear, 2, 3, { bais = false })
    fails("optim.SGD", "unknown option 'lrr' (did you mean 'lr'?)", T.optim.SGD, p, { lrr = 0.1 })
    fails("utils.data.DataLoader", "unknown option 'batchSize' (did you mean 'batch_size'?)",
      T.utils.data.DataLoader, T.utils.data.TensorDataset(T.ones(4, 2)), { batchSize = 2 })
    fails("utils.progress", "unknown option 'colour' (options: desc, disable, file, interval, leave, refresh, total, tty,",
      T.utils.progress, 3, { colour = "x" })
    fails("utils.progress", "unknown option 'dsc' (did you mean 'desc'?)", T.utils.progress, 3, { dsc = "x" })
    fails("optim.lr_scheduler.StepLR", "unknown option 'gama' (did you mean 'gamma'?)",
      T.optim.lr_scheduler.StepLR, T.optim.SGD(p, { lr = 0.1 }), 2, { gama = 0.5 })
    fails("nn.functional.mse_loss", "unknown option 'reductio' (did you mean 'reduction'?)",
      T.nn.functional.mse_loss, x, x, { reductio = "sum" })
    fails("plot.line", "unknown option 'titel' (did you mean 'title'?)", T.plot.line, { 1, 2 }, { titel = "x" })
    fails("plot.hist", "unknown option 'bin' (did you mean 'bins'?)", T.plot.hist, { 1, 2 }, { bin = 3 })
    fails("save_image", "unknown option 'fromat' (did you mean 'format'?)",
      T.save_image, os.tmpname() .. ".png", T.zeros(2, 2), { fromat = "png" })
  end)
end)

describe("T.testing.assert_close points at the caller's line", function()
  local function where(fn)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    return tostring(err):match("^([^\n]-:%d+): ltensor%.testing%.assert_close: ")
  end
  local here = debug.getinfo(1, "S").short_src
  it("for a mismatch, a bad argument and a typo'd option alike", function()
    local l1 = debug.getinfo(1, "l").currentline + 1
    local w1 = where(function() T.testing.assert_close(T.tensor({ 1.0 }), T.tensor({ 2.0 })) end)
    local w2 = where(function() T.testing.assert_close(T.tensor({ 1.0 }), "x") end)
    local w3 = where(function() T.testing.assert_close(T.tensor({ 1.0 }), T.tensor({ 1.0 }), { rtoll = 1 }) end)
    assert.equal(here .. ":" .. l1, w1)
    assert.equal(here .. ":" .. (l1 + 1), w2)
    assert.equal(here .. ":" .. (l1 + 2), w3)
  end)
  it("words a typo'd option with the suggestion", function()
    local ok, err = pcall(T.testing.assert_close, T.tensor({ 1.0 }), T.tensor({ 1.0 }), { rtoll = 1 })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("ltensor.testing.assert_close: unknown option 'rtoll' (did you mean 'rtol'?)", 1, true))
  end)
end)

describe("more 1-based hints and type checks found by a newcomer's audit", function()
  it("select, roll and linalg.norm say that indices and dims are 1-based", function()
    fails("select", "index 0 out of range for tensor of size [2, 3] at dimension 1 (indices are 1-based: 1 is the first, -1 the last)",
      function() local r = x:select(1, 0); return r end)
    fails("roll", "but got 0) (dims are 1-based: 1 is the first, -1 the last)", function() local r = x:roll(1, 0); return r end)
    fails("linalg.norm", "but got 0) (dims are 1-based: 1 is the first, -1 the last)", T.linalg.norm, x, { dim = 0 })
  end)
  it("requires_grad takes a boolean, not a truthy value", function()
    local w = T.ones(2)
    fails("requires_grad_", "requires_grad must be a boolean (got string)", function() w.requires_grad = "yes" end)
    fails("requires_grad_", "requires_grad must be a boolean (got number)", function() w:requires_grad_(1) end)
    assert.is_false(w.requires_grad)
    w.requires_grad = true
    assert.is_true(w.requires_grad)
  end)
  it("a table where a count goes is named by its type, not its address", function()
    local opt = T.optim.SGD({ T.ones(1, { requires_grad = true }) }, { lr = 1 })
    fails("optim.lr_scheduler.StepLR", "step_size must be a positive integer, got table",
      T.optim.lr_scheduler.StepLR, opt, {})
    local ok, err = pcall(T.optim.lr_scheduler.StepLR, opt, {})
    assert.is_false(ok)
    assert.falsy(tostring(err):find("0x", 1, true))
  end)
  it("set_printoptions suggests the option meant", function()
    fails("set_printoptions", "unknown option 'precison' (did you mean 'precision'?)", T.set_printoptions, { precison = 2 })
  end)
end)

describe("a method called with '.' instead of ':'", function()
  it("says how to call it", function()
    fails("sum", "bad argument #1 (ltensor.Tensor expected, got no value; a method is called with ':', as x:sum(...))",
      function() return x.sum() end)
    fails("clone", "as x:clone(...)", function() return x.clone() end)
  end)
end)

describe("the one checker in nn's module, init and utils options", function()
  it("suggests the option meant", function()
    fails("nn.init.normal_", "unknown option 'generater' (did you mean 'generator'?)",
      T.nn.init.normal_, T.empty(2), 0, 1, { generater = 1 })
    fails("nn.init.kaiming_uniform_", "unknown option 'mod' (did you mean 'mode'?)",
      T.nn.init.kaiming_uniform_, T.empty(2, 2), { mod = "fan_in" })
    fails("nn.Module.state_dict", "unknown option 'keepvars' (did you mean 'keep_vars'?)",
      function() return T.nn.Linear(2, 2):state_dict({ keepvars = true }) end)
    fails("nn.utils.clip_grad_norm_", "unknown option 'norm_typ' (did you mean 'norm_type'?)",
      T.nn.utils.clip_grad_norm_, {}, 1, { norm_typ = 2 })
  end)
end)

describe("a range that starts at 0", function()
  it("says that indices are 1-based (x[{{0, 2}}] is x[0:2]'s habit)", function()
    fails("index", "range start 0 for dimension 1 (indices are 1-based: 1 is the first, -1 the last; {1, 2} is the first two)",
      function() return x[{ { 0, 2 } }] end)
    fails("index", "range start 0 for dimension 2", function() return x[{ {}, { 0, 1 } }] end)
  end)
  it("an end of 0 is still the empty range, and ends are clamped as Python slices", function()
    assert.same({ 0, 3 }, x[{ { 1, 0 } }].shape)
    assert.same({ 2, 3 }, x[{ { 1, 5 } }].shape)
    assert.same({ 2, 3 }, x[{ { -5, 2 } }].shape)
  end)
end)
