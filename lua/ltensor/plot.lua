-- ltensor.plot: plots with no dependency (T.plot.line, scatter, hist,
-- heatmap), as SVG or PNG.  Each returns a figure: tostring(fig) is a
-- one-line summary (so the prompt prints one line, not the SVG), fig.svg
-- the SVG text, fig:save(path) writes it again (".svg" or ".png"), and
-- fig:image() the pixels as a 3 x H x W uint8 tensor.
--
--   T.plot.line({x = xs, y = ys, label = "loss"}, {file = "loss.png", title = "training", yscale = "log"})
--   T.plot.line({{y = a, label = "a"}, {y = b, label = "b"}}, {xlabel = "epoch"})
--   T.plot.line({y = Y, label = {"train", "test"}})        -- a 2-D y: one series per column
--   T.plot.scatter({x = t[{{}, 1}], y = t[{{}, 2}]}, {file = "points.svg"})
--   T.plot.hist(T.randn(1000), {bins = 30, file = "hist.svg"})
--   T.plot.heatmap(T.rand(8, 8), {file = "map.png", colorbar = true})
--
-- opts.file: a path ending in .svg (the SVG text) or .png (drawn by
-- plot_raster.lua's small rasteriser and written by T.save_image); any
-- other ending is refused.
-- Series values are 1-D tensors or Lua lists of numbers; x defaults to
-- 1..n; a 2-D y (n x k tensor, or a list of n rows) is k series sharing x,
-- labelled by a list (label = {"a", "b"}).  Options: file, title, xlabel,
-- ylabel, width, height (pixels), legend (default: when a series has a
-- label), grid (default true), xlim/ylim ({lo, hi}); line and scatter:
-- xscale/yscale ("linear" or "log": decade ticks; values <= 0 are dropped,
-- as matplotlib masks them, and the figure's summary says how many);
-- line: markers; scatter: size; hist: bins, range, density; heatmap:
-- colorbar, cmap ("viridis" or "gray"), vmin, vmax.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local plot = {}
T.plot = plot

local fail = util.failer("ltensor.plot.")
local is_t = util.is_tensor

local PALETTE = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" }

local COMMON = { file = true, title = true, xlabel = true, ylabel = true, width = true, height = true,
                 legend = true, grid = true, xlim = true, ylim = true }
local EXTRA = {
  line = { markers = true, xscale = true, yscale = true }, scatter = { size = true, xscale = true, yscale = true },
  hist = { bins = true, range = true, density = true, label = true },
  heatmap = { colorbar = true, cmap = true, vmin = true, vmax = true },
}

local function check_opts(fname, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fname, ("bad argument 'opts' (table expected, got %s)"):format(type(opts))) end
  for k in pairs(opts) do
    if not (COMMON[k] or EXTRA[fname][k]) then
      local names = {}
      for n in pairs(COMMON) do names[#names + 1] = n end
      for n in pairs(EXTRA[fname]) do names[#names + 1] = n end
      table.sort(names)
      T._check_opts("plot." .. fname, { [k] = true }, names)   -- the one checker words it
    end
  end
  return opts
end

-- A 1-D tensor or list -> Lua list of numbers (float64 values).
local function numbers(fname, what, v)
  if is_t(v) then
    if v:dim() > 1 then v = v:flatten() end
    if v.dtype.is_complex then fail(fname, what .. " must be real, got " .. tostring(v.dtype)) end
    local l = v:to(T.float64):totable()
    if type(l) == "number" then l = { l } end
    return l
  elseif type(v) == "table" then
    for i = 1, #v do
      if type(v[i]) ~= "number" then fail(fname, ("%s[%d] is not a number (got %s)"):format(what, i, type(v[i]))) end
    end
    return v
  end
  fail(fname, ("%s must be a tensor or a list of numbers (got %s)"):format(what, type(v)))
end

-- y as a list of columns: a 2-D tensor (n x k) or a list of n rows of k
-- numbers is k series (matplotlib's plot(x, Y)); anything else is one.
local function columns(fname, i, y)
  if type(y) == "table" and not is_t(y) and type(y[1]) == "table" then
    local ok, t = pcall(T.tensor, y, { dtype = T.float64 })
    if not ok then fail(fname, ("series %d: y rows must be lists of numbers of one length"):format(i)) end
    y = t
  end
  if is_t(y) and y:dim() == 2 and y:size(2) > 1 then
    local out = {}
    for c = 1, y:size(2) do out[c] = numbers(fname, "y", y:select(2, c)) end
    return out
  end
  if is_t(y) and y:dim() > 2 then fail(fname, ("series %d: y must be 1-D or 2-D, got %d dims"):format(i, y:dim())) end
  return { numbers(fname, "y", y) }
end

-- series argument -> list of {x=, y=, label=}
local function series_list(fname, s)
  if is_t(s) or (type(s) == "table" and type(s[1]) == "number") then s = { y = s } end
  if type(s) ~= "table" then fail(fname, ("bad argument #1 (series table expected, got %s)"):format(type(s))) end
  local list = (s.y ~= nil or s.x ~= nil) and { s } or s
  if #list == 0 then fail(fname, "no series to plot") end
  local out = {}
  for i, e in ipairs(list) do
    if type(e) ~= "table" or e.y == nil then fail(fname, ("series %d has no y"):format(i)) end
    for k in pairs(e) do
      if k ~= "x" and k ~= "y" and k ~= "label" and k ~= "color" then
        fail(fname, ("series %d: unknown field '%s'"):format(i, tostring(k)))
      end
    end
    local cols = columns(fname, i, e.y)
    local x
    if e.x ~= nil then x = numbers(fname, "x", e.x) else x = {} for j = 1, #cols[1] do x[j] = j end end
    if #x ~= #cols[1] then fail(fname, ("series %d: x has %d values but y has %d"):format(i, #x, #cols[1])) end
    local labels = e.label
    if type(labels) == "table" and #labels ~= #cols then
      fail(fname, ("series %d: %d labels for %d columns of y"):format(i, #labels, #cols))
    end
    for c, y in ipairs(cols) do
      local label = labels
      if type(labels) == "table" then label = labels[c]
      elseif labels ~= nil and #cols > 1 then label = tostring(labels) .. " " .. c end
      local n = #out + 1
      out[n] = { x = x, y = y, label = label and tostring(label),
                 color = (#cols == 1 and e.color) or PALETTE[(n - 1) % #PALETTE + 1] }
    end
  end
  return out
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- "Nice" tick positions (Heckbert): about n ticks covering [lo, hi].
local function nice_num(x)
  local e = math.floor(math.log(x, 10))
  local f = x / 10 ^ e
  local nf = f < 1.5 and 1 or f < 3 and 2 or f < 7 and 5 or 10
  return nf * 10 ^ e
end
local function ticks(lo, hi, n, integral)
  if hi <= lo then hi = lo + 1 lo = lo - 1 end
  local step = nice_num((hi - lo) / (n - 1))
  if integral and step < 1 then step = 1 end
  local first = math.ceil(lo / step - 1e-9) * step
  local out = {}
  local v = first
  while v <= hi + step * 1e-9 do
    out[#out + 1] = math.abs(v) < step * 1e-9 and 0 or v
    v = v + step
  end
  return out, step
end

local function fmt_tick(v, step)
  if v == 0 then return "0" end
  local a = math.abs(v)
  if a >= 1e5 or a < 1e-3 then return (("%.2g"):format(v)) end
  -- (+ 0: -math.floor of 0 is -0 on hosts without integers, and "%.-0f" is no format)
  local decimals = math.max(0, -math.floor(math.log(step, 10) + 1e-9)) + 0
  return (("%." .. decimals .. "f"):format(v))
end

local function log10(v) return math.log(v, 10) end

-- Ticks of a log axis over [lo, hi] (both > 0): every decade labelled,
-- 2..9 times a decade as short unlabelled ticks; a range of less than two
-- decades also labels 2 and 5 (or there would be one label or none).
local function dec_label(k)
  -- (0 - k, not -k: -0 would print "-0" on Lua 5.1/LuaJIT, an invalid format)
  if k >= -3 and k <= 4 then return (("%." .. math.max(0, 0 - k) .. "f"):format(10 ^ k)) end
  return ("1e%d"):format(k)
end
local function log_ticks(lo, hi)
  local out, majors = {}, 0
  local k0, k1 = math.floor(log10(lo) + 1e-9), math.ceil(log10(hi) - 1e-9)
  for k = k0, k1 do
    local v = 10 ^ k
    if v >= lo * (1 - 1e-9) and v <= hi * (1 + 1e-9) then majors = majors + 1 end
  end
  for k = k0, k1 do
    for m = 1, 9 do
      local v = m * 10 ^ k
      if v >= lo * (1 - 1e-9) and v <= hi * (1 + 1e-9) then
        local label
        if m == 1 then label = dec_label(k)
        elseif majors < 2 and (m == 2 or m == 5) then label = (("%g"):format(v)) end
        out[#out + 1] = { v = v, label = label, minor = m ~= 1 }
      end
    end
  end
  return out
end

-- Ticks of an axis: list of {v =, label = (nil: unlabelled), minor =}.
local function axis_ticks(lo, hi, n, integral, log)
  if log then return log_ticks(lo, hi) end
  local tk, step = ticks(lo, hi, n, integral)
  local out = {}
  for i, v in ipairs(tk) do out[i] = { v = v, label = fmt_tick(v, step) } end
  return out
end

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end
local function n2(v) return ("%.2f"):format(v) end

-- The frame: title, axes, ticks, grid, labels.  Returns the svg parts and
-- the mapping functions data -> pixel.
local function frame(opts, xlo, xhi, ylo, yhi, extra_right, yintegral)
  local W, H = opts.width or 640, opts.height or 420
  local left, right, top, bottom = 70, 20 + (extra_right or 0), opts.title and 40 or 20, 50
  local pw, ph = W - left - right, H - top - bottom
  local parts = {
    ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">')
      :format(W, H, W, H),
    ('<rect x="0" y="0" width="%d" height="%d" fill="white"/>'):format(W, H),
  }
  -- a log axis maps log10 of the value (its limits are positive)
  local lx, ly = opts.xscale == "log", opts.yscale == "log"
  local function tx(v) return lx and log10(v) or v end
  local function ty(v) return ly and log10(v) or v end
  local txlo, txhi, tylo, tyhi = tx(xlo), tx(xhi), ty(ylo), ty(yhi)
  local function X(v) return left + (tx(v) - txlo) / (txhi - txlo) * pw end
  local function Y(v) return top + ph - (ty(v) - tylo) / (tyhi - tylo) * ph end
  -- an axis may run backwards (a heatmap's rows go down)
  local xmin, xmax = math.min(xlo, xhi), math.max(xlo, xhi)
  local ymin, ymax = math.min(ylo, yhi), math.max(ylo, yhi)
  local grid = opts.grid ~= false
  local function inside(v, lo, hi) return v >= lo - 1e-12 * math.abs(lo) - 1e-300 and v <= hi + 1e-12 * math.abs(hi) end
  for _, t in ipairs(axis_ticks(xmin, xmax, 7, false, lx)) do
    if inside(t.v, xmin, xmax) then
      local px = X(t.v)
      if grid and not t.minor then parts[#parts + 1] = ('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#e5e5e5"/>'):format(n2(px), top, n2(px), top + ph) end
      parts[#parts + 1] = ('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="black"/>'):format(n2(px), top + ph, n2(px), top + ph + (t.minor and 3 or 5))
      if t.label then
        parts[#parts + 1] = ('<text x="%s" y="%d" text-anchor="middle">%s</text>'):format(n2(px), top + ph + 18, esc(t.label))
      end
    end
  end
  for _, t in ipairs(axis_ticks(ymin, ymax, 6, yintegral, ly)) do
    if inside(t.v, ymin, ymax) then
      local py = Y(t.v)
      if grid and not t.minor then parts[#parts + 1] = ('<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/>'):format(left, n2(py), left + pw, n2(py)) end
      parts[#parts + 1] = ('<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="black"/>'):format(left - (t.minor and 3 or 5), n2(py), left, n2(py))
      if t.label then
        parts[#parts + 1] = ('<text x="%d" y="%s" text-anchor="end">%s</text>'):format(left - 8, n2(py + 4), esc(t.label))
      end
    end
  end
  parts[#parts + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>'):format(left, top, pw, ph)
  if opts.title then
    parts[#parts + 1] = ('<text x="%s" y="%d" text-anchor="middle" font-size="15">%s</text>'):format(n2(left + pw / 2), top - 14, esc(opts.title))
  end
  if opts.xlabel then
    parts[#parts + 1] = ('<text x="%s" y="%d" text-anchor="middle">%s</text>'):format(n2(left + pw / 2), H - 10, esc(opts.xlabel))
  end
  if opts.ylabel then
    parts[#parts + 1] = ('<text x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>')
      :format(n2(top + ph / 2), n2(top + ph / 2), esc(opts.ylabel))
  end
  return parts, X, Y, { left = left, top = top, pw = pw, ph = ph }
end

local function legend(parts, list, box, kind)
  local labelled = {}
  for _, s in ipairs(list) do if s.label then labelled[#labelled + 1] = s end end
  if #labelled == 0 then return end
  local w = 0
  for _, s in ipairs(labelled) do w = math.max(w, #s.label) end
  local bw, bh = 36 + w * 7, 8 + 18 * #labelled
  local x0, y0 = box.left + box.pw - bw - 8, box.top + 8
  parts[#parts + 1] = ('<g class="legend"><rect x="%s" y="%s" width="%s" height="%d" fill="white" fill-opacity="0.85" stroke="#999"/>')
    :format(n2(x0), n2(y0), n2(bw), bh)
  for i, s in ipairs(labelled) do
    local y = y0 + 4 + 18 * (i - 1) + 9
    if kind == "scatter" then
      parts[#parts + 1] = ('<circle cx="%s" cy="%s" r="4" fill="%s"/>'):format(n2(x0 + 16), n2(y), s.color)
    elseif kind == "hist" then
      parts[#parts + 1] = ('<rect x="%s" y="%s" width="16" height="10" fill="%s" fill-opacity="0.6"/>'):format(n2(x0 + 8), n2(y - 5), s.color)
    else
      parts[#parts + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>'):format(n2(x0 + 6), n2(y), n2(x0 + 26), n2(y), s.color)
    end
    parts[#parts + 1] = ('<text x="%s" y="%s">%s</text>'):format(n2(x0 + 30), n2(y + 4), esc(s.label))
  end
  parts[#parts + 1] = "</g>"
end

local function limits(list, key, lim, log)
  if lim then return lim[1], lim[2] end
  local lo, hi = math.huge, -math.huge
  for _, s in ipairs(list) do
    for _, v in ipairs(s[key]) do
      if finite(v) then lo = math.min(lo, v) hi = math.max(hi, v) end
    end
  end
  if lo > hi then return 0, 1 end
  if lo == hi then
    if log then return lo / 2, hi * 2 end
    return lo - 0.5, hi + 0.5
  end
  return lo, hi
end

local function pad(lo, hi, f) local d = (hi - lo) * f return lo - d, hi + d end

-- The figure a plot function returns: the SVG and what drew it.  Its
-- tostring is one line, so a plot typed at the prompt prints a summary.
local Figure = {}
Figure.__index = Figure
Figure.__name = "ltensor.plot.Figure"

local function file_format(fname, path)
  if type(path) ~= "string" then fail(fname, "option 'file' must be a path string") end
  local ext = path:match("%.([%w]+)$")
  ext = ext and ext:lower()
  if ext == "svg" or ext == "png" then return ext end
  fail(fname, ("cannot write '%s': plots are written as .svg or .png"):format(path))
end

-- Writes the figure to path, SVG or PNG by its ending (T.save's atomic
-- writer; PNG through T.save_image).
function Figure:save(path)
  local fname = self.kind or "save"
  local fmt = file_format(fname, path)
  if fmt == "png" then
    T.save_image(path, self:image())
  else
    T._atomic_write("plot." .. fname, path, { self.svg })
  end
  self.file = path
  return self
end

-- The pixels, 3 x H x W uint8 (drawn once, then kept).
function Figure:image()
  if not self._image then self._image = require("ltensor.plot_raster").render(self.svg) end
  return self._image
end

function Figure:__tostring()
  local s = ("T.plot.Figure(%s, %dx%d"):format(self.kind, self.width, self.height)
  if self.nseries then s = s .. (", %d series"):format(self.nseries) end
  s = s .. ")"
  if self.file then s = s .. " written to " .. self.file end
  if self.notes and #self.notes > 0 then s = s .. " (" .. table.concat(self.notes, "; ") .. ")" end
  return s
end

local function finish(fname, parts, opts, info)
  parts[#parts + 1] = "</svg>\n"
  local fig = setmetatable({ kind = fname, svg = table.concat(parts, "\n"), width = opts.width or 640,
                             height = opts.height or 420 }, Figure)
  for k, v in pairs(info or {}) do fig[k] = v end
  if opts.file ~= nil then
    file_format(fname, opts.file)
    fig:save(opts.file)
  end
  return fig
end

-- Log scales: values <= 0 (and their points) leave the plot, as matplotlib
-- masks them; the count goes into the figure's notes.
local function drop_nonpositive(fname, list, key, notes)
  local dropped, kept = 0, 0
  for _, s in ipairs(list) do
    local v = {}
    for i, x in ipairs(s[key]) do
      if x <= 0 then v[i] = 0 / 0 dropped = dropped + 1 else v[i] = x if finite(x) then kept = kept + 1 end end
    end
    s[key] = v
  end
  if kept == 0 then fail(fname, ("%sscale 'log' needs positive values, %s has none"):format(key, key)) end
  if dropped > 0 then notes[#notes + 1] = ("%d %s value%s <= 0 dropped on the log scale"):format(dropped, key, dropped == 1 and "" or "s") end
end

local function check_scale(fname, opts, key)
  local v = opts[key]
  if v ~= nil and v ~= "linear" and v ~= "log" then
    fail(fname, ("option '%s' must be \"linear\" or \"log\" (got %s)"):format(key, tostring(v)))
  end
  return v == "log"
end

-- [lo, hi] widened by f of its span, in log space on a log axis
local function pad_axis(lo, hi, f, log)
  if not log then return pad(lo, hi, f) end
  local a, b = pad(log10(lo), log10(hi), f)
  return 10 ^ a, 10 ^ b
end

local function xy_plot(fname, series, opts)
  opts = check_opts(fname, opts)
  local list = series_list(fname, series)
  local lx, ly = check_scale(fname, opts, "xscale"), check_scale(fname, opts, "yscale")
  local notes = {}
  if lx then drop_nonpositive(fname, list, "x", notes) end
  if ly then drop_nonpositive(fname, list, "y", notes) end
  local xlo, xhi = limits(list, "x", opts.xlim, lx)
  local ylo, yhi = limits(list, "y", opts.ylim, ly)
  if (lx and xlo <= 0) or (ly and ylo <= 0) then fail(fname, "a log axis needs positive limits") end
  if not opts.ylim then ylo, yhi = pad_axis(ylo, yhi, 0.05, ly) end
  if not opts.xlim and fname == "scatter" then xlo, xhi = pad_axis(xlo, xhi, 0.05, lx) end
  local parts, X, Y, box = frame(opts, xlo, xhi, ylo, yhi)
  parts[#parts + 1] = ('<clipPath id="plotarea"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>')
    :format(box.left, box.top, box.pw, box.ph)
  parts[#parts + 1] = '<g clip-path="url(#plotarea)">'
  for _, s in ipairs(list) do
    if fname == "line" then
      -- a non-finite value breaks the line, as in matplotlib
      local seg = {}
      local function flush()
        if #seg >= 2 then
          parts[#parts + 1] = ('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'):format(s.color, table.concat(seg, " "))
        elseif #seg == 1 then
          local x, y = seg[1]:match("([^,]+),([^,]+)")
          parts[#parts + 1] = ('<circle cx="%s" cy="%s" r="2" fill="%s"/>'):format(x, y, s.color)
        end
        seg = {}
      end
      for i = 1, #s.x do
        local x, y = s.x[i], s.y[i]
        if finite(x) and finite(y) then seg[#seg + 1] = n2(X(x)) .. "," .. n2(Y(y)) else flush() end
      end
      flush()
      if opts.markers then
        for i = 1, #s.x do
          if finite(s.x[i]) and finite(s.y[i]) then
            parts[#parts + 1] = ('<circle cx="%s" cy="%s" r="3" fill="%s"/>'):format(n2(X(s.x[i])), n2(Y(s.y[i])), s.color)
          end
        end
      end
    else
      local r = opts.size or 3
      for i = 1, #s.x do
        if finite(s.x[i]) and finite(s.y[i]) then
          parts[#parts + 1] = ('<circle cx="%s" cy="%s" r="%s" fill="%s" fill-opacity="0.75"/>'):format(n2(X(s.x[i])), n2(Y(s.y[i])), n2(r), s.color)
        end
      end
    end
  end
  parts[#parts + 1] = "</g>"
  if opts.legend ~= false then legend(parts, list, box, fname) end
  return finish(fname, parts, opts, { nseries = #list, notes = notes })
end

function plot.line(series, opts) return xy_plot("line", series, opts) end
function plot.scatter(series, opts) return xy_plot("scatter", series, opts) end

function plot.hist(data, opts)
  opts = check_opts("hist", opts)
  local list
  if is_t(data) or (type(data) == "table" and type(data[1]) == "number") then
    list = { { y = numbers("hist", "data", data), label = opts.label, color = PALETTE[1] } }
  else
    list = series_list("hist", data)
  end
  local bins = opts.bins or 20
  if math.type(bins) ~= "integer" or bins < 1 then fail("hist", "option 'bins' must be a positive integer") end
  local lo, hi
  if opts.range then lo, hi = opts.range[1], opts.range[2] else lo, hi = limits(list, "y") end
  if not (finite(lo) and finite(hi)) or hi < lo then fail("hist", "option 'range' must be two finite numbers, lo <= hi") end
  if hi == lo then lo, hi = lo - 0.5, hi + 0.5 end
  local width = (hi - lo) / bins
  local counts, ymax = {}, 0
  for si, s in ipairs(list) do
    local c = {}
    for b = 1, bins do c[b] = 0 end
    local n = 0
    for _, v in ipairs(s.y) do
      if finite(v) and v >= lo and v <= hi then
        local b = math.min(bins, math.floor((v - lo) / width) + 1)
        c[b] = c[b] + 1
        n = n + 1
      end
    end
    if opts.density and n > 0 then for b = 1, bins do c[b] = c[b] / (n * width) end end
    for b = 1, bins do ymax = math.max(ymax, c[b]) end
    counts[si] = c
  end
  if ymax == 0 then ymax = 1 end
  -- counts get whole-number ticks
  local parts, X, Y, box = frame(opts, lo, hi, 0, opts.ylim and opts.ylim[2] or ymax * 1.05, nil, not opts.density)
  for si, s in ipairs(list) do
    for b = 1, bins do
      local x0, x1 = X(lo + (b - 1) * width), X(lo + b * width)
      local y1 = Y(counts[si][b])
      parts[#parts + 1] = ('<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="%s" stroke="white" stroke-width="0.5"/>')
        :format(n2(x0), n2(y1), n2(math.max(0, x1 - x0)), n2(box.top + box.ph - y1), s.color, #list > 1 and "0.55" or "0.85")
    end
  end
  if opts.legend ~= false then legend(parts, list, box, "hist") end
  return finish("hist", parts, opts, { nseries = #list })
end

-- viridis, sampled at 9 points and interpolated
local VIRIDIS = { { 68, 1, 84 }, { 71, 44, 122 }, { 59, 81, 139 }, { 44, 113, 142 }, { 33, 144, 141 },
                  { 39, 173, 129 }, { 92, 200, 99 }, { 170, 220, 50 }, { 253, 231, 37 } }
local function colour(cmap, u)
  if u ~= u then return "#ff00ff" end
  u = math.max(0, math.min(1, u))
  if cmap == "gray" then local g = math.floor(u * 255 + 0.5) return ("#%02x%02x%02x"):format(g, g, g) end
  local p = u * (#VIRIDIS - 1)
  local i = math.min(#VIRIDIS - 2, math.floor(p))
  local f = p - i
  local a, b = VIRIDIS[i + 1], VIRIDIS[i + 2]
  return ("#%02x%02x%02x"):format(math.floor(a[1] + (b[1] - a[1]) * f + 0.5),
    math.floor(a[2] + (b[2] - a[2]) * f + 0.5), math.floor(a[3] + (b[3] - a[3]) * f + 0.5))
end

function plot.heatmap(t, opts)
  opts = check_opts("heatmap", opts)
  if not is_t(t) then
    if type(t) == "table" then t = T.tensor(t) else fail("heatmap", ("bad argument #1 (2-D tensor expected, got %s)"):format(type(t))) end
  end
  if t:dim() ~= 2 then fail("heatmap", ("expected a 2-D tensor, got %d dims"):format(t:dim())) end
  if t.dtype.is_complex then fail("heatmap", "expected a real tensor, got " .. tostring(t.dtype)) end
  local cmap = opts.cmap or "viridis"
  if cmap ~= "viridis" and cmap ~= "gray" then fail("heatmap", ("unknown cmap '%s' (viridis or gray)"):format(tostring(cmap))) end
  local rows, cols = t:size(1), t:size(2)
  local v = t:to(T.float64):totable()
  local vmin, vmax = opts.vmin, opts.vmax
  if vmin == nil or vmax == nil then
    local lo, hi = math.huge, -math.huge
    for i = 1, rows do for j = 1, cols do local x = v[i][j] if finite(x) then lo = math.min(lo, x) hi = math.max(hi, x) end end end
    if lo > hi then lo, hi = 0, 1 end
    vmin, vmax = vmin or lo, vmax or hi
  end
  if vmax == vmin then vmax = vmin + 1 end
  local bar = opts.colorbar ~= false
  local o = {}
  for k, x in pairs(opts) do o[k] = x end
  o.grid = false
  if not o.height and not o.width then
    local cell = math.max(2, math.min(40, math.floor(480 / math.max(rows, cols))))
    o.width, o.height = cols * cell + 90 + (bar and 70 or 0), rows * cell + 70 + (opts.title and 20 or 0)
  end
  -- rows go down as in an image; axes count cells from 1
  local parts, X, Y, box = frame(o, 0.5, cols + 0.5, rows + 0.5, 0.5, bar and 70 or 0)
  local cw, ch = box.pw / cols, box.ph / rows
  for i = 1, rows do
    for j = 1, cols do
      parts[#parts + 1] = ('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>')
        :format(n2(box.left + (j - 1) * cw), n2(box.top + (i - 1) * ch), n2(cw + 0.05), n2(ch + 0.05),
          colour(cmap, (v[i][j] - vmin) / (vmax - vmin)))
    end
  end
  if bar then
    local bx, steps = box.left + box.pw + 15, 50
    for s = 0, steps - 1 do
      parts[#parts + 1] = ('<rect x="%s" y="%s" width="15" height="%s" fill="%s"/>')
        :format(n2(bx), n2(box.top + box.ph * (1 - (s + 1) / steps)), n2(box.ph / steps + 0.5), colour(cmap, (s + 0.5) / steps))
    end
    parts[#parts + 1] = ('<rect x="%s" y="%d" width="15" height="%d" fill="none" stroke="black"/>'):format(n2(bx), box.top, box.ph)
    local tk, st = ticks(vmin, vmax, 5)
    for _, x in ipairs(tk) do
      if x >= vmin and x <= vmax then
        local py = box.top + box.ph * (1 - (x - vmin) / (vmax - vmin))
        parts[#parts + 1] = ('<text x="%s" y="%s">%s</text>'):format(n2(bx + 20), n2(py + 4), esc(fmt_tick(x, st)))
      end
    end
  end
  return finish("heatmap", parts, o, { width = o.width or 640, height = o.height or 420 })
end

return plot
