-- ltensor.io: T.save / T.load (safetensors) and T.save_npy / T.load_npy (.npy).
-- T.load tells the format by its first bytes: a zip is a PyTorch checkpoint
-- (io/pt.lua), "\147NUMPY" a .npy file, anything else safetensors; T.save
-- writes a PyTorch checkpoint for a .pt/.pth path or {format = "pt"} as its
-- 4th argument (the 3rd stays safetensors metadata: {format = "pt"} there is
-- the metadata PyTorch's safetensors writers put, not a format choice).
--
-- safetensors (https://github.com/huggingface/safetensors): an 8-byte
-- little-endian header length N, N bytes of JSON
--   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3],
--    "data_offsets": [begin, end]}, ...}
-- padded with spaces to a multiple of 8, then the tensors' bytes. Like the
-- reference writer, tensors are laid out by decreasing element size, then by
-- name, so every tensor is aligned to its element size.
--
-- T.save(path, t) stores a single tensor under the name "tensor" (what
-- PyTorch sees) and marks the file with the metadata entry
-- "ltensor.format" = "tensor", so that T.load(path) gives back the tensor
-- itself. T.save(path, {name = t, ...} [, metadata]) stores named tensors and
-- T.load returns the table name -> tensor. T.load's second result is the
-- file's metadata (a table of strings, possibly empty).
--
-- dtypes: safetensors has no code for complex32/complex128 and .npy none for
-- bfloat16/complex32; saving those raises an error that says how to convert.
--
-- Writes are atomic: the bytes go to "<path>.tmp-<random>", are flushed to
-- disk, and the file is renamed over path. Reads check every size and offset
-- against the real file size before allocating, so a corrupt or hostile file
-- gives an "ltensor.load: ..." error, never a crash or a huge allocation.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local sfmt, concat = string.format, table.concat

local fail = util.fail

-- ===========================================================================
-- minimal JSON (enough for safetensors headers)

local json = {}

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
              ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or sfmt("\\u%04x", c:byte())
  end) .. '"'
end

-- v: string, integer, boolean, array {n = ..., ...} or ordered object
-- {keys = {...}, values = {...}} (order matters to the format).
function json.encode(v)
  local tv = type(v)
  if tv == "string" then return encode_string(v) end
  if tv == "number" then
    assert(math.type(v) == "integer", "json: only integers are encoded")
    return sfmt("%d", v)
  end
  if tv == "boolean" then return tostring(v) end
  if v.keys then
    local parts = {}
    for i, k in ipairs(v.keys) do parts[i] = encode_string(k) .. ":" .. json.encode(v.values[k]) end
    return "{" .. concat(parts, ",") .. "}"
  end
  local parts = {}
  for i = 1, #v do parts[i] = json.encode(v[i]) end
  return "[" .. concat(parts, ",") .. "]"
end

local MAX_DEPTH = 64

-- Decodes s; objects become Lua tables with a __keys list (insertion order)
-- and reject duplicate keys; null is json.null. Raises a plain message.
json.null = setmetatable({}, { __name = "json.null" })

-- run a parser over its whole text s: value(1), then only white space
-- (skip() passes it and returns the position after it); the value, or nil
-- and the message of the syntax error raised as {[key] = msg} (err(msg)
-- raises one); any other error propagates
local function parse_whole(s, key, value, skip, err)
  local ok, res = pcall(function()
    local v = value(1)
    if skip() <= #s then err("trailing characters") end
    return v
  end)
  if ok then return res end
  if type(res) == "table" and res[key] then return nil, res[key] end
  error(res, 0)
end

function json.decode(s)
  local pos = 1
  local function err(msg) error({ json_error = sfmt("%s at byte %d", msg, pos) }) end
  local function skip()
    pos = s:find("[^ \t\r\n]", pos) or #s + 1
    return pos
  end
  local value
  local function str()
    pos = pos + 1   -- opening quote
    local parts = {}
    while true do
      local a, b = s:find('^[^"\\%c]+', pos)
      if a then parts[#parts + 1] = s:sub(a, b); pos = b + 1 end
      local c = s:sub(pos, pos)
      if c == '"' then pos = pos + 1; return concat(parts) end
      if c == "" then err("unterminated string") end
      if c ~= "\\" then err("control character in string") end
      local e = s:sub(pos + 1, pos + 1)
      local simple = ({ ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" })[e]
      if simple then
        parts[#parts + 1] = simple; pos = pos + 2
      elseif e == "u" then
        local hex = s:match("^%x%x%x%x", pos + 2)
        if not hex then err("bad \\u escape") end
        local cp = tonumber(hex, 16)
        pos = pos + 6
        if cp >= 0xD800 and cp <= 0xDBFF then   -- surrogate pair
          local lo = s:match("^\\u(%x%x%x%x)", pos)
          lo = lo and tonumber(lo, 16)
          if not lo or lo < 0xDC00 or lo > 0xDFFF then err("unpaired surrogate") end
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          pos = pos + 6
        elseif cp >= 0xDC00 and cp <= 0xDFFF then
          err("unpaired surrogate")
        end
        parts[#parts + 1] = compat.utf8.char(cp)
      else
        err("bad escape")
      end
    end
  end
  local function num()
    local lit = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if not lit or not lit:match("^-?%d") then err("unexpected character") end
    if not lit:match("^-?0$") and lit:match("^-?0%d") then err("leading zero in number") end
    pos = pos + #lit
    local i = lit:match("^-?%d+$") and math.tointeger(tonumber(lit))
    if i then return i end
    local f = tonumber(lit)
    if not f then err("bad number") end
    return f
  end
  function value(depth)
    if depth > MAX_DEPTH then err("nesting too deep") end
    skip()
    local c = s:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local obj, keys = {}, {}
      skip()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return setmetatable(obj, { __keys = keys }) end
      while true do
        skip()
        if s:sub(pos, pos) ~= '"' then err("expected a string key") end
        local k = str()
        if obj[k] ~= nil then err("duplicate key '" .. k .. "'") end
        skip()
        if s:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        obj[k] = value(depth + 1)
        keys[#keys + 1] = k
        skip()
        c = s:sub(pos, pos)
        pos = pos + 1
        if c == "}" then return setmetatable(obj, { __keys = keys }) end
        if c ~= "," then pos = pos - 1; err("expected ',' or '}'") end
      end
    elseif c == "[" then
      pos = pos + 1
      local arr = {}
      skip()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = value(depth + 1)
        skip()
        c = s:sub(pos, pos)
        pos = pos + 1
        if c == "]" then return arr end
        if c ~= "," then pos = pos - 1; err("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    elseif s:find("^true", pos) then pos = pos + 4; return true
    elseif s:find("^false", pos) then pos = pos + 5; return false
    elseif s:find("^null", pos) then pos = pos + 4; return json.null
    elseif c == "" then err("unexpected end of input")
    end
    return num()
  end
  return parse_whole(s, "json_error", value, skip, err)
end

T._json = json   -- for tests and other modules

-- ===========================================================================
-- files

local tmp_counter = 0
local function tmp_name(path)
  -- unique per call without touching math.random (the user's sequence)
  tmp_counter = tmp_counter + 1
  local seed = tostring({}) .. os.time() .. os.clock() .. tmp_counter
  local h = 5381
  for i = 1, #seed do h = (h * 33 + seed:byte(i)) % 4294967296 end
  return sfmt("%s.tmp-%08x%d", path, h, tmp_counter)
end

-- Write chunks to path atomically, without destroying what stands there:
-- the bytes go to a temporary file beside the real target (through
-- symlinks: the link stays and its file gets the data), created with the
-- existing file's permission bits (a private 0600 file stays private), are
-- flushed to disk, and the file is renamed over the target; then the
-- directory is flushed so the rename survives a crash.  A device node or
-- FIFO is written in place, never replaced.  The temporary is removed on
-- every failure.
local function write_chunks(f, chunks, nosync)
  -- pcall: an error raised (not returned) on the way, such as running out
  -- of memory, must not leave the temporary behind either
  local pok, ok, werr = pcall(function()
    local ok, werr = true, nil
    for i = 1, #chunks do
      ok, werr = f:write(chunks[i])
      if not ok then break end
    end
    if ok and not nosync then ok, werr = T._fsync(f) end
    if ok and nosync then ok, werr = f:flush() end
    return ok, werr
  end)
  if not pok then ok, werr = false, ok end
  return ok, werr
end

local function atomic_write(fname, path, chunks)
  if type(path) ~= "string" then fail(fname, "expected a file name, got %s", type(path)) end
  local kind, mode, target, nlink, writable = T._path_info(path)
  if not kind then fail(fname, "cannot write '%s': %s", path, mode) end
  if kind == "other" then
    local f, oerr = io.open(path, "wb")
    if not f then fail(fname, "cannot open '%s' for writing: %s", path, oerr) end
    -- a pipe or device cannot be synced; flushing is all there is
    local ok, werr = write_chunks(f, chunks, true)
    f:close()
    if not ok then fail(fname, "cannot write '%s': %s", path, tostring(werr)) end
    return
  end
  -- an existing file the caller may not write is refused: renaming over it
  -- (allowed by a writable directory) would replace someone else's file
  if kind == "regular" and not writable then fail(fname, "cannot write '%s': Permission denied", path) end
  -- several hard links: written in place through the shared inode, so that
  -- every name sees the new data (a rename would split the link); this
  -- write is not atomic (see _write_in_place)
  if kind == "regular" and nlink > 1 then
    local ok, werr = T._write_in_place(target, chunks)
    if not ok then fail(fname, "cannot write '%s': %s", path, tostring(werr)) end
    return
  end
  local tmp = tmp_name(target)
  -- created, written and synced through one descriptor (T._write_new): the
  -- temporary is never reopened by name; removed by it on any failure
  local ok, werr, stage = T._write_new(tmp, mode, chunks)
  if not ok and stage == "open" then fail(fname, "cannot open '%s' for writing: %s", path, tostring(werr)) end
  if not ok then fail(fname, "cannot write '%s': %s", path, tostring(werr)) end
  ok, werr = os.rename(tmp, target)
  if not ok then
    os.remove(tmp)
    fail(fname, "cannot write '%s': %s", path, tostring(werr))
  end
  local dir = target:match("^(.*)/[^/]*$") or "."
  if dir == "" then dir = "/" end
  local dok, derr = T._fsync_dir(dir)
  if not dok then fail(fname, "wrote '%s' but could not flush its directory: %s", path, tostring(derr)) end
end

-- shared with the other writers (images, plots, csv): one atomic writer
T._atomic_write = atomic_write

local function open_read(fname, path)
  if type(path) ~= "string" then fail(fname, "expected a file name, got %s", type(path)) end
  local f, err = io.open(path, "rb")
  if not f then fail(fname, "cannot open '%s': %s", path, err) end
  local size = f:seek("end")
  f:seek("set", 0)
  -- a directory opens on Linux but cannot be read
  local probe, rerr = f:read(0)
  if not size or (not probe and rerr) then
    f:close()
    fail(fname, "cannot read '%s': %s", path, tostring(rerr or "not a regular file"))
  end
  return f, size
end

-- Reads exactly n bytes at offset, or fails naming the file.
local function read_at(fname, f, path, offset, n)
  f:seek("set", offset)
  local s = n > 0 and f:read(n) or ""
  if not s or #s ~= n then fail(fname, "'%s' is truncated", path) end
  return s
end

-- numel * itemsize, or nil when it would not fit in a Lua integer (the
-- callers then compare it with the bytes really there before reading).
local function byte_count(shape, itemsize)
  for _, n in ipairs(shape) do if n == 0 then return 0 end end
  local nb = itemsize
  for _, n in ipairs(shape) do
    if nb > math.floor(math.maxinteger / n) then return nil end
    nb = nb * n
  end
  return nb
end

local function shape_str(shape)
  return "[" .. concat(shape, ", ") .. "]"
end

-- ===========================================================================
-- safetensors

local ST_CODE = {
  bool = "BOOL", uint8 = "U8", int8 = "I8", int16 = "I16", uint16 = "U16",
  int32 = "I32", uint32 = "U32", int64 = "I64", uint64 = "U64",
  float16 = "F16", bfloat16 = "BF16", float32 = "F32", float64 = "F64",
  complex64 = "C64",
}
local ST_DTYPE = {}
for name, code in pairs(ST_CODE) do ST_DTYPE[code] = T[name] end

local SINGLE_KEY, SINGLE_VALUE = "ltensor.format", "tensor"
local MAX_HEADER = 100000000   -- the reference implementation's limit

local function check_name(fname, k)
  if type(k) ~= "string" then fail(fname, "tensor names must be strings, got %s", type(k)) end
  if not compat.utf8.len(k) then fail(fname, "tensor name %q is not valid UTF-8", k) end
  if k == "__metadata__" then fail(fname, "'__metadata__' is reserved and cannot name a tensor") end
end

--- T.save(path, tensor_or_table [, metadata [, {format = "pt" | "safetensors"}]])
-- The third argument is an options table when it names a format (SPEC §12:
-- T.save(path, tbl, {format = "pt"})): {format = "pt"|"safetensors",
-- metadata = {...}, zip64 = ...}.  Any other table is the safetensors
-- metadata itself (the older form T.save(path, tbl, metadata [, opts])).
local SAVE_OPTS = { format = true, metadata = true, zip64 = true }
local function save_args(third, fourth)
  if type(third) ~= "table" or (third.format ~= "pt" and third.format ~= "safetensors") then return third, fourth end
  for k in pairs(third) do
    if not SAVE_OPTS[k] then
      fail("save", "unknown option '%s' (options: format, metadata, zip64)", tostring(k))
    end
  end
  if fourth ~= nil then fail("save", "options given twice (as argument 3 and argument 4)") end
  return third.metadata, { format = third.format, zip64 = third.zip64 }
end

function T.save(path, obj, metadata, opts)
  if type(path) ~= "string" then fail("save", "expected a file name, got %s", type(path)) end
  metadata, opts = save_args(metadata, opts)
  -- a PyTorch checkpoint for a .pt/.pth path or {format = "pt"} (io/pt.lua)
  if require("ltensor.io.pt").wants(path, opts) then
    if metadata ~= nil and (type(metadata) ~= "table" or next(metadata) ~= nil) then
      fail("save", "a PyTorch checkpoint has no metadata: pass nil (metadata is for safetensors files)")
    end
    return require("ltensor.io.pt").save(path, obj, atomic_write, opts)
  end
  if opts ~= nil then
    if type(opts) ~= "table" then fail("save", "options must be a table, got %s", type(opts)) end
    T._check_opts("save", opts, { "format", "zip64" })
    if opts.format ~= "safetensors" and opts.format ~= nil then
      fail("save", "unknown format '%s' (\"pt\" or \"safetensors\")", tostring(opts.format))
    end
  end
  local items = {}
  local meta = {}
  -- a nested checkpoint: tensors under flattened keys, the rest as a tree in
  -- the metadata (io/checkpoint.lua)
  local checkpoint = require "ltensor.io.checkpoint"
  if checkpoint.is_nested(obj) then
    local tree
    obj, tree = checkpoint.flatten(obj)
    meta[checkpoint.KEY] = checkpoint.encode(tree)
  end
  if T.is_tensor(obj) then
    items[1] = { name = "tensor", t = obj }
    meta[SINGLE_KEY] = SINGLE_VALUE
  elseif type(obj) == "table" then
    for k, v in pairs(obj) do
      check_name("save", k)
      if not T.is_tensor(v) then fail("save", "value for '%s' is a %s, not a tensor", k, type(v)) end
      items[#items + 1] = { name = k, t = v }
    end
  else
    fail("save", "expected a tensor or a table of named tensors, got %s", type(obj))
  end
  if metadata ~= nil then
    if type(metadata) ~= "table" then fail("save", "metadata must be a table of strings, got %s", type(metadata)) end
    for k, v in pairs(metadata) do
      if type(k) ~= "string" or type(v) ~= "string" then
        fail("save", "metadata must map strings to strings (key %s)", tostring(k))
      end
      if not compat.utf8.len(k) or not compat.utf8.len(v) then fail("save", "metadata must be valid UTF-8") end
      meta[k] = v
    end
  end
  for _, it in ipairs(items) do
    local dt = it.t.dtype
    it.code = ST_CODE[dt.name]
    if not it.code then
      fail("save", "tensor '%s' has dtype %s, which safetensors cannot store (convert it, e.g. with t:to(T.%s))",
        it.name, dt.name, dt.is_complex and "complex64" or "float32")
    end
    it.size = dt.itemsize
  end
  -- larger elements first, then by name: keeps every tensor aligned
  table.sort(items, function(a, b)
    if a.size ~= b.size then return a.size > b.size end
    return a.name < b.name
  end)
  local hdr = { keys = {}, values = {} }
  local mkeys = {}
  for k in pairs(meta) do mkeys[#mkeys + 1] = k end
  if #mkeys > 0 then
    table.sort(mkeys)
    hdr.keys[1] = "__metadata__"
    hdr.values.__metadata__ = { keys = mkeys, values = meta }
  end
  local chunks = { "", "" }
  local offset = 0
  for _, it in ipairs(items) do
    local bytes = T._tobytes(it.t)
    local shape = it.t.shape
    hdr.keys[#hdr.keys + 1] = it.name
    hdr.values[it.name] = { keys = { "dtype", "shape", "data_offsets" },
      values = { dtype = it.code, shape = shape, data_offsets = { offset, offset + #bytes } } }
    offset = offset + #bytes
    chunks[#chunks + 1] = bytes
  end
  local header = json.encode(hdr)
  header = header .. string.rep(" ", (8 - #header % 8) % 8)
  chunks[1] = compat.spack("<I8", #header)
  chunks[2] = header
  atomic_write("save", path, chunks)
end

local function st_int(name, what, v)
  if math.type(v) ~= "integer" or v < 0 then
    fail("load", "tensor '%s': %s must be non-negative integers", name, what)
  end
  return v
end

-- A file whose length prefix is no safetensors header and whose 9th byte
-- is not the header's '{': not a safetensors file at all.  Says what it
-- starts with (and what it looks like, for a few common formats) rather
-- than reporting a nonsense header length.
local LOOKS_LIKE = {
  { "\137PNG", "a PNG image: T.load_image reads it" }, { "\255\216\255", "a JPEG image" },
  { "\31\139", "gzip-compressed: decompress it first" }, { "\137HDF", "an HDF5 file (Keras .h5?)" },
  { "{", "JSON or text" }, { "\128", "a pickle (torch.save's legacy format?)" },
}
local function unknown_format(path, f)
  f:seek("set", 0)
  local head = f:read(16) or ""
  f:seek("set", 8)
  if head:sub(9, 9) == "{" then return end   -- a safetensors file: its own messages follow
  local shown = head:gsub("[^\32-\126]", function(c) return ("\\x%02x"):format(c:byte()) end)
  local hint = ""
  for _, k in ipairs(LOOKS_LIKE) do
    if head:sub(1, #k[1]) == k[1] then hint = " (" .. k[2] .. ")" break end
  end
  fail("load", "'%s' is not a safetensors, .npy or PyTorch file: it starts with \"%s\"%s", path, shown, hint)
end

--- T.load(path) -> table name -> tensor (or the tensor saved alone), metadata
function T.load(path)
  local f, size = open_read("load", path)
  -- a NumPy file handed to T.load: read it as T.load_npy would
  local magic = f:read(6)
  -- ("\147" is 0x93: Lua 5.1 has no \x escapes)
  if magic == "\147NUMPY" then f:close() return T.load_npy(path) end
  f:seek("set", 0)
  local ok, res, meta = pcall(function()
    -- a zip is a PyTorch checkpoint (io/pt.lua); a pickle's PROTO 2 + LONG1
    -- opening is torch.save's legacy format
    local kind = magic and magic:sub(1, 4)
    if kind == "PK\3\4" or kind == "PK\5\6" then return require("ltensor.io.pt").load(path, f, size) end
    if kind == "\128\2\138\10" then
      fail("load", "'%s' is a PyTorch checkpoint in the legacy format (torch.save with "
        .. "_use_new_zipfile_serialization=False), which is not supported: re-save it with "
        .. "torch.save(torch.load(path), path) in PyTorch >= 1.6", path)
    end
    if size < 8 then fail("load", "'%s' is too small to be a safetensors file (%d bytes)", path, size) end
    local n = compat.sunpack("<i8", f:read(8))
    if n < 2 or n > MAX_HEADER or n > size - 8 then unknown_format(path, f) end
    if n < 0 or n > MAX_HEADER then
      fail("load", "'%s': header length is larger than the limit of %d bytes", path, MAX_HEADER)
    end
    if n > size - 8 then
      fail("load", "'%s': header length %d is larger than the file (%d bytes)", path, n, size)
    end
    if n < 2 then fail("load", "'%s': header too small (%d bytes)", path, n) end
    local header = f:read(n)
    if header:sub(1, 1) ~= "{" then fail("load", "'%s': header does not start with '{'", path) end
    if not compat.utf8.len(header) then fail("load", "'%s': header is not valid UTF-8", path) end
    local obj, jerr = json.decode(header)
    if obj == nil then fail("load", "'%s': malformed header JSON: %s", path, jerr) end
    if type(obj) ~= "table" or not getmetatable(obj) then fail("load", "'%s': header must be a JSON object", path) end
    local data_start = 8 + n
    local data_len = size - data_start
    local metadata = {}
    local entries = {}
    for _, name in ipairs(getmetatable(obj).__keys) do
      local info = obj[name]
      if name == "__metadata__" then
        if type(info) ~= "table" or not getmetatable(info) then
          fail("load", "'%s': __metadata__ must be an object of strings", path)
        end
        for k, v in pairs(info) do
          if type(v) ~= "string" then fail("load", "'%s': __metadata__ value for '%s' is not a string", path, k) end
          metadata[k] = v
        end
      else
        if type(info) ~= "table" or not getmetatable(info) then
          fail("load", "tensor '%s': expected an object with dtype, shape and data_offsets", name)
        end
        local code, shape, offs = info.dtype, info.shape, info.data_offsets
        if type(code) ~= "string" then fail("load", "tensor '%s': missing dtype", name) end
        local dt = ST_DTYPE[code]
        if not dt then fail("load", "tensor '%s': unknown or unsupported dtype '%s'", name, code) end
        if type(shape) ~= "table" or getmetatable(shape) then fail("load", "tensor '%s': missing shape", name) end
        if #shape > T.MAX_DIMS then
          fail("load", "tensor '%s': %d dimensions is more than the %d supported", name, #shape, T.MAX_DIMS)
        end
        for i = 1, #shape do st_int(name, "shape entries", shape[i]) end
        if type(offs) ~= "table" or getmetatable(offs) or #offs ~= 2 then
          fail("load", "tensor '%s': data_offsets must be [begin, end]", name)
        end
        local b, e = st_int(name, "data_offsets", offs[1]), st_int(name, "data_offsets", offs[2])
        if e < b then fail("load", "tensor '%s': data_offsets [%d, %d] end before they begin", name, b, e) end
        if e > data_len then
          fail("load", "tensor '%s': data_offsets [%d, %d] are outside the %d bytes of data (truncated file?)",
            name, b, e, data_len)
        end
        local nb = byte_count(shape, dt.itemsize)
        if nb ~= e - b then
          fail("load", "tensor '%s': shape %s of dtype %s needs %s bytes but data_offsets span %d",
            name, shape_str(shape), code, nb and tostring(nb) or "more than 2^63", e - b)
        end
        -- 0 elements, yet the strides of the other dims must fit too
        if not T._shape_fits(shape) then
          fail("load", "tensor '%s': shape %s is too large (its element count or strides overflow int64)",
            name, shape_str(shape))
        end
        entries[#entries + 1] = { name = name, dt = dt, shape = shape, b = b, e = e }
      end
    end
    -- the data must be exactly covered, without holes or overlaps
    table.sort(entries, function(x, y)
      if x.b ~= y.b then return x.b < y.b end
      return x.e < y.e
    end)
    local prev = 0
    for _, en in ipairs(entries) do
      if en.b ~= prev then
        fail("load", "tensor '%s': data_offsets [%d, %d] %s the previous tensor's data (which ends at %d)",
          en.name, en.b, en.e, en.b < prev and "overlap" or "leave a gap after", prev)
      end
      prev = en.e
    end
    if prev ~= data_len then
      fail("load", "'%s': the tensors cover %d bytes of data but the file holds %d", path, prev, data_len)
    end
    local out = {}
    for _, en in ipairs(entries) do
      local bytes = read_at("load", f, path, data_start + en.b, en.e - en.b)
      out[en.name] = T._frombytes(bytes, en.dt, en.shape)
    end
    local checkpoint = require "ltensor.io.checkpoint"
    local tree_text = metadata[checkpoint.KEY]
    if tree_text ~= nil then
      metadata[checkpoint.KEY] = nil
      return checkpoint.unflatten(path, checkpoint.decode(path, tree_text), out), metadata
    end
    if metadata[SINGLE_KEY] == SINGLE_VALUE and #entries == 1 and out.tensor then
      metadata[SINGLE_KEY] = nil
      return out.tensor, metadata
    end
    return out, metadata
  end)
  f:close()
  if not ok then error(res, 0) end
  return res, meta
end

-- ===========================================================================
-- .npy

local NPY_DESCR = {
  bool = "|b1", uint8 = "|u1", int8 = "|i1", int16 = "<i2", uint16 = "<u2",
  int32 = "<i4", uint32 = "<u4", int64 = "<i8", uint64 = "<u8",
  float16 = "<f2", float32 = "<f4", float64 = "<f8",
  complex64 = "<c8", complex128 = "<c16",
}
local NPY_DTYPE = {}   -- "f4" -> dtype
for name, d in pairs(NPY_DESCR) do NPY_DTYPE[d:sub(2)] = T[name] end

local MAGIC = "\147NUMPY"
local MAX_NPY_HEADER = 1048576   -- 2^20

local function npy_shape_str(shape)
  if #shape == 1 then return "(" .. shape[1] .. ",)" end
  return "(" .. concat(shape, ", ") .. ")"
end

--- T.save_npy(path, t): NumPy .npy (version 1.0, C order)
function T.save_npy(path, t)
  if type(path) ~= "string" then fail("save_npy", "expected a file name, got %s", type(path)) end
  if not T.is_tensor(t) then fail("save_npy", "expected a tensor, got %s", type(t)) end
  local dt = t.dtype
  local descr = NPY_DESCR[dt.name]
  if not descr then
    fail("save_npy", "dtype %s has no NumPy equivalent (convert it, e.g. with t:to(T.%s))",
      dt.name, dt.is_complex and "complex64" or "float32")
  end
  local header = sfmt("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, npy_shape_str(t.shape))
  local pre, major = 10, 1
  if #header + 1 + 64 > 65535 then pre, major = 12, 2 end
  local pad = (64 - (pre + #header + 1) % 64) % 64
  header = header .. string.rep(" ", pad) .. "\n"
  local lenfield = major == 1 and compat.spack("<I2", #header) or compat.spack("<I4", #header)
  atomic_write("save_npy", path, { MAGIC, string.char(major, 0), lenfield, header, T._tobytes(t) })
end

-- A Python literal parser for the .npy header dict: strings, integers,
-- True/False/None, tuples, lists and dicts.
local function parse_pylit(s)
  local pos = 1
  local function err(msg) error({ py_error = sfmt("%s at byte %d", msg, pos) }) end
  local function skip() pos = s:find("[^ \t\r\n]", pos) or #s + 1; return pos end
  local value
  local function seq(close, depth)
    local out = {}
    while true do
      skip()
      if s:sub(pos, pos) == close then pos = pos + 1; return out end
      out[#out + 1] = value(depth + 1)
      skip()
      local c = s:sub(pos, pos)
      if c == "," then pos = pos + 1
      elseif c == close then pos = pos + 1; return out
      else err("expected ',' or '" .. close .. "'") end
    end
  end
  function value(depth)
    if depth > MAX_DEPTH then err("nesting too deep") end
    skip()
    local c = s:sub(pos, pos)
    if c == "'" or c == '"' then
      local close = s:find(c, pos + 1, true)
      if not close then err("unterminated string") end
      local v = s:sub(pos + 1, close - 1)
      if v:find("\\", 1, true) then err("escapes in strings are not supported") end
      pos = close + 1
      return v
    elseif c == "(" then pos = pos + 1; return seq(")", depth)
    elseif c == "[" then pos = pos + 1; return seq("]", depth)
    elseif c == "{" then
      pos = pos + 1
      local d = {}
      while true do
        skip()
        if s:sub(pos, pos) == "}" then pos = pos + 1; return d end
        local k = value(depth + 1)
        if type(k) ~= "string" then err("dict keys must be strings") end
        skip()
        if s:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        if d[k] ~= nil then err("duplicate key '" .. k .. "'") end
        d[k] = value(depth + 1)
        skip()
        local c2 = s:sub(pos, pos)
        if c2 == "," then pos = pos + 1
        elseif c2 ~= "}" then err("expected ',' or '}'") end
      end
    elseif s:find("^True", pos) then pos = pos + 4; return true
    elseif s:find("^False", pos) then pos = pos + 5; return false
    elseif s:find("^None", pos) then pos = pos + 4; return json.null
    end
    local lit = s:match("^-?%d+", pos)
    if not lit then err("unexpected character") end
    pos = pos + #lit
    if s:sub(pos, pos) == "L" then pos = pos + 1 end   -- Python 2 longs
    local i = math.tointeger(tonumber(lit))
    if not i then err("integer out of range") end
    return i
  end
  return parse_whole(s, "py_error", value, skip, err)
end

--- T.load_npy(path) -> tensor (C or Fortran order; any byte order)
function T.load_npy(path)
  local f, size = open_read("load_npy", path)
  local ok, res = pcall(function()
    if size < 10 then fail("load_npy", "'%s' is too small to be a .npy file (%d bytes)", path, size) end
    local pre = f:read(8)
    if pre:sub(1, 6) ~= MAGIC then fail("load_npy", "'%s' is not a .npy file (bad magic string)", path) end
    local major = pre:byte(7)
    local hlen, start
    if major == 1 then
      hlen, start = compat.sunpack("<I2", f:read(2)), 10
    elseif major == 2 or major == 3 then
      if size < 12 then fail("load_npy", "'%s' is truncated", path) end
      hlen, start = compat.sunpack("<I4", f:read(4)), 12
    else
      fail("load_npy", "'%s': unsupported .npy format version %d.%d", path, major, pre:byte(8))
    end
    if hlen > MAX_NPY_HEADER then fail("load_npy", "'%s': header length %d is too large", path, hlen) end
    if start + hlen > size then
      fail("load_npy", "'%s': header length %d is larger than the file (%d bytes)", path, hlen, size)
    end
    if hlen == 0 then fail("load_npy", "'%s': the header is empty (length 0)", path) end
    local header = f:read(hlen)
    local d, perr = parse_pylit(header)
    if d == nil then fail("load_npy", "'%s': malformed header: %s", path, perr) end
    if type(d) ~= "table" or d.descr == nil or d.fortran_order == nil or d.shape == nil then
      fail("load_npy", "'%s': header must be a dict with 'descr', 'fortran_order' and 'shape'", path)
    end
    for k in pairs(d) do
      if k ~= "descr" and k ~= "fortran_order" and k ~= "shape" then
        fail("load_npy", "'%s': unexpected key '%s' in header", path, tostring(k))
      end
    end
    local descr = d.descr
    if type(descr) ~= "string" then fail("load_npy", "'%s': unsupported dtype (structured arrays are not supported)", path) end
    local order, code = descr:sub(1, 1), descr:sub(2)
    local dt = NPY_DTYPE[code]
    if not dt or not (order == "<" or order == ">" or order == "|" or order == "=") then
      fail("load_npy", "'%s': unsupported dtype '%s'", path, descr)
    end
    if type(d.fortran_order) ~= "boolean" then fail("load_npy", "'%s': fortran_order must be True or False", path) end
    local shape = d.shape
    local nkeys = 0
    if type(shape) == "table" then for _ in pairs(shape) do nkeys = nkeys + 1 end end
    if type(shape) ~= "table" or getmetatable(shape) or nkeys ~= #shape then
      fail("load_npy", "'%s': shape must be a tuple of integers", path)
    end
    if #shape > T.MAX_DIMS then
      fail("load_npy", "'%s': %d dimensions is more than the %d supported", path, #shape, T.MAX_DIMS)
    end
    for i = 1, #shape do
      if math.type(shape[i]) ~= "integer" or shape[i] < 0 then
        fail("load_npy", "'%s': shape must be a tuple of non-negative integers", path)
      end
    end
    local data_len = size - start - hlen
    local nb = byte_count(shape, dt.itemsize)
    if nb ~= data_len then
      fail("load_npy", "'%s': shape %s of dtype '%s' needs %s bytes but the file holds %d",
        path, npy_shape_str(shape), descr, nb and tostring(nb) or "more than 2^63", data_len)
    end
    -- 0 elements, yet the strides of the other dims must fit too
    if not T._shape_fits(shape) then
      fail("load_npy", "'%s': shape %s is too large (its element count or strides overflow int64)",
        path, npy_shape_str(shape))
    end
    local bytes = read_at("load_npy", f, path, start + hlen, nb)
    return T._frombytes(bytes, dt, shape, 0, order == ">", d.fortran_order)
  end)
  f:close()
  if not ok then error(res, 0) end
  return res
end

-- The module's own functions (they are also T's): package.loaded holds
-- this table, not T, so a traceback names T's other functions 'ltensor.*'
-- rather than through this module
return { save = T.save, load = T.load, save_npy = T.save_npy, load_npy = T.load_npy }
