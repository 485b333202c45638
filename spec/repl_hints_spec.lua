-- The prompt for a newcomer (issue 11): `?x:method` documents a method as
-- it is called, and calling a name that does not exist suggests the nearest
-- one (tensor methods, T's functions, globals); through a pipe and through a
-- pseudo-terminal (tools/pty_drive.py).
local CLI = "./build/bin/ltensor"

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("*a")
  p:close()
  return out
end

local function piped(input)
  local f = os.tmpname()
  local h = assert(io.open(f, "w")) h:write(input) h:close()
  local out = sh(CLI .. " < " .. f)
  os.remove(f)
  return out
end

local function typed(keys, history)
  local f = os.tmpname()
  local h = assert(io.open(f, "w")) h:write(table.concat(keys, "\n"), "\n") h:close()
  local out = sh("python3 tools/pty_drive.py --env LTENSOR_HISTORY=" .. history .. " -- " .. CLI .. " < " .. f)
  os.remove(f)
  return (out:gsub("\r", ""))
end

describe("the prompt's help and hints", function()
  it("?x:method documents the method (x:sum is no expression by itself)", function()
    local out = piped("x = T.zeros(2)\n?x:sum\n?x:add_\n? x:squeeze\n")
    assert.truthy(out:find("T.sum(t [, dim or {dims}] [, keepdim])", 1, true))
    assert.truthy(out:find("the in-place form of T.add", 1, true))
    assert.truthy(out:find("t:squeeze([dim | {dims}])", 1, true))
    assert.falsy(out:find("function arguments expected", 1, true))
  end)
  it("?x:nosuch says there is nothing, naming what was asked", function()
    local out = piped("x = T.zeros(2)\n?x:nosuch\n")
    assert.truthy(out:find("no documentation for 'x:nosuch'", 1, true))
  end)
  it("a misspelt method, T function, layer or global gets a suggestion", function()
    local out = piped("x = T.zeros(2)\nx:sume()\nT.zeross(2)\nT.nn.Lineer(2, 3)\nprnt(1)\n")
    assert.truthy(out:find("attempt to call a nil value (method 'sume') (did you mean 'sum'?)", 1, true))
    assert.truthy(out:find("(field 'zeross') (did you mean 'zeros'?)", 1, true))
    assert.truthy(out:find("(field 'Lineer') (did you mean 'Linear'?)", 1, true))
    assert.truthy(out:find("(global 'prnt') (did you mean 'print'?)", 1, true))
  end)
  it("a module method called with '.' gets the colon hint", function()
    local out = piped("m = T.nn.Linear(2, 3)\nm.parameters()\n")
    assert.truthy(out:find("attempt to index a nil value (local 'self') (a method called with '.'? write obj:method(...))", 1, true))
  end)
  it("help prints, as Python's help(), in -e one-liners and at the prompt (once)", function()
    local out = sh(CLI .. " -e 'help(T.trace)'")
    assert.truthy(out:find("^T.trace%(t%)\n"))
    out = piped("help(T.trace)\n")
    local n = 0
    for _ in out:gmatch("T%.trace%(t%)") do n = n + 1 end
    assert.equal(1, n)
    assert.truthy(piped("?help\n"):find("T.help([x])", 1, true))
  end)
  it("help(nil) (a misspelt name) says so rather than explaining help", function()
    local out = piped("help(T.zeross)\n")
    assert.truthy(out:find("no documentation: the value is nil (a misspelt or undefined name?)", 1, true))
    assert.falsy(out:find("help(f) or ?f", 1, true))
  end)
  it("no far-fetched suggestion for a short unknown name", function()
    local out = piped("x = T.zeros(2)\nx:foo()\n")
    assert.truthy(out:find("attempt to call a nil value (method 'foo')\n", 1, true))
  end)
  it("the same on a terminal, and the prompt stays usable", function()
    local history = os.tmpname()
    os.remove(history)
    local out = typed({ "x = T.ones(2)\\r", "?x:mean\\r", "x:meen()\\r", "x:mean():item()\\r" }, history)
    os.remove(history)
    assert.truthy(out:find("T.mean(", 1, true))
    assert.truthy(out:find("(did you mean 'mean'?)", 1, true))
    assert.truthy(out:find("\n1.0\n", 1, true))
  end)
end)
