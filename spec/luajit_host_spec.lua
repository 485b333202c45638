-- examples/luajit_host.c (issue 12): a C host on libluajit that links
-- build/luajit/libltensor.a, hands it a frame buffer without copying and
-- reads the result back.  Runs under `make test-luajit` (the LuaJIT build
-- exists then); under the other hosts it is pending for that reason.
local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local body, rc = out:match("^(.-)rc=(%d+)\n?$")
  return body, tonumber(rc)
end

describe("the LuaJIT host example", function()
  if not rawget(_G, "jit") then
    pending("runs under make test-luajit (needs the LuaJIT build in build/luajit/)")
    return
  end
  it("builds against build/luajit/libltensor.a and runs: zero copy, the JIT on, released once", function()
    local out, rc = sh("make --no-print-directory luajit-host")
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("row means of 2*frame = 5 50", 1, true), out)
    assert.is_truthy(out:find("frame released 1 time(s)", 1, true), out)
    assert.is_truthy(out:find("luajit host: ok", 1, true), out)
  end)
end)
