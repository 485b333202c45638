-- PyTorch checkpoints: T.load of torch.save's zip format (fixtures written by
-- PyTorch 1.13, spec/fixtures/gen_pt_fixtures.py), T.save to .pt, and the
-- errors for malformed or hostile files.
local T = require "ltensor"
local host = dofile("spec/host.lua")
local compat = require "ltensor.compat"
local zip = require "ltensor.io.zip"
local pickle = require "ltensor.io.pickle"

local FIX = "spec/fixtures/pt/"
local EXPECTED = dofile("spec/fixtures/pt_expected.lua")

local dir
setup(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir '" .. dir .. "'"))
end)
teardown(function() os.execute("rm -rf '" .. dir .. "'") end)
local function path(name) return dir .. "/" .. name end
local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end
local function write(name, bytes)
  local f = assert(io.open(path(name), "wb"))
  f:write(bytes)
  f:close()
  return path(name)
end

local function flat_values(t)
  if t.dtype.is_complex then t = T.view_as_real(t) end
  if t.dtype ~= T.bool then t = t:double() end
  return t:reshape(-1):totable()
end

-- compares a loaded value with the generator's description of it
local function check(want, got, where)
  local k = want.kind
  if k == "none" then assert.is_nil(got, where) return end
  if k == "value" then assert.are.equal(want.v, got, where) return end
  if k == "bigint" then assert.are.equal(want.s, string.format("%d", got), where) return end
  if k == "tensor" then
    assert.is_true(T.is_tensor(got), where .. ": a tensor")
    assert.are.equal(T[want.dtype], got.dtype, where)
    local shape = {}
    for i = 1, #want.shape do shape[i] = got.shape[i] end
    assert.are.equal(#want.shape, got:dim(), where)
    assert.are.same(want.shape, shape, where)
    assert.are.same(want.stride, got:stride(), where)
    assert.are.equal(want.requires_grad, got.requires_grad, where)
    local vals = flat_values(got)
    local wv = want.values
    if want.dtype:match("^complex") then
      local w2 = {}
      for _, z in ipairs(wv) do w2[#w2 + 1] = z[1] w2[#w2 + 1] = z[2] end
      wv = w2
    end
    assert.are.equal(#wv, #vals, where)
    for i = 1, #wv do
      if wv[i] ~= wv[i] then assert.is_true(vals[i] ~= vals[i], where)
      else assert.are.equal(wv[i], vals[i], where .. "[" .. i .. "]") end
    end
    return
  end
  assert.are.equal("table", type(got), where)
  if k == "list" or k == "tuple" then
    assert.are.equal(want.n, pickle.seq_len(got), where .. ": length")
    assert.are.equal(k == "tuple", pickle.is_tuple(got), where .. ": tuple")
    for i = 1, want.n do check(want.items[i], got[i], where .. "[" .. i .. "]") end
    return
  end
  local n = 0
  for _, it in ipairs(want.items) do
    if it[2].kind ~= "none" then n = n + 1 end
    check(it[2], got[it[1]], where .. "." .. tostring(it[1]))
  end
  local m = 0
  for _ in next, got do m = m + 1 end
  assert.are.equal(n, m, where .. ": number of keys")
  if k == "odict" then
    local keys = {}
    for i, it in ipairs(want.items) do keys[i] = it[1] end
    assert.are.same(keys, getmetatable(got).__keys, where .. ": key order")
  end
end

describe("T.load of PyTorch checkpoints (torch.save zip format)", function()
  for _, name in ipairs({ "state_dict", "checkpoint", "views", "dtypes", "edges", "tensor" }) do
    it("reads " .. name .. ".pt as PyTorch wrote it", function()
      local v, meta = T.load(FIX .. name .. ".pt")
      check(EXPECTED[name], v, name)
      assert.are.same({}, meta)
    end)
  end

  it("keeps a state_dict's key order (pairs on 5.2+, __keys everywhere)", function()
    local sd = T.load(FIX .. "state_dict.pt")
    local want = { "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
      "1.num_batches_tracked", "3.weight", "3.bias" }
    assert.are.same(want, getmetatable(sd).__keys)
    host.needs_pairs_mm("pairs() visits a state_dict in order")
    local got = {}
    for k in pairs(sd) do got[#got + 1] = k end
    assert.are.same(want, got)
  end)

  it("loads a state_dict into the same T.nn model (strict) and a checkpoint's optimizer state", function()
    local nn = T.nn
    local m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2))
    local r = m:load_state_dict(T.load(FIX .. "state_dict.pt"))
    assert.are.same({}, r.missing_keys)
    local ck = T.load(FIX .. "checkpoint.pt")
    assert.is_true(T.equal(m[1].weight, ck.model["0.weight"]))
    assert.are.equal(10, ck.epoch)
    assert.are.equal("x", ck.name)
    -- PyTorch's optimizer state: keys are Python's (0-based), values as saved
    assert.are.equal(0.01, ck.optimizer.param_groups[1].lr)
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, ck.optimizer.param_groups[1].params)
    assert.is_true(T.is_tensor(ck.optimizer.state[0].exp_avg))
    local opt = T.optim.Adam(m:parameters(), { lr = 0.5 })
    opt:load_state_dict(ck.optimizer)
    assert.are.equal(0.01, opt.param_groups[1].lr)
  end)

  it("gives tensors sharing a storage as views of one storage", function()
    local v = T.load(FIX .. "views.pt")
    assert.is_true(rawequal(v.base, v.again))
    assert.are.equal(4, v.row:storage_offset())
    assert.are.same({ 1, 4 }, v.t:stride())
    v.base[2][2] = 100   -- PyTorch's base[1][1]
    assert.are.equal(100, v.row[2]:item())
    assert.are.equal(100, v.t[2][2]:item())
    assert.are.equal(100, v.tail[2][1]:item())
  end)

  it("reads Parameters (_rebuild_parameter) and requires_grad as leaves", function()
    local e = T.load(FIX .. "edges.pt")
    assert.is_true(e.param.requires_grad and e.param.is_leaf)
    assert.is_true(e.grad.requires_grad)
    assert.are.equal("ab\255", e.bytes)
    assert.are.same({}, e.scalar.shape)
  end)

  it("reads int64 beyond 2^53 exactly where Lua has integers, refuses it elsewhere", function()
    if compat.has_integers then
      local b = T.load(FIX .. "bigint.pt")
      check(EXPECTED.bigint, b, "bigint")
      assert.are.equal(math.mininteger, b.min)
    else
      assert.has_error(function() T.load(FIX .. "bigint.pt") end)
    end
  end)

  it("refuses the legacy (non-zip) format with a hint", function()
    assert.has_error(function() T.load(FIX .. "legacy.pt") end,
      "ltensor.load: '" .. FIX .. "legacy.pt' is a PyTorch checkpoint in the legacy format (torch.save with "
      .. "_use_new_zipfile_serialization=False), which is not supported: re-save it with "
      .. "torch.save(torch.load(path), path) in PyTorch >= 1.6")
  end)
end)

describe("T.save of PyTorch checkpoints", function()
  local build = dofile("spec/fixtures/pt_written.lua")

  it("writes the bytes PyTorch 1.13 read (ltensor_written.pt) and reads them back", function()
    local p = path("ltensor_written.pt")   -- the archive's folder is named after the file
    T.save(p, build(T))
    assert.are.equal(read(FIX .. "ltensor_written.pt"), read(p))
    local r = T.load(p)
    local want = build(T)
    assert.are.same({ "weight", "bias" }, getmetatable(r.model).__keys)
    assert.is_true(T.equal(want.model.weight, r.model.weight))
    assert.are.equal(T.int64, r.model.bias.dtype)
    for d, t in pairs(want.dtypes) do
      assert.are.equal(t.dtype, r.dtypes[d].dtype)
      assert.are.equal(T._tobytes(t), T._tobytes(r.dtypes[d]), d)
    end
    assert.are.same(want.ints, r.ints)
    assert.are.same({ true, false }, r.flags)
    assert.are.same({ 0, 3 }, r.nested.a.b.empty.shape)
    assert.are.equal(7, r.nested.a.b.scalar:item())
    -- the views are views again
    r.views.base[3][4] = -1
    assert.are.equal(-1, r.views.t[4][3]:item())
    assert.are.equal(-1, r.views.tail[3][3]:item())
    assert.are.equal(4, r.views.row:storage_offset())
  end)

  it("round-trips PyTorch's checkpoint: tuples, None in lists, floats, optimizer state", function()
    local ck = T.load(FIX .. "checkpoint.pt")
    local p = path("ck.pt")
    T.save(p, ck)
    check(EXPECTED.checkpoint, T.load(p), "checkpoint")
  end)

  it("chooses the format: .pt/.pth, or {format = 'pt'} (SPEC §12); other tables are safetensors metadata", function()
    local t = { a = T.ones(2) }
    T.save(path("x.PTH"), t)
    assert.are.equal("PK\3\4", read(path("x.PTH")):sub(1, 4))
    T.save(path("noext"), t, nil, { format = "pt" })
    assert.are.equal("PK\3\4", read(path("noext")):sub(1, 4))
    T.save(path("spec12"), t, { format = "pt" })   -- SPEC §12's form
    assert.are.equal("PK\3\4", read(path("spec12")):sub(1, 4))
    T.save(path("meta"), t, { format = "safetensors", metadata = { format = "pt" } })
    local _, meta = T.load(path("meta"))
    assert.are.same({ format = "pt" }, meta)
    T.save(path("meta2"), t, { source = "x" })   -- a table that names no format is the metadata
    local _, meta2 = T.load(path("meta2"))
    assert.are.same({ source = "x" }, meta2)
    assert.has_error(function() T.save(path("o"), t, { format = "pt", level = 1 }) end,
      "ltensor.save: unknown option 'level' (options: format, metadata, zip64)")
    T.save(path("st.pt"), t, nil, { format = "safetensors" })
    assert.is_true(T.equal(T.load(path("st.pt")).a, T.ones(2)))
    assert.has_error(function() T.save(path("m.pt"), t, { k = "v" }) end,
      "ltensor.save: a PyTorch checkpoint has no metadata: pass nil (metadata is for safetensors files)")
  end)

  it("writes zip64 records when asked (as for files over 4 GiB)", function()
    local p = path("z64.pt")
    T.save(p, { w = T.arange(5) }, nil, { format = "pt", zip64 = true })
    assert.are.same({ 0, 1, 2, 3, 4 }, T.load(p).w:totable())
  end)

  it("keeps model:state_dict()'s order and writes a flipped view as a copy", function()
    local nn = T.nn
    local m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    local p = path("m.pt")
    T.save(p, { sd = m:state_dict(), f = T.arange(4):flip(1) })
    local r = T.load(p)
    assert.are.same(getmetatable(m:state_dict()).__keys, getmetatable(r.sd).__keys)
    assert.are.same({ 3, 2, 1, 0 }, r.f:totable())
  end)

  it("writes a table shared or contained in itself once (pickle's memo)", function()
    local shared = { 1, 2 }
    local cyc = { a = shared, b = shared }
    cyc.self = cyc
    T.save(path("c.pt"), cyc)
    local r = T.load(path("c.pt"))
    assert.is_true(rawequal(r, r.self))
    assert.is_true(rawequal(r.a, r.b))
  end)

  it("refuses what a checkpoint cannot hold", function()
    assert.has_error(function() T.save(path("c.pt"), { f = print }) end,
      "ltensor.save: cannot save a function (only tensors, tables, numbers, strings and booleans)")
    assert.has_error(function() T.save(path("c.pt"), { u = T.zeros(2, { dtype = T.uint16 }) }) end,
      "ltensor.save: a tensor has dtype uint16, which PyTorch checkpoints cannot store (convert it, e.g. with t:to(T.int64))")
    assert.has_error(function() T.save(path("c.pt"), {}, nil, { fromat = "pt" }) end)
  end)
end)

-- ---------------------------------------------------------------------------
-- malformed and hostile files

local spack = compat.spack
local function str(s) return "X" .. spack("<I4", #s) .. s end
local function int(v)
  if v >= 0 and v < 256 then return "K" .. string.char(v) end
  if v >= -2147483648 and v < 2147483648 then return "J" .. spack("<i4", v) end
  return "\138\8" .. spack("<i8", v)
end
local function tup(t)
  local p = { "(" }
  for _, v in ipairs(t) do p[#p + 1] = int(v) end
  return table.concat(p) .. "t"
end
local function pid(key, numel)
  return "(" .. str("storage") .. "ctorch\nFloatStorage\n" .. str(key) .. str("cpu") .. int(numel) .. "tQ"
end
local function tensor(size, stride, offset, key, numel)
  return "ctorch._utils\n_rebuild_tensor_v2\n(" .. pid(key or "0", numel or 6) .. int(offset or 0)
    .. tup(size) .. tup(stride) .. "\137}tR"
end
-- a zip holding a/data.pkl = pkl and a/data/0 = six floats (plus extra entries)
local function archive(pkl, extra)
  local entries = { { name = "a/data.pkl", data = pkl }, { name = "a/data/0", data = T._tobytes(T.arange(6):float()) } }
  for _, e in ipairs(extra or {}) do entries[#entries + 1] = e end
  return table.concat(zip.write(entries))
end
local P = "\128\2"

describe("T.load refuses malformed or hostile checkpoints", function()
  it("accepts the well-formed base case of these tests", function()
    local t = T.load(write("ok.pt", archive(P .. tensor({ 2, 3 }, { 3, 1 }) .. ".")))
    assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } }, t:totable())
  end)

  it("accepts the rest of weights_only's vocabulary", function()
    local pkl = P .. "}(" .. str("old") .. "ctorch._utils\n_rebuild_tensor\n(" .. pid("0", 6) .. int(2) .. tup({ 2 }) .. tup({ 1 }) .. "tR"
      .. str("size") .. "ctorch\nSize\n" .. tup({ 2, 3 }) .. "\133R"
      .. str("dtype") .. "ctorch\nfloat64\n"
      .. str("set") .. "\143"
      .. str("short") .. "U\2hi"
      .. str("t3") .. "K\1M\0\1J\255\255\255\255\135r\0\1\0\0"
      .. str("again") .. "j\0\1\0\0"
      .. str("none") .. "N"
      .. "u."
    local r = T.load(write("vocab.pt", archive(pkl)))
    assert.are.same({ 2, 3 }, r.old:totable())
    assert.are.same({ 2, 3 }, r.size)
    assert.are.equal(T.float64, r.dtype)
    assert.are.same({}, r.set)
    assert.are.equal("hi", r.short)
    assert.are.same({ 1, 256, -1 }, { r.t3[1], r.t3[2], r.t3[3] })
    assert.is_true(pickle.is_tuple(r.t3) and rawequal(r.t3, r.again))
    assert.is_nil(r.none)
  end)

  it("reads big-endian storages (<name>/byteorder = 'big')", function()
    local be = T.tensor({ 1.5, -2 }):float()
    local bytes = T._tobytes(be):sub(1, 4):reverse() .. T._tobytes(be):sub(5, 8):reverse()
    local s = table.concat(zip.write({ { name = "a/data.pkl", data = P .. tensor({ 2 }, { 1 }, 0, "0", 2) .. "." },
      { name = "a/byteorder", data = "big" }, { name = "a/data/0", data = bytes } }))
    assert.are.same({ 1.5, -2 }, T.load(write("be.pt", s)):totable())
  end)

  local good = archive(P .. tensor({ 6 }, { 1 }) .. ".")
  local cd_off = #good - 22 - (46 + 10) - (46 + 8)   -- two entries' central records
  local function patch(s, pos, bytes) return s:sub(1, pos - 1) .. bytes .. s:sub(pos + #bytes) end
  local bad = {
    { "a truncated zip", good:sub(1, 100), "is not a zip archive (no end of central directory record)" },
    { "an empty file", "", "is too small to be a safetensors file" },
    { "a central directory offset past the end", patch(good, #good - 5, spack("<I4", 99999)),
      "has a central directory (offset 99999, 110 bytes) outside the file" },
    { "an entry count larger than the directory", patch(good, #good - 13, spack("<I2", 900) .. spack("<I2", 900)),
      "claims 900 entries in a 110-byte central directory" },
    { "an entry offset outside the data", patch(good, cd_off + 1 + 42, spack("<I4", 4000000)),
      "entry 'a/data.pkl' (offset 4000000, " },
    { "an entry name escaping the archive", archive(P .. tensor({ 6 }, { 1 }) .. ".", { { name = "a/../../etc/x", data = "" } }),
      "has an entry name that escapes the archive or is not a plain path: \"a/../../etc/x\"" },
    { "an absolute entry name", archive(P .. "N.", { { name = "/etc/passwd", data = "" } }),
      "has an entry name that escapes the archive or is not a plain path: \"/etc/passwd\"" },
    { "a compressed entry", patch(good, cd_off + 1 + 10, spack("<I2", 8)), "entry 'a/data.pkl' is compressed (method 8)" },
    { "a corrupt entry (CRC-32)", patch(good, 65, "\0"), "entry 'a/data.pkl' is corrupt (CRC-32 mismatch)" },
    { "a zip without data.pkl", table.concat(zip.write({ { name = "a/x", data = "1" } })),
      "is a zip archive but not a PyTorch checkpoint (it has no <name>/data.pkl)" },
    { "an opcode not allowed (INT)", archive(P .. "I1\n."), "the pickle uses opcode \"I\" (0x49) at byte 2, which is not allowed" },
    { "GLOBAL os.system", archive(P .. "cos\nsystem\n" .. str("echo hi") .. "\133R."),
      "is a PyTorch checkpoint that needs 'os.system', which is not allowed (only tensors, containers, numbers and strings load)" },
    { "GLOBAL builtins.eval", archive(P .. "cbuiltins\neval\n."), "needs 'builtins.eval', which is not allowed" },
    { "REDUCE of a storage class", archive(P .. "ctorch\nFloatStorage\n)R."), "the pickle calls a value that is not an allowed function" },
    { "REDUCE of a dtype", archive(P .. "ctorch\nfloat32\n)R."), "the pickle calls a value that is not an allowed function" },
    { "a sparse tensor", archive(P .. "ctorch._utils\n_rebuild_sparse_tensor\n)R."),
      "needs 'torch._utils._rebuild_sparse_tensor' (sparse tensors), which ltensor does not support" },
    { "a persistent id naming a missing entry", archive(P .. tensor({ 6 }, { 1 }, 0, "7") .. "."),
      "names storage '7', but the archive has no entry 'a/data/7'" },
    { "a storage longer than its entry", archive(P .. tensor({ 6 }, { 1 }, 0, "0", 7) .. "."),
      "storage '0' should hold 7 elements of float32 (28 bytes) but its entry has 24 bytes" },
    { "a size past the storage", archive(P .. tensor({ 7 }, { 1 }) .. "."),
      "a tensor of size [7], stride [1] and offset 0 does not fit its storage of 6 elements (the view reaches past the end of the storage)" },
    { "an offset past the storage", archive(P .. tensor({ 2 }, { 1 }, 5) .. "."), "does not fit its storage of 6 elements" },
    { "a negative stride", archive(P .. tensor({ 2 }, { -1 }, 3) .. "."), "(negative stride)" },
    { "a negative size", archive(P .. tensor({ -2 }, { 1 }) .. "."), "(negative size)" },
    { "huge sizes", archive(P .. tensor({ 1099511627776, 1099511627776 }, { 1, 1 }) .. "."), "does not fit its storage" },
    { "a pickle that never STOPs", archive(P .. "]q\0h\0h\0"), "the pickle is truncated (no STOP opcode)" },
    { "a memo index out of range", archive(P .. "h\5."), "the pickle reads memo entry 5, which was never stored" },
    { "a stack underflow", archive(P .. "."), "the pickle's stack underflows" },
    { "APPEND to a dict", archive(P .. "}K\1a."), "the pickle appends to a dict, not a list" },
    { "TUPLE without MARK", archive(P .. "K\1t."), "the pickle has no mark to pop" },
    { "an odd SETITEMS", archive(P .. "}(K\1u."), "the pickle's SETITEMS has an odd number of values" },
    { "BUILD of a list", archive(P .. "]]b."), "the pickle sets the state of a list; only OrderedDict state is accepted" },
    { "a persistent id that is not a storage", archive(P .. str("x") .. "\133Q."),
      "has a persistent id that is not ('storage', type, key, location, numel)" },
    { "an integer beyond int64", archive(P .. "\138\9" .. string.rep("\0", 8) .. "\1."), "an integer of 9 bytes is outside int64" },
    { "NEWOBJ of a Parameter", archive(P .. "ctorch.nn.parameter\nParameter\n)\129."),
      "needs 'torch.nn.parameter.Parameter' (parameters built by NEWOBJ), which ltensor does not support" },
    { "a bare storage", archive(P .. pid("0", 6) .. "."), "holds a bare storage" },
    { "an unknown byte order", table.concat(zip.write({ { name = "a/data.pkl", data = P .. "N." },
      { name = "a/byteorder", data = "middle" } })), "has an unknown byte order 'middle'" },
    { "a deflated-looking duplicate entry", table.concat(zip.write({ { name = "a/data.pkl", data = P .. "N." },
      { name = "a/data.pkl", data = P .. "N." } })), "has two entries named 'a/data.pkl'" },
    { "a truncated string", archive(P .. "X\255\255\0\0ab."), "the pickle is truncated (no STOP opcode)" },
  }
  for i, c in ipairs(bad) do
    it("refuses " .. c[1], function()
      local p = write("bad" .. i .. ".pt", c[2])
      local ok, err = pcall(T.load, p)
      assert.is_false(ok)
      assert.are.equal("string", type(err))
      assert.truthy(err:find("ltensor.load: '" .. p .. "'", 1, true), err)
      assert.truthy(err:find(c[3], 1, true), err)
    end)
  end

  it("gives every truncation of a valid checkpoint a clean error", function()
    local s = read(FIX .. "views.pt")
    for n = 0, #s - 1, 7 do
      local ok, err = pcall(T.load, write("cut.pt", s:sub(1, n)))
      assert.is_false(ok)
      assert.truthy(type(err) == "string" and err:find("^ltensor%.load: "), tostring(err))
    end
  end)

  it("gives every one-byte corruption of the pickle a clean error or a value", function()
    local pkl = P .. tensor({ 2, 3 }, { 3, 1 }) .. "."
    for i = 1, #pkl do
      for _, b in ipairs({ 0, 1, 40, 113, 255 }) do
        local ok, err = pcall(T.load, write("flip.pt", archive(patch(pkl, i, string.char(b)))))
        assert.truthy(ok or (type(err) == "string" and err:find("^ltensor%.load: ")), tostring(err))
      end
    end
  end)
end)

describe("the reference examples of T.save and T.load", function()
  it("run", function()
    local help = require "ltensor.help"
    local n = 0
    for _, e in ipairs(help.entries()) do
      if e.name == "T.save" or e.name == "T.load" then
        local env = setmetatable({ T = T, print = function() end }, { __index = _G })
        local f = assert(load(e.example, "=" .. e.name, "t", env))
        f()
        n = n + 1
      end
    end
    assert.are.equal(2, n)
  end)
end)

describe("examples/load_pt.lua", function()
  it("loads PyTorch's checkpoint into a T.nn model and matches PyTorch's output", function()
    if _VERSION ~= "Lua 5.4" then pending("runs the 5.4 build") return end
    local p = io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 examples/load_pt.lua 2>&1; echo rc=$?")
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("rc=0", 1, true), out)
    assert.truthy(out:find("largest difference from PyTorch's output", 1, true), out)
  end)
end)
