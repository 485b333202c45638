-- tools/fuzz_loaders.lua -- a mutation fuzzer for the file loaders
-- (T.load, T.load_npy, T.load_image, T.read_csv, T.onnx.load and a forward
-- pass of what it loads).  Half the inputs are
-- structure-aware (tools/fuzz_structured.lua: valid CRCs, zlib streams,
-- JSON and .npy headers around semantic mutations; PNGs from T._png_encode
-- with their IHDR rewritten and re-CRC'd; CSV text with options; ONNX
-- protobufs re-encoded after field-level mutations); the
-- other half: valid files of every kind are built,
-- mutated (bit flips, interesting bytes and integers, insertions, deletions,
-- truncation, splices, big numbers in text headers) and loaded; every
-- outcome must be a tensor (or table of tensors) or an error that names the
-- loader.  Anything else (a Lua runtime error, a non-string error, a crash
-- under the sanitizer build) is a finding; its input is kept in
-- build/fuzz/finding-<n>.bin for a regression spec.
--
--   build/asan/bin/ltensor tools/fuzz_loaders.lua [seconds=60] [seed=1]
--   (make fuzz runs it under ASan+UBSan)
-- Prints "loaders: N executions in S s, F findings" and exits 1 on findings.
local T = require "ltensor"

local seconds = tonumber(arg and arg[1]) or 60
local seed = tonumber(arg and arg[2]) or 1
math.randomseed(seed)
T.manual_seed(seed)
-- a cap on tensor memory: a file that declares a huge tensor (or an ONNX
-- graph that expands one) fails as "not enough memory", as a host would see it
T.set_memory_limit(tonumber(os.getenv("FUZZ_MEMORY") or "") or 1024 * 1024 * 1024)

os.execute("mkdir -p build/fuzz")
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
io.stderr:write("[fuzz_loaders] inputs in " .. dir .. "/input (the one running now)\n")

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- Seeds: one valid file per interesting layout, written by ltensor itself
-- (and the committed PNGs from other encoders).
local seeds = {}
local function seed_file(kind, name, write)
  local path = dir .. "/" .. name
  write(path)
  seeds[#seeds + 1] = { kind = kind, data = assert(slurp(path)) }
end
seed_file("st", "a.safetensors", function(p)
  T.save(p, { w = T.randn(3, 4), b = T.arange(5):to(T.int32), m = T.tensor({ true, false }),
              h = T.ones(2, { dtype = T.float16 }), c = T.zeros(2):to(T.complex64), e = T.zeros(0, 3) })
end)
seed_file("st", "b.safetensors", function(p) T.save(p, T.tensor(3.5, { dtype = T.float64 })) end)
seed_file("npy", "a.npy", function(p) T.save_npy(p, T.randn(2, 3)) end)
seed_file("npy", "b.npy", function(p) T.save_npy(p, T.arange(6):to(T.int16):view(3, 2):t()) end)
seed_file("npy", "c.npy", function(p) T.save_npy(p, T.tensor(true)) end)
seed_file("img", "a.png", function(p) T.save_image(p, T.rand(3, 5, 7)) end)
seed_file("img", "b.png", function(p) T.save_image(p, T.rand(4, 3, 3)) end)
seed_file("img", "a.ppm", function(p) T.save_image(p, T.rand(3, 4, 2)) end)
seed_file("img", "a.pgm", function(p) T.save_image(p, T.rand(1, 2, 6)) end)
 -- PyTorch checkpoints (zips); "pkl" seeds are bare pickles, archived after
-- mutation so that the CRC-32 does not stop them before the unpickler
local zip = require "ltensor.io.zip"
for _, f in ipairs({ "state_dict", "checkpoint", "views", "edges", "ltensor_written" }) do
  local s = slurp("spec/fixtures/pt/" .. f .. ".pt")
  if s then
    seeds[#seeds + 1] = { kind = "pt", data = s }
    local read_at = function(off, n) return s:sub(off + 1, off + n) end
    local others, pkl = {}, nil
    for _, e in ipairs((zip.read_directory(read_at, #s, error))) do
      local data = zip.read_entry(read_at, e, error)
      if e.name:match("/data%.pkl$") then pkl = { name = e.name, data = data }
      else others[#others + 1] = { name = e.name, data = data } end
    end
    seeds[#seeds + 1] = { kind = "pkl", data = pkl.data, pkl_name = pkl.name, others = others }
  end
end
for _, f in ipairs({ "grey1", "grey16", "palette_trns", "rgb8_adam7", "greyalpha8" }) do
  local s = slurp("spec/fixtures/images/" .. f .. ".png")
  if s then seeds[#seeds + 1] = { kind = "img", data = s } end
end
for _, f in ipairs({ "f4_2x3", "c16_fortran_3d", "i4_bigendian", "u2", "b1" }) do
  local s = slurp("spec/fixtures/" .. f .. ".npy")
  if s then seeds[#seeds + 1] = { kind = "npy", data = s } end
end

-- ONNX models: the fixtures, loaded and run on random inputs of their
-- declared shapes (symbolic dims 1-3, fixed ones capped at 64)
local onnx_seeds = {}
if T.onnx then
  local ls = io.popen("ls spec/fixtures/onnx/*.onnx 2>/dev/null")
  for p in ls:lines() do
    local s = slurp(p)
    if s and not p:find("ext", 1, true) then
      onnx_seeds[#onnx_seeds + 1] = s
      seeds[#seeds + 1] = { kind = "onnx", data = s }
    end
  end
  ls:close()
end
local function onnx_run(path)
  local m = T.onnx.load(path)
  local ins = {}
  for i, inp in ipairs(m.inputs or {}) do
    local shape = {}
    for d, v in ipairs(inp.shape or {}) do
      shape[d] = type(v) == "number" and math.max(0, math.min(v, 64)) or math.random(1, 3)
    end
    local numel = 1
    for _, v in ipairs(shape) do numel = numel * v end
    if numel > 65536 then for d = 1, #shape do shape[d] = math.min(shape[d], 2) end end
    local x = T.randn(shape)
    local okc, y = pcall(function() return x:to(inp.dtype) end)
    ins[i] = okc and y or x
  end
  local ok, y = pcall(m, table.unpack(ins))
  if not ok then error(y, 0) end
  return T.ones(1)
end

local LOADERS = { st = { T.load, "ltensor.load" }, npy = { T.load_npy, "ltensor.load_npy" },
                  img = { T.load_image, "ltensor.load_image" }, pt = { T.load, "ltensor.load" },
                  onnx = T.onnx and { onnx_run, "ltensor." } or nil }
-- read by the structure-aware inputs only (a seed file is no CSV)
local CSV_LOADER = { T.read_csv, "ltensor.read_csv" }

local INTERESTING8 = { 0, 1, 0x7f, 0x80, 0xff, 0x20, 0x30, 0x39, 0x7b, 0x7d, 0x22 }
local INTERESTING32 = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0x10000, 65535, 2 ^ 31 - 1 }
local BIGNUMS = { "0", "-1", "9223372036854775807", "18446744073709551616", "4294967296", "99999999999999999999",
                  "1e308", "-9223372036854775808", "65536" }

local function mutate(s, other)
  local n = #s
  local op = math.random(9)
  if n == 0 then return string.char(math.random(0, 255)) end
  local p = math.random(n)
  if op == 1 then         -- flip one bit
    local bit, b = math.floor(2 ^ math.random(0, 7)), s:byte(p)   -- b ~ bit, in Lua 5.1 syntax
    return s:sub(1, p - 1) .. string.char(math.floor(b / bit) % 2 == 1 and b - bit or b + bit) .. s:sub(p + 1)
  elseif op == 2 then     -- an interesting byte
    return s:sub(1, p - 1) .. string.char(INTERESTING8[math.random(#INTERESTING8)]) .. s:sub(p + 1)
  elseif op == 3 then     -- an interesting 32-bit integer, either byte order
    local v = math.floor(INTERESTING32[math.random(#INTERESTING32)]) % 4294967296   -- & 0xffffffff
    local packed = string.pack(math.random(2) == 1 and "<I4" or ">I4", v)
    return s:sub(1, p - 1) .. packed .. s:sub(p + 4)
  elseif op == 4 then     -- a 64-bit little-endian integer (safetensors' header length)
    local v = ({ 0, -1, 4611686018427387904, 0x7fffffffffffffff, n, n - 8, 100000000 })[math.random(7)]
    return s:sub(1, p - 1) .. string.pack("<i8", v) .. s:sub(p + 8)
  elseif op == 5 then     -- delete a run
    return s:sub(1, p - 1) .. s:sub(p + math.random(1, 16))
  elseif op == 6 then     -- insert random bytes
    local ins = {}
    for i = 1, math.random(1, 16) do ins[i] = string.char(math.random(0, 255)) end
    return s:sub(1, p) .. table.concat(ins) .. s:sub(p + 1)
  elseif op == 7 then     -- truncate
    return s:sub(1, math.random(0, n - 1))
  elseif op == 8 then     -- replace a number in a text header by a big or odd one
    local starts = {}
    for i in s:sub(1, 4096):gmatch("()%d+") do starts[#starts + 1] = i end
    if #starts == 0 then return s end
    local i = starts[math.random(#starts)]
    local j = s:find("%D", i) or n + 1
    return s:sub(1, i - 1) .. BIGNUMS[math.random(#BIGNUMS)] .. s:sub(j)
  else                    -- splice with another seed
    local q = math.random(#other)
    return s:sub(1, p) .. other:sub(q)
  end
end

local function acceptable(ok, res, prefix, any)
  if ok and any then return true end
  if ok then
    if T.is_tensor(res) then return true end
    if type(res) == "table" then
      for _, v in pairs(res) do if not T.is_tensor(v) then return false, "a non-tensor in the result" end end
      return true
    end
    return false, "returned a " .. type(res)
  end
  if type(res) ~= "string" then return false, "non-string error: " .. tostring(res) end
  if res:find("attempt to ", 1, true) or not res:find(prefix, 1, true) then return false, res end
  return true
end

local S = dofile((arg and arg[0] or "tools/x"):match("^(.*)/[^/]*$") .. "/fuzz_structured.lua")

-- a real deflate stream (T._png_encode) under a rewritten IHDR
local function png_real()
  local h, w, c = math.random(1, 9), math.random(1, 9), math.random(1, 4)
  local png = T._png_encode(T.randint(0, 256, { h, w, c }):to(T.uint8), c)
  local ihdr = png:sub(17, 29)
  local fields = { string.unpack(">I4>I4BBBBB", ihdr) }
  local i = math.random(7)
  fields[i] = ({ math.random(0, 20), math.random(0, 20), ({ 1, 2, 4, 8, 16, 3, 0 })[math.random(7)],
                 ({ 0, 2, 3, 4, 6, 1 })[math.random(6)], math.random(0, 1), math.random(0, 1), math.random(0, 2) })[i]
  fields[8] = nil
  local new = string.pack(">I4>I4BBBBB", table.unpack(fields, 1, 7))
  local crc = string.pack(">I4", S.crc32("IHDR" .. new))
  return png:sub(1, 16) .. new .. crc .. png:sub(34), "png-real field " .. i
end

local STRUCT = { { "img", S.png }, { "img", png_real }, { "st", S.safetensors }, { "npy", S.npy }, { "csv", S.csv } }
if #onnx_seeds > 0 then
  STRUCT[#STRUCT + 1] = { "onnx", function() return S.protobuf(onnx_seeds[math.random(#onnx_seeds)]) end }
end
local struct_execs = 0

local path = dir .. "/input"
local start = T._clock and T._clock() or os.clock()
local now = function() return T._clock and T._clock() or os.clock() end
local execs, findings = 0, 0
local last_report = start
-- a call of a loader under a watchdog: a file that keeps a loader's Lua
-- code busy past FUZZ_CALL_SECONDS (10) is a finding too (a hang)
local call_limit = tonumber(os.getenv("FUZZ_CALL_SECONDS") or "") or 10
local function run(f, ...)
  local t0 = now()
  debug.sethook(function()
    if now() - t0 > call_limit then error("fuzz: the loader ran for more than " .. call_limit .. " s", 0) end
  end, "", 100000)
  local r = table.pack(pcall(f, ...))
  debug.sethook()
  return table.unpack(r, 1, r.n)
end

-- Lua-level findings reported to their module's owner: tools/fuzz_known.txt
-- lines whose target is "loader" excuse an error matching their Lua
-- pattern (counted, not failing the run); crashes are never excused.
local known_texts, known = {}, 0
do
  local kf = io.open((arg and arg[0] or "tools/x"):match("^(.*)/[^/]*$") .. "/fuzz_known.txt")
  if kf then
    for l in kf:lines() do
      local txt = l:match("^loader\t([^\t]+)")
      if txt then known_texts[#known_texts + 1] = txt end
    end
    kf:close()
  end
end

local function keep_finding(data, what, why)
  for _, txt in ipairs(known_texts) do
    if tostring(why):find(txt) then known = known + 1 return end
  end
  findings = findings + 1
  local keep = ("build/fuzz/finding-%d.bin"):format(findings)
  local out = assert(io.open(keep, "wb"))
  out:write(data)
  out:close()
  print(("finding %d: %s on %s: %s"):format(findings, what, keep, why))
end

local function structured()
  local g = STRUCT[math.random(#STRUCT)]
  local data, opts, desc = g[2]()
  if type(opts) == "string" then desc, opts = opts, nil end
  if opts and opts.dtype then opts.dtype = T[opts.dtype] end
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
  local L = g[1] == "csv" and CSV_LOADER or LOADERS[g[1]]
  local t0 = now()
  local ok, res = run(L[1], path, opts)
  if now() - t0 > 2 then io.stderr:write(("[fuzz_loaders] slow (%.1f s): %s\n"):format(now() - t0, desc)) end
  execs = execs + 1
  struct_execs = struct_execs + 1
  local good, why = acceptable(ok, res, L[2])
  if not good then keep_finding(data, L[2] .. " (" .. desc .. ")", why) end
end

while now() - start < seconds do
 if math.random(2) == 1 then
  structured()
 else
  local sd = seeds[math.random(#seeds)]
  local data = sd.data
  for _ = 1, math.random(1, 4) do data = mutate(data, seeds[math.random(#seeds)].data) end
  local f = assert(io.open(path, "wb"))
  local kind_of = sd.kind
  if sd.kind == "pkl" then   -- the mutated pickle in a well-formed archive
    local list = { { name = sd.pkl_name, data = data } }
    for i, e in ipairs(sd.others) do list[i + 1] = e end
    data, kind_of = table.concat(zip.write(list)), "pt"
  end
  f:write(data)
  f:close()
  for kind, L in pairs(LOADERS) do
    -- each loader also sees the other kinds' files: its magic checks must hold
    if kind == kind_of or math.random(8) == 1 then
      local t0 = now()
      local ok, res = run(L[1], path)
      if now() - t0 > 2 then io.stderr:write(("[fuzz_loaders] slow (%.1f s): %s on a mutated %s\n"):format(now() - t0, L[2], kind_of)) end
      execs = execs + 1
      -- a checkpoint gives any value (nested tables, numbers, strings)
      local good, why = acceptable(ok, res, L[2], kind_of == "pt" and L[1] == T.load)
      if not good then keep_finding(data, L[2], why) end
    end
  end
 end
  if execs % 500 == 0 then collectgarbage() end
  if now() - last_report > 10 then
    last_report = now()
    io.stderr:write(("[fuzz_loaders] %d executions, %d findings, %.0f s\n"):format(execs, findings, last_report - start))
  end
end
os.execute("rm -rf " .. dir)
print(("loaders: %d executions (%d structure-aware) in %.0f s, %d findings, %d known"):format(execs, struct_execs,
  now() - start, findings, known))
os.exit(findings == 0 and 0 or 1)
