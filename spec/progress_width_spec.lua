-- T.utils.progress fits the terminal's width (issue 21): through a
-- pseudo-terminal of 50 columns no redraw wraps; ncols and $COLUMNS when
-- the output is no terminal.
local T = require "ltensor"
local R = dofile("spec/repl_helpers.lua")

local function drawn(opts, run)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  local n = opts.n or 10
  opts.n, opts.file, opts.tty, opts.refresh = nil, f, true, 0
  run(T.utils.progress(n, opts))
  f:close()
  local out = assert(io.open(path)):read("*a")
  os.remove(path)
  local lines = {}
  for seg in out:gmatch("[^\r\n]+") do lines[#lines + 1] = seg end
  return lines
end

local function longest(lines)
  local m = 0
  for _, l in ipairs(lines) do if #l > m then m = #l end end
  return m
end

describe("T.utils.progress on a narrow terminal", function()
  it("never draws past the window (50 columns, through a pty)", function()
    local history, keys = os.tmpname(), os.tmpname()
    local h = assert(io.open(keys, "w"))
    h:write("for i in T.utils.progress(8, {desc = 'epoch 12 of a long training run', refresh = 0}) do end\\r\n",
      "bar = T.utils.progress(5, {refresh = 0}); for i in bar do bar:set_postfix({loss = 0.123456, acc = 0.9}) end\\r\n",
      "for i in T.utils.progress(3, {refresh = 0}) do end\\r\n")
    h:close()
    -- raw output: the carriage returns separate the redraws
    local out = R.sh("python3 tools/pty_drive.py --cols 50 --env LTENSOR_HISTORY=" .. history .. " -- " .. R.CLI .. " < " .. keys)
    os.remove(history)
    os.remove(keys)
    local bars = 0
    for seg in out:gmatch("[^\r\n]+") do
      if seg:find("%d+/%d+ %[") then
        bars = bars + 1
        assert.truthy(#seg <= 49, ("%d columns: %q"):format(#seg, seg))
      end
    end
    assert.truthy(bars >= 10)
    assert.truthy(out:find("100%|", 1, true))   -- a short line keeps its bar
  end)
  it("ncols sets the width: the bar shrinks, then goes, then the description is cut", function()
    local wide = drawn({ ncols = 120 }, function(b) for _ in b do end end)
    assert.truthy(wide[#wide]:find("|#########################|", 1, true))   -- 25 cells
    local mid = drawn({ ncols = 50 }, function(b) for _ in b do end end)
    assert.truthy(longest(mid) <= 49)
    assert.truthy(mid[#mid]:find("|#+|"))
    local narrow = drawn({ ncols = 30, desc = "a very long description" }, function(b) for _ in b do end end)
    assert.truthy(longest(narrow) <= 29)
    assert.falsy(narrow[#narrow]:find("|", 1, true))
  end)
  it("falls back to 80 columns when nothing says otherwise", function()
    local lines = drawn({ n = 3, desc = string.rep("d", 100) }, function(b) for _ in b do end end)
    assert.truthy(longest(lines) <= 79)
  end)
  it("refuses a bad ncols", function()
    assert.has_error(function() T.utils.progress(3, { ncols = 0 }) end,
      "ltensor.utils.progress: ncols must be a positive integer")
  end)
  it("T._term_columns is nil for a file that is no terminal", function()
    local f = io.tmpfile()
    assert.is_nil(T._term_columns(f))
    f:close()
  end)
end)
