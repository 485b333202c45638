-- spec/helpers.lua: assertions shared by the view, indexing, elementwise and
-- bad-argument specs
-- (loaded with dofile; not a spec itself: busted runs *_spec.lua only).
local assert = require "luassert"   -- dofile runs outside the spec's environment
local M = {}

-- t has this dtype and shape, and (if given) these values
function M.check(t, dtype, shape, data)
  assert.equal(dtype, t.dtype)
  assert.same(shape, t.shape)
  if data ~= nil then assert.same(data, t:totable()) end
end

-- fn(...) raises an error containing substr (plain text)
function M.raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  err = tostring(err)
  assert.is_truthy(err:find(substr, 1, true), "error was: " .. err)
end

-- fn(...) raises; its message (less the "file:line: " position Lua adds for a
-- C function) starts with "ltensor.<fname>:" and contains each of the texts
function M.fails(fname, texts, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected ltensor." .. fname .. " to raise")
  err = tostring(err):gsub("^[^\n]-:%d+: ", "", 1)
  local prefix = "ltensor." .. fname .. ":"
  assert.equal(prefix, err:sub(1, #prefix), "error was: " .. err)
  if type(texts) == "string" then texts = { texts } end
  for _, t in ipairs(texts) do
    assert.truthy(err:find(t, 1, true), ("%q not in: %s"):format(t, err))
  end
end

-- a nested table (or a value) as a flat list
function M.flat(v, out)
  out = out or {}
  if type(v) == "table" then for i = 1, #v do M.flat(v[i], out) end else out[#out + 1] = v end
  return out
end

-- values equal (NaN equals NaN), floats within a relative tol
function M.same(want, got, tol, msg)
  local w, g = M.flat(want), M.flat(got)
  assert.equal(#w, #g, msg)
  for i = 1, #w do
    local a, b = w[i], g[i]
    if type(a) == "number" and a ~= a then
      assert.is_true(b ~= b, (msg or "") .. " [" .. i .. "] want nan, got " .. tostring(b))
    elseif type(a) == "number" and tol and a ~= b then
      assert.is_true(math.abs(a - b) <= tol * (1 + math.abs(a)),
        (msg or "") .. " [" .. i .. "] want " .. a .. ", got " .. tostring(b))
    else
      assert.equal(a, b, (msg or "") .. " [" .. i .. "]")
    end
  end
end

-- run() at one thread, then at two (the state's count restored even when
-- run raises); returns both results
function M.at_1_and_2_threads(run)
  local T = require "ltensor"
  local before = T.get_num_threads()
  T.set_num_threads(1)
  local ok1, one = pcall(run)
  T.set_num_threads(2)
  local ok2, two = pcall(run)
  T.set_num_threads(before)
  assert(ok1, one)
  assert(ok2, two)
  return one, two
end

return M
