-- examples/demo.lua -- a first look at ltensor (`make demo` runs it).
-- Each part only uses what the library already provides; later parts are
-- added as features land.
local T = require "ltensor"

local function section(title) print(("\n== %s"):format(title)) end

section("creation")
local a = T.tensor({{1.0, 2.0}, {3.0, 4.0}})   -- Lua floats: the default dtype, float32
local i = T.tensor({{1, 2}, {3, 4}})           -- Lua integers: int64, as torch.tensor
print(a)
print("a.dtype =", a.dtype, " i.dtype =", i.dtype, " a:size(1) =", a:size(1))
print(T.zeros(2, 3))
print(T.ones(3, {dtype = T.int32}))
print(T.arange(5))
print(T.full({2, 2}, 7.5, {dtype = T.float64}))

section("elements (1-based)")
print("a:get(2, 1) =", a:get(2, 1), " a[1] =", a[1])
a:set(1, 1, 10)
print(a)

section("arithmetic with PyTorch promotion")
print(i + 1)             -- int64 + weak int -> int64
print(i * 2.5)           -- int64 * weak float -> float32 (the default dtype)
print(a * a - 1)
print(T.ones(3, {dtype = T.int32}) / 2)   -- true division gives a float

section("views and reductions")
print(i:t())
print("sum", i:sum(), "max", i:max())

section("matrix products (OpenBLAS)")
print(a:matmul(a))
print(T.tensor({1.0, 2.0, 3.0}):dot(T.tensor({4.0, 5.0, 6.0})))
