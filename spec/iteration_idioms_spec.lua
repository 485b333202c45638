-- PyTorch's loops work as written (issue 21 items 1 and 7):
-- `for xb, yb in loader do` and `for name, p in model:named_parameters() do`.
local T = require "ltensor"
local data = T.utils.data

describe("for xb, yb in loader do", function()
  local ds = data.TensorDataset(T.arange(10):float(), T.arange(10))
  it("runs one epoch of batches, each as the dataset's tensors", function()
    local loader = data.DataLoader(ds, { batch_size = 4 })
    local sizes, seen = {}, {}
    for xb, yb in loader do
      sizes[#sizes + 1] = xb:size(1)
      assert.equal(T.int64, yb.dtype)
      for _, v in ipairs(yb:totable()) do seen[#seen + 1] = v end
    end
    assert.are.same({ 4, 4, 2 }, sizes)
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, seen)
  end)
  it("starts a new epoch on every loop, also after a break", function()
    local loader = data.DataLoader(ds, { batch_size = 4 })
    for xb in loader do
      assert.equal(0, xb[1]:item())
      break
    end
    local firsts = {}
    for xb in loader do firsts[#firsts + 1] = xb[1]:item() end
    assert.are.same({ 0, 4, 8 }, firsts)
    local again = 0
    for _ in loader do again = again + 1 end
    assert.equal(3, again)
  end)
  it("reshuffles each epoch when shuffling, and covers every sample", function()
    T.manual_seed(3)
    local loader = data.DataLoader(ds, { batch_size = 10, shuffle = true })
    local a, b
    for xb in loader do a = xb:totable() end
    for xb in loader do b = xb:totable() end
    table.sort(a) table.sort(b)
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, a)
    assert.are.same(a, b)
  end)
  it("keeps loader:iter() and loader() as fresh iterators", function()
    local loader = data.DataLoader(ds, { batch_size = 5 })
    local n = 0
    for xb, yb in loader:iter() do n = n + 1 assert.equal(5, yb:size(1)) end
    assert.equal(2, n)
    n = 0
    for _ in loader() do n = n + 1 end
    assert.equal(2, n)
  end)
  it("is an empty loop over an empty dataset", function()
    local loader = data.DataLoader(data.TensorDataset(T.zeros(0, 2)), { batch_size = 4 })
    local n = 0
    for _ in loader do n = n + 1 end
    assert.equal(0, n)
  end)
end)

describe("for name, value in model:named_*() do", function()
  local m = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU(), T.nn.BatchNorm1d(3))
  local function collect(list)
    local names = {}
    for name, v in list do
      assert.truthy(v)
      names[#names + 1] = name
    end
    return names
  end
  it("iterate names and values in PyTorch's order", function()
    assert.are.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, collect(m:named_parameters()))
    assert.are.same({ "2.running_mean", "2.running_var", "2.num_batches_tracked" }, collect(m:named_buffers()))
    assert.are.same({ "0", "1", "2" }, collect(m:named_children()))
    assert.are.same({ "", "0", "1", "2" }, collect(m:named_modules()))
    local p
    for name, v in m:named_parameters() do if name == "0.bias" then p = v end end
    assert.is_true(rawequal(p, m[1].bias))
  end)
  it("still index as lists of {name, value}", function()
    local list = m:named_parameters()
    assert.equal(4, #list)
    assert.equal("0.weight", list[1][1])
    assert.is_true(rawequal(list[1][2], m[1].weight))
    local names = {}
    for _, pair in ipairs(list) do names[#names + 1] = pair[1] end
    assert.are.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, names)
  end)
  it("is an empty loop for a module without parameters", function()
    assert.are.same({}, collect(T.nn.ReLU():named_parameters()))
  end)
end)
