-- matmul, mm, bmm, mv, dot, outer: shapes, dtypes, strided operands, errors.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

-- deterministic small values without relying on the RNG
local function mat(rows, cols, seed, dtype)
  local t, s = {}, seed or 1
  for i = 1, rows do
    t[i] = {}
    for j = 1, cols do
      s = (s * 1103515245 + 12345) % 2147483648
      t[i][j] = (s % 19) - 9 + ((dtype == "int") and 0 or (s % 7) / 8)
    end
  end
  return t
end

local function naive(a, b)
  local m, k, n = #a, #b, #b[1]
  local c = {}
  for i = 1, m do
    c[i] = {}
    for j = 1, n do
      local s = 0
      for p = 1, k do s = s + a[i][p] * b[p][j] end
      c[i][j] = s
    end
  end
  return c
end

local function assert_close(want, got, tol, path)
  path = path or ""
  tol = tol or 1e-9
  if type(want) == "table" then
    assert.are.equal(#want, #got, "length at " .. path)
    for i = 1, #want do assert_close(want[i], got[i], tol, path .. "[" .. i .. "]") end
  else
    assert.is_true(math.abs(want - got) <= tol * (1 + math.abs(want)),
      ("at %s: want %s, got %s"):format(path, tostring(want), tostring(got)))
  end
end

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

describe("mm", function()
  it("matches a naive loop for float64", function()
    local a, b = mat(5, 7, 1), mat(7, 3, 2)
    local c = T.mm(T.tensor(a, {dtype = T.float64}), T.tensor(b, {dtype = T.float64}))
    assert.are.equal(T.float64, c.dtype)
    assert.are.same({5, 3}, c.shape)
    assert_close(naive(a, b), c:totable())
  end)

  it("computes float32, complex64 and complex128 through BLAS", function()
    local a, b = mat(4, 6, 3), mat(6, 5, 4)
    local want = naive(a, b)
    for _, dt in ipairs{T.float32, T.complex64, T.complex128} do
      local c = T.mm(T.tensor(a, {dtype = dt}), T.tensor(b, {dtype = dt}))
      assert.are.equal(dt, c.dtype)
      local got = c:totable()
      if dt == T.float32 then
        assert_close(want, got, 1e-5)
      else
        for i = 1, 4 do
          for j = 1, 5 do
            assert_close(want[i][j], got[i][j][1], 1e-5)
            assert.are.equal(0, got[i][j][2])
          end
        end
      end
    end
  end)

  it("is exact for int64 and wraps on overflow in narrow integer types", function()
    local a, b = mat(3, 4, 5, "int"), mat(4, 2, 6, "int")
    local c = T.mm(T.tensor(a), T.tensor(b))
    assert.are.equal(T.int64, c.dtype)
    assert.are.same(naive(a, b), c:totable())
    local big = T.tensor({{65536}}, {dtype = T.int32})
    assert.are.same({{0}}, T.mm(big, big):totable())          -- 2^32 wraps to 0
    local u = T.tensor({{16, 1}}, {dtype = T.uint8})
    assert.are.same({{1}}, T.mm(u, T.tensor({{16}, {1}}, {dtype = T.uint8})):totable()) -- 256 + 1
  end)

  it("refuses bool operands as PyTorch, unless there is nothing to compute", function()
    local a = T.tensor({{true, false}, {false, false}})
    local b = T.tensor({{true}, {true}})
    assert.matches("ltensor.mm: \"addmm_impl_cpu_\" not implemented for 'Bool'", errmsg(T.mm, a, b))
    assert.matches("not implemented for 'Bool'", errmsg(T.matmul, a, b))
    assert.matches("not implemented for 'Bool'", errmsg(T.matmul, a:unsqueeze(1), b))      -- folded 3-D @ 2-D
    assert.matches("not implemented for 'Bool'", errmsg(T.matmul, a:unsqueeze(1), a:unsqueeze(1)))   -- batched
    assert.matches("not implemented for 'Bool'", errmsg(T.matmul, T.tensor({true, false}), a))   -- 1-D @ 2-D
    assert.matches("not implemented for 'Bool'", errmsg(T.mv, a, T.tensor({true, true})))
    assert.matches("not implemented for 'Bool'", errmsg(T.bmm, a:unsqueeze(1), b:unsqueeze(1)))
    assert.matches("ltensor.dot: \"dot\" not implemented for 'Bool'", errmsg(T.dot, T.tensor({true}), T.tensor({true})))
    local e = T.mm(T.zeros({2, 0}, {dtype = T.bool}), T.zeros({0, 3}, {dtype = T.bool}))
    assert.are.equal(T.bool, e.dtype)
    assert.are.same({{false, false, false}, {false, false, false}}, e:totable())
    assert.are.same({0, 2}, T.matmul(T.zeros({0, 3}, {dtype = T.bool}), T.zeros({3, 2}, {dtype = T.bool})).shape)
    assert.are.same({{true, false}}, T.outer(T.tensor({true}), T.tensor({true, false})):totable())   -- a mul
  end)

  it("accumulates half types in float32 and returns the half dtype", function()
    local a = T.tensor({{1, 2, 3}}, {dtype = T.float16})
    local b = T.tensor({{4}, {5}, {6}}, {dtype = T.float16})
    local c = T.mm(a, b)
    assert.are.equal(T.float16, c.dtype)
    assert.are.same({{32.0}}, c:totable())
    assert.are.same({{32.0}}, T.mm(a:to(T.bfloat16), b:to(T.bfloat16)):totable())
  end)

  it("refuses mixed operand dtypes as PyTorch 1.13 (outer promotes)", function()
    local a = T.tensor({{1.5, 2}}, {dtype = T.float32})
    local b = T.tensor({{2}, {1}}, {dtype = T.float64})
    assert.matches("ltensor.mm: expected scalar type Float but found Double", errmsg(T.mm, a, b))
    assert.matches("ltensor.matmul: expected scalar type Float but found Double", errmsg(T.matmul, a, b))
    assert.matches("ltensor.matmul: expected scalar type Long but found Float",
      errmsg(T.matmul, T.zeros({2, 2, 3}, {dtype = T.int64}), T.zeros(3, 2)))
    assert.matches("ltensor.mv: expected scalar type Int but found Long",
      errmsg(T.mv, T.zeros({2, 3}, {dtype = T.int32}), T.zeros({3}, {dtype = T.int64})))
    assert.matches("ltensor.bmm: expected scalar type Float but found ComplexFloat",
      errmsg(T.bmm, T.zeros(1, 2, 3), T.zeros({1, 3, 2}, {dtype = T.complex64})))
    assert.matches("ltensor.dot: expected both vectors to have same dtype, but found Long and Float",
      errmsg(T.dot, T.zeros({3}, {dtype = T.int64}), T.zeros(4)))   -- before the size check
    assert.matches("expected both vectors to have same dtype, but found Float and Double",
      errmsg(T.matmul, T.zeros(3), T.zeros({3}, {dtype = T.float64})))
    local o = T.outer(T.tensor({1, 2}), T.tensor({1.5}))
    assert.are.equal(T.float32, o.dtype)
    assert.are.same({{1.5}, {3.0}}, o:totable())
  end)

  it("gives zeros for an empty inner dimension and empty results for empty outer ones", function()
    local c = T.mm(T.zeros(2, 0), T.zeros(0, 3))
    assert.are.same({2, 3}, c.shape)
    assert.are.same({{0, 0, 0}, {0, 0, 0}}, c:totable())
    assert.are.same({{0, 0}}, T.mm(T.zeros({1, 0}, {dtype = T.int64}), T.zeros({0, 2}, {dtype = T.int64})):totable())
    assert.are.same({0, 3}, T.mm(T.zeros(0, 4), T.zeros(4, 3)).shape)
    assert.are.same({2, 0}, T.mm(T.zeros(2, 4), T.zeros(4, 0)).shape)
  end)

  it("works as a method", function()
    local a, b = T.tensor({{1, 2}}), T.tensor({{3}, {4}})
    assert.are.same({{11}}, a:mm(b):totable())
    assert.are.same({{11}}, a:matmul(b):totable())
  end)

  it("raises PyTorch's shape errors", function()
    assert.matches("ltensor.mm: mat1 and mat2 shapes cannot be multiplied %(2x3 and 4x5%)",
      errmsg(T.mm, T.zeros(2, 3), T.zeros(4, 5)))
    assert.matches("ltensor.mm: self must be a matrix", errmsg(T.mm, T.zeros(3), T.zeros(3, 2)))
    assert.matches("ltensor.mm: mat2 must be a matrix", errmsg(T.mm, T.zeros(2, 3), T.zeros(3)))
  end)
end)

describe("strided operands", function()
  -- a reference computed from contiguous copies of the same values
  local function check(a, b, tol)
    local want = naive(a:contiguous():totable(), b:contiguous():totable())
    assert_close(want, T.mm(a, b):totable(), tol)
  end

  it("reads transposed float64 and float32 operands in place", function()
    for _, dt in ipairs{T.float64, T.float32} do
      local a = T.tensor(mat(6, 4, 7), {dtype = dt}):t()        -- 4x6, column-major
      local b = T.tensor(mat(3, 6, 8), {dtype = dt}):t()        -- 6x3, column-major
      assert.is_false(a:is_contiguous())
      check(a, b, 1e-5)
      check(a, T.tensor(mat(6, 3, 9), {dtype = dt}), 1e-5)
    end
  end)

  it("handles a leading dimension larger than the row (narrowed columns)", function()
    local base = T.tensor(mat(5, 9, 10), {dtype = T.float64})
    local a = base:narrow(2, 3, 4)                                 -- 5x4, row stride 9
    local b = T.tensor(mat(9, 6, 11), {dtype = T.float64}):narrow(1, 2, 4)
    check(a, b)
    check(a:t():contiguous():t(), b)                               -- column-major padded
  end)

  it("copies operands BLAS cannot read (expanded or doubly strided)", function()
    local row = T.tensor({{1.5, -2, 3}}, {dtype = T.float64})
    local a = row:expand(4, 3)                                     -- row stride 0
    local b = T.tensor(mat(6, 8, 12), {dtype = T.float64})
    local bs = b:narrow(1, 1, 3):narrow(2, 1, 2)
    check(a, bs)
    local step = T.tensor(mat(6, 6, 13), {dtype = T.float64}):t():narrow(1, 1, 3)
    check(step, T.tensor(mat(6, 2, 14), {dtype = T.float64}))
  end)

  it("handles strided integer operands in the C loop", function()
    local a = T.tensor(mat(4, 5, 15, "int")):t()
    local b = T.tensor(mat(4, 3, 16, "int"))
    assert.are.same(naive(a:contiguous():totable(), b:totable()), T.mm(a, b):totable())
  end)

  it("handles transposed batches in bmm and strided vectors in mv and dot", function()
    local x = T.tensor({mat(3, 4, 17), mat(3, 4, 18)}, {dtype = T.float64})   -- 2x3x4
    local a = x:transpose(2, 3)                                               -- 2x4x3
    local b = T.tensor({mat(3, 2, 19), mat(3, 2, 20)}, {dtype = T.float64})
    local c = T.bmm(a, b):totable()
    for k = 1, 2 do assert_close(naive(a[k]:contiguous():totable(), b[k]:totable()), c[k]) end
    local m = T.tensor(mat(4, 6, 21), {dtype = T.float64})
    local v = m:select(1, 2):narrow(1, 1, 4)                                  -- contiguous
    local col = m:select(2, 3)                                                -- stride 6
    local mv = T.mv(m:t():narrow(2, 1, 4), col)                              -- 6x4 @ 4
    local want = naive(m:t():narrow(2, 1, 4):contiguous():totable(), (function()
      local t = {} for i, x in ipairs(col:totable()) do t[i] = {x} end return t end)())
    for i = 1, 6 do assert_close(want[i][1], mv:totable()[i]) end
    local d = T.dot(v, col):item()
    local s = 0
    for i, x in ipairs(v:totable()) do s = s + x * col:totable()[i] end
    assert_close(s, d)
  end)
end)

describe("bmm", function()
  it("multiplies each batch", function()
    local a = T.tensor({{{1, 2}}, {{3, 4}}})          -- 2x1x2
    local b = T.tensor({{{1}, {1}}, {{2}, {-1}}})     -- 2x2x1
    local c = T.bmm(a, b)
    assert.are.same({2, 1, 1}, c.shape)
    assert.are.same({{{3}}, {{2}}}, c:totable())
  end)

  it("handles empty batches and inner dims", function()
    assert.are.same({0, 2, 3}, T.bmm(T.zeros(0, 2, 4), T.zeros(0, 4, 3)).shape)
    assert.are.same({{{0}}}, T.bmm(T.zeros(1, 1, 0), T.zeros(1, 0, 1)):totable())
  end)

  it("keeps products on the calling thread under set_num_threads(1), with the same results", function()
    -- past OpenBLAS's threading size (M*N*K > 2^23): with one thread the
    -- built-in gemm computes them (src/core/lt_blas.c, lt_mm_1t); results agree
    local nt = T.get_num_threads()
    local ok, err = pcall(function()
      for _, dt in ipairs({ T.float32, T.float64, T.complex64 }) do
        T.manual_seed(9)
        local a, b = T.randn({ 300, 256 }, { dtype = dt }), T.randn({ 256, 200 }, { dtype = dt })
        local w, bias = T.randn({ 200, 256 }, { dtype = dt }), T.randn({ 200 }, { dtype = dt })
        T.set_num_threads(2)
        local c2, l2 = a:matmul(b), dt ~= T.complex64 and T.nn.functional.linear(a, w, bias) or nil
        T.set_num_threads(1)
        local c1, l1 = a:matmul(b), dt ~= T.complex64 and T.nn.functional.linear(a, w, bias) or nil
        local tol = dt == T.float64 and { rtol = 1e-10, atol = 1e-10 } or { rtol = 1e-4, atol = 1e-4 }
        assert.is_true(T.allclose(c1, c2, tol))
        if l1 then assert.is_true(T.allclose(l1, l2, tol)) end
      end
    end)
    T.set_num_threads(nt)
    assert(ok, err)
  end)

  it("gives each entry's own product when the batch is spread over threads", function()
    -- 33 entries of 48x40x56: enough arithmetic for the pool (src/binding/l_linalg.c,
    -- batched), an odd count (unequal parts), transposed and broadcast operands;
    -- every entry is the same single-threaded product as mm computes
    local nt = T.get_num_threads()
    local ok, err = pcall(function()
      for _, dt in ipairs({ T.float32, T.float64 }) do
        T.manual_seed(5)
        local a = T.randn({ 33, 40, 48 }, { dtype = dt }):transpose(2, 3)   -- 33x48x40, column-major entries
        local b = T.randn({ 33, 40, 56 }, { dtype = dt })
        for _, threads in ipairs({ 1, 2 }) do
          T.set_num_threads(threads)
          local c = T.bmm(a, b)
          for i = 1, 33 do assert.is_true(T.equal(c[i], T.mm(a[i], b[i])), "entry " .. i) end
          local w = T.randn({ 40, 56 }, { dtype = dt })
          local d = T.matmul(a:reshape({ 3, 11, 48, 40 }), w:expand({ 3, 11, 40, 56 }))   -- stride-0 batch dims
          for i = 1, 3 do
            for k = 1, 11 do assert.is_true(T.equal(d[i][k], T.mm(a[(i - 1) * 11 + k], w))) end
          end
        end
      end
    end)
    T.set_num_threads(nt)
    assert(ok, err)
  end)

  it("raises PyTorch's errors", function()
    assert.matches("ltensor.bmm: batch1 must be a 3D tensor", errmsg(T.bmm, T.zeros(2, 3), T.zeros(1, 3, 2)))
    assert.matches("ltensor.bmm: batch2 must be a 3D tensor", errmsg(T.bmm, T.zeros(1, 2, 3), T.zeros(3, 2)))
    assert.matches("expected size for first two dimensions of batch2 tensor to be: %[2, 3%] but got: %[3, 3%]",
      errmsg(T.bmm, T.zeros(2, 2, 3), T.zeros(3, 3, 2)))   -- one check for batch and inner size, as PyTorch
    assert.matches("expected size for first two dimensions of batch2 tensor to be: %[4, 1%] but got: %[4, 2%]",
      errmsg(T.bmm, T.zeros(4, 3, 1), T.zeros(4, 2, 4)))
  end)
end)

describe("mv, dot and outer", function()
  it("mv multiplies a matrix by a vector", function()
    local c = T.mv(T.tensor({{1, 2}, {3, 4}, {5, 6}}), T.tensor({1, -1}))
    assert.are.same({3}, c.shape)
    assert.are.same({-1, -1, -1}, c:totable())
    assert.are.same({0, 0}, T.mv(T.zeros(2, 0), T.zeros(0)):totable())
  end)

  it("mv raises PyTorch's errors", function()
    assert.matches("ltensor.mv: size mismatch, got input %(3%), mat %(3x1%), vec %(2%)",
      errmsg(T.mv, T.zeros(3, 1), T.zeros(2)))
    assert.matches("ltensor.mv: vector %+ matrix @ vector expected, got 1, 3, 1",
      errmsg(T.mv, T.zeros(2, 2, 2), T.zeros(2)))
  end)

  it("dot returns a 0-dim tensor", function()
    local d = T.dot(T.tensor({1, 2, 3}), T.tensor({4, 5, 6}))
    assert.are.same({}, d.shape)
    assert.are.equal(T.int64, d.dtype)
    assert.are.equal(32, d:item())
    assert.are.equal(0.0, T.dot(T.zeros(0), T.zeros(0)):item())
    assert.are.equal(32.0, T.dot(T.tensor({1.0, 2, 3}), T.tensor({4.0, 5, 6})):item())
  end)

  it("dot raises PyTorch's errors", function()
    assert.matches("ltensor.dot: 1D tensors expected, but got 2D and 2D tensors",
      errmsg(T.dot, T.zeros(2, 2), T.zeros(2, 2)))
    assert.matches("ltensor.dot: inconsistent tensor size, expected tensor %[3%] and src %[4%] to have the same "
      .. "number of elements, but got 3 and 4 elements respectively", errmsg(T.dot, T.zeros(3), T.zeros(4)))
  end)

  it("outer multiplies every pair", function()
    local o = T.outer(T.tensor({1, 2}), T.tensor({3, 4, 5}))
    assert.are.same({{3, 4, 5}, {6, 8, 10}}, o:totable())
    assert.are.same({0, 3}, T.outer(T.zeros(0), T.zeros(3)).shape)
    assert.matches("ltensor.outer: expected 1%-D argument self, but got 2%-D",
      errmsg(T.outer, T.zeros(2, 2), T.zeros(2)))
    assert.matches("ltensor.outer: expected 1%-D argument vec2, but got 0%-D",
      errmsg(T.outer, T.zeros(2), T.zeros({})))
  end)
end)

describe("matmul", function()
  it("follows the 1-D and 2-D rules", function()
    local v, m = T.tensor({1, 2}), T.tensor({{1, 2, 3}, {4, 5, 6}})
    local d = T.matmul(v, v)
    assert.are.same({}, d.shape)
    assert.are.equal(5, d:item())
    assert.are.same({9, 12, 15}, T.matmul(v, m):totable())                   -- (2) @ (2x3) -> (3)
    assert.are.same({14, 32}, T.matmul(m, T.tensor({1, 2, 3})):totable())    -- (2x3) @ (3) -> (2)
    assert.are.same({{9, 12, 15}}, T.matmul(T.tensor({{1, 2}}), m):totable())
  end)

  it("broadcasts batch dims and matches a naive loop per batch", function()
    local a = T.tensor({{mat(3, 4, 30)}, {mat(3, 4, 31)}}, {dtype = T.float64})       -- 2x1x3x4
    local braw = {mat(4, 2, 32), mat(4, 2, 33), mat(4, 2, 34)}
    local b = T.tensor(braw, {dtype = T.float64})                                      -- 3x4x2
    local c = T.matmul(a, b)
    assert.are.same({2, 3, 3, 2}, c.shape)
    local got, at = c:totable(), a:totable()
    for i = 1, 2 do
      for j = 1, 3 do assert_close(naive(at[i][1], braw[j]), got[i][j]) end
    end
  end)

  it("folds a batched left operand against a matrix or a vector", function()
    local a = T.tensor({mat(2, 3, 40), mat(2, 3, 41)}, {dtype = T.float64})   -- 2x2x3
    local b = mat(3, 4, 42)
    local c = T.matmul(a, T.tensor(b, {dtype = T.float64}))
    assert.are.same({2, 2, 4}, c.shape)
    for k = 1, 2 do assert_close(naive(a:totable()[k], b), c:totable()[k]) end
    local cv = T.matmul(a, T.tensor({1, 0, -1}, {dtype = T.float64}))
    assert.are.same({2, 2}, cv.shape)
    local at = a:totable()
    for k = 1, 2 do
      for i = 1, 2 do assert_close(at[k][i][1] - at[k][i][3], cv:totable()[k][i]) end
    end
    -- a transposed batched operand gives the same result as its contiguous copy
    local at2 = a:transpose(2, 3)                                              -- 2x3x2
    local w = T.tensor(mat(2, 5, 43), {dtype = T.float64})
    assert_close(T.matmul(at2:contiguous(), w):totable(), T.matmul(at2, w):totable())
  end)

  it("handles vectors against batches", function()
    local b = T.tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})   -- 2x2x2
    local c = T.matmul(T.tensor({1, 1}), b)                     -- (2) @ (2x2x2) -> (2x2)
    assert.are.same({{4, 6}, {12, 14}}, c:totable())
    local d = T.matmul(b, T.tensor({1, -1}))                    -- (2x2x2) @ (2) -> (2x2)
    assert.are.same({{-1, -1}, {-1, -1}}, d:totable())
  end)

  it("handles empty operands", function()
    assert.are.same({2, 0, 3}, T.matmul(T.zeros(2, 0, 4), T.zeros(4, 3)).shape)
    assert.are.same({{0, 0}}, T.matmul(T.zeros(1, 0), T.zeros(0, 2)):totable())
    assert.are.same({3, 2, 2}, T.matmul(T.zeros(3, 2, 0), T.zeros(3, 0, 2)).shape)
  end)

  it("raises PyTorch's errors", function()
    assert.matches("ltensor.matmul: both arguments to matmul need to be at least 1D, but they are 0D and 2D",
      errmsg(T.matmul, T.zeros({}), T.zeros(2, 2)))
    assert.matches("ltensor.matmul: mat1 and mat2 shapes cannot be multiplied %(1x2 and 3x2%)",
      errmsg(T.matmul, T.zeros(2), T.zeros(3, 2)))
    assert.matches("ltensor.matmul: mat1 and mat2 shapes cannot be multiplied %(6x4 and 5x1%)",
      errmsg(T.matmul, T.zeros(2, 3, 4), T.zeros(5)))
    assert.matches("ltensor.matmul: size mismatch, got input %(2%), mat %(2x3%), vec %(4%)",
      errmsg(T.matmul, T.zeros(2, 3), T.zeros(4)))
    assert.matches("inconsistent tensor size", errmsg(T.matmul, T.zeros(2), T.zeros(3)))
    assert.matches("ltensor.matmul: the size of tensor a %(2%) must match the size of tensor b %(3%) at non%-singleton dimension 1",
      errmsg(T.matmul, T.zeros(2, 2, 2), T.zeros(3, 2, 2)))
    assert.matches("expected size for first two dimensions of batch2 tensor to be: %[2, 4%] but got: %[2, 5%]",
      errmsg(T.matmul, T.zeros(2, 3, 4), T.zeros(2, 5, 6)))
  end)

  it("returns a new tensor that does not alias its operands", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local a = T.tensor({{1.0, 2.0}, {3.0, 4.0}})
    local e = T.eye(2)
    local c = T.matmul(a, e)
    c:set(1, 1, 100)
    assert.are.equal(1.0, a:get(1, 1))
  end)
end)
