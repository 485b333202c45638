-- ltensor.image: T.save_image / T.load_image for PNG (zlib, in
-- src/binding/l_image.c) and binary or ASCII PPM/PGM (here).
--
-- Images are uint8 tensors C x H x W (C = 1 grey, 2 grey+alpha, 3 RGB,
-- 4 RGBA) or H x W (grey).  save_image also takes floating tensors with
-- values in [0, 1] (scaled by 255, rounded and clamped, as torchvision's
-- save_image).  load_image always returns C x H x W uint8.  The format comes
-- from the file name (.png, .ppm, .pgm, .pnm) or opts.format.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local is_t = util.is_tensor
local fail = util.fail

local FORMATS = { png = "png", ppm = "ppm", pgm = "pgm", pnm = "pnm" }

local function format_of(fname, path, opts)
  if opts.format ~= nil then
    local f = FORMATS[tostring(opts.format):lower()]
    if not f then fail(fname, "unknown format '%s' (png, ppm, pgm or pnm)", tostring(opts.format)) end
    return f
  end
  local ext = path:match("%.([%w]+)$")
  local f = ext and FORMATS[ext:lower()]
  if not f then
    fail(fname, "cannot tell the image format of '%s' (use a .png, .ppm, .pgm or .pnm name, or {format = ...})", path)
  end
  return f
end

local function check_opts(fname, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fname, "bad argument #3 'opts' (table expected, got %s)", type(opts)) end
  return T._check_opts(fname, opts, { "format" })   -- the one checker
end

-- tensor -> contiguous H x W x C uint8 and C
local function to_hwc(t)
  if not is_t(t) then fail("save_image", "bad argument #2 (tensor expected, got %s)", type(t)) end
  local d = t:dim()
  if d == 2 then t = t:unsqueeze(1)
  elseif d ~= 3 then fail("save_image", "expected an image of shape C x H x W or H x W, got %d dims", d) end
  local c = t:size(1)
  if c < 1 or c > 4 then fail("save_image", "expected 1 to 4 channels (C x H x W), got %d", c) end
  if t:size(2) == 0 or t:size(3) == 0 then
    fail("save_image", "cannot write an empty image (%d x %d)", t:size(2), t:size(3))
  end
  if t.dtype.is_floating_point then
    t = T.no_grad(function() return (t:detach():to(T.float32):clamp(0, 1) * 255):round():to(T.uint8) end)
  elseif t.dtype ~= T.uint8 then
    fail("save_image", "expected a uint8 tensor or floating values in [0, 1], got %s", tostring(t.dtype))
  end
  return t:permute(2, 3, 1):contiguous(), c
end

local function pnm_bytes(fname, hwc, c, fmt)
  local h, w = hwc:size(1), hwc:size(2)
  if fmt == "pnm" then fmt = c == 1 and "pgm" or "ppm" end
  if fmt == "ppm" and c ~= 3 then fail(fname, "PPM holds RGB images (3 channels), got %d", c) end
  if fmt == "pgm" and c ~= 1 then fail(fname, "PGM holds grey images (1 channel), got %d", c) end
  return { ("%s\n%d %d\n255\n"):format(fmt == "ppm" and "P6" or "P5", w, h), T._tobytes(hwc) }
end

function T.save_image(path, t, opts)
  if type(path) ~= "string" then fail("save_image", "bad argument #1 (file name expected, got %s)", type(path)) end
  opts = check_opts("save_image", opts)
  local fmt = format_of("save_image", path, opts)
  local hwc, c = to_hwc(t)
  local chunks = fmt == "png" and { T._png_encode(hwc, c) } or pnm_bytes("save_image", hwc, c, fmt)
  T._atomic_write("save_image", path, chunks)
end

-- PNM header: magic, width, height, maxval, with # comments; returns the
-- fields and the offset (0-based) of the raster.
local function pnm_header(s, path)
  local magic = s:sub(1, 2)
  if not (magic == "P2" or magic == "P3" or magic == "P5" or magic == "P6") then
    fail("load_image", "'%s' is not a PPM/PGM file (magic %q)", path, magic)
  end
  local pos, fields, separated = 3, {}, false
  while #fields < 3 do
    local ws = s:match("^%s+", pos)
    if ws then pos = pos + #ws separated = true end
    if s:sub(pos, pos) == "#" then
      local eol = s:find("\n", pos, true)
      if not eol then fail("load_image", "'%s': truncated header", path) end
      pos = eol + 1
      separated = true
    else
      local num = s:match("^%d+", pos)
      if not num or not separated then fail("load_image", "'%s': bad header near byte %d", path, pos) end
      separated = false
      -- at most 5 digits matter (sides and maxval are <= 65535)
      local v = #num <= 9 and math.tointeger(tonumber(num)) or nil
      if not v then fail("load_image", "'%s': header number %s is out of range", path, num:sub(1, 20)) end
      fields[#fields + 1] = v
      pos = pos + #num
    end
  end
  -- exactly one whitespace byte separates the header from a binary raster
  if not s:sub(pos, pos):match("%s") then fail("load_image", "'%s': bad header near byte %d", path, pos) end
  local w, h, maxval = fields[1], fields[2], fields[3]
  if w < 1 or h < 1 or w > 65535 or h > 65535 then fail("load_image", "'%s': unsupported size %d x %d", path, w, h) end
  if maxval < 1 or maxval > 65535 then fail("load_image", "'%s': maxval %d out of range 1..65535", path, maxval) end
  return magic, w, h, maxval, pos
end

local function load_pnm(s, path)
  local magic, w, h, maxval, pos = pnm_header(s, path)
  local c = (magic == "P3" or magic == "P6") and 3 or 1
  local n = w * h * c
  local t
  if magic == "P5" or magic == "P6" then
    local wide = maxval > 255
    local need = n * (wide and 2 or 1)
    if #s - pos < need then fail("load_image", "'%s': truncated raster (%d of %d bytes)", path, #s - pos, need) end
    t = T._frombytes(s, wide and T.uint16 or T.uint8, { h, w, c }, pos, true)
  else
    local vals = {}
    for num in s:sub(pos + 1):gmatch("%d+") do
      vals[#vals + 1] = tonumber(num)
      if #vals > n then break end
    end
    if #vals ~= n then fail("load_image", "'%s': expected %d samples, found %d", path, n, #vals) end
    t = T.tensor(vals, { dtype = T.int64 }):view(h, w, c)
  end
  if maxval ~= 255 then
    -- rescale to 0..255, rounding; samples above maxval are an error
    local big = t:to(T.int64)
    if big:max():item() > maxval then fail("load_image", "'%s': a sample exceeds maxval %d", path, maxval) end
    t = T.floor_divide(big * 255 + math.floor(maxval / 2), maxval)
  end
  return t:to(T.uint8):permute(3, 1, 2):contiguous()
end

function T.load_image(path, opts)
  if type(path) ~= "string" then fail("load_image", "bad argument #1 (file name expected, got %s)", type(path)) end
  opts = check_opts("load_image", opts)
  local f, err = io.open(path, "rb")
  if not f then fail("load_image", "cannot open '%s': %s", path, tostring(err)) end
  local s, rerr = f:read("*a")
  f:close()
  if not s then fail("load_image", "cannot read '%s': %s", path, tostring(rerr)) end
  local fmt = opts.format and format_of("load_image", path, opts)
  if s:sub(1, 8) == "\137PNG\r\n\26\n" and (fmt == nil or fmt == "png") then return T._png_decode(s) end
  if fmt == "png" then fail("load_image", "'%s' is not a PNG file", path) end
  if s:sub(1, 1) == "P" then return load_pnm(s, path) end
  fail("load_image", "'%s' is neither PNG nor PPM/PGM", path)
end

-- The module's own functions (they are also T's): package.loaded holds
-- this table, not T, so a traceback names T's other functions 'ltensor.*'
-- rather than through this module
return { save_image = T.save_image, load_image = T.load_image }
