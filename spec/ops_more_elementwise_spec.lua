-- spec/ops_more_elementwise_spec.lua: the elementwise functions asinh,
-- acosh, atanh, erfc, logit, nan_to_num, deg2rad, rad2deg, sinc, frac,
-- signbit, isposinf, isneginf, sgn, hypot, copysign, logaddexp, logaddexp2
-- and xlogy.  Values, result dtypes, errors and gradients come from
-- PyTorch 1.13 through spec/fixtures/more_elementwise.lua
-- (spec/fixtures/gen_more_elementwise.py); gradients are also checked by
-- finite differences.
local T = require "ltensor"
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/more_elementwise.lua")

local UNARY = { "asinh", "acosh", "atanh", "erfc", "deg2rad", "rad2deg", "sinc", "frac", "signbit", "isposinf",
  "isneginf", "sgn", "logit", "nan_to_num" }
local BINARY = { "hypot", "copysign", "logaddexp", "logaddexp2", "xlogy" }
local NO_INPLACE = { signbit = true, isposinf = true, isneginf = true, logaddexp = true, logaddexp2 = true }

-- relative tolerance per dtype: a few units in the last place (PyTorch's
-- vectorised float32 functions and the C library may differ by an ulp or two)
local RTOL = { float64 = 1e-13, complex128 = 1e-13, float32 = 2e-6, complex64 = 2e-6, float16 = 2e-3,
  bfloat16 = 1.6e-2 }

local function is_neg_zero(v) return v == 0 and 1 / v < 0 end

-- want and got (flat lists) agree: NaN with NaN, infinities and signed
-- zeros exactly, the rest within rtol
local function agree(want, got, rtol, what, any_zero)
  assert.equal(#want, #got, what .. ": length")
  for i = 1, #want do
    local a, b = want[i], got[i]
    local msg = ("%s [%d]: want %s, got %s"):format(what, i, tostring(a), tostring(b))
    assert.equal(type(a), type(b), msg)
    if type(a) == "boolean" then
      assert.equal(a, b, msg)
    elseif a ~= a then
      assert.is_true(b ~= b, msg)
    elseif a == 0 then
      assert.is_true(b == 0 or math.abs(b) < 1e-300, msg)
      if b == 0 and not any_zero then assert.equal(is_neg_zero(a), is_neg_zero(b), msg .. " (sign of zero)") end
    elseif a == math.huge or a == -math.huge then
      assert.equal(a, b, msg)
    else
      assert.is_true(math.abs(a - b) <= rtol * math.abs(a), msg)
    end
  end
end

local function complex_of(pairs_, dtype)
  local re, im = {}, {}
  for i, z in ipairs(pairs_) do re[i], im[i] = z[1], z[2] end
  return T.complex(T.tensor(re, { dtype = T.float64 }), T.tensor(im, { dtype = T.float64 })):to(T[dtype])
end
local function input(vals, dtype)
  if dtype:find("complex") then return complex_of(vals, dtype) end
  return T.tensor(vals, { dtype = T[dtype] })
end
local function flat_of(t)
  if t.dtype.is_complex then
    local re, im = T.real(t):to(T.float64):totable(), T.imag(t):to(T.float64):totable()
    local out = {}
    for i = 1, #re do out[2 * i - 1], out[2 * i] = re[i], im[i] end
    return out
  end
  if t.dtype == T.float16 or t.dtype == T.bfloat16 then t = t:to(T.float64) end
  return H.flat(t:totable())
end
local function flat_want(v) return H.flat(v) end

-- the fixture's optional arguments ("nil" stands for a skipped one)
local function args_of(c)
  local a = {}
  for i, v in ipairs(c.args or {}) do if v ~= "nil" then a[i] = v end end
  return a, c.args and #c.args or 0
end
local unpack_ = table.unpack or unpack

describe("the more elementwise functions", function()
  describe("match PyTorch 1.13's values", function()
    it("for every function, dtype and the NaN/inf/+-0 edge points", function()
      local n = 0
      for _, c in ipairs(FX.values) do
        if c.fn == "sinc" and c.dtype == "bfloat16" then
          -- PyTorch 1.13 rounds pi and pi * x to bfloat16 before the sine
          -- (sinc(-30) = -0.0026 there); ltensor computes 16-bit floats in
          -- float32 (SPEC 2) and gives sinc(-30) = 2.5e-9, rounded
          c = { fn = c.fn, dtype = c.dtype, x = c.x, ydtype = c.ydtype,
            y = T.sinc(T.tensor(c.x, { dtype = T.float32 })):to(T.bfloat16):to(T.float64):totable() }
        end
        local what = c.fn .. " " .. c.dtype .. (c.args and (" args " .. table.concat(c.args, ",")) or "")
        local x = input(c.x, c.dtype)
        local a, na = args_of(c)
        local y
        if c.x2 then y = T[c.fn](x, input(c.x2, c.dtype)) else y = T[c.fn](x, unpack_(a, 1, na)) end
        assert.equal(T[c.ydtype], y.dtype, what .. ": dtype")
        agree(flat_want(c.y), flat_of(y), RTOL[c.ydtype] or 0, what)
        n = n + 1
      end
      assert.is_true(n > 150)
    end)

    it("erfc keeps its accuracy in the tail, where 1 - erf(x) is 0", function()
      local y = T.erfc(T.tensor({ 10, 26 }, { dtype = T.float64 })):totable()
      assert.is_true(math.abs(y[1] - 2.088487583762545e-45) <= 1e-13 * 2.088487583762545e-45)
      assert.is_true(y[2] > 0 and y[2] < 1e-290)
      assert.equal(0, (1 - T.erf(T.tensor({ 10.0 }, { dtype = T.float64 }))):item())
    end)

    it("the inverse hyperbolics keep tiny arguments exactly (no cancellation)", function()
      local x = T.tensor({ 1e-20, -1e-300 }, { dtype = T.float64 })
      assert.same({ 1e-20, -1e-300 }, T.asinh(x):totable())
      assert.same({ 1e-20, -1e-300 }, T.atanh(x):totable())
      -- acosh near 1: log1p form, not log(x + sqrt(x^2 - 1)) of a rounded square
      local v = T.acosh(T.tensor({ 1 + 2 ^ -52 }, { dtype = T.float64 })):item()
      assert.is_true(math.abs(v - 2.1073424255447017e-08) < 1e-20)
    end)
  end)

  describe("result dtypes follow PyTorch 1.13", function()
    it("for each input dtype (integral input of a float function gives the default dtype)", function()
      for _, c in ipairs(FX.dtypes) do
        local x = T.ones(3, { dtype = T[c.dtype] })
        local function run()
          for _, b in ipairs(BINARY) do if b == c.fn then return T[c.fn](x, x) end end
          return T[c.fn](x)
        end
        local what = c.fn .. " " .. c.dtype
        if c.err and (c.err:find("'Half'", 1, true) or c.err:find("'BFloat16'", 1, true)) then
          -- PyTorch 1.13 lacks these 16-bit CPU kernels; ltensor computes
          -- 16-bit floats in float32 and rounds (SPEC 2)
          local y = run()
          assert.equal(T[c.dtype], y.dtype, what)
        elseif c.err then
          local ok, err = pcall(run)
          assert.is_false(ok, what .. " should raise")
          local want = c.err:gsub("_vml_cpu", "_cpu")
          H.fails(c.fn, want, run)
          assert.truthy(tostring(err):find(want, 1, true), what .. ": " .. tostring(err))
        else
          assert.equal(T[c.out], run().dtype, what)
        end
      end
    end)

    it("for two tensors of different dtypes", function()
      for _, c in ipairs(FX.pairs) do
        local a, b = T.ones(2, { dtype = T[c.a] }), T.ones(2, { dtype = T[c.b] })
        local what = c.fn .. " " .. c.a .. " " .. c.b
        if c.err and c.err:find("'Half'", 1, true) then
          assert.equal(T.float16, T[c.fn](a, b).dtype, what)
        elseif c.err then
          H.fails(c.fn, c.err, T[c.fn], a, b)
        else
          assert.equal(T[c.out], T[c.fn](a, b).dtype, what)
        end
      end
    end)

    it("with a Lua number or boolean on either side of xlogy (a weak scalar) and as copysign's sign", function()
      for _, c in ipairs(FX.mixed) do
        local t = T.tensor({ 1, 2 }, { dtype = T.int64 }):to(T[c.dtype])
        local y
        if c.side == 2 then y = T[c.fn](t, c.scalar) else y = T[c.fn](c.scalar, t) end
        local what = ("%s %s scalar %s side %d"):format(c.fn, c.dtype, tostring(c.scalar), c.side)
        assert.equal(T[c.out], y.dtype, what)
        agree(c.y, flat_of(y), RTOL[c.out], what)
      end
    end)

    it("a Lua number keeps a float tensor's dtype in hypot, logaddexp and logaddexp2", function()
      for _, dt in ipairs({ T.float32, T.float64, T.bfloat16 }) do
        local t = T.tensor({ 0.5, -3, 4 }, { dtype = dt })
        for _, fn in ipairs({ "hypot", "logaddexp", "logaddexp2", "copysign", "xlogy" }) do
          local y = T[fn](t, 2.5)
          assert.equal(dt, y.dtype, fn)
          H.same(T[fn](t, T.full_like(t, 2.5)):to(T.float64):totable(), y:to(T.float64):totable(), 0, fn)
          local z = T[fn](2.5, t)
          assert.equal(dt, z.dtype, fn)
          H.same(T[fn](T.full_like(t, 2.5), t):to(T.float64):totable(), z:to(T.float64):totable(), 0, fn)
        end
      end
      assert.equal(T.float32, T.copysign(T.tensor({ 1, 2 }, { dtype = T.int32 }), 2).dtype)
      H.fails("hypot", "\"hypot_cpu\" not implemented for 'Int'", T.hypot, T.tensor({ 1 }, { dtype = T.int32 }), 2)
    end)

    it("under set_default_dtype(float64), integral input of a float function gives float64", function()
      local old = T.get_default_dtype()
      T.set_default_dtype(T.float64)
      local ok, err = pcall(function()
        local i = T.tensor({ 1, 2 }, { dtype = T.int32 })
        for _, fn in ipairs({ "asinh", "erfc", "deg2rad", "sinc", "logit" }) do assert.equal(T.float64, T[fn](i).dtype, fn) end
        assert.equal(T.float64, T.xlogy(i, i).dtype)
        assert.equal(T.float64, T.copysign(i, -1).dtype)
      end)
      T.set_default_dtype(old)
      assert(ok, err)
    end)
  end)

  describe("shapes and layouts", function()
    it("broadcast the binary functions as PyTorch", function()
      local a = T.tensor({ { 1.0 }, { -2.0 }, { 3.0 } })      -- 3x1
      local b = T.tensor({ 0.5, -0.25, 4.0, 0.0 })            -- 4
      for _, fn in ipairs(BINARY) do
        local y = T[fn](a, b)
        assert.same({ 3, 4 }, y.shape, fn)
        local want = T[fn](a:expand(3, 4):contiguous(), b:expand(3, 4):contiguous())
        H.same(want:totable(), y:totable(), 0, fn)
      end
      H.fails("hypot", "the size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
        T.hypot, T.ones(2), T.ones(3))
      H.fails("xlogy", "the size of tensor a (2) must match the size of tensor b (3)", T.xlogy, T.ones(2, 2), T.ones(2, 3))
    end)

    it("give non-contiguous input the values of its contiguous copy", function()
      local base = T.linspace(-0.99, 3, 24):reshape(4, 6)
      local x = base:t()                    -- 6x4, transposed
      local s = base[{ {}, { 1, 6, 2 } }]   -- every other column (a strided view)
      for _, fn in ipairs(UNARY) do
        H.same(T[fn](x:contiguous()):totable(), T[fn](x):totable(), 0, fn)
        H.same(T[fn](s:contiguous()):totable(), T[fn](s):totable(), 0, fn)
      end
      local y = T.linspace(0.1, 2, 24):reshape(6, 4)
      for _, fn in ipairs(BINARY) do
        H.same(T[fn](x:contiguous(), y):totable(), T[fn](x, y):totable(), 0, fn)
      end
    end)

    it("take empty and 0-dim input", function()
      for _, fn in ipairs(UNARY) do
        local e = T[fn](T.zeros(0, 3))
        assert.same({ 0, 3 }, e.shape, fn)
        local z = T[fn](T.tensor(0.5))
        assert.same({}, z.shape, fn)
      end
      for _, fn in ipairs(BINARY) do
        assert.same({ 2, 0 }, T[fn](T.zeros(2, 0), T.zeros(0)).shape, fn)
        assert.same({}, T[fn](T.tensor(0.5), T.tensor(2.0)).shape, fn)
        assert.same({ 3 }, T[fn](T.tensor(0.5), T.ones(3)).shape, fn)
      end
      assert.near(0.5 * math.log(2), T.xlogy(T.tensor(0.5), 2):item(), 1e-7)
    end)

    it("write into out= and in place (t:name_) the values of the plain call", function()
      local x = T.tensor({ 0.1, 0.5, 0.9, 2.0, 0 / 0, 1 / 0 })
      for _, fn in ipairs(UNARY) do
        local want = T[fn](x)
        local o = T.empty(6, { dtype = want.dtype })
        local r = T[fn](x, { out = o })
        assert.equal(o, r)
        H.same(want:totable(), o:totable(), 0, fn .. " out=")
        if not NO_INPLACE[fn] then
          local c = x:clone()
          assert.equal(c, c[fn .. "_"](c))
          H.same(want:totable(), c:totable(), 0, fn .. "_")
        else
          assert.is_nil(x[fn .. "_"], fn .. "_")
        end
      end
      local y = T.tensor({ 1.5, -0.5, 2, 0, 3, -1 })
      for _, fn in ipairs(BINARY) do
        local want = T[fn](x, y)
        local o = T.empty(6)
        T[fn](x, y, { out = o })
        H.same(want:totable(), o:totable(), 0, fn .. " out=")
        if not NO_INPLACE[fn] then
          local c = x:clone()
          c[fn .. "_"](c, y)
          H.same(want:totable(), c:totable(), 0, fn .. "_")
        else
          assert.is_nil(x[fn .. "_"], fn .. "_")
        end
      end
      local l = T.tensor({ 0.01, 0.5, 0.99 })
      H.same(T.logit(l, 0.1):totable(), l:clone():logit_(0.1):totable(), 0)
      H.same(T.logit(l, 0.1):totable(), T.logit(l, { eps = 0.1 }):totable(), 0)
      H.same(T.logit(l, 0.1):totable(), l:clone():logit_({ eps = 0.1 }):totable(), 0)
      H.same(T.logit(l):totable(), T.logit(l, nil, { out = T.empty(3) }):totable(), 0)
      local n = T.tensor({ 0 / 0, 1 / 0, -1 / 0 })
      assert.same({ 1, 2, 3 }, n:clone():nan_to_num_(1, 2, 3):totable())
      assert.same({ 1, 2, 3 }, n:clone():nan_to_num_({ nan = 1, posinf = 2, neginf = 3 }):totable())
    end)

    it("refuse an in-place result their dtype cannot hold (safe casting)", function()
      local i = T.tensor({ 1, 2 }, { dtype = T.int64 })
      for _, fn in ipairs({ "asinh", "acosh", "atanh", "erfc", "sinc", "deg2rad", "rad2deg", "logit" }) do
        H.fails(fn, "result type Float can't be cast to the desired output type Long", function() return i:clone()[fn .. "_"](i:clone()) end)
      end
      H.fails("xlogy", "result type Float can't be cast to the desired output type Long", function() return i:clone():xlogy_(2) end)
      H.fails("copysign", "result type Float can't be cast to the desired output type Long", function() return i:clone():copysign_(-1) end)
      -- integral input is its own nan_to_num, in place too
      assert.same({ 1, 2 }, i:clone():nan_to_num_():totable())
      assert.equal(T.int64, T.nan_to_num(i).dtype)
      assert.same({ 1, 1 }, T.sgn(i):totable())
    end)
  end)

  describe("edge points", function()
    it("nan_to_num's defaults are the dtype's largest and lowest finite values", function()
      local v = { 0 / 0, 1 / 0, -1 / 0, 2.5 }
      assert.same({ 0, 65504, -65504, 2.5 }, T.nan_to_num(T.tensor(v, { dtype = T.float16 })):to(T.float64):totable())
      local bf = T.nan_to_num(T.tensor(v, { dtype = T.bfloat16 })):to(T.float64):totable()
      assert.same({ 0, 3.3895313892515355e38, -3.3895313892515355e38, 2.5 }, bf)
      local f = T.nan_to_num(T.tensor(v)):to(T.float64):totable()
      assert.same({ 0, 3.4028234663852886e38, -3.4028234663852886e38, 2.5 }, f)
      local d = T.nan_to_num(T.tensor(v, { dtype = T.float64 })):totable()
      assert.same({ 0, 1.7976931348623157e308, -1.7976931348623157e308, 2.5 }, d)
      -- a replacement beyond the dtype's range rounds to infinity, as PyTorch's cast
      assert.same({ 0, 1 / 0, -1 / 0, 2.5 }, T.nan_to_num(T.tensor(v), 0, 1e300, -1e300):to(T.float64):totable())
      -- positional nil skips one
      assert.same({ 0, 1 / 0, -7, 2.5 }, T.nan_to_num(T.tensor(v), nil, 1 / 0, -7):totable())
    end)

    it("signbit sees -0.0 and negative NaN; isposinf/isneginf only infinities", function()
      local nan = math.abs(0 / 0)   -- fabs clears the sign bit (0/0 itself is negative on x86)
      local nz = -1 / math.huge       -- -0.0 at run time (Lua 5.1 folds the literals -0.0 and 0.0)
      local x = T.tensor({ nz, 0.0, -1 / 0, 1 / 0, -nan, nan, -2, 3 }, { dtype = T.float64 })
      assert.same({ true, false, true, false, true, false, true, false }, T.signbit(x):totable())
      assert.same({ true, false, true, false, true, false, true, false }, T.signbit(x:to(T.float16)):totable())
      assert.same({ false, false, false, true, false, false, false, false }, T.isposinf(x):totable())
      assert.same({ false, false, true, false, false, false, false, false }, T.isneginf(x):totable())
      assert.same({ true, false, false, false }, T.signbit(T.tensor({ -3, 0, 4, 5 }, { dtype = T.int8 })):totable())
      assert.same({ false, false }, T.signbit(T.tensor({ 0, 255 }, { dtype = T.uint8 })):totable())
      assert.same({ false, false }, T.isposinf(T.tensor({ true, false })):totable())
      assert.equal(T.bool, T.isneginf(T.tensor({ 1, 2 })).dtype)
    end)

    it("sgn of a complex number is z / |z|, 0 at 0; of a real one, sign", function()
      local z = T.sgn(T.complex(T.tensor({ 3.0, 0.0, -2.0 }, { dtype = T.float64 }), T.tensor({ 4.0, 0.0, 0.0 }, { dtype = T.float64 })))
      assert.equal(T.complex128, z.dtype)
      H.same({ 0.6, 0, -1 }, T.real(z):totable(), 1e-15)
      H.same({ 0.8, 0, 0 }, T.imag(z):totable(), 1e-15)
      assert.same({ -1, 0, 1 }, T.sgn(T.tensor({ -2.5, 0, 7 })):totable())
      assert.same({ true, false }, T.sgn(T.tensor({ true, false })):totable())
    end)

    it("logaddexp of equal infinities is that infinity, not NaN", function()
      local x = T.tensor({ 1 / 0, -1 / 0, 1 / 0 }, { dtype = T.float64 })
      local y = T.tensor({ 1 / 0, -1 / 0, -1 / 0 }, { dtype = T.float64 })
      assert.same({ 1 / 0, -1 / 0, 1 / 0 }, T.logaddexp(x, y):totable())
      assert.same({ 1 / 0, -1 / 0, 1 / 0 }, T.logaddexp2(x, y):totable())
      -- no overflow for large arguments
      H.same({ 1000 + math.log(2) }, T.logaddexp(T.tensor({ 1000.0 }, { dtype = T.float64 }), 1000):totable(), 1e-15)
    end)

    it("xlogy is 0 where x is 0 (even at y = 0 or inf) and NaN where y is NaN", function()
      local x = T.tensor({ 0, 0, 0, 1, 0 }, { dtype = T.float64 })
      local y = T.tensor({ 0, 1 / 0, 0 / 0, 0, -1 }, { dtype = T.float64 })
      H.same({ 0, 0, 0 / 0, -1 / 0, 0 }, T.xlogy(x, y):totable())
    end)
  end)

  describe("gradients", function()
    it("match PyTorch 1.13's, edge points included", function()
      for _, c in ipairs(FX.grads) do
        local what = c.fn .. (c.args and (" eps " .. tostring(c.args[1])) or "")
        local x = T.tensor(c.x, { dtype = T.float64, requires_grad = true })
        local g = T.tensor(c.g, { dtype = T.float64 })
        local y, ins
        if c.x2 then
          local x2 = T.tensor(c.x2, { dtype = T.float64, requires_grad = true })
          ins = { x, x2 }
          y = T[c.fn](x, x2)
        else
          ins = { x }
          y = T[c.fn](x, unpack_(c.args or {}))
        end
        y:backward(g)
        -- (the sign of a zero gradient is an accident of the formula's
        -- evaluation order, which PyTorch's vectorised and scalar loops do
        -- not even share: not compared)
        agree(c.gx, x.grad:totable(), 1e-12, what .. " d/dx", true)
        if c.x2 then agree(c.gx2, ins[2].grad:totable(), 1e-12, what .. " d/dother", true) end
      end
    end)

    it("match PyTorch 1.13's for complex input (the conjugate convention)", function()
      for _, c in ipairs(FX.cgrads) do
        local z = complex_of(c.x, "complex128")
        z.requires_grad = true
        T[c.fn](z):backward(complex_of(c.g, "complex128"))
        agree(H.flat(c.gx), flat_of(z.grad), 1e-12, c.fn .. " complex", true)
      end
    end)

    it("agree with finite differences in float64 (gradcheck)", function()
      local gc = T.autograd.gradcheck
      local function rnd(lo, hi, n)
        local t = T.rand(n or 5, { dtype = T.float64 }) * (hi - lo) + lo
        t.requires_grad = true
        return t
      end
      assert.is_true(gc(T.asinh, { rnd(-3, 3) }))
      assert.is_true(gc(T.acosh, { rnd(1.2, 4) }))
      assert.is_true(gc(T.atanh, { rnd(-0.8, 0.8) }))
      assert.is_true(gc(T.erfc, { rnd(-2, 2) }))
      assert.is_true(gc(T.deg2rad, { rnd(-90, 90) }))
      assert.is_true(gc(T.rad2deg, { rnd(-3, 3) }))
      assert.is_true(gc(T.sinc, { rnd(0.1, 2.9) }))
      assert.is_true(gc(T.frac, { rnd(0.1, 0.9) }))
      assert.is_true(gc(T.logit, { rnd(0.1, 0.9) }))
      assert.is_true(gc(function(x) return T.logit(x, 0.05) end, { rnd(0.1, 0.9) }))
      assert.is_true(gc(T.nan_to_num, { rnd(-2, 2) }))
      assert.is_true(gc(T.hypot, { rnd(0.5, 2), rnd(-2, -0.5) }))
      assert.is_true(gc(T.copysign, { rnd(0.5, 2), rnd(-2, 2) }))
      assert.is_true(gc(T.logaddexp, { rnd(-3, 3), rnd(-3, 3) }))
      assert.is_true(gc(T.logaddexp2, { rnd(-3, 3), rnd(-3, 3) }))
      assert.is_true(gc(T.xlogy, { rnd(-2, 2), rnd(0.5, 3) }))
      assert.is_true(gc(function(y) return T.xlogy(3, y) end, { rnd(0.5, 3) }))
      assert.is_true(gc(function(x) return T.xlogy(x, 2.5) end, { rnd(-2, 2) }))
      -- broadcast operands: gradients are summed back to each shape
      assert.is_true(gc(T.hypot, { rnd(0.5, 2, { 3, 1 }), rnd(0.5, 2, { 4 }) }))
      assert.is_true(gc(T.logaddexp, { rnd(-1, 1, { 2, 3 }), rnd(-1, 1, { 3 }) }))
    end)

    it("record PyTorch's node names and flow through the in-place forms", function()
      local x = T.tensor({ 0.3, 0.6 }, { dtype = T.float64, requires_grad = true })
      assert.equal("AsinhBackward0", T.asinh(x).grad_fn.name)
      assert.equal("LogitBackward0", T.logit(x).grad_fn.name)
      assert.equal("XlogyBackward0", T.xlogy(x, x).grad_fn.name)
      assert.equal("HypotBackward0", T.hypot(x, 2).grad_fn.name)
      local y = x * 1
      y:erfc_()
      y:sum():backward()
      H.same(T.exp(-(x * x)):mul(-2 / math.sqrt(math.pi)):detach():totable(), x.grad:totable(), 1e-14)
      x.grad = nil
      local w = x * 1
      w:xlogy_(3)
      w:sum():backward()
      H.same({ math.log(3), math.log(3) }, x.grad:totable(), 1e-14)
      -- eps given in an options table reaches the backward rule too
      local p = T.tensor({ 0.05, 0.5 }, { dtype = T.float64, requires_grad = true })
      T.logit(p, { eps = 0.1 }):sum():backward()
      H.same({ 0, 4 }, p.grad:totable(), 1e-14)
      -- in place on a leaf that requires grad: PyTorch's error
      H.raises("a leaf Variable that requires grad", function() return x:asinh_() end)
      -- bool results carry no gradient
      assert.is_false(T.signbit(x).requires_grad)
      assert.is_false(T.isposinf(x).requires_grad)
    end)
  end)

  describe("errors", function()
    it("name the function and say what is wrong, in PyTorch's words where it has them", function()
      local c = T.ones(2, { dtype = T.complex64 })
      H.fails("deg2rad", "deg2rad is not supported for complex tensors.", T.deg2rad, c)
      H.fails("rad2deg", "rad2deg is not supported for complex tensors.", T.rad2deg, c)
      H.fails("signbit", "signbit is not implemented for complex tensors.", T.signbit, c)
      H.fails("isposinf", "isposinf does not support complex inputs.", T.isposinf, c)
      H.fails("isneginf", "isneginf does not support complex inputs.", T.isneginf, c)
      H.fails("nan_to_num", "\"nan_to_num\" not implemented for 'ComplexFloat'", T.nan_to_num, c)
      H.fails("logit", "\"logit_cpu\" not implemented for 'ComplexFloat'", T.logit, c)
      H.fails("erfc", "\"erfc_cpu\" not implemented for 'ComplexFloat'", T.erfc, c)
      H.fails("frac", "\"frac_cpu\" not implemented for 'Long'", T.frac, T.tensor({ 1, 2 }))
      H.fails("logaddexp", "\"logaddexp_cpu\" not implemented for 'Long'", T.logaddexp, T.tensor({ 1 }), T.tensor({ 2 }))
      H.fails("copysign", "\"copysign_cpu\" not implemented for 'ComplexFloat'", T.copysign, c, c)
    end)

    it("check the optional arguments", function()
      local x = T.tensor({ 0.2, 0.5 })
      H.fails("logit", "bad argument #2 (options table expected, got string)", T.logit, x, "a")
      H.fails("logit", "unknown option 'foo' (options: eps, out)", T.logit, x, { foo = 1 })
      H.fails("logit", "option 'eps' must be a number (got string)", T.logit, x, { eps = "a" })
      H.fails("logit", "bad argument #3 (options table expected, got number)", T.logit, x, 0.1, 2)
      H.fails("logit_", "unknown option 'out' (options: eps)", function() return x:clone():logit_({ out = x }) end)
      H.fails("nan_to_num", "option 'posinf' must be a number (got boolean)", T.nan_to_num, x, { posinf = true })
      H.fails("nan_to_num", "bad argument #5 (options table expected, got number)", T.nan_to_num, x, 1, 2, 3, 4)
      H.fails("nan_to_num", "unknown option 'inf'", T.nan_to_num, x, { inf = 1 })
      H.fails("asinh", "unknown option 'alpha' (options: out)", T.asinh, x, { alpha = 2 })
      H.fails("hypot", "expected a tensor, number or boolean as argument 2 (got string)", T.hypot, x, "s")
      H.fails("xlogy", "expected a tensor, number or boolean as argument 1 (got table)", T.xlogy, {}, x)
      H.fails("sgn", "bad argument #1", T.sgn, "s")
      H.fails("signbit", "bad argument #1", T.signbit, 3)
    end)
  end)
  describe("clamp of floats (one compare-select pass, as PyTorch's)", function()
    it("keeps -0.0 at a 0.0 bound, propagates NaN, gives max everywhere when min > max", function()
      for _, dt in ipairs({ T.float32, T.float64 }) do
        local x = T.tensor({ 0 / 0, -1 / math.huge, 7, -1, 3, 0, 6 }, { dtype = dt })   -- -0.0 at run time (5.1 folds -0.0)
        local y = T.clamp(x, 0.0, 6.0)
        assert.is_true(y[1]:item() ~= y[1]:item())
        assert.equal(-math.huge, 1 / y[2]:item())            -- -0.0 stays (torch.clamp: tensor(-inf) for 1/y)
        assert.same({ 6, 0, 3, 0, 6 }, y:narrow(1, 3, 5):tolist())
        assert.same({ 2, 2, 2, 2, 2, 2 }, T.clamp(x, 5, 2):narrow(1, 2, 6):tolist())
        assert.same({ -0.5, 7, -0.5 }, T.clamp(T.tensor({ -3, 7, -0.5 }, { dtype = dt }), -0.5):tolist())
        local nanb = T.clamp(x, 0 / 0, 2)
        assert.is_true(nanb:isnan():all():item())
      end
    end)
    it("walks strided and broadcast inputs", function()
      local x = T.arange(12.0):reshape(3, 4):t()
      assert.is_true(T.equal(T.clamp(x, 2.5, 8.5), T.clamp(x:contiguous(), 2.5, 8.5)))
      local e = T.tensor({ -1.0, 0.5, 2.0 }):expand(4, 3)
      assert.same({ 0, 0.5, 1 }, T.clamp(e, 0, 1)[4]:tolist())
    end)
  end)
end)
