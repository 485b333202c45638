-- Crashes and memory errors an audit found (issue 22), each reproduction
-- now a clean "ltensor.<fn>:" error or PyTorch 1.13's result: complex128
-- norms past one chunk (a stack overflow), empty conv kernels (a division
-- by zero), a 2-D RNG state (a heap over-read), repeated CSV columns
-- (uninitialised memory) and int64 CSV values past 2^53, bincount of
-- INT64_MAX (signed overflow), a broadcast gradient in _threshold_backward
-- (an over-read), and T.save over a file the caller may not write or one
-- with several hard links.
local T = require "ltensor"
local host = require "spec.host"
local F = T.nn.functional
local H = require "spec.helpers"

local function close(a, b, tol)
  tol = tol or 1e-10
  assert.is_true(math.abs(a - b) <= tol * math.max(1, math.abs(b)), ("%.17g vs %.17g"):format(a, b))
end

-- sqrt(sum |z|^2) of a complex tensor, through its real view
local function ref_norm(z) return T.view_as_real(z):pow(2):sum():sqrt():item() end

describe("complex128 norms longer than one reduction chunk", function()
  it("norm, dist, normalize, norm over a dim and clip_grad_norm_", function()
    T.manual_seed(1)
    local z = T.randn(300):to(T.complex128)
    close(z:norm():item(), ref_norm(z))
    local big = T.complex(T.randn(5000, { dtype = T.float64 }), T.randn(5000, { dtype = T.float64 }))
    close(big:norm():item(), ref_norm(big))
    close(T.dist(big, T.zeros_like(big)):item(), ref_norm(big))
    local m = T.randn(3, 700):to(T.complex128)
    local n = m:norm(2, 2)
    for i = 1, 3 do close(n[i]:item(), ref_norm(m[i])) end
    close(big:norm(1):item(), T.view_as_real(big):pow(2):sum(2):sqrt():sum():item())
    local u = F.normalize(m, 2, 2)
    for i = 1, 3 do close(ref_norm(u[i]), 1) end
    local p = T.randn(400):to(T.complex128):requires_grad_()
    p.grad = T.randn(400):to(T.complex128)
    local want = ref_norm(p.grad)
    close(T.nn.utils.clip_grad_norm_({ p }, 1.0):item(), want)
  end)
end)

describe("convolutions with an empty kernel", function()
  local msg = "kernel size should be greater than zero, but got kernel_height: "
  it("raise PyTorch's error naming the function", function()
    H.raises("ltensor.nn.functional.conv_transpose1d: " .. msg .. "1 kernel_width: 0",
      F.conv_transpose1d, T.randn(1, 2, 5), T.randn(2, 3, 0))
    H.raises("ltensor.nn.functional.conv_transpose2d: " .. msg .. "0 kernel_width: 2",
      F.conv_transpose2d, T.randn(1, 2, 5, 5), T.randn(2, 3, 0, 2))
    H.raises("ltensor.nn.functional.conv1d: " .. msg .. "1 kernel_width: 0",
      F.conv1d, T.randn(1, 2, 5):requires_grad_(), T.randn(3, 2, 0):requires_grad_())
    H.raises("ltensor.nn.functional.conv2d: " .. msg .. "2 kernel_width: 0",
      F.conv2d, T.randn(1, 2, 5, 5), T.randn(3, 2, 2, 0))
  end)
  it("the raw kernels run on one without dividing by zero", function()
    -- nothing of the input reaches the output: the bias, or zeros
    local y = T._conv_big(T.randn(1, 2, 1, 5), T.randn(2, 3, 1, 0), T.ones(3), 1, 1, 0, 0, 1, 1, 1, 1, 4)
    assert.same({ 1, 3, 1, 4 }, y.shape)
    assert.is_true(T.equal(y, T.ones(1, 3, 1, 4)))
    local s = T._conv_small(T.randn(1, 2, 1, 5), T.randn(3, 2, 1, 0), nil, 1, 1, 0, 0, 1, 1, 1, 1, 6)
    assert.is_true(T.equal(s, T.zeros(1, 3, 1, 6)))
  end)
end)

describe("set_rng_state", function()
  it("takes a state of any shape, read flat, and reproduces the stream", function()
    T.manual_seed(7)
    local st = T.get_rng_state()
    local a = T.rand(5)
    T.rand(3)
    T.set_rng_state(st:view(4, 10))
    assert.is_true(T.equal(a, T.rand(5)))
    local g = T.Generator(3)
    local gs = g:get_state()
    local b = T.rand(4, { generator = g })
    g:set_state(gs:view(2, 20))
    assert.is_true(T.equal(b, T.rand(4, { generator = g })))
  end)
  it("refuses a non-contiguous state, as PyTorch does", function()
    local st = T.get_rng_state():view(10, 4):t()
    H.raises("ltensor.set_rng_state: RNG state must be contiguous", T.set_rng_state, st)
    local g = T.Generator(3)
    H.raises("ltensor.Generator.set_state: RNG state must be contiguous", g.set_state, g, st)
  end)
end)

describe("read_csv", function()
  local paths = {}
  local function tmp(text)
    local p = os.tmpname()
    local f = assert(io.open(p, "wb"))
    f:write(text)
    f:close()
    paths[#paths + 1] = p
    return p
  end
  teardown(function() for _, p in ipairs(paths) do os.remove(p) end end)

  it("returns a column listed twice twice", function()
    local p = tmp("a,b,c\n1,2,3\n4,5,6\n")
    local t, names = T.read_csv(p, { columns = { 1, 1 } })
    assert.same({ { 1, 1 }, { 4, 4 } }, t:totable())
    assert.same({ "a", "a" }, names)
    t = T.read_csv(p, { columns = { "c", 1, "c", 2 }, dtype = T.int64 })
    assert.same({ { 3, 1, 3, 2 }, { 6, 4, 6, 5 } }, t:totable())
  end)
  it("reads int64 values past 2^53 exactly", function()
    local p = tmp("9007199254740993,-9223372036854775807\n1e3,2.0\n")
    local t = T.read_csv(p, { header = false, dtype = T.int64 })
    assert.equal(T.int64, t.dtype)
    assert.equal(9007199254740993, t[1][1]:item())
    assert.equal(-9223372036854775807, t[1][2]:item())
    assert.same({ 1000, 2 }, t[2]:totable())
    H.raises("ltensor.read_csv: a value is not an integer, can't read it as ltensor.int32",
      T.read_csv, tmp("1,\n"), { header = false, dtype = T.int32 })
    H.raises("ltensor.read_csv: a value is not an integer, can't read it as ltensor.int64",
      T.read_csv, tmp("1,1e300\n"), { header = false, dtype = T.int64 })
    H.raises("ltensor.read_csv: line 1, column 2: 'x' is not a number",
      T.read_csv, tmp("1,x\n"), { header = false, dtype = T.int64 })
  end)
end)

describe("bincount of huge values", function()
  it("refuses an output that cannot be allocated, without overflowing", function()
    host.needs_integers("INT64_MAX as a Lua integer")
    H.raises("ltensor.bincount: input value 9223372036854775807 needs more bins than can be allocated",
      T.bincount, T.tensor({ 1, math.maxinteger }))
    H.raises("ltensor.bincount: minlength 9223372036854775807 is more bins than can be allocated",
      T.bincount, T.tensor({ 1 }), nil, math.maxinteger)
  end)
end)

describe("internal entry points", function()
  it("_threshold_backward reads a broadcast gradient in place, once", function()
    local y = T.randn(1000)
    local g = T.tensor({ 2.5 })
    local want = T.where(y:gt(0), T.full({ 1000 }, 2.5), T.zeros(1000))
    assert.is_true(T.equal(T._threshold_backward(g, y), want))
    assert.is_true(T.equal(T._threshold_backward(g, y, 0), want))
  end)
  it("optional numbers give the library's named argument errors", function()
    H.raises("ltensor._threshold_backward: bad argument #3 (number expected, got string)",
      T._threshold_backward, T.ones(2), T.ones(2), "x")
    H.raises("ltensor.cross_entropy: bad argument #6 (number expected, got string)",
      T._xent, T.randn(2, 3), T.tensor({ 1, 2 }), nil, nil, false, "mean")
    H.raises("ltensor.interpolate: bad argument #6 (number expected, got table)",
      T._interp, T.randn(1, 1, 2, 2), 4, 4, 1, false, {}, nil)
    local p = T.zeros(3)
    H.raises("ltensor._optim_update: bad argument #7 (number expected, got string)",
      T._optim_update, 1, p, T.ones(3), nil, nil, nil, "lr")
  end)
end)

describe("T.save over an existing file", function()
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 0777 " .. dir))
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("keeps a file's hard links: writes through the shared inode", function()
    local p, q = dir .. "/a.lt", dir .. "/b.lt"
    T.save(p, T.ones(3))
    assert(os.execute(("ln %s %s"):format(p, q)))
    local new = T.arange(1, 6)
    T.save(p, new)
    assert.is_true(T.equal(T.load(q), new))
    assert.is_true(T.equal(T.load(p), new))
    -- a shorter file after a longer one: truncated to the new length
    T.save(q, T.tensor({ 1 }))
    assert.is_true(T.equal(T.load(p), T.tensor({ 1 })))
  end)

  local function uid()
    local f = io.popen("id -u")
    local s = f:read("*l")
    f:close()
    return tonumber(s)
  end
  it("refuses to replace a file the caller cannot write", function()
    local p = dir .. "/ro.lt"
    T.save(p, T.ones(2))
    local before = io.open(p, "rb"):read("*a")
    local want = "ltensor.save: cannot write '" .. p .. "': Permission denied"
    if uid() ~= 0 then
      assert(os.execute("chmod 0444 " .. p))
      H.raises(want, T.save, p, T.zeros(2))
    else
      -- root passes every permission check: run the save as nobody (the
      -- file stays root's, 0644, in a directory anyone may write)
      if not os.execute("command -v setpriv >/dev/null 2>&1") then
        pending("running as root without setpriv: cannot test as another user")
        return
      end
      local cwd = os.getenv("PWD")
      local script = dir .. "/try.lua"
      local f = io.open(script, "wb")
      f:write(([[
package.path = %q .. package.path
package.cpath = %q .. package.cpath
local T = require "ltensor"
local ok, err = pcall(T.save, %q, T.zeros(2))
io.write(ok and "saved" or tostring(err))
]]):format(cwd .. "/lua/?.lua;" .. cwd .. "/lua/?/init.lua;", cwd .. "/build/?.so;", p))
      f:close()
      local h = io.popen("setpriv --reuid=65534 --regid=65534 --clear-groups lua5.4 " .. script .. " 2>&1")
      local out = h:read("*a")
      h:close()
      assert.equal(want, out)
    end
    assert.equal(before, io.open(p, "rb"):read("*a"))
  end)
end)
