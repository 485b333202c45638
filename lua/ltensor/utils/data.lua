-- ltensor.utils.data: T.utils.data (TensorDataset, Subset, DataLoader,
-- random_split) and T.read_csv / T.write_csv.
--
--   local ds = T.utils.data.TensorDataset(X, Y)
--   local loader = T.utils.data.DataLoader(ds, {batch_size = 64, shuffle = true})
--   for epoch = 1, 10 do
--     for xb, yb in loader:iter() do ... end      -- #loader batches
--   end
--
-- Datasets are indexed from 1. A TensorDataset (or a Subset of one) is
-- batched in C: one index_select (shuffled) or narrow+clone (in order) per
-- tensor per batch, never per-element Lua. Other datasets are any table
-- with a length (#ds) and items ds[i] (or ds:get(i)); their batches go
-- through collate_fn, by default PyTorch's default_collate: a list of
-- tensors is stacked along a new first dim, a list of numbers becomes a 1-D
-- tensor, a list of tuples (tables) is collated position by position.
--
-- num_workers is accepted for PyTorch code and ignored: batches are made in
-- the calling thread (each is a few C calls for tensor datasets).
--
-- Shuffling uses T.randperm, with {generator = g} when the loader was given
-- a generator (a T.Generator), so a seeded generator gives the same order
-- on every run; without one the default generator is used (T.manual_seed).
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local len = compat.len                    -- #x with __len on every host

local data = {}
local mtype = math.type

local fail = util.failer("ltensor.")
local is_t = util.is_tensor
local typename = util.typename

local function check_opts(fname, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" or is_t(opts) then
    fail(fname, "bad options argument (table expected, got %s)", typename(opts))
  end
  return T._check_opts(fname, opts, known)   -- the one checker: "did you mean" alike everywhere
end

local function int64_list(list)
  return T.tensor(list, { dtype = T.int64 })
end

-- ---------------------------------------------------------------------------
-- datasets

-- Dataset objects: #ds, ds[i] (a table of the i-th rows), ds:get(i) (the
-- same as several values).
local function dataset_class(name)
  local c = { _name = name }
  c.__name = "ltensor.utils.data." .. name
  c.__index = function(self, k)
    if mtype(k) == "integer" then return { self:get(k) } end
    return c[k]
  end
  c.__len = function(self) return self:_len() end
  return c
end

local function check_index(fname, i, n)
  if mtype(i) ~= "integer" then fail(fname, "index must be an integer, got %s", typename(i)) end
  if i < 0 then i = n + i + 1 end
  if i < 1 or i > n then
    fail(fname, "index %d is out of range for a dataset of size %d (indices are 1-based)", i, n)
  end
  return i
end

local TensorDataset = dataset_class("TensorDataset")
data.TensorDataset = setmetatable({}, { __index = TensorDataset, __call = function(_, ...)
  local n = select("#", ...)
  local ts = { ... }
  if n == 0 then fail("utils.data.TensorDataset", "expected at least one tensor") end
  for i = 1, n do
    local t = ts[i]
    if not is_t(t) then fail("utils.data.TensorDataset", "argument %d is not a tensor (got %s)", i, typename(t)) end
    -- (a callable table: the freed-tensor guard of public functions does not wrap it)
    if T._is_freed(t) then fail("utils.data.TensorDataset", "bad argument #%d (tensor was freed)", i) end
    if t:dim() == 0 then fail("utils.data.TensorDataset", "tensor %d is 0-dimensional: it has no samples", i) end
    if t:size(1) ~= ts[1]:size(1) then fail("utils.data.TensorDataset", "Size mismatch between tensors") end
  end
  return setmetatable({ tensors = ts, _n = ts[1]:size(1) }, TensorDataset)
end })
function TensorDataset:_len() return self._n end
function TensorDataset:get(i)
  i = check_index("utils.data.TensorDataset", i, self._n)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t[i] end
  return table.unpack(out)
end

local Subset = dataset_class("Subset")
-- Subset(dataset, indices): indices a list of 1-based positions or an int64 tensor
data.Subset = setmetatable({}, { __index = Subset, __call = function(_, ds, indices)
  local fname = "utils.data.Subset"
  if type(ds) ~= "table" then fail(fname, "expected a dataset, got %s", typename(ds)) end
  local idx
  if is_t(indices) then
    if indices:dim() ~= 1 then fail(fname, "indices must be a 1-D tensor") end
    idx = indices:to(T.int64)
  elseif type(indices) == "table" then
    for k, v in ipairs(indices) do
      if mtype(v) ~= "integer" then fail(fname, "indices[%d] is not an integer", k) end
    end
    idx = int64_list(indices)
  else
    fail(fname, "indices must be a list or a tensor, got %s", typename(indices))
  end
  local n = len(ds)
  if idx:numel() > 0 then
    local lo, hi = idx:min():item(), idx:max():item()
    if lo < 1 or hi > n then
      fail(fname, "index %d is out of range for a dataset of size %d (indices are 1-based)", lo < 1 and lo or hi, n)
    end
  end
  return setmetatable({ dataset = ds, indices = idx, _n = idx:numel() }, Subset)
end })
function Subset:_len() return self._n end
function Subset:get(i)
  i = check_index("utils.data.Subset", i, self._n)
  local j = self.indices[i]:item()
  local ds = self.dataset
  if ds.get then return ds:get(j) end
  local item = ds[j]
  if type(item) == "table" and not is_t(item) then return table.unpack(item) end
  return item
end

-- The base tensors and index map of a TensorDataset or nested Subsets of
-- one, for batching in C; nil for other datasets.
-- The base tensors of a TensorDataset or of nested Subsets of one, and the
-- row map (int64 tensor of 1-based rows, nil for all rows in order), for
-- batching in C; nil for other datasets. Nested maps compose: the outer
-- positions index the inner index list.
local function tensor_source(ds)
  local chain = {}
  while getmetatable(ds) == Subset do
    chain[#chain + 1] = ds.indices
    ds = ds.dataset
  end
  if getmetatable(ds) ~= TensorDataset then return nil end
  local map
  for k = 1, #chain do   -- chain[1] is the outermost
    if map == nil then map = chain[k] else map = chain[k]:index_select(1, map) end
  end
  return ds.tensors, map
end

-- random_split(dataset, lengths [, {generator = g}]): lengths are sizes
-- summing to #dataset, or fractions summing to 1 (PyTorch 1.13: floor of
-- each share, the remainder handed out one by one from the first).
function data.random_split(ds, lengths, opts)
  local fname = "utils.data.random_split"
  opts = check_opts(fname, opts, { generator = false })
  if type(ds) ~= "table" then fail(fname, "expected a dataset, got %s", typename(ds)) end
  if type(lengths) ~= "table" or #lengths == 0 then fail(fname, "lengths must be a non-empty list") end
  local n = len(ds)
  local sizes = {}
  local sum = 0
  for i, v in ipairs(lengths) do
    if type(v) ~= "number" or v < 0 then fail(fname, "lengths[%d] must be a non-negative number, got %s", i, tostring(v)) end
    sum = sum + v
  end
  if math.abs(sum - 1) < 1e-9 and sum <= 1 and not (n == 1 and #lengths == 1 and mtype(lengths[1]) == "integer") then
    for i, frac in ipairs(lengths) do
      if frac < 0 or frac > 1 then fail(fname, "Fraction at index %d is not between 0 and 1", i) end
      sizes[i] = math.floor(n * frac)
    end
    local total = 0
    for _, s in ipairs(sizes) do total = total + s end
    for i = 0, n - total - 1 do
      local k = i % #sizes + 1
      sizes[k] = sizes[k] + 1
    end
  else
    for i, v in ipairs(lengths) do
      if mtype(v) ~= "integer" then fail(fname, "lengths[%d] must be an integer (or all lengths fractions summing to 1)", i) end
      sizes[i] = v
    end
  end
  local total = 0
  for _, s in ipairs(sizes) do total = total + s end
  if total ~= n then fail(fname, "Sum of input lengths does not equal the length of the input dataset!") end
  local perm = opts.generator ~= nil and T.randperm(n, { generator = opts.generator }) or T.randperm(n)
  local out, off = {}, 0
  for i, s in ipairs(sizes) do
    out[i] = data.Subset(ds, perm:narrow(1, off + 1, s):clone())
    off = off + s
  end
  return out
end

-- ---------------------------------------------------------------------------
-- default_collate

local function collate(fname, items)
  local first = items[1]
  if is_t(first) then return T.stack(items, 1) end
  if type(first) == "number" then
    for _, v in ipairs(items) do
      if type(v) ~= "number" then fail(fname, "default_collate: a batch mixes numbers and %s", typename(v)) end
    end
    local all_int = true
    for _, v in ipairs(items) do if mtype(v) ~= "integer" then all_int = false break end end
    return T.tensor(items, { dtype = all_int and T.int64 or T.float64 })
  end
  if type(first) == "boolean" then return T.tensor(items, { dtype = T.bool }) end
  if type(first) == "table" then
    local out = {}
    local m = #first
    for k = 1, m do
      local col = {}
      for i, it in ipairs(items) do
        if type(it) ~= "table" or #it ~= m then fail(fname, "default_collate: each element in list of batch should be of equal size") end
        col[i] = it[k]
      end
      out[k] = collate(fname, col)
    end
    -- named fields collate by key
    for key in pairs(first) do
      if mtype(key) ~= "integer" then
        local col = {}
        for i, it in ipairs(items) do col[i] = it[key] end
        out[key] = collate(fname, col)
      end
    end
    return out
  end
  fail(fname, "default_collate: batch must contain tensors, numbers or tables; found %s", typename(first))
end
data.default_collate = function(items)
  if type(items) ~= "table" or getmetatable(items) ~= nil then
    fail("utils.data.default_collate", "bad argument #1 'batch' (list expected, got %s)", typename(items))
  end
  return collate("utils.data.default_collate", items)
end

-- ---------------------------------------------------------------------------
-- DataLoader(dataset, {batch_size = 1, shuffle = false, generator, drop_last = false, collate_fn})

local DataLoader = {}
DataLoader.__index = DataLoader
DataLoader.__name = "ltensor.utils.data.DataLoader"
data.DataLoader = setmetatable({}, { __index = DataLoader, __call = function(_, ds, opts)
  local fname = "utils.data.DataLoader"
  opts = check_opts(fname, opts, { batch_size = 1, shuffle = false, generator = false, drop_last = false,
    collate_fn = false, num_workers = 0 })
  if type(ds) ~= "table" or (getmetatable(ds) == nil and #ds == 0 and next(ds) ~= nil and ds.get == nil) then
    fail(fname, "expected a dataset (a table with a length and items), got %s", typename(ds))
  end
  local bs = opts.batch_size == nil and 1 or opts.batch_size
  if mtype(bs) ~= "integer" or bs < 1 then
    fail(fname, "batch_size should be a positive integer value, but got batch_size=%s", tostring(bs))
  end
  if opts.shuffle ~= nil and type(opts.shuffle) ~= "boolean" then
    fail(fname, "shuffle must be a boolean, got %s", typename(opts.shuffle))
  end
  if opts.drop_last ~= nil and type(opts.drop_last) ~= "boolean" then
    fail(fname, "drop_last must be a boolean, got %s", typename(opts.drop_last))
  end
  local nw = opts.num_workers
  if nw ~= nil and (mtype(nw) ~= "integer" or nw < 0) then
    fail(fname, "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
  end
  local cf = opts.collate_fn
  if cf ~= nil and type(cf) ~= "function" and not (getmetatable(cf) or {}).__call then
    fail(fname, "collate_fn must be a function, got %s", typename(cf))
  end
  local self = setmetatable({ dataset = ds, batch_size = bs, shuffle = opts.shuffle or false,
    generator = opts.generator, drop_last = opts.drop_last or false, collate_fn = cf }, DataLoader)
  return self
end })

function DataLoader:__len()
  local n = len(self.dataset)
  if self.drop_last then return math.floor(n / self.batch_size) end
  return math.floor((n + self.batch_size - 1) / self.batch_size)
end

local function unpack_batch(b)
  if is_t(b) or type(b) ~= "table" then return b end
  return table.unpack(b)
end

-- loader:iter(): an iterator over the batches, each as several values
-- (the dataset's tensors, or what collate_fn returned, unpacked if a list).
function DataLoader:iter()
  local ds, bs = self.dataset, self.batch_size
  local n = len(ds)
  local nb = len(self)
  local order
  if self.shuffle then
    if self.generator ~= nil then order = T.randperm(n, { generator = self.generator })
    else order = T.randperm(n) end
  end
  local tensors, map = nil, nil
  if not self.collate_fn then tensors, map = tensor_source(ds) end
  if tensors and map then
    order = order and map:index_select(1, order) or map
  end
  local b = 0
  return function()
    b = b + 1
    if b > nb then return nil end
    local first = (b - 1) * bs + 1
    local len = math.min(bs, n - first + 1)
    if tensors then
      local out = {}
      if order then
        local idx = order:narrow(1, first, len)
        for k, t in ipairs(tensors) do out[k] = t:index_select(1, idx) end
      else
        for k, t in ipairs(tensors) do out[k] = t:narrow(1, first, len):clone() end
      end
      return table.unpack(out)
    end
    local items = {}
    for i = 1, len do
      local j = order and order[first + i - 1]:item() or first + i - 1
      local item
      if ds.get then item = { ds:get(j) } else item = ds[j] end
      if type(item) == "table" and not is_t(item) and #item == 1 and ds.get then item = item[1] end
      items[i] = item
    end
    if self.collate_fn then return unpack_batch(self.collate_fn(items)) end
    return unpack_batch(collate("utils.data.DataLoader", items))
  end
end
-- loader.iter() / ds.get(1) for loader:iter() / ds:get(1): say so
-- (util.self_checked)
util.check_methods(DataLoader, { prefix = "utils.data.DataLoader.", expected = "ltensor.utils.data.DataLoader",
  var = "loader", key = "batch_size" }, { "iter" })
util.check_methods(TensorDataset, { prefix = "utils.data.TensorDataset.",
  expected = "ltensor.utils.data.TensorDataset", var = "ds", key = "tensors" }, { "get" })
util.check_methods(Subset, { prefix = "utils.data.Subset.", expected = "ltensor.utils.data.Subset", var = "ds",
  key = "indices" }, { "get" })

-- `for xb, yb in loader do ... end`, PyTorch's idiom: the generic for calls
-- loader(nil, control), control nil at the start of each loop, so every loop
-- is a new epoch (breaking out and looping again starts over); the batches
-- come from an iterator kept per loader (weak keys).  `loader()` with no
-- arguments still returns a fresh iterator, as loader:iter() does; two
-- loops over one loader at the same time want loader:iter() each.
local epochs = setmetatable({}, { __mode = "k" })
function DataLoader.__call(self, ...)
  if select("#", ...) == 0 then return self:iter() end
  local _, control = ...
  local it = epochs[self]
  if control == nil or it == nil then
    it = self:iter()
    epochs[self] = it
  end
  local function finish(first, ...)
    if first == nil then epochs[self] = nil end
    return first, ...
  end
  return finish(it())
end

-- ---------------------------------------------------------------------------
-- CSV

local tmp_counter = 0
local function atomic_write(fname, path, text)
  -- io.lua's writer (permission check, hard links, the temporary written
  -- through its creating descriptor) when it is loaded, as it is with T
  if T._atomic_write then return T._atomic_write(fname, path, { text }) end
  tmp_counter = tmp_counter + 1
  local seed = tostring({}) .. os.time() .. os.clock() .. tmp_counter
  local h = 5381
  for i = 1, #seed do h = (h * 33 + seed:byte(i)) % 4294967296 end
  local tmp = string.format("%s.tmp-%08x%d", path, h, tmp_counter)
  local f, oerr = io.open(tmp, "wb")
  -- the error names the user's path, not the temporary file next to it
  if not f then
    fail(fname, "cannot open '%s' for writing: %s", path, (tostring(oerr):gsub("^" .. tmp:gsub("%p", "%%%0") .. ": ", "")))
  end
  local pok, ok, werr = pcall(function()
    local ok, werr = f:write(text)
    if ok and T._fsync then ok, werr = T._fsync(f) end
    return ok, werr
  end)
  if not pok then ok, werr = false, ok end
  f:close()
  if ok then ok, werr = os.rename(tmp, path) end
  if not ok then
    os.remove(tmp)
    fail(fname, "cannot write '%s': %s", path, tostring(werr))
  end
end

-- Split one (header) line into fields: blanks around fields dropped, a
-- double-quoted field may hold the delimiter and "" for a quote.
local function split_fields(line, delim)
  local out = {}
  local i, n = 1, #line
  line = line:gsub("\r$", "")
  n = #line
  while true do
    while i <= n and (line:sub(i, i) == " " or line:sub(i, i) == "\t") do i = i + 1 end
    local field
    if line:sub(i, i) == '"' then
      local parts = {}
      local j = i + 1
      while true do
        local q = line:find('"', j, true)
        if not q then parts[#parts + 1] = line:sub(j) j = n + 1 break end
        parts[#parts + 1] = line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then parts[#parts + 1] = '"' j = q + 2
        else j = q + 1 break end
      end
      field = table.concat(parts)
      local d = line:find(delim, j, true)
      i = d and d or n + 1
    else
      local d = line:find(delim, i, true)
      field = line:sub(i, (d or n + 1) - 1):gsub("[ \t]+$", "")
      i = d and d or n + 1
    end
    out[#out + 1] = field
    if i > n then break end
    i = i + 1   -- past the delimiter
    if i > n then out[#out + 1] = "" break end
  end
  return out
end

-- T.read_csv(path [, {header = true, delimiter = ",", dtype = default dtype, columns = {...}}])
--   -> 2-D tensor [, column names (with a header)]
-- columns: names (with a header) or 1-based positions, in the order wanted.
-- Values are parsed in C (strtod/strtof: decimal, exponent, nan, inf);
-- an empty field reads as NaN; a field that is not a number raises naming
-- its line and column.
function T.read_csv(path, opts)
  local fname = "read_csv"
  opts = check_opts(fname, opts, { header = true, delimiter = ",", dtype = false, columns = false })
  if type(path) ~= "string" then fail(fname, "expected a file name, got %s", typename(path)) end
  local header = opts.header
  if header == nil then header = true end
  if type(header) ~= "boolean" then fail(fname, "header must be a boolean, got %s", typename(header)) end
  local delim = opts.delimiter or ","
  if type(delim) ~= "string" or #delim ~= 1 then
    fail(fname, "delimiter must be a single character, got %s", type(delim) == "string" and ("'" .. delim .. "'") or typename(delim))
  end
  if delim == '"' or delim == "\n" or delim == "\r" then fail(fname, "delimiter can't be '%s'", delim == '"' and '"' or "newline") end
  local dtype = opts.dtype or T.get_default_dtype()
  if getmetatable(dtype) ~= getmetatable(T.float32) then
    local ok, dt = pcall(function() return T[dtype] end)
    if type(dtype) == "string" and ok and getmetatable(dt) == getmetatable(T.float32) then dtype = dt
    else fail(fname, "dtype must be a dtype, got %s", typename(dtype)) end
  end
  if dtype.is_complex then fail(fname, "complex dtypes are not supported") end
  local f, err = io.open(path, "rb")
  if not f then fail(fname, "cannot open '%s': %s", path, tostring(err)) end
  local text = f:read("*a")
  f:close()
  if text:sub(1, 3) == "\239\187\191" then text = text:sub(4) end   -- UTF-8 byte-order mark
  -- the first non-blank line: the header, or the row that fixes the column count
  local pos, line_no = 1, 1
  local first_line
  while pos <= #text do
    local e = text:find("\n", pos, true) or (#text + 1)
    local l = text:sub(pos, e - 1)
    if l:find("[^ \t\r]") then first_line = l break end
    pos = e + 1
    line_no = line_no + 1
  end
  if not first_line then
    if header then fail(fname, "'%s' is empty (no header line)", path) end
    return T.zeros({ 0, 0 }, { dtype = dtype })
  end
  local fields = split_fields(first_line, delim)
  local ncols = #fields
  local names
  local body, body_line = text, 1
  if header then
    names = fields
    local e = text:find("\n", pos, true)
    body = e and text:sub(e + 1) or ""
    body_line = line_no + 1
  end
  local cols
  if opts.columns ~= nil then
    if type(opts.columns) ~= "table" then fail(fname, "columns must be a list, got %s", typename(opts.columns)) end
    cols = {}
    for i, c in ipairs(opts.columns) do
      if type(c) == "string" then
        if not names then fail(fname, "column names need a header (got '%s' with header = false)", c) end
        local found
        for j, nm in ipairs(names) do if nm == c then found = j break end end
        if not found then
          fail(fname, "no column named '%s' (the columns are: %s)", c, table.concat(names, ", "))
        end
        cols[i] = found
      elseif mtype(c) == "integer" then
        if c < 1 or c > ncols then
          fail(fname, "column %d is out of range (the file has %d columns; columns are 1-based)", c, ncols)
        end
        cols[i] = c
      else
        fail(fname, "columns[%d] must be a name or a 1-based position, got %s", i, typename(c))
      end
    end
  end
  -- integral dtypes parse as int64 (exact past 2^53; the parser refuses a
  -- value that is not an integer), floating ones as float32/float64
  local parse_dt = dtype == T.float32 and T.float32 or T.float64
  if not dtype.is_floating_point then parse_dt = T.int64 end
  local t = T._csv_parse(body, delim, body_line, parse_dt, ncols, cols, tostring(dtype))
  if dtype ~= parse_dt then t = t:to(dtype) end
  if names and cols then
    local sel = {}
    for i, c in ipairs(cols) do sel[i] = names[c] end
    names = sel
  end
  if names then return t, names end
  return t
end

-- T.write_csv(path, t [, {header = names, delimiter = ","}])
-- t: 1-D (one column) or 2-D, real dtype. Floats are written with the
-- fewest digits that read back to the same value; integers and booleans
-- as integers. The file is replaced atomically.
function T.write_csv(path, t, opts)
  local fname = "write_csv"
  opts = check_opts(fname, opts, { header = false, delimiter = "," })
  if type(path) ~= "string" then fail(fname, "expected a file name, got %s", typename(path)) end
  if not is_t(t) then fail(fname, "bad argument #2 (tensor expected, got %s)", typename(t)) end
  if t:dim() == 1 then t = t:reshape({ -1, 1 }) end
  if t:dim() ~= 2 then fail(fname, "expected a 1-D or 2-D tensor, got %d dimensions", t:dim()) end
  local dt = t.dtype
  if dt.is_complex then fail(fname, "complex tensors are not supported") end
  local delim = opts.delimiter or ","
  if type(delim) ~= "string" or #delim ~= 1 or delim == '"' or delim == "\n" then
    fail(fname, "delimiter must be a single character other than a quote or newline")
  end
  if dt == T.float32 or dt == T.float64 then t = t:detach():contiguous()
  elseif dt.is_floating_point then t = t:detach():to(T.float32):contiguous()
  else t = t:to(T.int64):contiguous() end
  local parts = {}
  if opts.header ~= nil then
    local h = opts.header
    if type(h) ~= "table" then fail(fname, "header must be a list of column names, got %s", typename(h)) end
    if #h ~= t:size(2) then fail(fname, "header has %d names for %d columns", #h, t:size(2)) end
    local names = {}
    for i, nm in ipairs(h) do
      nm = tostring(nm)
      if nm:find('[' .. delim:gsub("%p", "%%%0") .. '"\n\r]') then nm = '"' .. nm:gsub('"', '""') .. '"' end
      names[i] = nm
    end
    parts[1] = table.concat(names, delim) .. "\n"
  end
  parts[#parts + 1] = T._csv_format(t, delim)
  atomic_write(fname, path, table.concat(parts))
end

return data
