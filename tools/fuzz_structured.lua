-- tools/fuzz_structured.lua -- structure-aware inputs for tools/fuzz_loaders.lua:
-- files that pass the outer checks (PNG chunk CRCs, zlib streams with their
-- Adler-32, safetensors' header length and JSON, .npy's magic and header
-- dict) and carry semantic mutations inside: IHDR fields, bit depths,
-- colour types, interlacing, filter bytes, scanline lengths, palettes and
-- tRNS sizes, IDAT splits and chunk lengths; safetensors dtype names,
-- shapes, data offsets (overlapping, reversed, out of range), huge dims,
-- duplicate keys; .npy descr/fortran_order/shape/version; CSV text with
-- odd numbers, quoting, ragged rows and options.  Lua 5.3+ (string.pack).
local S = {}
-- (bit operators through ltensor.compat: tools/ parses under Lua 5.1 too)
local C = require "ltensor.compat"
local band, bor, bxor, shl, shr, idiv = C.band, C.bor, C.bxor, C.shl, C.shr, C.idiv

local function R(a, b) if b then return math.random(a, b) end return math.random(a) end
local function pick(t) return t[math.random(#t)] end

-- CRC-32 (PNG) and Adler-32 (zlib), table-driven
local CRC = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do c = band(c, 1) ~= 0 and bxor(0xEDB88320, shr(c, 1)) or shr(c, 1) end
  CRC[i] = c
end
function S.crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = bxor(CRC[band(bxor(c, s:byte(i)), 0xFF)], shr(c, 8)) end
  return bxor(c, 0xFFFFFFFF)
end
local function adler32(s)
  local a, b = 1, 0
  for i = 1, #s do a = (a + s:byte(i)) % 65521 b = (b + a) % 65521 end
  return bor(shl(b, 16), a)
end
-- a valid zlib stream of stored (uncompressed) deflate blocks
function S.zlib_stored(data)
  local out, pos, n = { "\120\1" }, 1, #data
  repeat
    local len = math.min(65535, n - pos + 1)
    local final = (pos + len > n) and 1 or 0
    out[#out + 1] = string.char(final) .. string.pack("<I2<I2", len, 65535 - len) .. data:sub(pos, pos + len - 1)
    pos = pos + len
  until pos > n
  out[#out + 1] = string.pack(">I4", adler32(data))
  return table.concat(out)
end

local function chunk(typ, data, len_override)
  return string.pack(">I4", len_override or #data) .. typ .. data .. string.pack(">I4", S.crc32(typ .. data))
end

local CHANNELS = { [0] = 1, [2] = 3, [3] = 1, [4] = 2, [6] = 4 }
local DEPTHS = { [0] = { 1, 2, 4, 8, 16 }, [2] = { 8, 16 }, [3] = { 1, 2, 4, 8 }, [4] = { 8, 16 }, [6] = { 8, 16 } }
local ADAM7 = { { 0, 0, 8, 8 }, { 4, 0, 8, 8 }, { 0, 4, 4, 8 }, { 2, 0, 4, 4 }, { 0, 2, 2, 4 }, { 1, 0, 2, 2 }, { 0, 1, 1, 2 } }

-- the filtered scanlines of an image: filter byte + packed row, per pass
local function raw_image(w, h, ct, depth, interlace, note)
  local ch = CHANNELS[ct] or R(1, 4)
  local function rows(pw, ph)
    local out = {}
    if pw == 0 or ph == 0 then return "" end
    local bytes = idiv(pw * ch * depth + 7, 8)
    for _ = 1, ph do
      local f = R(12) == 1 and R(5, 255) or R(0, 4)
      local row = {}
      for i = 1, bytes do row[i] = string.char(R(0, 255)) end
      out[#out + 1] = string.char(f) .. table.concat(row)
    end
    return table.concat(out)
  end
  if interlace == 1 then
    local parts = {}
    for _, p in ipairs(ADAM7) do
      local pw = idiv(w - p[1] + p[3] - 1, p[3])
      local ph = idiv(h - p[2] + p[4] - 1, p[4])
      parts[#parts + 1] = rows(math.max(pw, 0), math.max(ph, 0))
    end
    return table.concat(parts)
  end
  return rows(w, h)
end

-- adv(n): an adversarial choice with odds 1/n, never in a calm input (a
-- third of them: valid but for the scanline bytes, so that the decoder's
-- unfiltering and unpacking run)
local calm = false
local function adv(n) return not calm and R(n) == 1 end

function S.png()
  local notes = {}
  calm = R(3) == 1
  local ct = adv(10) and pick({ 1, 5, 7, 255 }) or pick({ 0, 2, 3, 4, 6 })
  local depth = (DEPTHS[ct] and R(8) ~= 1) and pick(DEPTHS[ct]) or pick({ 0, 3, 5, 7, 8, 16, 32, 255 })
  local w, h = R(1, 19), R(1, 19)
  if adv(10) then w = pick({ 0, 0x7fffffff, 0x80000000, 0xffffffff, 65536, 1048576 }) notes[#notes + 1] = "w" end
  if adv(10) then h = pick({ 0, 0x7fffffff, 0x80000000, 0xffffffff, 65536, 1048576 }) notes[#notes + 1] = "h" end
  local interlace = adv(10) and R(2, 255) or R(0, 1)
  local comp, filt = adv(20) and R(1, 255) or 0, adv(20) and R(1, 255) or 0
  local ihdr = string.pack(">I4>I4BBBBB", w, h, depth, ct, comp, filt, interlace)
  if adv(20) then ihdr = ihdr:sub(1, R(0, 12)) .. (R(2) == 1 and "\0\0\0" or "") end
  local raw = ""
  -- (each side first: w * h may wrap)
  if w <= 4096 and h <= 4096 and w * h <= 4096 and depth <= 16 then raw = raw_image(w, h, ct, depth, interlace == 1 and 1 or 0) end
  local r = calm and 0 or R(8)   -- scanline data one byte short / long, or cut
  if r == 1 and #raw > 0 then raw = raw:sub(1, #raw - R(1, math.min(#raw, 8))) notes[#notes + 1] = "short"
  elseif r == 2 then raw = raw .. string.rep("\0", R(1, 64)) notes[#notes + 1] = "long" end
  local z = R(3) == 1 and S.zlib_stored(raw) or (S.deflate and S.deflate(raw)) or S.zlib_stored(raw)
  local chunks = { "\137PNG\r\n\26\n", chunk("IHDR", ihdr) }
  if adv(15) then chunks[#chunks + 1] = chunk("IHDR", ihdr) end
  if ct == 3 or adv(10) then
    local n = adv(8) and pick({ 0, 257, 300 }) or R(1, 256)
    local pl = {}
    for i = 1, n * 3 do pl[i] = string.char(R(0, 255)) end
    local s = table.concat(pl)
    if adv(15) then s = s .. "\1" end
    if R(10) ~= 1 then chunks[#chunks + 1] = chunk("PLTE", s) end
  end
  if R(3) == 1 then
    local n = ({ [0] = 2, [2] = 6, [3] = R(0, 300) })[ct] or R(0, 8)
    if adv(6) then n = R(0, 300) end
    chunks[#chunks + 1] = chunk("tRNS", string.rep("\255", n))
  end
  if adv(5) then chunks[#chunks + 1] = chunk(pick({ "tEXt", "gAMA", "abCD", "IDAT", "IEND", "zzzz" }), string.rep("x", R(0, 20))) end
  -- IDAT split into pieces
  local pieces, pos = R(1, 4), 1
  for i = 1, pieces do
    local len = i == pieces and #z - pos + 1 or R(0, #z - pos + 1)
    local lo = nil
    if adv(30) then lo = pick({ 0, len + 1, 0x7fffffff, 0xffffffff }) notes[#notes + 1] = "len" end
    chunks[#chunks + 1] = chunk("IDAT", z:sub(pos, pos + len - 1), lo)
    pos = pos + len
  end
  if R(10) ~= 1 then chunks[#chunks + 1] = chunk("IEND", "") end
  return table.concat(chunks), ("png ct=%d depth=%d %dx%d il=%d %s"):format(ct, depth, w, h, interlace, table.concat(notes, ","))
end

-- ---- safetensors -------------------------------------------------------------
local ST_DTYPES = { BOOL = 1, U8 = 1, I8 = 1, I16 = 2, U16 = 2, I32 = 4, U32 = 4, I64 = 8, U64 = 8,
                    F16 = 2, BF16 = 2, F32 = 4, F64 = 8, C64 = 8, C128 = 16, C32 = 4 }
local ST_NAMES = {}
for k in pairs(ST_DTYPES) do ST_NAMES[#ST_NAMES + 1] = k end
table.sort(ST_NAMES)
local BAD_DT = { "F8", "f32", "", "F32 ", "I128", "U1", "\"", "COMPLEX64", "F8_E4M3" }
local HUGE = { "0", "-1", "1.5", "1e20", "9223372036854775807", "9223372036854775808", "18446744073709551615",
               "4294967296", "2147483648", "\"2\"", "null", "[]", "true", "-0", "1E3" }

function S.safetensors()
  local n = R(0, 4)
  local entries, blobs, off = {}, {}, 0
  local notes = {}
  for i = 1, n do
    local dt = R(10) == 1 and pick(BAD_DT) or pick(ST_NAMES)
    local nd = R(10) == 1 and R(5, 40) or R(0, 3)
    local shape, numel = {}, 1
    for d = 1, nd do
      local v = R(0, 4)
      if nd > 8 then v = 1 end
      shape[d] = tostring(v)
      numel = numel * v
    end
    if R(8) == 1 and nd > 0 then shape[R(nd)] = pick(HUGE) notes[#notes + 1] = "shape" end
    local bytes = numel * (ST_DTYPES[dt] or 4)
    local a, b = off, off + bytes
    local r = R(10)
    if r == 1 then a, b = b, a notes[#notes + 1] = "reversed"
    elseif r == 2 then a = math.max(0, a - R(1, 8)) notes[#notes + 1] = "overlap"
    elseif r == 3 then b = b + R(1, 64) notes[#notes + 1] = "past"
    elseif r == 4 then a = pick({ -1, 4611686018427387904, math.maxinteger }) notes[#notes + 1] = "off" end
    local offs = ("[%s,%s]"):format(r == 5 and pick(HUGE) or tostring(a), tostring(b))
    local name = R(10) == 1 and pick({ "", "a", "\\u0000", "__metadata__", "x\\\"y" }) or ("t" .. i)
    if R(40) == 1 and i > 1 then name = "t1" notes[#notes + 1] = "dup" end
    local fields = { ('"dtype":"%s"'):format(dt), ('"shape":[%s]'):format(table.concat(shape, ",")), ('"data_offsets":%s'):format(offs) }
    if R(15) == 1 then table.remove(fields, R(#fields)) notes[#notes + 1] = "missing" end
    if R(15) == 1 then fields[#fields + 1] = fields[R(#fields)] notes[#notes + 1] = "dupfield" end
    entries[#entries + 1] = ('"%s":{%s}'):format(name, table.concat(fields, ","))
    off = off + math.max(bytes, 0)
    if bytes < 1048576 then blobs[#blobs + 1] = string.rep(string.char(R(0, 255)), bytes) end
  end
  if R(4) == 1 then entries[#entries + 1] = pick({ '"__metadata__":{"format":"pt"}', '"__metadata__":{"a":1}', '"__metadata__":[]', '"__metadata__":"x"' }) end
  local header = "{" .. table.concat(entries, ",") .. "}"
  local pad = (8 - #header % 8) % 8
  header = header .. string.rep(" ", pad)
  local data = table.concat(blobs)
  local r = R(10)
  if r == 1 then data = data:sub(1, R(0, #data)) notes[#notes + 1] = "cut" elseif r == 2 then data = data .. "\0\0\0\0" end
  local hlen = #header
  if R(15) == 1 then hlen = pick({ 0, hlen + 1, hlen - 1, 1099511627776, 0x7fffffffffffffff }) notes[#notes + 1] = "hlen" end
  return string.pack("<i8", hlen) .. header .. data, "st " .. table.concat(notes, ",")
end

-- ---- .npy ---------------------------------------------------------------------
local NPY_DESCR = { "<f4", "<f8", ">f4", ">f8", "<f2", "|b1", "|u1", "|i1", "<i2", ">i2", "<u2", "<i4", ">i4", "<u4",
                    "<i8", ">i8", "<u8", "<c8", "<c16", ">c16" }
local NPY_BAD = { "|V8", "<U3", "|O", "<f16", "<m8", "<M8", "f4", "<f", "<i0", "<f4x", "", "<c32", "=f4", "<b1" }
local NPY_SIZE = { ["f4"] = 4, ["f8"] = 8, ["f2"] = 2, ["b1"] = 1, ["u1"] = 1, ["i1"] = 1, ["i2"] = 2, ["u2"] = 2,
                   ["i4"] = 4, ["u4"] = 4, ["i8"] = 8, ["u8"] = 8, ["c8"] = 8, ["c16"] = 16 }

function S.npy()
  local notes = {}
  local descr = R(8) == 1 and pick(NPY_BAD) or pick(NPY_DESCR)
  local nd = R(12) == 1 and R(6, 40) or R(0, 3)
  local shape, numel = {}, 1
  for d = 1, nd do
    local v = nd > 6 and 1 or R(0, 5)
    shape[d] = tostring(v)
    numel = numel * v
  end
  if R(8) == 1 and nd > 0 then shape[R(nd)] = pick(HUGE) notes[#notes + 1] = "shape" end
  local shp = nd == 1 and ("(" .. shape[1] .. ",)") or ("(" .. table.concat(shape, ", ") .. ")")
  local fo = R(10) == 1 and pick({ "1", "None", "'x'", "" }) or pick({ "False", "True" })
  local dict = ("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }"):format(descr, fo, shp)
  if R(12) == 1 then dict = dict:gsub("'descr': '[^']*', ", "") notes[#notes + 1] = "nodescr" end
  if R(12) == 1 then dict = dict .. " 'extra': 1}" notes[#notes + 1] = "trailing" end
  local ver = R(10) == 1 and pick({ 0, 4, 255 }) or R(1, 3)
  local hl_fmt = ver == 1 and "<I2" or "<I4"
  local pre = 6 + 2 + (ver == 1 and 2 or 4)
  local total = pre + #dict + 1
  local pad = (64 - total % 64) % 64
  local header = dict .. string.rep(" ", pad) .. "\n"
  local hl = #header
  if R(15) == 1 then hl = pick({ 0, hl + 1, hl - 1, 65535 }) notes[#notes + 1] = "hlen" end
  local size = NPY_SIZE[descr:sub(2)] or 4
  local bytes = math.min(numel * size, 65536)
  local data = string.rep(string.char(R(0, 255)), bytes)
  local r = R(8)
  if r == 1 then data = data:sub(1, R(0, #data)) notes[#notes + 1] = "cut" elseif r == 2 then data = data .. "xyz" end
  return "\147NUMPY" .. string.char(ver, 0) .. string.pack(hl_fmt, math.min(hl, ver == 1 and 65535 or hl)) .. header .. data,
         ("npy %s %s v%d %s"):format(descr, shp, ver, table.concat(notes, ","))
end

-- ---- CSV ------------------------------------------------------------------------
local CELLS = { "1", "-1", "0", "1.5", "-0", "1e308", "1e400", "-1e400", "nan", "NaN", "inf", "-inf", "Infinity",
                "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
                "0x10", "1_000", " 2 ", "\"3\"", "\"a,b\"", "\"\"", "", "x", "1e", ".", "-", "+5", "1,5", "\"unterminated",
                "\0", "\239\187\191" .. "1", "4.9e-324", "2.5e-308", "true" }

function S.csv()
  local cols, rows = R(0, 5), R(0, 6)
  local delim = R(6) == 1 and pick({ ";", "\t", " ", "|" }) or ","
  local lines = {}
  if R(2) == 1 then
    local h = {}
    for c = 1, cols do h[c] = R(8) == 1 and pick({ "", "\"q\"", "a", "a" }) or ("c" .. c) end
    lines[#lines + 1] = table.concat(h, delim)
  end
  for _ = 1, rows do
    local r = {}
    local nc = R(8) == 1 and R(0, cols + 2) or cols
    for c = 1, nc do r[c] = R(3) == 1 and pick(CELLS) or tostring(R(-100, 100)) end
    lines[#lines + 1] = table.concat(r, delim)
  end
  local eol = pick({ "\n", "\r\n", "\r" })
  local text = table.concat(lines, eol) .. (R(2) == 1 and eol or "")
  local opts = {}
  if R(2) == 1 then opts.header = R(2) == 1 end
  if delim ~= "," or R(8) == 1 then opts.delimiter = R(8) == 1 and pick({ "", ",,", "\n", "\"" }) or delim end
  if R(2) == 1 then opts.dtype = pick({ "float32", "float64", "int64", "int32", "int16", "uint8", "bool", "float16",
                                        "bfloat16", "complex64", "complex128", "uint64", "int8" }) end
  if R(3) == 1 then
    local c = {}
    for i = 1, R(0, 4) do c[i] = R(3) == 1 and pick({ "c1", "c2", "a", "", "zz" }) or pick({ 1, 2, 3, 0, -1, 99, math.maxinteger, 1.5 }) end
    opts.columns = c
  end
  return text, opts, ("csv %dx%d delim=%q"):format(rows, cols, delim)
end

-- ---- protobuf (ONNX) -------------------------------------------------------------
-- A generic wire-format tree: a message is a list of fields {num, wt, v};
-- a length-delimited field that parses as a message whole is kept as a
-- sub-tree.  Mutations change varints (dims, dtypes, op versions, enum
-- values) to interesting numbers, replace strings (op_type, names, data
-- type names), delete, duplicate or swap fields, cut or extend raw bytes;
-- encoding recomputes every length, so the file stays well-formed.
local function read_varint(s, i)
  local v, shift = 0, 0
  while true do
    local b = s:byte(i)
    if not b or shift > 63 then return nil end
    v = bor(v, shl(band(b, 0x7f), shift))
    i = i + 1
    if b < 0x80 then return v, i end
    shift = shift + 7
  end
end
local function varint(v)
  local out = {}
  repeat
    local b = band(v, 0x7f)
    v = shr(v, 7)   -- logical shift: negative numbers take ten bytes, as protobuf's
    out[#out + 1] = string.char(v ~= 0 and bor(b, 0x80) or b)
  until v == 0
  return table.concat(out)
end

local function parse(s, depth)
  local i, n, fields = 1, #s, {}
  while i <= n do
    local key, j = read_varint(s, i)
    if not key or key == 0 then return nil end
    local num, wt = shr(key, 3), band(key, 7)
    local f = { num = num, wt = wt }
    if wt == 0 then
      f.v, j = read_varint(s, j)
      if not f.v then return nil end
    elseif wt == 1 then f.v = s:sub(j, j + 7) if #f.v < 8 then return nil end j = j + 8
    elseif wt == 5 then f.v = s:sub(j, j + 3) if #f.v < 4 then return nil end j = j + 4
    elseif wt == 2 then
      local len
      len, j = read_varint(s, j)
      if not len or len < 0 or j + len - 1 > n then return nil end
      f.v = s:sub(j, j + len - 1)
      j = j + len
      if depth < 8 and #f.v > 0 then f.sub = parse(f.v, depth + 1) end
    else return nil end
    fields[#fields + 1] = f
    i = j
  end
  return fields
end

local function encode(fields)
  local out = {}
  for _, f in ipairs(fields) do
    out[#out + 1] = varint(bor(shl(f.num, 3), f.wt))
    if f.wt == 0 then out[#out + 1] = varint(f.v)
    elseif f.wt == 2 then
      local body = f.sub and encode(f.sub) or f.v
      out[#out + 1] = varint(#body) .. body
    else out[#out + 1] = f.v end
  end
  return table.concat(out)
end

local PB_INTS = { 0, 1, 2, -1, -2, 7, 11, 13, 16, 17, 18, 99, 255, 65536, 2147483647, -2147483648, 4294967296, 1099511627776,
                  math.maxinteger, math.mininteger }
local PB_STRINGS = { "", "Conv", "Gemm", "Reshape", "Add", "MatMul", "Relu", "Gather", "Slice", "Concat", "LSTM",
                     "Unknown", "x", "input", "output", "0", "ai.onnx", "com.microsoft", "../../etc/passwd", ("A"):rep(300) }

-- every field of the tree, with its parent list
local function all_fields(fields, out, depth)
  for idx, f in ipairs(fields) do
    out[#out + 1] = { list = fields, idx = idx, f = f }
    if f.sub and depth < 8 then all_fields(f.sub, out, depth + 1) end
  end
  return out
end

function S.protobuf(bytes)
  local tree = parse(bytes, 0)
  if not tree then return bytes, "pb(unparsed)" end
  local notes = {}
  for _ = 1, R(1, 3) do
    local all = all_fields(tree, {}, 0)
    if #all == 0 then break end
    local e = pick(all)
    local f, r = e.f, R(10)
    if r <= 4 and f.wt == 0 then
      f.v = pick(PB_INTS) notes[#notes + 1] = ("#%d=%d"):format(f.num, f.v)
    elseif r <= 5 then
      table.remove(e.list, e.idx) notes[#notes + 1] = "del#" .. f.num
    elseif r <= 6 then
      table.insert(e.list, e.idx, { num = f.num, wt = f.wt, v = f.v, sub = f.sub }) notes[#notes + 1] = "dup#" .. f.num
    elseif r <= 7 and f.wt == 2 and not f.sub then
      f.v = pick(PB_STRINGS) notes[#notes + 1] = "str#" .. f.num
    elseif r <= 8 and f.wt == 2 then
      f.sub = nil
      local v = f.v
      f.v = R(2) == 1 and v:sub(1, R(0, #v)) or v .. string.rep("\0", R(1, 16))
      notes[#notes + 1] = "raw#" .. f.num
    elseif r <= 9 and #e.list >= 2 then
      local j = R(#e.list)
      e.list[e.idx], e.list[j] = e.list[j], e.list[e.idx] notes[#notes + 1] = "swap"
    elseif f.wt == 5 or f.wt == 1 then
      f.v = f.wt == 5 and string.pack("<f", pick({ 0 / 0, math.huge, -1, 1e30 })) or string.pack("<d", pick({ 0 / 0, -math.huge, 1e300 }))
      notes[#notes + 1] = "float#" .. f.num
    end
  end
  return encode(tree), "pb " .. table.concat(notes, ",")
end

return S
