-- ltensor.onnx.tensor -- ONNX data types and TensorProto -> tensor.
--
-- The payload of a TensorProto is one of: raw_data (little-endian bytes),
-- the typed repeated fields (float_data, double_data: bytes kept by the
-- decoder; int32_data / int64_data / uint64_data: {lo, hi} halves), or an
-- external file (data_location = EXTERNAL).  Every byte count is checked
-- against the dims before T._frombytes (which checks again in C).
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math, table = compat.math, compat.table
local P = require "ltensor.onnx.proto"

local M = {}
local fail = P.fail
local char, floor = string.char, math.floor

-- ONNX TensorProto.DataType codes -> ltensor dtypes (STRING = 8 has none)
local DTYPES = {
  [1] = T.float32, [2] = T.uint8, [3] = T.int8, [4] = T.uint16, [5] = T.int16, [6] = T.int32,
  [7] = T.int64, [9] = T.bool, [10] = T.float16, [11] = T.float64, [12] = T.uint32, [13] = T.uint64,
  [14] = T.complex64, [15] = T.complex128, [16] = T.bfloat16,
}
local NAMES = { "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
  "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16" }
M.DTYPES = DTYPES
M.NAMES = NAMES
local CODES = {}
for code, dt in pairs(DTYPES) do CODES[dt] = code end
M.CODES = CODES

function M.dtype_name(code) return NAMES[code] or tostring(code) end

-- dtype of an ONNX type code, or an error naming what carried it
function M.dtype(code, what)
  local dt = DTYPES[code]
  if not dt then
    if code == 8 then fail(what .. ": STRING tensors are not supported") end
    fail(("%s: data_type %s is not a valid ONNX tensor type"):format(what, tostring(code)))
  end
  return dt
end

local function shape_of(tp, what)
  local shape, n = {}, 1
  for i, d in ipairs(tp.dims) do
    if math.type(d) ~= "integer" or d < 0 or d > 2 ^ 53 then
      fail(("%s: dimension %d is %s, not a size"):format(what, i, tostring(d)))
    end
    shape[i] = d
    n = n * d
    if n > 2 ^ 53 then fail(what .. ": more elements than can be addressed") end
  end
  return shape, n
end

-- bytes of {lo, hi} varint halves as elements of `size` bytes (little-endian)
local function varint_bytes(list, size)
  local out = {}
  for i, v in ipairs(list) do
    local lo, hi = v[1], v[2]
    if size == 1 then out[i] = char(lo % 256)
    elseif size == 2 then out[i] = char(lo % 256, floor(lo / 256) % 256)
    else
      local s = char(lo % 256, floor(lo / 256) % 256, floor(lo / 65536) % 256, floor(lo / 16777216) % 256)
      if size == 8 then
        s = s .. char(hi % 256, floor(hi / 256) % 256, floor(hi / 65536) % 256, floor(hi / 16777216) % 256)
      end
      out[i] = s
    end
  end
  return table.concat(out)
end

local function safe_location(loc, what)
  if loc == "" or loc:sub(1, 1) == "/" or loc:find("\\", 1, true) or loc:find("%z") then
    fail(what .. ": external data location '" .. loc .. "' is not a relative path")
  end
  for part in loc:gmatch("[^/]+") do
    if part == ".." then fail(what .. ": external data location '" .. loc .. "' leaves the model's directory") end
  end
end

local function external_bytes(tp, nbytes, what, base_dir)
  local kv = {}
  for _, e in ipairs(tp.external_data) do kv[e.key or ""] = e.value end
  local loc = kv.location
  if not loc then fail(what .. ": external data without a location") end
  safe_location(loc, what)
  if not base_dir then
    fail(what .. ": external data '" .. loc .. "' needs the model's directory (load from a path or pass {base_dir = ...})")
  end
  local offset = tonumber(kv.offset or "0")
  local length = kv.length and tonumber(kv.length)
  if not offset or offset < 0 or offset ~= floor(offset) then fail(what .. ": bad external data offset") end
  if kv.length and (not length or length ~= nbytes) then
    fail(("%s: external data length %s does not match the %d bytes of its dims and type"):format(
      what, tostring(kv.length), nbytes))
  end
  local path = base_dir .. "/" .. loc
  local f, err = io.open(path, "rb")
  if not f then fail(what .. ": cannot open external data file: " .. tostring(err)) end
  local size = f:seek("end")
  if not size or offset + nbytes > size then
    f:close()
    fail(("%s: external data file '%s' has %s bytes, %d needed at offset %d"):format(
      what, loc, tostring(size), nbytes, offset))
  end
  f:seek("set", offset)
  local s = nbytes > 0 and f:read(nbytes) or ""
  f:close()
  if not s or #s ~= nbytes then fail(what .. ": short read from external data file '" .. loc .. "'") end
  return s
end

-- to_tensor(tp, what [, base_dir]): the tensor a TensorProto holds.
function M.to_tensor(tp, what, base_dir)
  if tp.segment then fail(what .. ": segmented tensors are not supported") end
  local dt = M.dtype(tp.data_type, what)
  local shape, n = shape_of(tp, what)
  local isz = dt.itemsize
  local nbytes = n * isz
  if tp.data_location == 1 then
    return T._frombytes(external_bytes(tp, nbytes, what, base_dir), dt, shape)
  elseif tp.data_location ~= nil and tp.data_location ~= 0 then
    fail(what .. ": data_location " .. tostring(tp.data_location) .. " is not valid")
  end
  if tp.raw_data then
    if #tp.raw_data ~= nbytes then
      fail(("%s: raw_data has %d bytes, but dims %s of %s need %d"):format(what, #tp.raw_data,
        "{" .. table.concat(shape, ", ") .. "}", NAMES[tp.data_type], nbytes))
    end
    return T._frombytes(tp.raw_data, dt, shape)
  end
  local code = tp.data_type
  local field, bytes, count
  if code == 1 or code == 14 then field = "float_data"
  elseif code == 11 or code == 15 then field = "double_data"
  elseif code == 7 then field = "int64_data"
  elseif code == 12 or code == 13 then field = "uint64_data"
  else field = "int32_data" end
  local list = tp[field]
  if field == "float_data" or field == "double_data" then
    bytes = table.concat(list)
    count = #bytes / (field == "float_data" and 4 or 8)
  else
    local size = isz
    if dt == T.bool then size = 1 end
    count = #list
    if count ~= n then
      fail(("%s: %s has %d values, but its dims need %d"):format(what, field, count, n))
    end
    bytes = varint_bytes(list, size)
    if dt == T.bool then
      for _, v in ipairs(list) do
        if v[1] > 1 or v[2] ~= 0 then fail(what .. ": bool value other than 0 or 1") end
      end
    end
    return T._frombytes(bytes, dt, shape)
  end
  local want = dt.is_complex and 2 * n or n
  if count ~= want then
    if count == 0 and n > 0 then fail(what .. ": no data for a tensor of " .. n .. " elements") end
    fail(("%s: %s has %d values, but its dims need %d"):format(what, field, count, want))
  end
  return T._frombytes(bytes, dt, shape)
end

return M
