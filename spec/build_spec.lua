-- The build, the in-tree paths and the `ltensor` command.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local body, rc = out:match("^(.-)rc=(%d+)\n?$")
  return body, tonumber(rc)
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local CLI = "build/bin/ltensor"

describe("the test environment", function()
  it("runs under Lua 5.4", function()
    host.needs_lua54("checks that busted itself runs under lua5.4")
    assert.are.equal("Lua 5.4", _VERSION)
  end)

  it("resolves ltensor.core to the in-tree build, not an installed rock", function()
    local path = package.searchpath("ltensor.core", package.cpath)
    assert.is_truthy(path)
    assert.is_truthy(path:match("^build/"), path)
  end)

  it("resolves the Lua modules to the in-tree sources", function()
    assert.are.equal("lua/ltensor/init.lua", package.searchpath("ltensor", package.path))
    assert.are.equal("lua/ltensor/nn/init.lua", package.searchpath("ltensor.nn", package.path))
  end)

  it("gives the same table from require \"ltensor\" and ltensor.core", function()
    assert.are.equal(T, require "ltensor.core")
    assert.is_string(T._VERSION)
    assert.is_truthy(T._VERSION:match("^%d+%.%d+%.%d+$"))
  end)
end)

describe("the build products", function()
  it("has the C module, the static library and the CLI", function()
    for _, f in ipairs { "build/ltensor/core.so", "build/libltensor.a", CLI } do
      assert.is_truthy(io.open(f, "rb"), f .. " missing")
    end
  end)

  it("embeds every Lua module in the library", function()
    local gen = assert(io.open("build/gen/ltensor_lua.c")):read("*a")
    local p = io.popen("find lua/ltensor -name '*.lua'")
    local n = 0
    for f in p:lines() do
      n = n + 1
      local name = f:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/", "."):gsub("%.init$", "")
      assert.is_truthy(gen:find('{"' .. name .. '", ', 1, true), name .. " not embedded")
    end
    p:close()
    assert.is_true(n >= 2)
  end)

  it("does not link liblua into the C module", function()
    local out = sh("ldd build/ltensor/core.so")
    assert.is_falsy(out:match("liblua"))
    assert.is_truthy(out:match("openblas"))
  end)
end)

describe("the examples", function()
  it("runs examples/demo.lua without an error", function()
    local out, rc = sh("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 examples/demo.lua")
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("== creation", 1, true), out)
  end)
end)

describe("the ltensor command", function()
  local tmp = os.tmpname()
  after_each(function() os.remove(tmp) end)

  it("runs a script with arg and ... as lua5.4 does", function()
    write(tmp, [[
      local T = require "ltensor"
      print(arg[0] == ..., select("#", ...), arg[1], arg[2], (...))
      print(T.zeros(2, 3):size(2))
    ]])
    local out, rc = sh(CLI .. " " .. tmp .. " x 'y z'")
    assert.are.equal(0, rc, out)
    assert.are.equal("false\t2\tx\ty z\tx\n3\n", out)
  end)

  it("needs no Lua files: modules come from the binary", function()
    write(tmp, 'print(package.searchpath("ltensor", package.path), require("ltensor.nn") == require("ltensor").nn)')
    local out, rc = sh("cd / && LUA_PATH='/nonexistent/?.lua' LUA_CPATH='/nonexistent/?.so' "
      .. os.getenv("PWD") .. "/" .. CLI .. " " .. tmp)
    assert.are.equal(0, rc, out)
    assert.are.equal("nil\ttrue\n", out)
  end)

  it("runs -e code with T bound to the module", function()
    local out, rc = sh(CLI .. [[ -e 'print(T.ones(2, 2):size(1))' -e 'print(T == require "ltensor")']])
    assert.are.equal(0, rc, out)
    assert.are.equal("2\ntrue\n", out)
  end)

  it("exits non-zero with the error message on an error", function()
    local out, rc = sh(CLI .. [[ -e 'T.zeros(-1)']])
    assert.are_not.equal(0, rc)
    assert.is_truthy(out:match("negative"), out)
    out, rc = sh(CLI .. " /nonexistent/script.lua")
    assert.are_not.equal(0, rc)
    assert.is_truthy(out:match("cannot open"), out)
  end)

  it("reports a bad option with the usage", function()
    local out, rc = sh(CLI .. " -x")
    assert.are_not.equal(0, rc)
    assert.is_truthy(out:match("unrecognized option '%-x'"), out)
    assert.is_truthy(out:match("usage:"), out)
  end)

  it("prints the values of expressions in the REPL, continuing incomplete input", function()
    write(tmp, table.concat({
      "x = T.zeros(2)",
      "x:size(1), 'two'",
      "for i = 1, 2 do",
      "  print('line', i)",
      "end",
      "error('boom')",
      "1 + 1",
      "nil",
    }, "\n") .. "\n")
    -- -i: piped input without it runs as one script (as lua5.4 < file)
    local out, rc = sh(CLI .. " -i < " .. tmp)
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("2\ttwo\nline\t1\nline\t2\n", 1, true), out)
    assert.is_truthy(out:find("boom", 1, true), out)
    assert.is_truthy(out:find("\n2\nnil\n", 1, true), out)
  end)

  it("prints a tensor in the REPL through tostring", function()
    write(tmp, "T.zeros(2)\n")
    local out, rc = sh(CLI .. " -i < " .. tmp)
    assert.are.equal(0, rc, out)
    out = out:gsub("^ltensor %S+ %b()\n", "")   -- -i's version line
    assert.are.equal(tostring(T.zeros(2)) .. "\n", out)
  end)

  it("prints its version with -v", function()
    local out, rc = sh(CLI .. " -v")
    assert.are.equal(0, rc)
    assert.is_truthy(out:match("^ltensor " .. T._VERSION:gsub("%.", "%%.") .. " %(Lua 5%.4"), out)
  end)
end)
