-- T.save_image / T.load_image: PNG (every colour type, bit depth and
-- interlacing, files from other encoders), PPM/PGM, float and uint8 input,
-- and the errors of bad images and hostile files.
local T = require "ltensor"
local fixtures = dofile("spec/fixtures/images.lua")

local tmpdir = os.tmpname()
os.remove(tmpdir)
os.execute("mkdir -p " .. tmpdir)
local function tmp(name) return tmpdir .. "/" .. name end
-- a ~ b of two bytes without Lua 5.3's operator (the spec runs on Lua 5.1 too)
local function bxor(a, b)
  local r, p = 0, 1
  for _ = 1, 8 do
    if a % 2 ~= b % 2 then r = r + p end
    a, b, p = math.floor(a / 2), math.floor(b / 2), p * 2
  end
  return r
end

local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  assert.truthy(tostring(err):find(substr, 1, true), "error was: " .. tostring(err))
end

local function sh(cmd) local p = io.popen(cmd .. " 2>&1") local o = p:read("*a") p:close() return o end

local function read(path) local f = assert(io.open(path, "rb")) local s = f:read("*a") f:close() return s end
local function write(path, s) local f = assert(io.open(path, "wb")) f:write(s) f:close() end

local function test_image(c, h, w)
  local t = T.empty(c, h, w, { dtype = T.uint8 })
  for k = 1, c do for i = 1, h do for j = 1, w do t:set(k, i, j, (k * 71 + i * 13 + j * 7) % 256) end end end
  return t
end

describe("T.load_image on PNG files from other encoders", function()
  for _, case in ipairs(fixtures.cases) do
    it("decodes " .. case.file, function()
      local img = T.load_image("spec/fixtures/images/" .. case.file)
      assert.equal(T.uint8, img.dtype)
      assert.same({ case.channels, fixtures.height, fixtures.width }, img.shape)
      assert.same(case.values, img:flatten():totable())
    end)
  end
end)

describe("T.save_image and T.load_image round trips", function()
  for c = 1, 4 do
    it("PNG with " .. c .. " channel(s) reads back exactly", function()
      local img = test_image(c, 9, 13)
      T.save_image(tmp("rt.png"), img)
      assert.is_true(T.equal(T.load_image(tmp("rt.png")), img))
    end)
  end
  it("takes H x W grey images and non-contiguous tensors", function()
    local g = test_image(1, 6, 8)[1]
    T.save_image(tmp("g.png"), g)
    assert.is_true(T.equal(T.load_image(tmp("g.png"))[1], g))
    local t = test_image(3, 8, 6):transpose(2, 3)   -- 3 x 6 x 8 view
    T.save_image(tmp("t.png"), t)
    assert.is_true(T.equal(T.load_image(tmp("t.png")), t))
  end)
  it("scales floats in [0, 1] by 255, rounding and clamping", function()
    local f = T.tensor({ { { 0.0, 0.5, 1.0, 1.5, -0.2, 0.1 } } })
    T.save_image(tmp("f.png"), f)
    assert.same({ 0, 128, 255, 255, 0, 26 }, T.load_image(tmp("f.png")):flatten():totable())
  end)
  it("writes binary PPM and PGM that read back", function()
    local rgb = test_image(3, 5, 4)
    T.save_image(tmp("a.ppm"), rgb)
    assert.equal("P6\n4 5\n255\n", read(tmp("a.ppm")):sub(1, 11))
    assert.is_true(T.equal(T.load_image(tmp("a.ppm")), rgb))
    local g = test_image(1, 5, 4)
    T.save_image(tmp("a.pgm"), g)
    assert.is_true(T.equal(T.load_image(tmp("a.pgm")), g))
    T.save_image(tmp("a.pnm"), g)
    assert.is_true(T.equal(T.load_image(tmp("a.pnm")), g))
  end)
  it("reads ASCII and 16-bit PNM with comments, scaling maxval to 255", function()
    write(tmp("ascii.pgm"), "P2\n# a comment\n3 1\n# another\n15\n0 15\n7\n")
    assert.same({ { { 0, 255, 119 } } }, T.load_image(tmp("ascii.pgm")):totable())
    write(tmp("ascii.ppm"), "P3 1 1 255 10 20 30\n")
    assert.same({ { { 10 } }, { { 20 } }, { { 30 } } }, T.load_image(tmp("ascii.ppm")):totable())
    write(tmp("wide.pgm"), "P5\n2 1\n65535\n\0\0\255\255")
    assert.same({ { { 0, 255 } } }, T.load_image(tmp("wide.pgm")):totable())
  end)
  it("files are read by other programs (file(1) and Pillow-free Python)", function()
    T.save_image(tmp("o.png"), test_image(3, 10, 12))
    assert.truthy(sh("file " .. tmp("o.png")):find("PNG image data, 12 x 10, 8-bit/color RGB", 1, true))
    -- Python's standard library checks the chunk CRCs and inflates the data
    local py = ("import zlib,struct\nd=open(%q,'rb').read()\nassert d[:8]==b'\\x89PNG\\r\\n\\x1a\\n'\n" ..
      "p=8;idat=b''\nwhile p<len(d):\n n=struct.unpack('>I',d[p:p+4])[0];t=d[p+4:p+8];c=d[p+8:p+8+n]\n" ..
      " assert struct.unpack('>I',d[p+8+n:p+12+n])[0]==zlib.crc32(t+c)&0xffffffff\n if t==b'IDAT': idat+=c\n p+=12+n\n" ..
      "print(len(zlib.decompress(idat)))"):format(tmp("o.png"))
    write(tmp("check.py"), py)
    assert.equal("370\n", sh("python3 " .. tmp("check.py")))   -- 10 rows x (1 + 12*3)
  end)
end)

describe("image errors", function()
  it("names bad shapes, dtypes, options and formats", function()
    raises("ltensor.save_image: expected 1 to 4 channels", T.save_image, tmp("x.png"), T.zeros(5, 2, 2))
    raises("ltensor.save_image: expected an image of shape C x H x W or H x W, got 1 dims", T.save_image, tmp("x.png"), T.zeros(4))
    raises("ltensor.save_image: expected a uint8 tensor or floating values in [0, 1], got ltensor.int32",
      T.save_image, tmp("x.png"), T.zeros(2, 2, { dtype = T.int32 }))
    raises("ltensor.save_image: cannot write an empty image", T.save_image, tmp("x.png"), T.zeros(1, 0, 3))
    raises("ltensor.save_image: cannot tell the image format of", T.save_image, tmp("x.jpg"), T.zeros(2, 2))
    raises("ltensor.save_image: PPM holds RGB images (3 channels), got 1", T.save_image, tmp("x.ppm"), T.zeros(2, 2))
    raises("ltensor.save_image: unknown option 'fmt'", T.save_image, tmp("x.png"), T.zeros(2, 2), { fmt = "png" })
    raises("ltensor.save_image: bad argument #2 (tensor expected, got number)", T.save_image, tmp("x.png"), 3)
    raises("ltensor.load_image: cannot open", T.load_image, tmp("missing.png"))
  end)
  it("rejects corrupt PNG files with a clear error, never a crash", function()
    T.save_image(tmp("ok.png"), test_image(3, 8, 8))
    local good = read(tmp("ok.png"))
    write(tmp("bad.png"), good:sub(1, 30))
    raises("ltensor.load_image: truncated file", T.load_image, tmp("bad.png"))
    local flipped = good:sub(1, 40) .. string.char((good:byte(41) + 1) % 256) .. good:sub(42)
    write(tmp("bad.png"), flipped)
    raises("ltensor.load_image: CRC mismatch", T.load_image, tmp("bad.png"))
    write(tmp("bad.png"), "\137PNG\r\n\26\nxx")
    raises("ltensor.load_image: truncated file", T.load_image, tmp("bad.png"))
    write(tmp("bad.png"), "hello")
    raises("ltensor.load_image: '" .. tmp("bad.png") .. "' is neither PNG nor PPM/PGM", T.load_image, tmp("bad.png"))
    -- random corruption of every byte position: errors or a valid image, never a crash
    for pos = 9, #good, 3 do
      write(tmp("fuzz.png"), good:sub(1, pos - 1) .. string.char(bxor(good:byte(pos), 0x5a)) .. good:sub(pos + 1))
      local ok, err = pcall(T.load_image, tmp("fuzz.png"))
      assert.truthy(ok or tostring(err):find("ltensor.load_image: ", 1, true), tostring(err))
    end
  end)
  it("rejects bad PNM headers and short rasters", function()
    write(tmp("b.ppm"), "P6\n4 4\n255\nabc")
    raises("truncated raster", T.load_image, tmp("b.ppm"))
    write(tmp("b.ppm"), "P6\n0 4\n255\n")
    raises("unsupported size 0 x 4", T.load_image, tmp("b.ppm"))
    write(tmp("b.pgm"), "P2 2 1 10 3 11")
    raises("a sample exceeds maxval 10", T.load_image, tmp("b.pgm"))
    -- found by tools/fuzz_loaders.lua: a header number beyond Lua's integers
    write(tmp("b.ppm"), "P6\n18446744073709551616 4\n255\n")
    raises("ltensor.load_image: '" .. tmp("b.ppm") .. "': header number 18446744073709551616 is out of range", T.load_image, tmp("b.ppm"))
    write(tmp("b.pgm"), "P7\n")
    raises("is not a PPM/PGM file", T.load_image, tmp("b.pgm"))
  end)
end)
