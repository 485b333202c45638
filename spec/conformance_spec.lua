-- The public differential suite generated from PyTorch 1.13 (../shared/conformance),
-- run against the in-tree build: every category must pass completely.
local root = io.popen("pwd"):read("*l")
local shared = root .. "/../shared/conformance"
local f = io.open(shared .. "/run.lua")

describe("public conformance suite", function()
  if not f then
    pending("../shared/conformance is not beside this checkout")
    return
  end
  f:close()
  local cmd = string.format("cd %q && LTENSOR_ROOT=%q CONF_SHOW=5 lua5.4 %q %q 2>&1",
    root, root, shared .. "/run.lua", shared .. "/cases.lua")
  local p = io.popen(cmd)
  local out = p:read("*a")
  p:close()
  local cats = {}
  for line in out:gmatch("[^\n]+") do
    local cat, pass, total = line:match("^([%w_]+): (%d+)/(%d+)$")
    if cat then cats[#cats + 1] = { cat = cat, pass = tonumber(pass), total = tonumber(total) } end
  end

  it("reports its categories", function()
    assert.is_true(#cats >= 11, out:sub(1, 2000))
  end)

  for _, c in ipairs(cats) do
    it(c.cat .. " passes every case", function()
      local fails = {}
      for line in out:gmatch("[^\n]+") do
        if line:find("FAIL " .. c.cat .. "/", 1, true) then fails[#fails + 1] = line end
      end
      assert.are.equal(c.total, c.pass, table.concat(fails, "\n"))
    end)
  end
end)
