-- ltensor.io.pt: PyTorch checkpoints (torch.save since 1.6), read by T.load
-- and written by T.save for a path ending in .pt / .pth (or with
-- {format = "pt"} as T.save's 4th argument).
--
-- The file is a zip (io/zip.lua) of stored entries under one folder:
--   <name>/data.pkl     the object, pickled (protocol 2)
--   <name>/data/<key>   one entry per storage: its elements, little-endian
--   <name>/version      "3\n"        (<name>/byteorder: "little" or "big")
-- A tensor is pickled as _rebuild_tensor_v2(storage, offset, size, stride,
-- requires_grad, backward_hooks), its storage a persistent id
-- ('storage', torch.FloatStorage, key, location, numel).  Tensors naming the
-- same storage come back as views of one ltensor storage.
--
-- Reading goes through io/pickle.lua's restricted unpickler with the
-- globals PyTorch's weights_only=True unpickler allows; of those, ltensor
-- builds dense tensors (_rebuild_tensor_v2, _rebuild_tensor,
-- _rebuild_parameter), OrderedDict, torch.Size, dtypes and bytes
-- (_codecs.encode); the others (sparse, quantized, meta tensors, sets,
-- complex scalars, devices ...) are refused by name, and so is every global
-- PyTorch does not allow.  Nothing is ever executed.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local zip = require "ltensor.io.zip"
local pickle = require "ltensor.io.pickle"
local math = compat.math

local sfmt = string.format

local M = {}

local function raise(msg, ...) error("ltensor." .. sfmt(msg, ...), 0) end

-- torch's storage classes <-> ltensor dtypes
local STORAGE = {
  FloatStorage = "float32", DoubleStorage = "float64", HalfStorage = "float16",
  BFloat16Storage = "bfloat16", LongStorage = "int64", IntStorage = "int32",
  ShortStorage = "int16", CharStorage = "int8", ByteStorage = "uint8",
  BoolStorage = "bool", ComplexFloatStorage = "complex64", ComplexDoubleStorage = "complex128",
}
local STORAGE_OF = {}
for k, v in pairs(STORAGE) do STORAGE_OF[v] = k end

-- allowed by PyTorch's weights_only unpickler, but not something ltensor builds
local UNSUPPORTED = {
  ["torch._utils._rebuild_sparse_tensor"] = "sparse tensors",
  ["torch._utils._rebuild_sparse_csr_tensor"] = "sparse tensors",
  ["torch._utils._rebuild_meta_tensor_no_storage"] = "meta tensors",
  ["torch._utils._rebuild_qtensor"] = "quantized tensors",
  ["torch._utils._rebuild_parameter_with_state"] = "parameters with Python state",
  ["torch._utils._rebuild_tensor_v3"] = "tensors of this PyTorch version's layout",
  ["torch._utils._rebuild_wrapper_subclass"] = "tensor subclasses",
  ["torch._utils._rebuild_device_tensor_from_numpy"] = "device tensors",
  ["torch._utils._rebuild_device_tensor_from_cpu_tensor"] = "device tensors",
  ["torch._tensor._rebuild_from_type_v2"] = "tensor subclasses",
  ["torch.nn.parameter.Parameter"] = "parameters built by NEWOBJ",
  ["torch.serialization._get_layout"] = "tensor layouts",
  ["torch.Tensor"] = "tensors with Python state",
  ["torch.device"] = "device objects",
  ["collections.Counter"] = "Counter objects",
  ["builtins.bytearray"] = "bytearray objects",
  ["builtins.set"] = "sets",
  ["builtins.complex"] = "complex numbers",
}

-- the storages a checkpoint's persistent ids name, while it is unpickled
local STORAGE_MT = { __name = "ltensor.pt.storage" }

local DTYPES = { "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
  "bool", "complex64", "complex128" }

local function list_str(t, n)
  local p = {}
  for i = 1, n do p[i] = tostring(t[i]) end
  return "[" .. table.concat(p, ", ") .. "]"
end

-- the loader: f is open, size its byte count
function M.load(path, f, size)
  local function fail(msg, ...) raise("load: '%s' " .. msg, path, ...) end
  local function read_at(off, n)
    f:seek("set", off)
    local s = n > 0 and f:read(n) or ""
    if not s or #s ~= n then fail("is truncated") end
    return s
  end
  local entries, by_name = zip.read_directory(read_at, size, fail)
  local prefix
  for _, e in ipairs(entries) do
    local p = e.name:match("^(.*)/data%.pkl$")
    if p and not p:find("/", 1, true) then
      if prefix then fail("is a zip archive with several data.pkl records") end
      prefix = p
    end
  end
  if not prefix then fail("is a zip archive but not a PyTorch checkpoint (it has no <name>/data.pkl)") end
  local big = false
  local bo = by_name[prefix .. "/byteorder"]
  if bo then
    local order = zip.read_entry(read_at, bo, fail)
    if order ~= "little" and order ~= "big" then fail("has an unknown byte order '%s'", order) end
    big = order == "big"
  end
  local function pfail(msg, ...) raise("load: '%s' (PyTorch checkpoint): " .. msg, path, ...) end
  local storages = {}   -- key -> { t = 1-d tensor, dtype }
  local function rebuild(storage, offset, size_t, stride, what)
    if getmetatable(storage) ~= STORAGE_MT then pfail("%s: the first argument is not a storage", what) end
    if math.type(offset) ~= "integer" then pfail("%s: the storage offset is not an integer", what) end
    if type(size_t) ~= "table" or type(stride) ~= "table" then pfail("%s: size and stride must be tuples", what) end
    local nsize, nstride = pickle.seq_len(size_t), pickle.seq_len(stride)
    if nsize ~= nstride then pfail("%s: size %s and stride %s differ in length", what,
      list_str(size_t, nsize), list_str(stride, nstride)) end
    if nsize > T.MAX_DIMS then pfail("%s: %d dimensions is more than the %d supported", what, nsize, T.MAX_DIMS) end
    for i = 1, nsize do
      if math.type(size_t[i]) ~= "integer" or math.type(stride[i]) ~= "integer" then
        pfail("%s: size and stride must hold integers", what)
      end
    end
    local t, why = T._as_strided(storage.storage, size_t, stride, offset)
    if not t then
      pfail("a tensor of size %s, stride %s and offset %d does not fit its storage of %d elements (%s)",
        list_str(size_t, nsize), list_str(stride, nstride), offset, storage.storage:numel(), why)
    end
    return t
  end
  local function set_grad(t, rg)
    if rg == true and (t:is_floating_point() or t:is_complex()) then t:requires_grad_(true) end
    return t
  end
  local globals = {
    ["torch._utils._rebuild_tensor_v2"] = { call = function(a, n)
      if n < 6 or n > 7 then pfail("_rebuild_tensor_v2 takes 6 or 7 arguments, got %d", n) end
      local t = rebuild(a[1], a[2], a[3], a[4], "_rebuild_tensor_v2")
      return set_grad(t, a[5])
    end },
    ["torch._utils._rebuild_tensor"] = { call = function(a, n)
      if n ~= 4 then pfail("_rebuild_tensor takes 4 arguments, got %d", n) end
      return rebuild(a[1], a[2], a[3], a[4], "_rebuild_tensor")
    end },
    ["torch._utils._rebuild_parameter"] = { call = function(a, n)
      if n ~= 3 or not T.is_tensor(a[1]) then pfail("_rebuild_parameter takes a tensor and 2 more arguments") end
      return set_grad(a[1], a[2])
    end },
    ["torch.Size"] = { call = function(a, n)
      if n ~= 1 or type(a[1]) ~= "table" then pfail("torch.Size takes one tuple") end
      local out = {}
      for i = 1, pickle.seq_len(a[1]) do out[i] = a[1][i] end
      return out
    end },
    ["_codecs.encode"] = { call = function(a, n)   -- bytes: encode(text, 'latin1')
      if n ~= 2 or type(a[1]) ~= "string" or a[2] ~= "latin1" then pfail("bytes must be encoded as latin1") end
      -- text of code points 0..255, as UTF-8: 1 byte, or 2 starting with C2/C3
      local bytes = a[1]:gsub("[\194\195][\128-\191]", function(c)
        return string.char((c:byte(1) - 192) * 64 + c:byte(2) - 128)
      end)
      if a[1]:gsub("[\194\195][\128-\191]", ""):find("[\128-\255]") then
        pfail("bytes hold a character above 255")
      end
      return bytes
    end },
  }
  for _, d in ipairs(DTYPES) do globals["torch." .. d] = T[d] end
  for name, d in pairs(STORAGE) do globals["torch." .. name] = { storage_dtype = T[d], name = name } end
  local nn
  local env = {
    fail = pfail,
    find_global = function(module, name)
      local full = module .. "." .. name
      local g = globals[full]
      if g ~= nil then return g end
      if UNSUPPORTED[full] then
        pfail("needs '%s' (%s), which ltensor does not support", full, UNSUPPORTED[full])
      end
      raise("load: '%s' is a PyTorch checkpoint that needs '%s', which is not allowed "
        .. "(only tensors, containers, numbers and strings load)", path, full)
    end,
    persistent_load = function(pid, n)
      if n ~= 5 or pid[1] ~= "storage" then pfail("has a persistent id that is not ('storage', type, key, location, numel)") end
      local stype, key, numel = pid[2], pid[3], pid[5]
      if type(stype) ~= "table" or not stype.storage_dtype then pfail("has a persistent id whose storage type is not a storage class") end
      if type(key) ~= "string" or key == "" or key:find("[/\\]") or key == "." or key == ".." then
        pfail("has a storage key that is not a plain name")
      end
      if math.type(numel) ~= "integer" or numel < 0 then pfail("storage '%s' has a bad element count", key) end
      local s = storages[key]
      if s then
        if s.dtype ~= stype.storage_dtype then pfail("storage '%s' is used with two types", key) end
        return s
      end
      local e = by_name[prefix .. "/data/" .. key]
      if not e then pfail("names storage '%s', but the archive has no entry '%s/data/%s'", key, prefix, key) end
      local dt = stype.storage_dtype
      local isz = dt.itemsize
      if numel > math.floor(e.size / isz) then
        pfail("storage '%s' should hold %d elements of %s (%s bytes) but its entry has %d bytes",
          key, numel, dt.name, tostring(numel * isz), e.size)
      end
      local bytes = zip.read_entry(read_at, e, fail)
      s = setmetatable({ storage = T._frombytes(bytes, dt, { numel }, 0, big), dtype = dt }, STORAGE_MT)
      storages[key] = s
      return s
    end,
    ordered = function(keys, map)
      nn = nn or require "ltensor.nn"
      return nn.ordered_dict(keys, map)
    end,
  }
  local pkl = zip.read_entry(read_at, by_name[prefix .. "/data.pkl"], fail)
  local v = pickle.load(pkl, env)
  if getmetatable(v) == STORAGE_MT then
    pfail("holds a bare storage, which ltensor does not load (save a tensor instead)")
  end
  return v, {}
end

-- ---------------------------------------------------------------------------
-- writing

-- Optimizer state_dicts ({state = {[i] = ...}, param_groups = {...}}): their
-- `state` is a dict in PyTorch even when its keys are 1..n
local function dict_tables(root)
  local out, seen = {}, {}
  local function walk(v)
    if type(v) ~= "table" or seen[v] then return end
    seen[v] = true
    if type(rawget(v, "state")) == "table" and type(rawget(v, "param_groups")) == "table" then
      out[rawget(v, "state")] = true
    end
    for _, x in next, v do walk(x) end
  end
  walk(root)
  return out
end

-- the folder name inside the archive: the file's base name, as torch.save does
local function archive_name(path)
  local base = path:match("([^/]*)$"):gsub("%.[^.]*$", "")
  if base == "" or base:find("[^%w_%-]") then base = "archive" end
  return base
end

function M.save(path, obj, atomic_write, opts)
  local function fail(msg, ...) raise("save: " .. msg, ...) end
  if opts ~= nil then
    if type(opts) ~= "table" then fail("options must be a table, got %s", type(opts)) end
    T._check_opts("save", opts, { "format", "zip64" })
  end
  local name = archive_name(path)
  local storages, order = {}, {}
  local function tensor(w, t)
    if t.dtype and not STORAGE_OF[t.dtype.name] then
      fail("a tensor has dtype %s, which PyTorch checkpoints cannot store (convert it, e.g. with t:to(T.%s))",
        t.dtype.name, t.dtype.is_complex and "complex64" or "int64")
    end
    local stride, shared = t:stride(), true
    for i = 1, #stride do if stride[i] < 0 then shared = false end end
    if not shared then t = t:contiguous() stride = t:stride() end
    local sv, key = T._storage_view(t)
    key = key .. t.dtype.name
    local s = storages[key]
    if not s then
      s = { id = tostring(#order), view = sv, dtype = t.dtype }
      storages[key] = s
      order[#order + 1] = s
    end
    w.global("torch._utils", "_rebuild_tensor_v2")
    w.op("((")
    w.string("storage")
    w.global("torch", STORAGE_OF[t.dtype.name])
    w.string(s.id)
    w.string("cpu")
    w.value(sv:numel())
    w.op("tQ")
    w.value(t:storage_offset())
    w.tuple(t.shape, #t.shape)
    w.tuple(stride, #stride)
    w.value(t.requires_grad and true or false)
    w.global("collections", "OrderedDict")
    w.op(")Rt")
    w.op("R")
  end
  local pkl = pickle.dump(obj, {
    fail = fail,
    is_tensor = T.is_tensor,
    tensor = tensor,
    as_dict = dict_tables(obj),
    order = function(t)
      local mt = getmetatable(t)
      if type(mt) == "table" and mt.__name == "ltensor.nn.StateDict" and type(mt.__keys) == "table" then
        -- its keys in order, then any added later (sorted)
        local keys, seen = {}, {}
        for _, k in ipairs(mt.__keys) do
          if rawget(t, k) ~= nil and not seen[k] then keys[#keys + 1] = k seen[k] = true end
        end
        local extra = {}
        for k in next, t do if not seen[k] then extra[#extra + 1] = k end end
        table.sort(extra, function(a, b) return tostring(a) < tostring(b) end)
        for _, k in ipairs(extra) do keys[#keys + 1] = k end
        return keys
      end
      return nil
    end,
  })
  local entries = { { name = name .. "/data.pkl", data = pkl } }
  for _, s in ipairs(order) do
    entries[#entries + 1] = { name = name .. "/data/" .. s.id, data = T._tobytes(s.view) }
  end
  entries[#entries + 1] = { name = name .. "/version", data = "3\n" }
  atomic_write("save", path, zip.write(entries, opts))
end

-- T.save's choice: {format = "pt"} as 4th argument, or a .pt / .pth path
function M.wants(path, opts)
  if type(opts) == "table" and opts.format ~= nil then return opts.format == "pt" end
  local ext = type(path) == "string" and path:lower():match("%.([^./]*)$")
  return ext == "pt" or ext == "pth"
end

return M
