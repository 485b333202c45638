-- Ctrl-C at the prompt and while code runs, through a pseudo-terminal
-- (tools/pty_drive.py types the keys, 0.4 s apart or once a marker is printed), and piped input run as
-- one script (issue 21).
local R = dofile("spec/repl_helpers.lua")
local CLI, sh, typed = R.CLI, R.sh, R.typed

local function count(s, pat) local n = 0 for _ in s:gmatch(pat) do n = n + 1 end return n end

describe("Ctrl-C at the ltensor prompt", function()
  local history
  before_each(function() history = os.tmpname() os.remove(history) end)
  after_each(function() os.remove(history) end)

  it("drops a half-typed line and gives a fresh prompt", function()
    local out = typed({ "x = 4\\r", "1 + \\x03", "print(x + 1)\\r" }, history)
    assert.truthy(out:find("^C\n> ", 1, true))
    assert.truthy(out:find("\n5\n", 1, true))   -- the session went on, x kept
  end)
  it("abandons a pending for block", function()
    local out = typed({ "for i = 1, 3 do\\r", "print('in block', i)\\r", "\\x03", "print('after')\\r" }, history)
    assert.truthy(out:find(">> ^C\n> ", 1, true))
    assert.falsy(out:find("in block\t1", 1, true))
    assert.truthy(out:find("\nafter\n", 1, true))
  end)
  it("stops a long Lua loop with an error and returns to the prompt", function()
    local out = typed({ "n = 0; while true do n = n + 1 end\\r", "\\x03", "print('n>0', n > 0)\\r" }, history)
    assert.truthy(out:find("interrupted!", 1, true))
    assert.truthy(out:find("n>0\ttrue", 1, true))
  end)
  it("stops a long matmul within a fraction of its time", function()
    -- the whole product takes several seconds; Ctrl-C comes as it starts
    local out = typed({ "a = T.randn(6000, 6000); w = T._monotonic()\\r",
                        "print('st' .. 'art'); b = a:matmul(a)\\r", "@wait:start", "\\x03",
                        "print('took', T._monotonic() - w, b == nil)\\r" }, history)
    assert.truthy(out:find("ltensor.matmul: interrupted", 1, true))
    local took = tonumber(out:match("took\t([%d%.e%-]+)\ttrue"))
    assert.truthy(took, out)
    assert.truthy(took < 4, "took " .. tostring(took))
  end)
  it("stops an integer matmul (the plain C loop) too", function()
    local out = typed({ "s = T.ones(3000, 3000, {dtype = T.int64}); w = T._monotonic()\\r",
                        "print('st' .. 'art'); s2 = s:matmul(s)\\r", "@wait:start", "\\x03", "print('took', T._monotonic() - w)\\r" }, history)
    assert.truthy(out:find("ltensor.matmul: interrupted", 1, true))
    local took = tonumber(out:match("took\t([%d%.e%-]+)"))
    assert.truthy(took and took < 4, out)
  end)
  it("stops a convolution between chunks of its work", function()
    -- (about 2 s of work; the Ctrl-C is typed once the line has printed
    -- "start", not at a fixed time, which on a loaded machine could fall in
    -- the setup line)
    local out = typed({ "x = T.randn(64, 64, 128, 128); k = T.randn(64, 64, 5, 5)\\r",
                        "print('st' .. 'art'); y = T.nn.functional.conv2d(x, k)\\r", "@wait:start", "\\x03",
                        "print('y', y)\\r" }, history)
    assert.truthy(out:find("interrupted", 1, true))
    assert.truthy(out:find("\ny\tnil\n", 1, true))
  end)
  it("a second session still works: Ctrl-C then Ctrl-D ends cleanly", function()
    local out = typed({ "\\x03", "\\x03", "2 * 21\\r" }, history)
    assert.equal(2, count(out, "%^C\n"))
    assert.truthy(out:find("\n42\n", 1, true))
  end)
end)

describe("piped input", function()
  local function run(input)
    local f = os.tmpname()
    local h = assert(io.open(f, "w")) h:write(input) h:close()
    local out, code = sh(CLI .. " < " .. f)
    os.remove(f)
    return out, code
  end
  it("runs as one chunk: locals live across lines", function()
    local out, code = run("local x = 20\nlocal y = x + 1\nprint(x + y)\n")
    assert.equal(0, code)
    assert.equal("41\n", out)
  end)
  it("stops at the first error with a non-zero status and the message on stderr", function()
    local f = os.tmpname()
    local out, code = sh("(printf 'error(\"boom\")\\nprint(2)\\n' | " .. CLI .. " 2>" .. f .. ")")
    local err = assert(io.open(f)):read("*a")
    os.remove(f)
    assert.not_equal(0, code)
    assert.equal("", out)   -- print(2) never ran
    assert.truthy(err:find("boom", 1, true))
  end)
  it("has T as a global, as the prompt has", function()
    local out = run("print(T.ones(2):sum():item())\n")
    assert.equal("2.0\n", out)
  end)
  it("-i still gives the prompt on piped input", function()
    local out = R.piped("1 + 1\n")
    assert.equal("2\n", out)
  end)
end)
