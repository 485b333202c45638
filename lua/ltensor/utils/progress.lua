-- ltensor.utils.progress: T.utils.progress, a progress bar for loops.
--
--   for i in T.utils.progress(100) do ... end             -- i = 1..100
--   for xb, yb in T.utils.progress(loader, {desc = "epoch 1"}) do ... end
--   for v in T.utils.progress({"a", "b"}) do ... end      -- the list's items
--   local bar = T.utils.progress(n); for i in bar do bar:set_postfix({loss = l}) end
--   bar:write("message")   -- a line printed above the bar, not through it
--
-- What it wraps: a count n (yields 1..n), a DataLoader or any object with
-- an iter() method and a length (yields what iter() yields), a list (yields
-- its items), or an iterator function (give {total = n} to get a bar).
--
-- On a terminal (the output file is a tty) a bar with the count, rate and
-- ETA is redrawn in place on stderr at most every `refresh` seconds:
--   epoch 3:  45%|#########...........| 45/100 [00:03<00:04, 12.3it/s, loss=0.52]
-- Otherwise (a log, a pipe) no carriage returns are written: one plain line
-- every `interval` seconds and one when the loop ends:
--   epoch 3: 45/100 (45%) [00:03<00:04, 12.3it/s, loss=0.52]
-- The bar is finished when the loop ends, also by break or error (it is the
-- generic for's to-be-closed value).
--
-- On a terminal the whole line fits the window, so a redraw never wraps:
-- the width comes from the terminal (asked at each redraw, so resizing
-- works), else $COLUMNS, else 80 (ncols sets it); the bar cells shrink
-- first, then the bar goes, then the line is cut.
--
-- Options: desc, total, file (default io.stderr), tty (force true/false),
-- width (bar cells at most, default 25), ncols (the line's width, default
-- the terminal's), refresh (terminal redraw period, 0.1 s),
-- interval (plain line period, 5 s), unit ("it"), leave (keep the finished
-- bar on a terminal, default true), disable.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local mtype = math.type
local now = T._monotonic or os.clock

local function fail(msg, ...) util.fail("utils.progress", msg, ...) end
local typename = util.typename

local KNOWN = { desc = true, total = true, file = true, tty = true, width = true, refresh = true, interval = true,
  unit = true, leave = true, disable = true, ncols = true }

-- The columns a redrawn line may use: one less than the window, since
-- writing the last column makes some terminals wrap at once.
local function columns(bar)
  local c = bar.ncols
  if not c and T._term_columns then c = T._term_columns(bar.file) end
  if not c then c = tonumber(os.getenv("COLUMNS") or "") end
  if not c or c < 1 then c = 80 end
  return math.max(math.floor(c) - 1, 1)
end

local function fmt_time(s)
  if s ~= s or s == math.huge then return "??:??" end
  s = math.floor(s + 0.5)
  local h, m, sec = math.floor(s / 3600), math.floor(s / 60) % 60, s % 60
  if h > 0 then return string.format("%d:%02d:%02d", h, m, sec) end
  return string.format("%02d:%02d", m, sec)
end

local function fmt_rate(r, unit)
  if r <= 0 or r ~= r then return "?" .. unit .. "/s" end
  if r >= 1 then
    if r >= 1e6 then return string.format("%.2fM%s/s", r / 1e6, unit) end
    if r >= 1e4 then return string.format("%.1fk%s/s", r / 1e3, unit) end
    return string.format("%.2f%s/s", r, unit)
  end
  return string.format("%.2fs/%s", 1 / r, unit)
end

local Bar = {}
Bar.__index = Bar
Bar.__name = "ltensor.utils.Progress"

function Bar:_postfix()
  local p = self.postfix
  if p == nil then return "" end
  if type(p) == "string" then return ", " .. p end
  local keys = {}
  for k in pairs(p) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for i, k in ipairs(keys) do
    local v = p[k]
    if getmetatable(v) == T._metatable and v:numel() == 1 then v = v:item() end
    if mtype(v) == "float" then v = string.format("%.4g", v) end
    parts[i] = tostring(k) .. "=" .. tostring(v)
  end
  return ", " .. table.concat(parts, ", ")
end

function Bar:_line(final)
  local n, total = self.n, self.total
  local el = now() - self.start
  local rate = el > 0 and n / el or 0
  local desc = self.desc and (self.desc .. ": ") or ""
  local unit = self.unit
  if total then
    local frac = total > 0 and math.min(n / total, 1) or 1
    local eta = (rate > 0) and (total - n) / rate or math.huge
    if final then eta = 0 end
    local stats = string.format("%d/%d [%s<%s, %s%s]", n, total, fmt_time(el), fmt_time(eta), fmt_rate(rate, unit),
      self:_postfix())
    if self.tty then
      local cols = columns(self)
      local pct = string.format("%3d%%", math.floor(frac * 100))
      -- the bar takes what the text leaves, up to `width` cells
      local w = math.min(self.width, cols - #desc - #pct - 3 - #stats)
      if w < 4 then   -- no room for a useful bar: the text alone, the description cut first
        local text = pct .. " " .. stats
        if #desc + #text > cols and self.desc then
          local keep = cols - #text - 3
          desc = keep >= 3 and (self.desc:sub(1, keep) .. ": ") or ""
        end
        return ((desc .. text):sub(1, cols))
      end
      local cells = math.floor(frac * w + 1e-9)
      return string.format("%s%s|%s%s| %s", desc, pct, string.rep("#", cells), string.rep(".", w - cells), stats)
    end
    return string.format("%s%d/%d (%d%%) [%s<%s, %s%s]", desc, n, total, math.floor(frac * 100), fmt_time(el),
      fmt_time(eta), fmt_rate(rate, unit), self:_postfix())
  end
  local line = string.format("%s%d%s [%s, %s%s]", desc, n, unit, fmt_time(el), fmt_rate(rate, unit), self:_postfix())
  if self.tty then line = line:sub(1, columns(self)) end
  return line
end

function Bar:_draw(final)
  if self.disable then return end
  local t = now()
  local f = self.file
  if self.tty then
    if not final and t - self.last < self.refresh then return end
    local line = self:_line(final)
    -- blanks over the rest of a longer previous line, never past the window
    local upto = math.min(self.drawn_len, columns(self))
    local pad = upto > #line and string.rep(" ", upto - #line) or ""
    f:write("\r" .. line .. pad)
    self.drawn_len = #line
    if final then
      if self.leave then f:write("\n") else f:write("\r" .. string.rep(" ", #line) .. "\r") end
    end
    f:flush()
  else
    if not final and t - self.last < self.interval then return end
    if final and self.printed_n == self.n then return end   -- already said
    f:write(self:_line(final) .. "\n")
    self.printed_n = self.n
    f:flush()
  end
  self.last = t
end

-- bar:update([k]): count k more (1) and redraw if due.
function Bar:update(k)
  self.n = self.n + (k or 1)
  self:_draw(false)
end
function Bar:set_postfix(p)
  if p ~= nil and type(p) ~= "table" and type(p) ~= "string" then
    fail("set_postfix expects a table or a string, got %s", typename(p))
  end
  self.postfix = p
end
function Bar:set_description(d) self.desc = d and tostring(d) or nil end
-- bar:write(msg): print a line without garbling the bar (tqdm.write): on a
-- terminal the bar is cleared, msg written, and the bar drawn again below.
function Bar:write(msg)
  msg = tostring(msg)
  local f = self.file
  if self.tty and not self.disable and self.drawn_len > 0 then
    f:write("\r" .. string.rep(" ", math.min(self.drawn_len, columns(self))) .. "\r" .. msg .. "\n")
    self.drawn_len = 0
    if not self.closed then
      self.last = -math.huge
      self:_draw(false)
    end
  else
    f:write(msg .. "\n")
  end
  f:flush()
end
-- bar:close(): draw the final state (once).
function Bar:close()
  if self.closed then return end
  self.closed = true
  self:_draw(true)
end
Bar.__close = function(self) self:close() end
function Bar:__call()
  if self.closed then return nil end
  if self.started then
    self:update(1)
  else
    self.started = true
    self.start = now()
    self.last = self.start
    if self.tty then self.last = -math.huge self:_draw(false) end   -- show 0/total at once
  end
  local r = table.pack(self.next())
  if r[1] == nil then
    self:close()
    return nil
  end
  return table.unpack(r, 1, r.n)
end

local function progress(src, opts)
  if opts ~= nil and type(opts) ~= "table" then fail("bad options argument (table expected, got %s)", typename(opts)) end
  opts = opts or {}
  T._check_opts("utils.progress", opts, KNOWN)   -- the one checker
  local nextf, total
  if mtype(src) == "float" and math.tointeger(src) then src = math.tointeger(src) end
  if mtype(src) == "integer" then
    if src < 0 then fail("count must be non-negative, got %d", src) end
    local i = 0
    nextf = function() i = i + 1 if i <= src then return i end end
    total = src
  elseif type(src) == "table" and type(src.iter) == "function" then
    nextf = src:iter()
    local ok, n = pcall(function() return compat.len(src) end)
    total = ok and mtype(n) == "integer" and n or nil
  elseif type(src) == "table" and getmetatable(src) == nil then
    local i, n = 0, #src
    nextf = function() i = i + 1 if i <= n then return src[i], i end end
    total = n
  elseif type(src) == "function" or (getmetatable(src) or {}).__call then
    nextf = src
  else
    fail("expected a count, a list, a DataLoader or an iterator function, got %s", typename(src))
  end
  if opts.total ~= nil then
    if mtype(opts.total) ~= "integer" or opts.total < 0 then fail("total must be a non-negative integer") end
    total = opts.total
  end
  if opts.ncols ~= nil and (mtype(opts.ncols) ~= "integer" or opts.ncols < 1) then
    fail("ncols must be a positive integer")
  end
  local file = opts.file or io.stderr
  local tty = opts.tty
  if tty == nil then tty = T._isatty and T._isatty(file) or false end
  local bar = setmetatable({ next = nextf, total = total, n = 0, desc = opts.desc and tostring(opts.desc) or nil,
    file = file, tty = tty, width = opts.width or 25, ncols = opts.ncols, refresh = opts.refresh or 0.1,
    interval = opts.interval or 5, unit = opts.unit or "it", leave = opts.leave ~= false,
    disable = opts.disable or false, drawn_len = 0, start = now(), last = now() }, Bar)
  return bar, nil, nil, bar
end

T.utils = T.utils or {}
T.utils.progress = progress
return progress
