-- The Lua tree's shape (issue 19): every module under lua/ltensor loads on
-- its own in a fresh interpreter (it requires what it uses), no file is over
-- 800 lines, and the module names of the earlier one-file layout still
-- resolve (ltensor/init.lua aliases them).

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local body, rc = out:match("^(.-)rc=(%d+)\n?$")
  return body, tonumber(rc)
end

-- every .lua file under lua/ltensor, as {path, module name}
local function module_files()
  local list = {}
  local p = assert(io.popen("find lua/ltensor -name '*.lua' | sort"))
  for path in p:lines() do
    local name = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/", "."):gsub("%.init$", "")
    list[#list + 1] = { path = path, name = name }
  end
  p:close()
  return list
end

local RUN = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4"

-- Files allowed past the limit, each with the reason it cannot be split.
local LONG_FILES = {}
local MAX_LINES = 800

describe("the Lua modules", function()
  local files = module_files()

  it("are found under lua/ltensor, in packages", function()
    local names = {}
    for _, f in ipairs(files) do names[f.name] = true end
    for _, m in ipairs { "ltensor", "ltensor.util", "ltensor.tensor", "ltensor.tensor.shape", "ltensor.autograd",
      "ltensor.autograd.rules_elementwise", "ltensor.nn", "ltensor.nn.functional", "ltensor.nn.weight_init",
      "ltensor.linalg", "ltensor.distributions", "ltensor.optim", "ltensor.optim.lr_scheduler",
      "ltensor.utils.data", "ltensor.utils.progress", "ltensor.io" } do
      assert.is_true(names[m] == true, m)
    end
    assert.is_true(#files > 60)
  end)

  it("each load alone in a fresh lua5.4", function()
    local failed = {}
    for _, f in ipairs(files) do
      local out, rc = sh(RUN .. " -e \"require '" .. f.name .. "'\"")
      if rc ~= 0 then failed[#failed + 1] = f.name .. ": " .. out end
    end
    assert.are.same({}, failed)
  end)

  it("are at most " .. MAX_LINES .. " lines each", function()
    local long = {}
    for _, f in ipairs(files) do
      local n = 0
      for _ in io.lines(f.path) do n = n + 1 end
      if n > MAX_LINES and not LONG_FILES[f.path] then long[#long + 1] = f.path .. " (" .. n .. " lines)" end
    end
    assert.are.same({}, long)
  end)

  it("answer to the names of the one-file layout once ltensor is loaded", function()
    local out, rc = sh(RUN .. [[ -e "
      local T = require 'ltensor'
      assert(require 'ltensor.structural' == require 'ltensor.tensor')
      assert(require 'ltensor.functional' == T.nn.functional)
      assert(require 'ltensor.nn_conv' == T.nn.functional)
      for _, m in ipairs { 'ltensor.nn_layers', 'ltensor.nn_rnn', 'ltensor.nn_attention' } do
        assert(require(m) == T.nn, m)
      end
      assert(require 'ltensor.nn_init' == T.nn.init)
      assert(require 'ltensor.nn_utils' == T.nn.utils)
      assert(require 'ltensor.lr_scheduler' == T.optim.lr_scheduler)
      assert(require 'ltensor.data' == T.utils.data)
      assert(require 'ltensor.progress' == T.utils.progress)
      assert(type(require 'ltensor.composites') == 'table')
      io.write('ok')"]])
    assert.are.equal(0, rc, out)
    assert.are.equal("ok", out)
  end)
end)
