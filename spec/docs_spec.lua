-- The reference documentation: every public name has an entry (signature,
-- description, example), no entry names something that does not exist,
-- help() shows it, and `make doc` renders all of it.
local T = require "ltensor"
local help = require "ltensor.help"

describe("the reference documentation", function()
  it("documents every public function, method, class and module", function()
    local missing = help.undocumented()
    assert.equal(0, #missing, "undocumented public names: " .. table.concat(missing, ", "))
  end)
  it("has no entry for a name that does not exist", function()
    local public = {}
    for _, n in ipairs(help.public_names()) do public[n] = true end
    local stale = {}
    for _, e in ipairs(help.entries()) do
      -- an entry may document a method that is also a module function
      local also = e.name:match("^Tensor:(.*)$")
      if not public[e.name] and not (also and T._methods[also]) then stale[#stale + 1] = e.name end
    end
    assert.equal(0, #stale, "entries for unknown names: " .. table.concat(stale, ", "))
  end)
  it("gives every entry a signature, a description and an example, once", function()
    local seen = {}
    for _, e in ipairs(help.entries()) do
      assert.is_nil(seen[e.name], "documented twice: " .. e.name)
      seen[e.name] = true
      assert.truthy(type(e.signature) == "string" and #e.signature > 0, e.name .. ": no signature")
      assert.truthy(type(e.description) == "string" and #e.description > 0, e.name .. ": no description")
      assert.truthy(type(e.example) == "string" and #e.example > 0, e.name .. ": no example")
    end
  end)
  it("help(f) shows the signature and description; in-place forms point to their entry", function()
    local s = T.help(T.zeros)
    assert.truthy(s:find("T.zeros(size... [, {dtype=, requires_grad=}])", 1, true))
    assert.truthy(s:find("Example:", 1, true))
    assert.truthy(T.help("view"):find("t:view(size...)", 1, true))
    assert.truthy(T.help(T._methods.add_):find("the in-place form of T.add", 1, true))
    assert.truthy(T.help(T.nn.Linear):find("T.nn.Linear(in_features, out_features", 1, true))
    assert.truthy(T.help(T.nn):find("Linear", 1, true))
    assert.truthy(T.help("no_such_thing_here"):find("no documentation for 'no_such_thing_here'", 1, true))
    assert.truthy(T.help(T.zeros(2)):find("a tensor: ltensor.float32 of size {2}", 1, true))
  end)
  it("make doc renders every entry into doc/", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir)
    local p = io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 tools/gen_doc.lua " .. dir .. " 2>&1")
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find(("doc: %d entries"):format(#help.entries()), 1, true), out)
    local index = io.open(dir .. "/index.html"):read("*a")
    for _, e in ipairs(help.entries()) do
      assert.truthy(index:find(">" .. e.name:gsub("[&<>]", "") .. "<", 1, true), "not in index.html: " .. e.name)
    end
    os.execute("rm -rf " .. dir)
  end)
end)
