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

section("indexing: ranges, masks, index tensors (1-based)")
local x = T.arange(1, 13):view(3, 4)
print(x[{{1, 2}, {2, 3}}])            -- rows 1..2, columns 2..3 (inclusive)
print(x[x:gt(9)])                     -- boolean mask
print(x[T.tensor({3, 1})])            -- gather rows 3 and 1
x[{{}, 1}] = 0                        -- write through a view
print(x)

section("printing like PyTorch")
print(T.tensor({1e-5, 1.0, 1e5}))     -- scientific notation when the range is wide
print(T.arange(2000))                 -- summarised with ...

section("autograd")
local w = T.tensor({{0.5, -1.0}, {2.0, 0.25}}, {requires_grad = true})
local loss = (T.tensor({{1.0, 2.0}}):matmul(w)):tanh():sum()
loss:backward()
print(loss)
print(w.grad)

section("promotion modes")
print("torch:", (T.ones(2, {dtype = T.int16}) + T.tensor(1, {dtype = T.int64})).dtype)
print("jax:  ", T.with_promotion("jax", function()
  return (T.ones(2, {dtype = T.int8}) + T.ones(2, {dtype = T.uint8})).dtype
end))
print("strict:", select(2, pcall(function()
  return T.with_promotion("strict", function() return T.ones(2) + T.ones(2, {dtype = T.int32}) end)
end)))
