-- T.utils.data: TensorDataset, Subset, DataLoader, random_split, default_collate.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- host.len(x): #x through __len on every host (issue 12)
local H = dofile("spec/helpers.lua")
local D = T.utils.data

local function xy(n)
  local x = T.arange(1, n + 1, { dtype = T.float32 }):reshape({ n, 1 }):expand({ n, 2 }):contiguous()
  local y = T.arange(1, n + 1)
  return x, y
end

local function collect(loader)
  local xs, ys, sizes = {}, {}, {}
  for xb, yb in loader:iter() do
    sizes[#sizes + 1] = yb:numel()
    for _, v in ipairs(yb:totable()) do ys[#ys + 1] = v end
    xs[#xs + 1] = xb
  end
  return ys, sizes, xs
end

describe("TensorDataset and Subset", function()
  it("index from 1 and return each tensor's row", function()
    local x, y = xy(5)
    local ds = D.TensorDataset(x, y)
    assert.equal(5, host.len(ds))
    local a, b = ds:get(2)
    assert.same({ 2, 2 }, a:totable())
    assert.equal(2, b:item())
    local item = ds[5]
    assert.equal(5, item[2]:item())
    assert.equal(4, ds:get(-2):totable()[1])
    assert.same(ds.tensors[1], x)
    H.raises("ltensor.utils.data.TensorDataset: index 6 is out of range for a dataset of size 5 (indices are 1-based)",
      function() ds:get(6) end)
    H.raises("ltensor.utils.data.TensorDataset: index 0 is out of range", function() ds:get(0) end)
  end)
  it("check their arguments", function()
    H.raises("ltensor.utils.data.TensorDataset: Size mismatch between tensors",
      function() D.TensorDataset(T.zeros({ 3 }), T.zeros({ 4 })) end)
    H.raises("ltensor.utils.data.TensorDataset: argument 2 is not a tensor (got table)",
      function() D.TensorDataset(T.zeros({ 3 }), {}) end)
    H.raises("ltensor.utils.data.TensorDataset: tensor 1 is 0-dimensional", function() D.TensorDataset(T.tensor(1)) end)
    H.raises("ltensor.utils.data.Subset: index 9 is out of range for a dataset of size 5",
      function() D.Subset(D.TensorDataset(T.zeros({ 5 })), { 1, 9 }) end)
  end)
  it("Subset maps positions, also nested, and by tensor", function()
    local ds = D.TensorDataset(xy(10))
    local s = D.Subset(ds, { 10, 3, 7, 1 })
    assert.equal(4, host.len(s))
    assert.equal(7, select(2, s:get(3)):item())
    local s2 = D.Subset(s, T.tensor({ 4, 1 }))
    assert.equal(1, select(2, s2:get(1)):item())
    assert.equal(10, select(2, s2:get(2)):item())
    local ys = collect(D.DataLoader(s2, { batch_size = 5 }))
    assert.same({ 1, 10 }, ys)
  end)
end)

describe("DataLoader", function()
  it("yields #loader batches in order, the last one short", function()
    local loader = D.DataLoader(D.TensorDataset(xy(10)), { batch_size = 4 })
    assert.equal(3, host.len(loader))
    local ys, sizes, xs = collect(loader)
    assert.same({ 4, 4, 2 }, sizes)
    assert.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, ys)
    assert.same({ 4, 2 }, xs[1].shape)
    assert.equal(T.float32, xs[1].dtype)
  end)
  it("drop_last drops the short batch", function()
    local loader = D.DataLoader(D.TensorDataset(xy(10)), { batch_size = 4, drop_last = true })
    assert.equal(2, host.len(loader))
    local _, sizes = collect(loader)
    assert.same({ 4, 4 }, sizes)
    assert.equal(2, host.len(D.DataLoader(D.TensorDataset(xy(8)), { batch_size = 4, drop_last = true })))
    assert.equal(0, host.len(D.DataLoader(D.TensorDataset(xy(3)), { batch_size = 4, drop_last = true })))
    assert.equal(1, host.len(D.DataLoader(D.TensorDataset(xy(3)), { batch_size = 4 })))
  end)
  it("batches are copies: writing to one leaves the dataset alone", function()
    local x, y = xy(4)
    local loader = D.DataLoader(D.TensorDataset(x, y), { batch_size = 2 })
    for xb in loader:iter() do xb:zero_() end
    assert.equal(4, x[4][1]:item())
  end)
  it("shuffle visits every sample once, differently per epoch, reproducibly per seed", function()
    local loader = D.DataLoader(D.TensorDataset(xy(20)), { batch_size = 6, shuffle = true })
    T.manual_seed(7)
    local a = collect(loader)
    local b = collect(loader)
    T.manual_seed(7)
    local a2 = collect(loader)
    assert.same(a, a2)
    assert.are_not.same(a, b)
    local sorted = { table.unpack(a) }
    table.sort(sorted)
    for i = 1, 20 do assert.equal(i, sorted[i]) end
    -- the order is T.randperm's
    T.manual_seed(7)
    assert.same(T.randperm(20):totable(), a)
  end)
  if T.Generator then
    it("shuffle with a generator depends only on that generator", function()
      local ds = D.TensorDataset(xy(30))
      local function run(seed)
        local g = T.Generator()
        g:manual_seed(seed)
        return collect(D.DataLoader(ds, { batch_size = 7, shuffle = true, generator = g }))
      end
      T.manual_seed(1)
      local a = run(5)
      T.manual_seed(2)
      local b = run(5)
      assert.same(a, b)
      assert.are_not.same(a, run(6))
    end)
  end
  it("collate_fn receives the samples and its result is unpacked", function()
    local ds = D.TensorDataset(xy(5))
    local loader = D.DataLoader(ds, { batch_size = 2, collate_fn = function(samples)
      local ys = {}
      for i, s in ipairs(samples) do ys[i] = s[2]:item() * 10 end
      return { T.tensor(ys), #samples }
    end })
    local got = {}
    for ys, n in loader:iter() do got[#got + 1] = { ys:totable(), n } end
    assert.same({ { { 10, 20 }, 2 }, { { 30, 40 }, 2 }, { { 50 }, 1 } }, got)
  end)
  it("batches plain Lua datasets with default_collate", function()
    local ds = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 } }
    local loader = D.DataLoader(ds, { batch_size = 2 })
    assert.equal(2, host.len(loader))
    local out = {}
    for x, y in loader:iter() do out[#out + 1] = { x:totable(), y:totable(), y.dtype } end
    assert.same({ { { 1.5, 2.5 }, { 1, 2 }, T.int64 }, { { 3.5 }, { 3 }, T.int64 } }, out)
    local tds = { T.ones({ 2 }), T.zeros({ 2 }), T.ones({ 2 }) }
    local b = {}
    for x in D.DataLoader(tds, { batch_size = 3 }):iter() do b[#b + 1] = x end
    assert.same({ 3, 2 }, b[1].shape)
    local st = D.default_collate({ { x = T.ones({ 2 }), y = 1 }, { x = T.zeros({ 2 }), y = 2 } })
    assert.same({ 2, 2 }, st.x.shape)
    assert.same({ 1, 2 }, st.y:totable())
  end)
  it("an empty dataset has no batches", function()
    local loader = D.DataLoader(D.TensorDataset(T.zeros({ 0, 3 })), { batch_size = 4, shuffle = true })
    assert.equal(0, host.len(loader))
    for _ in loader:iter() do error("no batch expected") end
  end)
  it("checks its options", function()
    local ds = D.TensorDataset(xy(4))
    H.raises("ltensor.utils.data.DataLoader: unknown option 'batchsize' (did you mean 'batch_size'?)",
      function() D.DataLoader(ds, { batchsize = 2 }) end)
    H.raises("ltensor.utils.data.DataLoader: unknown option 'shufle' (did you mean 'shuffle'?)",
      function() D.DataLoader(ds, { shufle = true }) end)
    H.raises("ltensor.utils.data.DataLoader: batch_size should be a positive integer value, but got batch_size=0",
      function() D.DataLoader(ds, { batch_size = 0 }) end)
    H.raises("ltensor.utils.data.DataLoader: shuffle must be a boolean, got number",
      function() D.DataLoader(ds, { shuffle = 1 }) end)
    H.raises("ltensor.utils.data.DataLoader: num_workers option should be non-negative",
      function() D.DataLoader(ds, { num_workers = -1 }) end)
    assert.equal(2, host.len(D.DataLoader(ds, { num_workers = 2, batch_size = 2 })))
    H.raises("ltensor.utils.data.DataLoader: collate_fn must be a function, got string",
      function() D.DataLoader(ds, { collate_fn = "stack" }) end)
  end)
end)

describe("random_split", function()
  it("splits by lengths into disjoint subsets covering the dataset", function()
    local ds = D.TensorDataset(xy(10))
    T.manual_seed(3)
    local parts = D.random_split(ds, { 7, 3 })
    assert.equal(7, host.len(parts[1]))
    assert.equal(3, host.len(parts[2]))
    local seen = {}
    for _, p in ipairs(parts) do
      for i = 1, host.len(p) do
        local y = select(2, p:get(i)):item()
        assert.is_nil(seen[y])
        seen[y] = true
      end
    end
    for i = 1, 10 do assert.is_true(seen[i]) end
    T.manual_seed(3)
    local again = D.random_split(ds, { 7, 3 })
    assert.is_true(T.equal(parts[1].indices, again[1].indices))
  end)
  it("splits by fractions as PyTorch 1.13 does", function()
    local ds = D.TensorDataset(xy(10))
    local parts = D.random_split(ds, { 0.5, 0.3, 0.2 })
    assert.same({ 5, 3, 2 }, { host.len(parts[1]), host.len(parts[2]), host.len(parts[3]) })
    parts = D.random_split(D.TensorDataset(xy(11)), { 1 / 3, 1 / 3, 1 / 3 })
    assert.same({ 4, 4, 3 }, { host.len(parts[1]), host.len(parts[2]), host.len(parts[3]) })
  end)
  if T.Generator then
    it("with a generator, the split depends only on that generator", function()
      local ds = D.TensorDataset(xy(12))
      local function split(seed)
        local g = T.Generator()
        g:manual_seed(seed)
        return D.random_split(ds, { 0.5, 0.5 }, { generator = g })[1].indices
      end
      T.manual_seed(1)
      local a = split(3)
      T.manual_seed(2)
      assert.is_true(T.equal(a, split(3)))
    end)
  end
  it("checks the lengths", function()
    local ds = D.TensorDataset(xy(10))
    H.raises("ltensor.utils.data.random_split: Sum of input lengths does not equal the length of the input dataset!",
      function() D.random_split(ds, { 3, 3 }) end)
    H.raises("ltensor.utils.data.random_split: unknown option 'seed'", function() D.random_split(ds, { 5, 5 }, { seed = 1 }) end)
  end)
end)
