-- T.plot as PNG (drawn by plot_raster.lua, written by T.save_image), log
-- scales, a 2-D y as one series per column, and the figure a plot returns
-- (a one-line summary at the prompt, not the SVG).  PNGs are checked by
-- decoding them back with T.load_image.
local T = require "ltensor"

local tmpdir = os.tmpname()
os.remove(tmpdir)
os.execute("mkdir -p " .. tmpdir)
local function tmp(name) return tmpdir .. "/" .. name end

local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  assert.truthy(tostring(err):find(substr, 1, true), "error was: " .. tostring(err))
end

-- pixels of img (3 x H x W uint8) close to colour {r, g, b}
local function count_colour(img, col, tol)
  tol = tol or 40
  local d = (img:int() - T.tensor(col, { dtype = T.int32 }):view(3, 1, 1)):abs():amax(1)
  return d:le(tol):sum():item()
end

local BLUE, ORANGE = { 0x1f, 0x77, 0xb4 }, { 0xff, 0x7f, 0x0e }

describe("T.plot to PNG", function()
  it("writes a real PNG of the asked size, not SVG bytes", function()
    local x = T.linspace(0, 1, 20)
    T.plot.line({ x = x, y = x * 2 }, { file = tmp("a.png"), width = 320, height = 200 })
    local head = io.open(tmp("a.png"), "rb"):read(8)
    assert.equal("\137PNG\r\n\26\n", head)
    local img = T.load_image(tmp("a.png"))
    assert.same({ 3, 200, 320 }, img:size())
    assert.equal(T.uint8, img.dtype)
  end)
  it("draws the line where the data is: y = x runs corner to corner of the plot box", function()
    local fig = T.plot.line({ x = { 0, 1 }, y = { 0, 1 } }, { file = tmp("diag.png"), grid = false, ylim = { 0, 1 } })
    local img = T.load_image(tmp("diag.png"))
    -- the box: left 70, top 20, 640 - 70 - 20 wide, 420 - 20 - 50 high
    local left, top, pw, ph = 70, 20, 550, 350
    for _, f in ipairs({ 0.25, 0.5, 0.75 }) do
      local px, py = math.floor(left + f * pw), math.floor(top + ph - f * ph)
      local patch = img:narrow(2, py - 2 + 1, 5):narrow(3, px - 2 + 1, 5)
      assert.truthy(count_colour(patch, BLUE) > 0, ("no line near (%d, %d)"):format(px, py))
    end
    -- far from the line (the top left of the box): background
    local corner = img:narrow(2, top + 10, 5):narrow(3, left + 20, 5)
    assert.equal(25, count_colour(corner, { 255, 255, 255 }, 1))
    assert.equal(fig:image():size(3), 640)
  end)
  it("draws axes, tick labels and a title in ink", function()
    T.plot.line({ y = { 1, 3, 2 } }, { file = tmp("t.png"), title = "Title", xlabel = "epoch", ylabel = "loss" })
    local img = T.load_image(tmp("t.png"))
    local dark = img:int():amax(1):lt(100)
    assert.truthy(dark:narrow(1, 1, 18):sum():item() > 20)       -- the title row
    assert.truthy(dark:narrow(1, 400, 21):sum():item() > 10)     -- the x label
    assert.truthy(dark:narrow(2, 1, 25):sum():item() > 10)       -- the y label, rotated
    assert.truthy(dark:select(2, 71):sum():item() > 300)          -- the left axis (column 70)
  end)
  it("a 2-D y is one series per column, with a legend", function()
    local x = T.linspace(0, 6.28, 60)
    local fig = T.plot.line({ x = x, y = T.stack({ T.sin(x), T.cos(x) }, 2), label = { "sin", "cos" } },
      { file = tmp("two.png") })
    assert.equal(2, fig.nseries)
    local _, k = fig.svg:gsub("<polyline", "")
    assert.equal(2, k)
    assert.truthy(fig.svg:find(">sin</text>", 1, true) and fig.svg:find(">cos</text>", 1, true))
    local img = T.load_image(tmp("two.png"))
    assert.truthy(count_colour(img, BLUE) > 200)
    assert.truthy(count_colour(img, ORANGE) > 200)
    -- a list of rows is the same
    local rows = {}
    for i = 1, 5 do rows[i] = { i, 2 * i, 3 * i } end
    assert.equal(3, T.plot.line({ y = rows }).nseries)
    raises("series 1: 1 labels for 2 columns of y", T.plot.line, { y = T.zeros(4, 2), label = { "a" } })
  end)
  it("scatter and heatmap render too", function()
    T.plot.scatter({ x = { 1, 2, 3 }, y = { 3, 1, 2 } }, { file = tmp("s.png"), size = 5 })
    -- markers are drawn at 0.75 opacity over white
    assert.truthy(count_colour(T.load_image(tmp("s.png")), { 87, 153, 199 }, 12) > 3 * 50)
    T.plot.heatmap(T.arange(16):view(4, 4), { file = tmp("h.png") })
    local img = T.load_image(tmp("h.png"))
    assert.truthy(count_colour(img, { 253, 231, 37 }, 10) > 100)   -- viridis' top
    assert.truthy(count_colour(img, { 68, 1, 84 }, 10) > 100)      -- and bottom
  end)
  it("refuses a format it cannot write", function()
    raises("ltensor.plot.line: cannot write 'x.jpg': plots are written as .svg or .png", T.plot.line, { 1, 2 },
      { file = "x.jpg" })
    raises("ltensor.plot.line: cannot write 'x': plots are written as .svg or .png", T.plot.line, { 1, 2 }, { file = "x" })
  end)
end)

describe("T.plot log scales", function()
  it("puts decade ticks on a log y axis and spaces decades evenly", function()
    local y = {}
    for i = 1, 5 do y[i] = 10 ^ (1 - i) end   -- 1 .. 1e-4
    local fig = T.plot.line({ y = y }, { yscale = "log", ylim = { 1e-4, 1 } })
    for _, lab in ipairs({ ">1</text>", ">0.1</text>", ">0.01</text>", ">0.001</text>", ">1e-4</text>" }) do
      assert.truthy(fig.svg:find(lab, 1, true), lab)
    end
    -- the straight line of a geometric series: points evenly spaced in y
    local pts = fig.svg:match('points="([^"]+)"')
    local ys = {}
    for _, py in pts:gmatch("([%d%.]+),([%d%.]+)") do ys[#ys + 1] = tonumber(py) end
    for i = 2, 4 do assert.near(ys[i] - ys[i - 1], ys[i + 1] - ys[i], 0.02) end
  end)
  it("labels 2 and 5 when less than two decades are shown, and supports a log x", function()
    local fig = T.plot.line({ x = { 1, 1000 }, y = { 2, 8 } }, { yscale = "log", xscale = "log" })
    assert.truthy(fig.svg:find(">5</text>", 1, true))
    assert.truthy(fig.svg:find(">100</text>", 1, true) and fig.svg:find(">1000</text>", 1, true))
  end)
  it("drops values <= 0 with a note in the summary, and refuses data with none positive", function()
    local fig = T.plot.line({ y = { 1, 0, -1, 10, 100 } }, { yscale = "log" })
    assert.equal("T.plot.Figure(line, 640x420, 1 series) (2 y values <= 0 dropped on the log scale)", tostring(fig))
    -- a dropped point breaks the line, as NaN does: 1 alone (a dot), then 10 - 100
    local _, k = fig.svg:gsub("<polyline", "")
    assert.equal(1, k)
    local _, dots = fig.svg:gsub("<circle", "")
    assert.equal(1, dots)
    raises("ltensor.plot.line: yscale 'log' needs positive values, y has none", T.plot.line, { y = { 0, -1 } },
      { yscale = "log" })
    raises([[ltensor.plot.scatter: option 'xscale' must be "linear" or "log" (got symlog)]], T.plot.scatter,
      { y = { 1, 2 } }, { xscale = "symlog" })
  end)
  it("renders a loss curve on a log scale to PNG", function()
    local steps = T.arange(1, 201):double()
    local loss = T.exp(-steps / 40) * 2 + 0.01
    T.plot.line({ x = steps, y = loss, label = "loss" }, { file = tmp("loss.png"), yscale = "log", title = "loss" })
    local img = T.load_image(tmp("loss.png"))
    assert.truthy(count_colour(img, BLUE) > 400)
  end)
end)

describe("the figure a plot returns", function()
  it("prints as one line at the prompt", function()
    local fig = T.plot.line({ { y = { 1, 2 } }, { y = { 2, 1 } } })
    assert.equal("T.plot.Figure(line, 640x420, 2 series)", tostring(fig))
    local repl = require "ltensor.repl"
    assert.falsy(repl.format(fig):find("\n"))
    fig = T.plot.hist(T.randn(50), { file = tmp("h.svg") })
    assert.equal("T.plot.Figure(hist, 640x420, 1 series) written to " .. tmp("h.svg"), tostring(fig))
  end)
  it("saves again as SVG or PNG", function()
    local fig = T.plot.line({ y = { 1, 2, 3 } })
    fig:save(tmp("again.svg"))
    assert.equal(fig.svg, io.open(tmp("again.svg")):read("*a"))
    fig:save(tmp("again.png"))
    assert.same({ 3, 420, 640 }, T.load_image(tmp("again.png")):size())
  end)
end)
