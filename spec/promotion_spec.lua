-- Promotion: T.promote_types, T.result_type and the three modes (torch, jax, strict).
local T = require "ltensor"

local function t(dtype, shape) return T.ones(shape or { 2 }, { dtype = T[dtype] }) end
local function z(dtype) return T.tensor(1, { dtype = T[dtype] }) end

describe("torch promotion (default)", function()
  before_each(function() T.set_promotion("torch") end)

  it("is the default mode", function()
    assert.equal("torch", T.get_promotion())
  end)

  -- the seed's eleven examples, word for word
  it("holds the seed's eleven examples", function()
    local int_t, long_t = t("int32", { 1 }), t("int64", { 1 })
    local cases = {
      { int_t + 5, "int32" }, { int_t + 5.5, "float32" }, { int_t / 5, "float32" },
      { int_t + z("int64"), "int32" }, { long_t + int_t, "int64" },
      { t("bool", { 1 }) + long_t, "int64" }, { t("bool", { 1 }) + t("uint8", { 1 }), "uint8" },
      { t("float32", { 1 }) + t("float64", { 1 }), "float64" },
      { t("complex64", { 1 }) + t("complex128", { 1 }), "complex128" },
      { t("bool", { 1 }) + int_t, "int32" }, { T.add(long_t, t("float32", { 1 })), "float32" },
    }
    for i, c in ipairs(cases) do assert.equal(T[c[2]], c[1].dtype, "example " .. i) end
  end)

  it("promote_types follows PyTorch's table and is symmetric", function()
    local rows = {
      { "uint8", "int8", "int16" }, { "bool", "uint8", "uint8" }, { "int32", "float16", "float16" },
      { "bfloat16", "float16", "float32" }, { "float16", "complex64", "complex64" },
      { "bfloat16", "complex32", "complex64" }, { "float64", "complex64", "complex128" },
      { "int64", "bfloat16", "bfloat16" }, { "float32", "float32", "float32" },
      -- unsigned 16/32/64 as in the JAX table; u64 + signed is the default float
      { "uint16", "int8", "int32" }, { "uint32", "int16", "int64" }, { "uint64", "int64", "float32" },
      { "uint16", "uint32", "uint32" }, { "uint64", "float16", "float16" },
    }
    for _, r in ipairs(rows) do
      assert.equal(T[r[3]], T.promote_types(T[r[1]], T[r[2]]), r[1] .. "+" .. r[2])
      assert.equal(T[r[3]], T.promote_types(T[r[2]], T[r[1]]), r[2] .. "+" .. r[1])
    end
  end)

  it("result_type ranks dimensioned tensors, zero-dim tensors and Lua scalars", function()
    assert.equal(T.int8, T.result_type(t("int8"), z("int64")))        -- same category: dim wins
    assert.equal(T.float16, T.result_type(t("int8"), z("float16")))   -- higher category zero-dim
    assert.equal(T.float32, T.result_type(t("int8"), 1.5))            -- Lua float: default dtype
    assert.equal(T.uint8, T.result_type(t("uint8"), 1000))            -- Lua int: no widening
    assert.equal(T.int64, T.result_type(t("bool"), 1))                -- bool + Lua int
    assert.equal(T.bool, T.result_type(t("bool"), true))
    assert.equal(T.float16, T.result_type(t("float16"), 2.5))
    assert.equal(T.complex32, T.result_type(t("float16"), z("complex64")))
    assert.equal(T.complex64, T.result_type(t("bfloat16"), z("complex128")))
    assert.equal(T.int64, T.result_type(1, 2))
    assert.equal(T.float32, T.result_type(1, 2.5))
    assert.equal(T.int16, T.result_type(z("int8"), z("int16")))
    assert.equal(T.float64, T.result_type(t("int32"), t("uint8"), z("float64"), 3))
  end)

  it("a Lua float follows the default dtype", function()
    T.set_default_dtype(T.float64)
    local ok, r = pcall(T.result_type, t("int32"), 0.5)
    T.set_default_dtype(T.float32)
    assert.is_true(ok)
    assert.equal(T.float64, r)
    assert.equal(T.float32, T.result_type(t("int32"), 0.5))
  end)

  it("true division and float functions of integers give the default dtype", function()
    assert.equal(T.float32, (t("int64") / t("int64")).dtype)
    assert.equal(T.float32, t("bool"):sqrt().dtype)
    assert.equal(T.float32, t("uint8"):exp().dtype)
    assert.equal(T.float64, (t("int32") / t("float64")).dtype)
    assert.equal(T.bool, (t("int32"):lt(t("float64"))).dtype)
  end)
end)

describe("jax promotion", function()
  after_each(function() T.set_promotion("torch") end)

  it("uses the lattice for promote_types", function()
    T.set_promotion("jax")
    local rows = {
      { "int8", "uint8", "int16" }, { "int64", "uint64", "float32" }, { "bfloat16", "float16", "float32" },
      { "uint32", "int8", "int64" }, { "bool", "uint16", "uint16" }, { "float16", "complex64", "complex64" },
      { "float64", "complex64", "complex128" }, { "int32", "bfloat16", "bfloat16" },
    }
    for _, r in ipairs(rows) do
      assert.equal(T[r[3]], T.promote_types(T[r[1]], T[r[2]]), r[1] .. "+" .. r[2])
      assert.equal(T[r[3]], T.promote_types(T[r[2]], T[r[1]]), r[2] .. "+" .. r[1])
    end
  end)

  it("treats zero-dim tensors as ordinary tensors and Lua numbers as weak", function()
    T.set_promotion("jax")
    assert.equal(T.int64, T.result_type(t("int8"), z("int64")))
    assert.equal(T.int16, (t("int16") + 1).dtype)
    assert.equal(T.float32, (t("uint8") + 2.5).dtype)
    assert.equal(T.bfloat16, (t("bfloat16") + 2.5).dtype)
    assert.equal(T.int64, T.result_type(1, 2))
    assert.equal(T.float32, T.result_type(1, 2.5))
  end)

  it("with_promotion restores the mode, also after an error, and rethrows it", function()
    local r = T.with_promotion("jax", function(a, b) return T.get_promotion(), a + b end, 1, 2)
    assert.equal("jax", r)
    assert.equal("torch", T.get_promotion())
    local ok, err = pcall(T.with_promotion, "jax", function() error("boom", 0) end)
    assert.is_false(ok)
    assert.equal("boom", err)
    assert.equal("torch", T.get_promotion())
    local _, sum = T.with_promotion("strict", function(a, b) return 0, a + b end, 1, 2)
    assert.equal(3, sum)
  end)
end)

describe("strict promotion", function()
  after_each(function() T.set_promotion("torch") end)

  it("refuses differing tensor dtypes, naming both and how to cast", function()
    T.set_promotion("strict")
    local ok, err = pcall(function() return t("float32") + t("int32") end)
    assert.is_false(ok)
    assert.matches("ltensor.add: strict promotion: input dtypes float32 and int32 differ", err, 1, true)
    assert.matches(":to(", err, 1, true)
    ok = pcall(function() return t("float32") + z("float64") end)
    assert.is_false(ok)
  end)

  it("accepts Lua scalars that keep the tensor's dtype", function()
    T.set_promotion("strict")
    assert.equal(T.int32, (t("int32") + 1).dtype)
    assert.equal(T.float16, (t("float16") * 2.5).dtype)
    assert.equal(T.float32, (t("int32") / 2).dtype)   -- the op's own rule still applies
    local ok, err = pcall(function() return t("int32") + 1.5 end)
    assert.is_false(ok)
    assert.matches("a Lua float would promote int32 to float32", err, 1, true)
    ok, err = pcall(function() return t("bool") + 1 end)
    assert.is_false(ok)
    assert.matches("a Lua integer would promote bool to int64", err, 1, true)
  end)

  it("rejects an unknown mode", function()
    local ok, err = pcall(T.set_promotion, "numpy")
    assert.is_false(ok)
    assert.matches("unknown promotion mode 'numpy'", err, 1, true)
    assert.equal("torch", T.get_promotion())
  end)
end)

describe("safe casting into in-place and out= targets", function()
  it("refuses a result that cannot be cast, with PyTorch's type names", function()
    local cases = {
      { "int64", 1.5, "result type Float can't be cast to the desired output type Long" },
      { "int32", t("float64"), "result type Double can't be cast to the desired output type Int" },
      { "bool", 1, "result type Long can't be cast to the desired output type Bool" },
      { "float32", t("complex64"), "result type ComplexFloat can't be cast to the desired output type Float" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(function() local x = t(c[1]); x:add_(c[2]) end)
      assert.is_false(ok)
      assert.matches(c[3], err, 1, true)
    end
    local ok, err = pcall(T.mul, t("int32"), 2.5, { out = t("int32") })
    assert.is_false(ok)
    assert.matches("can't be cast", err, 1, true)
  end)

  it("allows same-category narrowing (computed in the wider type)", function()
    local x = T.tensor({ 100, 120 }, { dtype = T.int8 })
    x:add_(T.tensor({ 100, 1 }, { dtype = T.int64 }))
    assert.same({ -56, 121 }, x:totable())
    local f = T.tensor({ 1.5 }, { dtype = T.float16 })
    f:mul_(T.tensor({ 2.0 }, { dtype = T.float64 }))
    assert.same({ 3.0 }, f:totable())
  end)
end)
