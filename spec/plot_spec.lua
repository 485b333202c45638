-- T.plot: SVG files that parse as XML, with the series, axes, ticks,
-- legend and title a reader expects; and the errors of bad arguments.
-- (PNG output, log scales, 2-D y: plot_png_spec.lua.)
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

-- Parses the file with Python's XML parser; returns "tag:count ..." of the
-- elements, or the parser's error.
local function xml_summary(path)
  local script = tmp("parse.py")
  local f = assert(io.open(script, "w"))
  f:write("import sys, collections, xml.etree.ElementTree as ET\n",
          "root = ET.parse(sys.argv[1]).getroot()\n",
          "c = collections.Counter(e.tag.split('}')[-1] for e in root.iter())\n",
          "print(' '.join('%s:%d' % kv for kv in sorted(c.items())))\n",
          "print('|'.join(e.text for e in root.iter() if e.tag.endswith('text') and e.text))\n")
  f:close()
  local p = io.popen("python3 " .. script .. " " .. path .. " 2>&1")
  local out = p:read("*a")
  p:close()
  local counts, texts = out:match("^(.-)\n(.-)\n$")
  assert.truthy(counts, "XML parse failed: " .. out)
  local n = {}
  for tag, k in counts:gmatch("(%w+):(%d+)") do n[tag] = tonumber(k) end
  return n, texts
end

describe("T.plot", function()
  it("line: several series with a legend, title and axis labels", function()
    local x = T.linspace(0, 6, 50)
    local svg = T.plot.line({ { x = x, y = T.sin(x), label = "sin" }, { x = x, y = T.cos(x), label = "cos <&>" } },
      { file = tmp("line.svg"), title = "Waves", xlabel = "time", ylabel = "value" }).svg
    assert.equal(svg, io.open(tmp("line.svg")):read("*a"))
    local n, texts = xml_summary(tmp("line.svg"))
    assert.equal(2, n.polyline)
    assert.truthy(texts:find("Waves", 1, true))
    assert.truthy(texts:find("time", 1, true) and texts:find("value", 1, true))
    assert.truthy(texts:find("cos <&>", 1, true))          -- escaped in the file, intact when parsed
    assert.truthy(texts:find("|0|", 1, true) and texts:find("|6|", 1, true))   -- x ticks at nice numbers
    assert.truthy(texts:find("|-1|", 1, true) or texts:find("|-1.0|", 1, true))
  end)
  it("line: y alone plots against 1..n, and NaN breaks the line", function()
    T.plot.line({ 1, 2, 0 / 0, 4, 5 }, { file = tmp("gap.svg") })
    local n = xml_summary(tmp("gap.svg"))
    assert.equal(2, n.polyline)
    T.plot.line(T.tensor({ 3.0, 1.0, 2.0 }), { file = tmp("t.svg"), markers = true })
    n = xml_summary(tmp("t.svg"))
    assert.equal(3, n.circle)
  end)
  it("scatter: one circle per finite point, per series", function()
    T.manual_seed(3)
    T.plot.scatter({ { x = T.randn(20), y = T.randn(20), label = "a" }, { x = { 1, 2, 3 }, y = { 3, 2, math.huge } } },
      { file = tmp("s.svg") })
    local n = xml_summary(tmp("s.svg"))
    assert.equal(20 + 2 + 1, n.circle)   -- 22 points and the legend's marker
  end)
  it("hist: one bar per bin, counts on the y axis", function()
    T.plot.hist(T.tensor({ 1, 1, 2, 3, 3, 3 }), { bins = 3, file = tmp("h.svg"), title = "counts" })
    local n, texts = xml_summary(tmp("h.svg"))
    assert.equal(1 + 1 + 3, n.rect)      -- background, frame, 3 bars
    assert.truthy(texts:find("|3|", 1, true))
    local svg = T.plot.hist({ y = T.randn(100), label = "x" }, { bins = 10, density = true }).svg
    assert.truthy(svg:find("<svg", 1, true))
  end)
  it("heatmap: one cell per element and a colour bar", function()
    T.plot.heatmap(T.arange(12):view(3, 4), { file = tmp("m.svg"), title = "map" })
    local n = xml_summary(tmp("m.svg"))
    assert.truthy(n.rect >= 12 + 50)
    local svg = T.plot.heatmap({ { 1, 2 }, { 3, 4 } }, { colorbar = false, cmap = "gray" }).svg
    assert.truthy(svg:find("#ffffff", 1, true) and svg:find("#000000", 1, true))
  end)
  it("names bad arguments and unknown options", function()
    raises("ltensor.plot.line: unknown option 'titel'", T.plot.line, { 1, 2 }, { titel = "x" })
    raises("ltensor.plot.line: series 1: x has 2 values but y has 3", T.plot.line, { x = { 1, 2 }, y = { 1, 2, 3 } })
    raises("ltensor.plot.scatter: series 1 has no y", T.plot.scatter, { { x = { 1 } } })
    raises("ltensor.plot.line: y[2] is not a number (got string)", T.plot.line, { y = { 1, "a" } })
    raises("ltensor.plot.hist: option 'bins' must be a positive integer", T.plot.hist, { 1, 2 }, { bins = 0 })
    raises("ltensor.plot.heatmap: expected a 2-D tensor, got 1 dims", T.plot.heatmap, T.zeros(3))
    raises("ltensor.plot.heatmap: unknown cmap 'jet'", T.plot.heatmap, T.zeros(2, 2), { cmap = "jet" })
    raises("ltensor.plot.line: y must be real", T.plot.line, T.zeros(3):to(T.complex64))
    raises("cannot open", T.plot.line, { 1, 2 }, { file = tmpdir .. "/no/such/dir/x.svg" })
  end)
  it("errors start with ltensor.plot.<function>: (no file position in front)", function()
    local ok, err = pcall(T.plot.line, { 1, 2 }, { bogus = 1 })
    assert.is_false(ok)
    assert.equal("ltensor.plot.line: unknown option 'bogus'", tostring(err):sub(1, 41))
    ok, err = pcall(T.plot.scatter, "x")
    assert.is_false(ok)
    assert.equal("ltensor.plot.scatter:", tostring(err):sub(1, 21))
  end)
end)
