-- ltensor.compat and the source rules that keep one source running on Lua
-- 5.1, 5.2, 5.3, 5.4 and LuaJIT (issue 12).  Runs under every host
-- (`make test`, `make test-luajit` ...): each case checks what that host
-- gives.
local T = require "ltensor"
local compat = require "ltensor.compat"

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  return out:gsub("rc=%d+%s*$", ""), tonumber(out:match("rc=(%d+)%s*$"))
end

describe("the source on every host", function()
  local _, not_git = sh("git rev-parse --git-dir")
  it("parses under Lua 5.1 (lua/, tools/, bench/, examples/, specs not named *_lua53/_lua54)", function()
    local out, rc = sh("command -v lua5.1")
    if rc ~= 0 then pending("lua5.1 is not installed") return end
    if not_git ~= 0 then pending("not a git checkout") return end
    local files = sh("git ls-files 'lua/*.lua' 'tools/*.lua' 'bench/*.lua' 'examples/*.lua' 'spec/*.lua'")
    local bad, n = {}, 0
    for f in files:gmatch("[^\n]+") do
      if not f:find("_lua5[34]_spec%.lua$") then
        n = n + 1
        local msg = sh("lua5.1 -e " .. ("'local f, e = loadfile(%q) if not f then print(e) end'"):format(f))
        if msg ~= "" then bad[#bad + 1] = msg end
      end
    end
    assert.is_true(n > 100, "found only " .. n .. " files")
    assert.equal("", table.concat(bad))
  end)

  it("writes no \\x, \\u{} or \\z escapes in the library (Lua 5.1 reads \"\\x93\" as \"x93\")", function()
    if not_git ~= 0 then pending("not a git checkout") return end
    local out = sh("git grep -nE '\\\\(x[0-9a-fA-F]{2}|u\\{|z)' -- 'lua/*.lua' 'tools/*.lua' || true")
    -- (a match inside a comment is as suspect: write "\147" for 0x93)
    assert.equal("", out)
  end)
end)

describe("ltensor.compat", function()
  it("fmt_num rounds an exact tie to even, as C's printf (and PyTorch) do", function()
    local cases = {
      { "f", 0, 2.5, "2" }, { "f", 0, 3.5, "4" }, { "f", 0, -2.5, "-2" }, { "f", 0, 0.5, "0" },
      { "f", 4, 0.03125, "0.0312" }, { "f", 2, 1.125, "1.12" }, { "f", 1, 0.25, "0.2" },
      { "f", 4, 1 / 3, "0.3333" }, { "e", 0, 2.5, "2e+00" }, { "e", 1, 0.125, "1.2e-01" },
      { "e", 1, 0.375, "3.8e-01" }, { "e", 4, 1e10, "1.0000e+10" }, { "f", 0, 9.5, "10" },
    }
    for _, c in ipairs(cases) do
      assert.equal(c[4], compat.fmt_num(c[1], c[2], c[3]), ("%%.%d%s of %.17g"):format(c[2], c[1], c[3]))
    end
    assert.equal("tensor([0.0312, 2.1250])", tostring(T.tensor({ 0.03125, 2.125 })))
  end)

  it("len calls a table's __len on every host", function()
    local t = setmetatable({}, { __len = function() return 7 end })
    assert.equal(7, compat.len(t))
    assert.equal(3, compat.len({ 1, 2, 3 }))
    assert.equal(2, compat.len("ab"))
    local ds = T.utils.data.TensorDataset(T.arange(5))
    assert.equal(5, compat.len(ds))
    assert.equal(3, compat.len(T.utils.data.DataLoader(ds, { batch_size = 2 })))
  end)

  it("spack/sunpack round-trip big-endian items, 8-byte negatives and the 1/2-byte kinds", function()
    local s = compat.spack(">i2>i2", 1, -2)
    assert.equal("\0\1\255\254", s)
    assert.same({ 1, -2, 5 }, { compat.sunpack(">i2>i2", s) })
    s = compat.spack("<i8fBB", -3, 1.5, 7, 255)
    assert.equal(14, #s)
    assert.same({ -3, 1.5, 7, 255, 15 }, { compat.sunpack("<i8fBB", s) })
    assert.equal(("\255"):rep(8), compat.spack("<I8", -1))
    assert.same({ 0.5, -2, 9 }, { compat.sunpack(">f>f", compat.spack(">f>f", 0.5, -2)) })
    assert.same({ -1, 3 }, { compat.sunpack("<h", compat.spack("<h", -1)) })
  end)
end)

describe("numbers on every host", function()
  it("-0.0 reaches a float tensor with its sign, as a weak float", function()
    local nz = -1 / math.huge
    local t = T.tensor({ nz, 1.5 })
    assert.equal(T.float32, t.dtype)
    assert.equal(-math.huge, 1 / t[1]:item())
    assert.equal(-math.huge, 1 / T.tensor({ nz }, { dtype = T.float64 })[1]:item())
    assert.equal(-math.huge, 1 / T.full({ 1 }, nz, { dtype = T.float32 })[1]:item())
    assert.equal("tensor([-0.0000, 1.5000])", tostring(t))
  end)

  it("prints a row under linewidth = math.maxinteger (no float loop from 0 on 5.1/5.2)", function()
    T.set_printoptions({ linewidth = compat.math.maxinteger })
    local ok, s = pcall(tostring, T.tensor({ true, false, true }))
    T.set_printoptions({ profile = "default" })
    assert.is_true(ok, s)
    assert.equal("tensor([ true, false,  true])", s)
  end)
end)
