-- spec/helpers.lua: assertions shared by the view and indexing specs
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

return M
