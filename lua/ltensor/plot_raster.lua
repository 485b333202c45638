-- ltensor.plot_raster: draws the SVG that T.plot writes into pixels, for
-- {file = "p.png"} (T.save_image encodes the PNG).  It reads exactly the
-- subset plot.lua emits -- svg, rect, line, polyline, circle, text (with
-- text-anchor, font-size, rotate(-90)), a clipPath rectangle and <g> groups
-- -- not SVG at large.  Lines and circles are anti-aliased by coverage
-- (the distance of each pixel centre from the shape), axis-aligned 1-px
-- lines are drawn crisp on whole pixels, text uses the 5x7 bitmap font of
-- plot_font.lua (twice as large from font-size 14).
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math, table = compat.math, compat.table
local font = require "ltensor.plot_font"

local floor, ceil, min, max, sqrt, abs = math.floor, math.ceil, math.min, math.max, math.sqrt, math.abs

local NAMED = { white = { 255, 255, 255 }, black = { 0, 0, 0 } }
local function rgb(s)
  if s == nil or s == "none" then return nil end
  if NAMED[s] then return NAMED[s] end
  local r, g, b = s:match("^#(%x%x)(%x%x)(%x%x)$")
  if not r then return { 0, 0, 0 } end
  return { tonumber(r, 16), tonumber(g, 16), tonumber(b, 16) }
end

local Canvas = {}
Canvas.__index = Canvas

local function canvas(w, h)
  local c = setmetatable({ w = w, h = h, r = {}, g = {}, b = {} }, Canvas)
  for i = 1, w * h do c.r[i], c.g[i], c.b[i] = 255, 255, 255 end
  c.clip = { 0, 0, w, h }   -- x0, y0, x1, y1 (pixels with x0 <= x < x1)
  return c
end

-- blends colour col with coverage a (0..1) into pixel (x, y), inside the clip
function Canvas:blend(x, y, col, a)
  local cl = self.clip
  if x < cl[1] or y < cl[2] or x >= cl[3] or y >= cl[4] or a <= 0 then return end
  if a > 1 then a = 1 end
  local i = y * self.w + x + 1
  local r, g, b = self.r, self.g, self.b
  r[i] = r[i] + (col[1] - r[i]) * a
  g[i] = g[i] + (col[2] - g[i]) * a
  b[i] = b[i] + (col[3] - b[i]) * a
end

-- distance from (px, py) to the segment (x1, y1)-(x2, y2)
local function seg_dist(px, py, x1, y1, x2, y2)
  local dx, dy = x2 - x1, y2 - y1
  local l2 = dx * dx + dy * dy
  local t = l2 > 0 and ((px - x1) * dx + (py - y1) * dy) / l2 or 0
  if t < 0 then t = 0 elseif t > 1 then t = 1 end
  local ex, ey = x1 + t * dx - px, y1 + t * dy - py
  return sqrt(ex * ex + ey * ey)
end

-- Coverage of a thick segment into cov (index -> max coverage): walks the
-- major axis and, per step, the few pixels across the line.
local function segment_cov(c, cov, x1, y1, x2, y2, hw)
  local steep = abs(y2 - y1) > abs(x2 - x1)
  local a1, b1, a2, b2 = x1, y1, x2, y2
  if steep then a1, b1, a2, b2 = y1, x1, y2, x2 end
  if a1 > a2 then a1, b1, a2, b2 = a2, b2, a1, b1 end
  local reach = hw + 1.5
  local amax = steep and c.h or c.w
  local bmax = steep and c.w or c.h
  for a = max(0, floor(a1 - reach)), min(amax - 1, ceil(a2 + reach)) do
    local ca = a + 0.5
    local t = a2 > a1 and (ca - a1) / (a2 - a1) or 0
    if t < 0 then t = 0 elseif t > 1 then t = 1 end
    local mid = b1 + t * (b2 - b1)
    for b = max(0, floor(mid - reach)), min(bmax - 1, ceil(mid + reach)) do
      local px, py = ca, b + 0.5
      if steep then px, py = b + 0.5, ca end
      local d = seg_dist(px, py, x1, y1, x2, y2)
      local k = hw + 0.5 - d
      if k > 0 then
        local x, y = steep and b or a, steep and a or b
        local i = y * c.w + x
        local old = cov[i]
        if old == nil or k > old then cov[i] = k > 1 and 1 or k end
      end
    end
  end
end

local function composite(c, cov, col, alpha)
  for i, k in pairs(cov) do c:blend(i % c.w, floor(i / c.w), col, k * alpha) end
end

-- A polyline as one shape: overlapping segments at the joints do not
-- darken (coverage is the maximum, composited once).
function Canvas:polyline(pts, col, width, alpha)
  local cov = {}
  if #pts == 2 then segment_cov(self, cov, pts[1], pts[2], pts[1], pts[2], width / 2) end
  for i = 1, #pts - 2, 2 do
    segment_cov(self, cov, pts[i], pts[i + 1], pts[i + 2], pts[i + 3], width / 2)
  end
  composite(self, cov, col, alpha or 1)
end

-- A line: crisp on whole pixels when axis-aligned and thin, else smooth.
function Canvas:line(x1, y1, x2, y2, col, width)
  if width <= 1.5 and (x1 == x2 or y1 == y2) then
    if x1 == x2 then
      local x = floor(x1)
      for y = floor(min(y1, y2)), ceil(max(y1, y2)) - 1 do self:blend(x, y, col, 1) end
    else
      local y = floor(y1)
      for x = floor(min(x1, x2)), ceil(max(x1, x2)) - 1 do self:blend(x, y, col, 1) end
    end
    return
  end
  self:polyline({ x1, y1, x2, y2 }, col, width)
end

function Canvas:circle(cx, cy, r, col, alpha)
  for y = max(0, floor(cy - r - 1)), min(self.h - 1, ceil(cy + r + 1)) do
    for x = max(0, floor(cx - r - 1)), min(self.w - 1, ceil(cx + r + 1)) do
      local dx, dy = x + 0.5 - cx, y + 0.5 - cy
      local k = r + 0.5 - sqrt(dx * dx + dy * dy)
      if k > 0 then self:blend(x, y, col, min(k, 1) * alpha) end
    end
  end
end

-- pixels whose centres lie in [x, x + w) x [y, y + h)
function Canvas:fill_rect(x, y, w, h, col, alpha)
  for py = max(0, ceil(y - 0.5)), min(self.h, ceil(y + h - 0.5)) - 1 do
    for px = max(0, ceil(x - 0.5)), min(self.w, ceil(x + w - 0.5)) - 1 do self:blend(px, py, col, alpha) end
  end
end

function Canvas:stroke_rect(x, y, w, h, col)
  local x0, y0, x1, y1 = floor(x), floor(y), floor(x + w), floor(y + h)
  self:line(x0, y0, x1 + 1, y0, col, 1)
  self:line(x0, y1, x1 + 1, y1, col, 1)
  self:line(x0, y0, x0, y1 + 1, col, 1)
  self:line(x1, y0, x1, y1 + 1, col, 1)
end

-- Text on a baseline at (x, y); anchor "start" | "middle" | "end"; rot:
-- rotated -90 degrees about (x, y) (reads upwards, as a y label).
function Canvas:text(x, y, s, anchor, size, rot, col)
  local sc = size >= 14 and 2 or 1
  local adv = font.advance * sc
  local width = #s * adv - sc
  local u0 = anchor == "middle" and -width / 2 or anchor == "end" and -width or 0
  u0 = floor(u0 + 0.5)
  x, y = floor(x + 0.5), floor(y + 0.5)
  for k = 1, #s do
    local rows = font.glyph(s:sub(k, k))
    for gy = 1, font.height do
      local row = rows[gy]
      for gx = 1, font.width do
        if row:byte(gx) == 49 then   -- "1"
          for sy = 0, sc - 1 do
            for sx = 0, sc - 1 do
              local u = u0 + (k - 1) * adv + (gx - 1) * sc + sx
              local v = (gy - 1 - font.height) * sc + sy + 1   -- rows above the baseline
              if rot then self:blend(x + v - 1, y - u, col, 1) else self:blend(x + u, y + v - 1, col, 1) end
            end
          end
        end
      end
    end
  end
end

-- the image as a 3 x H x W uint8 tensor
function Canvas:tensor()
  local parts = {}
  local w = self.w
  for _, ch in ipairs({ self.r, self.g, self.b }) do
    for y = 0, self.h - 1 do
      local row = {}
      for x = 1, w do
        local v = floor(ch[y * w + x] + 0.5)
        row[x] = v < 0 and 0 or v > 255 and 255 or v
      end
      parts[#parts + 1] = string.char(table.unpack(row))
    end
  end
  return T._frombytes(table.concat(parts), T.uint8, { 3, self.h, w })
end

---------------------------------------------------------------------------
-- reading plot.lua's SVG
---------------------------------------------------------------------------
local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"' }
local function unescape(s) return (s:gsub("&(%a+);", function(e) return ENTITIES[e] or ("&" .. e .. ";") end)) end

local function attrs(s)
  local a = {}
  for k, v in s:gmatch('([%w%-:]+)="([^"]*)"') do a[k] = v end
  return a
end
local function num(a, k, default) return tonumber(a[k]) or default end

local function draw(c, tag, a, text, clips)
  local fill, stroke = rgb(a.fill), rgb(a.stroke)
  local fo = num(a, "fill-opacity", 1) * num(a, "opacity", 1)
  if tag == "rect" then
    local x, y, w, h = num(a, "x", 0), num(a, "y", 0), num(a, "width", 0), num(a, "height", 0)
    if fill then c:fill_rect(x, y, w, h, fill, fo) end
    if stroke then c:stroke_rect(x, y, w, h, stroke) end
  elseif tag == "line" then
    c:line(num(a, "x1", 0), num(a, "y1", 0), num(a, "x2", 0), num(a, "y2", 0), stroke or { 0, 0, 0 },
      num(a, "stroke-width", 1))
  elseif tag == "polyline" then
    local pts = {}
    for v in (a.points or ""):gmatch("[^%s,]+") do pts[#pts + 1] = tonumber(v) end
    if stroke and #pts >= 2 then c:polyline(pts, stroke, num(a, "stroke-width", 1)) end
  elseif tag == "circle" then
    if fill then c:circle(num(a, "cx", 0), num(a, "cy", 0), num(a, "r", 1), fill, fo) end
  elseif tag == "text" then
    local rot = (a.transform or ""):find("rotate%(%-90") ~= nil
    c:text(num(a, "x", 0), num(a, "y", 0), unescape(text or ""), a["text-anchor"] or "start",
      num(a, "font-size", clips.font_size), rot, fill or { 0, 0, 0 })
  end
end

-- Renders plot.lua's SVG text; returns a 3 x H x W uint8 tensor.
local function render(svg)
  local c
  local stack = {}      -- clips to restore at </g>
  local clip_defs = {}  -- id -> {x0, y0, x1, y1}
  local in_clip       -- id of the clipPath being read
  local state = { font_size = 12 }
  local pos = 1
  while true do
    local s, e, close, tag, rest, selfclose = svg:find("<(/?)([%w]+)(.-)(/?)>", pos)
    if not s then break end
    pos = e + 1
    local a = attrs(rest)
    if close == "/" then
      if tag == "g" and #stack > 0 then c.clip = table.remove(stack) end
      if tag == "clipPath" then in_clip = nil end
    elseif tag == "svg" then
      c = canvas(floor(num(a, "width", 640)), floor(num(a, "height", 420)))
      state.font_size = num(a, "font-size", 12)
    elseif c == nil then
      -- nothing before <svg>
    elseif tag == "clipPath" then
      in_clip = a.id
    elseif in_clip then
      if tag == "rect" then
        local x, y = num(a, "x", 0), num(a, "y", 0)
        clip_defs[in_clip] = { floor(x), floor(y), ceil(x + num(a, "width", 0)), ceil(y + num(a, "height", 0)) }
      end
    elseif tag == "g" then
      stack[#stack + 1] = c.clip
      local id = (a["clip-path"] or ""):match("url%(#(.-)%)")
      local r = id and clip_defs[id]
      if r then
        local o = c.clip
        c.clip = { max(o[1], r[1]), max(o[2], r[2]), min(o[3], r[3]), min(o[4], r[4]) }
      end
      if selfclose == "/" then c.clip = table.remove(stack) end
    elseif tag == "text" then
      local te = svg:find("</text>", pos, true)
      draw(c, tag, a, svg:sub(pos, (te or pos) - 1), state)
      if te then pos = te + 7 end
    else
      draw(c, tag, a, nil, state)
    end
  end
  return c:tensor()
end

return { render = render }
