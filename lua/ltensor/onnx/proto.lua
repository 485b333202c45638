-- ltensor.onnx.proto -- a protobuf wire-format decoder for the ONNX messages
-- (ModelProto and what it contains), in plain Lua that runs on 5.1-5.4 and
-- LuaJIT: no string.unpack, varints in arithmetic.
--
-- Every read is bounds-checked against the end of the enclosing message, so
-- a truncated or malformed file raises `ltensor.onnx.load: ...` (never a Lua
-- runtime error, never a loop without progress).  Field numbers: the ONNX
-- .proto files (onnx 1.12), listed in the schema tables below.
--
-- decode_model(s) returns plain tables: { ir_version=, opset_import={{domain=,
-- version=}}, graph={ node={...}, initializer={...}, input={...}, ... } }.
-- Repeated fields are lists (absent: an empty list); numeric repeated fields
-- accept the packed and the unpacked encoding.  Tensor payloads are not
-- converted here: a TensorProto keeps raw byte strings (raw_data, the packed
-- bytes of float_data/double_data) and {lo, hi} 32-bit halves of its varint
-- data (int32_data, int64_data, uint64_data), which tensor.lua turns into a
-- tensor exactly (int64 values beyond 2^53 included).
local compat = require "ltensor.compat"
local math = compat.math

local P = {}

local byte, sub = string.byte, string.sub
local floor = math.floor
local TWO32 = 4294967296
local MAX_DEPTH = 64   -- nested graphs (If/Loop bodies): bounded recursion

local function fail(msg) error("ltensor.onnx.load: " .. msg, 0) end
P.fail = fail

-- A varint at pos (limit: one past the last readable byte) as two 32-bit
-- halves: lo, hi (each 0 <= v < 2^32), and the position after it.
local function varint(s, pos, limit, what)
  local b = byte(s, pos)
  if pos < limit and b < 128 then return b, 0, pos + 1 end   -- the common 1-byte case
  local lo, hi, start = 0, 0, pos
  for i = 0, 9 do
    if pos >= limit then fail(("truncated varint (%s) at byte %d"):format(what, start - 1)) end
    b = byte(s, pos)
    pos = pos + 1
    local p = b % 128
    local shift = 7 * i
    if shift + 7 <= 32 then lo = lo + p * 2 ^ shift
    elseif shift >= 32 then
      if shift < 63 then hi = hi + (p * 2 ^ (shift - 32)) % TWO32
      else hi = hi + (p % 2) * 2 ^ 31 end
    else   -- byte 4: 4 bits to lo, 3 to hi
      lo = lo + (p % 16) * 2 ^ 28
      hi = hi + floor(p / 16)
    end
    if b < 128 then return lo, hi % TWO32, pos end
  end
  fail(("bad varint (%s) at byte %d: more than 10 bytes"):format(what, start - 1))
end
P.varint = varint

-- lo, hi as a signed int64: an exact integer on hosts with integers, else the
-- nearest double.
local tointeger = math.tointeger
local function int64_of(lo, hi)
  local shi = hi >= 2 ^ 31 and hi - TWO32 or hi
  if compat.has_integers then
    return tointeger(shi) * TWO32 + tointeger(lo)   -- integer arithmetic: wraps exactly
  end
  return shi * TWO32 + lo
end
P.int64_of = int64_of

-- Schemas: field number -> { name, kind [, repeated] [, message schema] }.
-- kinds: "int" (varint as int64), "str" (bytes), "msg", "f32" (fixed32
-- float), "i64parts" (varint kept as {lo, hi}), "fixed32" / "fixed64"
-- (little-endian bytes kept for the C loader).
local S = {}
S.StringStringEntry = { name = "StringStringEntryProto", [1] = { "key", "str" }, [2] = { "value", "str" } }
S.OperatorSetId = { name = "OperatorSetIdProto", [1] = { "domain", "str" }, [2] = { "version", "int" } }
S.Dim = { name = "TensorShapeProto.Dimension", [1] = { "dim_value", "int" }, [2] = { "dim_param", "str" },
  [3] = { "denotation", "str" } }
S.Shape = { name = "TensorShapeProto", [1] = { "dim", "msg", true, S.Dim } }
S.TypeTensor = { name = "TypeProto.Tensor", [1] = { "elem_type", "int" }, [2] = { "shape", "msg", false, S.Shape } }
S.Type = { name = "TypeProto", [1] = { "tensor_type", "msg", false, S.TypeTensor },
  [4] = { "sequence_type", "str" }, [5] = { "map_type", "str" }, [8] = { "sparse_tensor_type", "str" },
  [9] = { "optional_type", "str" }, [6] = { "denotation", "str" } }
S.ValueInfo = { name = "ValueInfoProto", [1] = { "name", "str" }, [2] = { "type", "msg", false, S.Type },
  [3] = { "doc_string", "str" } }
S.Segment = { name = "TensorProto.Segment", [1] = { "begin", "int" }, [2] = { "end", "int" } }
S.Tensor = { name = "TensorProto",
  [1] = { "dims", "int", true }, [2] = { "data_type", "int" }, [3] = { "segment", "msg", false, S.Segment },
  [4] = { "float_data", "fixed32", true }, [5] = { "int32_data", "i64parts", true },
  [6] = { "string_data", "str", true }, [7] = { "int64_data", "i64parts", true },
  [8] = { "name", "str" }, [9] = { "raw_data", "str" }, [10] = { "double_data", "fixed64", true },
  [11] = { "uint64_data", "i64parts", true }, [12] = { "doc_string", "str" },
  [13] = { "external_data", "msg", true, S.StringStringEntry }, [14] = { "data_location", "int" } }
S.Attribute = { name = "AttributeProto",
  [1] = { "name", "str" }, [2] = { "f", "f32" }, [3] = { "i", "int" }, [4] = { "s", "str" },
  [5] = { "t", "msg", false, S.Tensor }, [6] = { "g", "msg", false }, [7] = { "floats", "fixed32", true },
  [8] = { "ints", "int", true }, [9] = { "strings", "str", true }, [10] = { "tensors", "msg", true, S.Tensor },
  [11] = { "graphs", "msg", true }, [13] = { "doc_string", "str" }, [14] = { "tp", "str" },
  [15] = { "type_protos", "str", true }, [20] = { "type", "int" }, [21] = { "ref_attr_name", "str" },
  [22] = { "sparse_tensor", "str" }, [23] = { "sparse_tensors", "str", true } }
S.Node = { name = "NodeProto", [1] = { "input", "str", true }, [2] = { "output", "str", true },
  [3] = { "name", "str" }, [4] = { "op_type", "str" }, [5] = { "attribute", "msg", true, S.Attribute },
  [6] = { "doc_string", "str" }, [7] = { "domain", "str" } }
S.Graph = { name = "GraphProto", [1] = { "node", "msg", true, S.Node }, [2] = { "name", "str" },
  [5] = { "initializer", "msg", true, S.Tensor }, [10] = { "doc_string", "str" },
  [11] = { "input", "msg", true, S.ValueInfo }, [12] = { "output", "msg", true, S.ValueInfo },
  [13] = { "value_info", "msg", true, S.ValueInfo }, [14] = { "quantization_annotation", "str", true },
  [15] = { "sparse_initializer", "str", true } }
S.Attribute[6][4] = S.Graph
S.Attribute[11][4] = S.Graph
S.Model = { name = "ModelProto", [1] = { "ir_version", "int" }, [2] = { "producer_name", "str" },
  [3] = { "producer_version", "str" }, [4] = { "domain", "str" }, [5] = { "model_version", "int" },
  [6] = { "doc_string", "str" }, [7] = { "graph", "msg", false, S.Graph },
  [8] = { "opset_import", "msg", true, S.OperatorSetId }, [14] = { "metadata_props", "msg", true, S.StringStringEntry },
  [20] = { "training_info", "str", true }, [25] = { "functions", "str", true } }
P.schemas = S

-- the wire type each kind is written with (packed repeated: 2 as well)
local WIRE = { int = 0, i64parts = 0, str = 2, msg = 2, f32 = 5, fixed32 = 5, fixed64 = 1 }

local decode

local function need(s, pos, n, limit, what)
  if n > limit - pos then
    fail(("truncated %s: %d bytes needed at byte %d, %d left"):format(what, n, pos - 1, limit - pos))
  end
end

-- One scalar of a kind at pos (wire type already checked): value, next pos.
local function read_scalar(s, pos, limit, kind, what)
  if kind == "int" then
    local lo, hi, np = varint(s, pos, limit, what)
    return int64_of(lo, hi), np
  elseif kind == "i64parts" then
    local lo, hi, np = varint(s, pos, limit, what)
    return { lo, hi }, np
  elseif kind == "fixed32" or kind == "f32" then
    need(s, pos, 4, limit, what)
    return sub(s, pos, pos + 3), pos + 4
  else   -- fixed64
    need(s, pos, 8, limit, what)
    return sub(s, pos, pos + 7), pos + 8
  end
end

local function skip(s, pos, limit, wt, what)
  if wt == 0 then
    local _, _, np = varint(s, pos, limit, what)
    return np
  elseif wt == 1 then need(s, pos, 8, limit, what) return pos + 8
  elseif wt == 5 then need(s, pos, 4, limit, what) return pos + 4
  elseif wt == 2 then
    local lo, hi, np = varint(s, pos, limit, what)
    if hi ~= 0 then fail(("length of %s at byte %d is beyond the end of the data"):format(what, pos - 1)) end
    need(s, np, lo, limit, what)
    return np + lo
  end
  fail(("%s: unsupported or invalid wire type %d"):format(what, wt))
end

-- decode(s, pos, limit, schema, depth): the message in s[pos, limit) as a table.
function decode(s, pos, limit, schema, depth)
  if depth > MAX_DEPTH then fail("graphs nested more than " .. MAX_DEPTH .. " deep") end
  local msg = {}
  for _, f in pairs(schema) do
    if type(f) == "table" and f[3] then msg[f[1]] = {} end
  end
  while pos < limit do
    local key_pos = pos
    local klo, khi, np = varint(s, pos, limit, "field key of " .. schema.name)
    if khi ~= 0 or klo < 8 then fail(("bad field key %d in %s at byte %d"):format(klo, schema.name, pos - 1)) end
    local num, wt = floor(klo / 8), klo % 8
    local f = schema[num]
    local what = f and (schema.name .. "." .. f[1]) or (schema.name .. " field " .. num)
    pos = np
    if not f then
      pos = skip(s, pos, limit, wt, what)
    else
      local name, kind, rep, sub_schema = f[1], f[2], f[3], f[4]
      local want = WIRE[kind]
      local value
      if wt == 2 and want ~= 2 and rep then   -- packed repeated scalars
        local len, lhi, p2 = varint(s, pos, limit, what)
        if lhi ~= 0 then fail(("length of %s at byte %d is beyond the end of the data"):format(what, pos - 1)) end
        need(s, p2, len, limit, what)
        local stop, list = p2 + len, msg[name]
        if kind == "fixed32" or kind == "fixed64" then
          local w = kind == "fixed32" and 4 or 8
          if len % w ~= 0 then fail(("packed %s has %d bytes, not a multiple of %d"):format(what, len, w)) end
          list[#list + 1] = sub(s, p2, stop - 1)
        else
          while p2 < stop do list[#list + 1], p2 = read_scalar(s, p2, stop, kind, what) end
        end
        pos = stop
      elseif wt ~= want then
        fail(("%s has wire type %d, expected %d (byte %d)"):format(what, wt, want, key_pos - 1))
      else
        if kind == "str" or kind == "msg" then
          local len, lhi, p2 = varint(s, pos, limit, what)
          if lhi ~= 0 then fail(("length of %s at byte %d is beyond the end of the data"):format(what, pos - 1)) end
          need(s, p2, len, limit, what)
          if kind == "str" then value = sub(s, p2, p2 + len - 1)
          else value = decode(s, p2, p2 + len, sub_schema, depth + 1) end
          pos = p2 + len
        else
          value, pos = read_scalar(s, pos, limit, kind, what)
        end
        if rep then local list = msg[name]; list[#list + 1] = value else msg[name] = value end
      end
    end
  end
  return msg
end

function P.decode_model(s)
  if type(s) ~= "string" then fail("expected the bytes of a model") end
  if #s == 0 then fail("empty file: not an ONNX model") end
  local m = decode(s, 1, #s + 1, S.Model, 0)
  if not m.graph then fail("not an ONNX model (no graph in the ModelProto)") end
  return m
end

-- decode a float32 from its 4 little-endian bytes (attribute f) without
-- string.unpack: exact, NaN and infinities included.
function P.f32(b4)
  local b1, b2, b3, b4_ = byte(b4, 1, 4)
  local sign = b4_ >= 128 and -1 or 1
  local e = (b4_ % 128) * 2 + floor(b3 / 128)
  local m = (b3 % 128) * 65536 + b2 * 256 + b1
  if e == 255 then
    if m == 0 then return sign * math.huge end
    return 0 / 0
  elseif e == 0 then
    return sign * m * 2 ^ -149
  end
  return sign * (1 + m / 8388608) * 2 ^ (e - 127)
end

return P
