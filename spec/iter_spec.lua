-- The iteration layer: inputs rounded to a 16-bit common dtype before the
-- computation (as PyTorch), copies and fills through the iterator, and the
-- one thread pool (same results on any thread count).
local T = require "ltensor"
local H = dofile("spec/helpers.lua")

describe("the iterator's casting stage", function()
  -- PyTorch 1.13 casts every tensor input to the common dtype first; with
  -- float16/bfloat16 (computed in float32) that rounding shows
  it("rounds an int16 input to float16 before adding (2049 -> 2048)", function()
    local r = T.tensor({ 2049 }, { dtype = T.int16 }) + T.tensor({ 1.0 }, { dtype = T.float16 })
    assert.equal(T.float16, r.dtype)
    assert.are.same({ 2048 }, r:totable())
  end)

  it("rounds an int64 beyond float16's range to inf (inf * 0 is nan)", function()
    local r = T.tensor({ 1000000000 }) * T.tensor({ 0.0 }, { dtype = T.float16 })
    assert.is_true(r:isnan():all():item())
  end)

  it("rounds a zero-dim float32 tensor to float16 (70000 -> inf)", function()
    local r = T.tensor(70000.0) - T.tensor({ 60000.0 }, { dtype = T.float16 })
    assert.equal(math.huge, r:item())
  end)

  it("rounds an int32 to bfloat16 before fmod (31611 -> 31616, fmod 0)", function()
    local r = T.fmod(T.tensor(31611, { dtype = T.int32 }), T.tensor({ 31616.0 }, { dtype = T.bfloat16 }))
    assert.equal(T.bfloat16, r.dtype)
    assert.are.same({ 0 }, r:totable())
  end)

  it("rounds comparison inputs too (int16 2049 == float16 2048)", function()
    assert.is_true(T.tensor({ 2049 }, { dtype = T.int16 }):eq(T.tensor({ 2048.0 }, { dtype = T.float16 })):item())
  end)

  it("keeps weak Lua scalars exact and float32 results unrounded", function()
    assert.are.same({ 2048 }, (T.tensor({ 0.0 }, { dtype = T.float16 }) + 2049):totable())
    assert.are.same({ 2050 }, (T.tensor({ 2049 }, { dtype = T.int16 }) + T.tensor({ 1.0 })):totable())
  end)

  it("rounds broadcast and non-contiguous inputs alike", function()
    local a = T.tensor({ { 2049, 1 }, { 3, 2051 } }, { dtype = T.int32 }):t()
    local r = a + T.zeros(2, { dtype = T.float16 })
    assert.are.same({ { 2048, 3 }, { 1, 2052 } }, r:totable())
  end)
end)

describe("copies and fills through the iterator", function()
  it("copies transposed, broadcast, narrowed and cast sources", function()
    local a = T.arange(1, 13):reshape(3, 4)
    assert.are.same(a:t():totable(), a:t():contiguous():totable())
    local d = T.zeros(4, 3, { dtype = T.float64 })
    d:copy_(a:t())
    assert.are.same(a:t():totable(), d:totable())
    local row = T.zeros(3, 4)
    row:copy_(T.tensor({ 1, 2, 3, 4 }))
    assert.are.same({ { 1, 2, 3, 4 }, { 1, 2, 3, 4 }, { 1, 2, 3, 4 } }, row:totable())
    local n = T.zeros(2, 2)
    n:copy_(a:narrow(2, 2, 2):narrow(1, 1, 2))
    assert.are.same({ { 2, 3 }, { 6, 7 } }, n:totable())
    local big = T.randn(300, 200)
    assert.is_true(big:t():contiguous():eq(big:t()):all():item())
  end)

  it("fills contiguous and strided tensors, empty ones untouched", function()
    local z = T.zeros(3, 4)
    z:t():fill_(2.5)
    assert.equal(30, z:sum():item())
    local h = T.empty(0, 3)
    h:fill_(1)
    assert.are.same({ 0, 3 }, h.shape)
    local s = T.zeros(4, 4):narrow(2, 2, 2)
    s:fill_(-1)
    assert.equal(-8, s:sum():item())
  end)
end)

describe("the thread pool", function()
  it("gives the same results on one and several threads", function()
    local old = T.get_num_threads()
    local x = T.arange(0, 400000, { dtype = T.float64 }):reshape(400, 1000)
    T.set_num_threads(1)
    local s1, c1, e1 = x:sum(2), x:sum(1), (x * 1e-5):exp()
    T.set_num_threads(4)
    local s4, c4, e4 = x:sum(2), x:sum(1), (x * 1e-5):exp()
    T.set_num_threads(old)
    assert.is_true(s1:eq(s4):all():item())
    assert.is_true(c1:eq(c4):all():item())
    assert.is_true(e1:eq(e4):all():item())
  end)
end)

describe("clone and *_like keep a dense input's layout (preserve_format)", function()
  local function strides(t) return table.concat(t:stride(), ",") end
  it("keeps transposed and permuted strides, as PyTorch 1.13", function()
    local c = T.zeros(2, 3):t():clone()
    assert.equal("1,3", strides(c))
    assert.has_error(function() return c:view(6) end,
      "ltensor.view: view size is not compatible with input tensor's size and stride (at least one dimension " ..
      "spans across two contiguous subspaces). Use .reshape(...) instead.")
    local p = T.zeros(2, 3, 4):permute(3, 1, 2)
    assert.equal("1,12,4", strides(p:clone()))
    assert.equal("1,12,4", strides(T.zeros_like(p)))
    assert.equal("1,12,4", strides(T.ones_like(p)))
    assert.equal("1,12,4", strides(T.full_like(p, 7)))
    assert.equal("1,12,4", strides(T.empty_like(p)))
    assert.are.same(p:totable(), p:clone():totable())
  end)

  it("makes non-dense inputs (narrowed, expanded) contiguous", function()
    assert.equal("2,1", strides(T.zeros(4, 4):narrow(2, 1, 2):clone()))
    assert.equal("4,1", strides(T.zeros(3, 1):expand(3, 4):clone()))
    assert.equal("4,1", strides(T.zeros_like(T.zeros(3, 1):expand(3, 4))))
  end)
end)

describe("the elementwise build (lt_iter_ew)", function()
  local function strides(t) return table.concat(t:stride(), ",") end

  it("lays a new output out as PyTorch 1.13 does for mixed layouts", function()
    local a, b = T.ones(3, 4), T.ones(4, 3)
    assert.equal("1,3", strides(b:t() + a))     -- the first input that orders the dims decides
    assert.equal("4,1", strides(a + b:t()))
    assert.equal("1,3", strides(b:t() + b:t()))
    assert.equal("1,3", strides(T.ones(3, 1) + b:t()))
    assert.equal("1,3", strides(b:t() + T.ones(3, 1)))
    assert.equal("1,3", strides(T.ones(1, 4) + b:t()))
    local x, y = T.ones(2, 3, 4):permute(3, 1, 2), T.ones(4, 2, 3)
    assert.equal("1,12,4", strides(x + y))
    assert.equal("6,3,1", strides(y + x))
  end)

  -- shapes above the tile size (64) with ragged edges, so the tiled walk
  -- with staged (transposed-through-a-buffer) operands runs
  local function check_tiled(dt, n1, n2)
    local a = T.arange(0, n1 * n2, { dtype = T.float64 }):reshape(n1, n2):remainder(100):to(dt)
    local b = T.arange(0, n1 * n2, { dtype = T.float64 }):reshape(n2, n1):remainder(7):to(dt)
    local want = a:contiguous() + b:t():contiguous()
    local got = a + b:t()                                   -- b staged
    assert.is_true(got:eq(want):all():item(), tostring(dt))
    local got2 = b:t() + a                                  -- output transposed, a staged
    assert.equal("1," .. n1, strides(got2))
    assert.is_true(got2:eq(want):all():item(), tostring(dt))
    local o = T.zeros(n2, n1, { dtype = dt }):t()           -- out= transposed: the output staged
    T.add(a, a, { out = o })
    assert.is_true(o:eq(a + a):all():item(), tostring(dt))
  end

  it("adds transposed and contiguous operands in tiles for 1-, 2-, 4- and 8-byte dtypes", function()
    for _, dt in ipairs({ T.uint8, T.int16, T.float16, T.float32, T.int32, T.float64, T.int64 }) do
      check_tiled(dt, 130, 67)
      check_tiled(dt, 64, 64)
    end
  end)

  it("adds transposed complex operands (not staged) and casts in the tiled walk", function()
    check_tiled(T.complex128, 70, 65)
    local a = T.arange(0, 70 * 65, { dtype = T.int32 }):reshape(70, 65)
    local b = T.arange(0, 70 * 65, { dtype = T.float32 }):reshape(65, 70)
    local r = a + b:t()
    assert.equal(T.float32, r.dtype)
    assert.is_true(r:eq(a:to(T.float32) + b:t():contiguous()):all():item())
  end)

  it("gives the same tiled results on one and several threads", function()
    local old = T.get_num_threads()
    local a = T.randn(300, 257)
    local b = T.randn(257, 300)
    T.set_num_threads(1)
    local r1 = a + b:t()
    T.set_num_threads(3)
    local r3 = a + b:t()
    T.set_num_threads(old)
    assert.is_true(r1:eq(r3):all():item())
    assert.is_true(r1:eq(a + b:t():contiguous()):all():item())
  end)

  it("broadcasts a column and a row over large operands (stride-0 loops)", function()
    local a = T.arange(0, 300 * 200, { dtype = T.float32 }):reshape(300, 200)
    local c = T.arange(0, 300, { dtype = T.float32 }):reshape(300, 1)
    local r = T.arange(0, 200, { dtype = T.float32 }):reshape(1, 200)
    assert.is_true((a + c):eq(a + c:expand(300, 200):contiguous()):all():item())
    assert.is_true((c + a):eq(a + c:expand(300, 200):contiguous()):all():item())
    assert.is_true((a - r):eq(a - r:expand(300, 200):contiguous()):all():item())
    assert.is_true((c * r):eq(c:expand(300, 200):contiguous() * r:expand(300, 200):contiguous()):all():item())
  end)

  it("reads an input that aliases the output through a copy", function()
    local x = T.arange(1, 10, { dtype = T.float64 }):reshape(3, 3)
    local want = x + x:t()
    x:add_(x:t())
    assert.are.same(want:totable(), x:totable())
  end)

  it("reads disjoint slices of the written buffer directly and overlapping ones through a copy", function()
    -- slices of one storage: disjoint byte ranges need no copy, a range
    -- that overlaps the output (shifted by one) must read the old values
    local buf = T.arange(1, 13, { dtype = T.float32 })
    local a, b, out = buf:narrow(1, 1, 4), buf:narrow(1, 5, 4), buf:narrow(1, 9, 4)
    T.add(a, b, { out = out })
    assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 6, 8, 10, 12 }, buf:totable())
    local c = T.arange(1, 7, { dtype = T.float64 })
    local want = c:narrow(1, 1, 5) + c:narrow(1, 2, 5) * 10
    T.add(c:narrow(1, 1, 5), c:narrow(1, 2, 5) * 10, { out = c:narrow(1, 2, 5) })
    assert.are.same(want:totable(), c:narrow(1, 2, 5):totable())
    local d = T.arange(1, 7, { dtype = T.float64 })
    d:narrow(1, 2, 5):copy_(d:narrow(1, 1, 5))   -- overlapping source and destination
    assert.are.same({ 1, 1, 2, 3, 4, 5 }, d:totable())
    -- interleaved (strided) views of one buffer: every other element
    local e = T.arange(1, 9, { dtype = T.float32 })
    local ev, od = e:view(4, 2):select(2, 1), e:view(4, 2):select(2, 2)
    T.mul(ev, od, { out = od })
    assert.are.same({ 1, 2, 3, 12, 5, 30, 7, 56 }, e:totable())
  end)

  it("reports build errors as ltensor.<function>: messages", function()
    assert.has_error(function() return T.ones(2, 3) + T.ones(4) end,
      "ltensor.add: the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 2")
    assert.has_error(function() return T.mul(T.ones(2, 3), T.ones(3), { out = T.zeros(3) }) end,
      "ltensor.mul: output with shape [3] doesn't match the broadcast shape [2, 3]")
    assert.has_error(function() return T.add(T.ones(3), 1.5, { out = T.zeros(3, { dtype = T.int64 }) }) end,
      "ltensor.add: result type Float can't be cast to the desired output type Long")
    assert.has_error(function() return T.ones(1):expand(3):add_(1) end,
      "ltensor.add_: unsupported operation: more than one element of the written-to tensor refers to a single " ..
      "memory location. Please clone() the tensor before performing the operation.")
    assert.has_error(function() return T.floor_divide(T.tensor({ 1, 2 }), T.tensor({ 0, 1 })) end,
      "ltensor.floor_divide: integer division by zero")
  end)
end)

describe("large copies and fills over threads", function()
  -- contiguous copies, casts and fills of more than a part's 256 KB are
  -- split over the pool: the same values as one thread, every dtype
  it("give one thread's values for fills, clones, casts and contiguous copies", function()
    local function run()
      T.manual_seed(3)
      local out = {}
      local x = T.randn(300, 1000)
      for _, dt in ipairs({ T.float32, T.float64, T.int8, T.int64, T.bool, T.complex64, T.float16 }) do
        local z = T.empty({ 200003 }, { dtype = dt })
        out[#out + 1] = z:fill_(dt == T.bool and true or 3):clone()
        out[#out + 1] = z:zero_():clone()
        out[#out + 1] = x:to(dt)
      end
      out[#out + 1] = x:clone()
      out[#out + 1] = x:t():contiguous()
      local y = T.zeros(300, 1000)
      y:copy_(x)
      out[#out + 1] = y
      local w = T.arange(1, 400001, { dtype = T.float64 })
      w:narrow(1, 2, 300000):copy_(w:narrow(1, 1, 300000))   -- overlapping: through a temporary
      out[#out + 1] = w
      return out
    end
    local one, two = H.at_1_and_2_threads(run)
    for i = 1, #one do assert.is_true(T.equal(one[i], two[i]), "result " .. i) end
    assert.equal(3, one[1][200003]:item())
    assert.equal(1, two[#two][2]:item())
    assert.equal(300000, two[#two][300001]:item())
  end)
end)
