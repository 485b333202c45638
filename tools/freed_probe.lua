-- tools/freed_probe.lua -- every captured valid call (tools/fuzz_gen.lua's
-- capture of the reference examples) replayed once per tensor it takes,
-- with that one tensor freed (t:free()): top-level arguments and tensors
-- inside table arguments (lists for cat/stack, optimizer parameter lists,
-- index lists, options), and every number argument replaced by a freed
-- 0-dim tensor (value arguments take either).  A call must then raise an error that says a
-- tensor was freed; run it in the ASan build (build/asan/bin/ltensor
-- tools/freed_probe.lua) to see the ones that read freed memory.
--
--   build/bin/ltensor tools/freed_probe.lua [filter]
-- prints "accepted" (the call returned), "other" (another error) and
-- "misnamed" (a freed-tensor error in another function's name) lines, then
-- a summary; PROBE_LOG=file writes each call before it runs;
-- PROBE_GRAD=1 makes the float tensor arguments require grad first (the
-- calls then go through the autograd hook and its rules).
local T = require "ltensor"
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tools"
local G = dofile(dir .. "/fuzz_gen.lua")
local filter = arg and arg[1]

local all = G.discover(T)
local C = G.new_capture(T)
C.by_name = {}
for _, t in ipairs(all) do C.by_name[t.name] = t end
local uninstall = G.install(C, all)
pcall(G.capture_examples, C, true)
-- the same calls with grad on their float inputs and backward() through the
-- results (as tools/fuzz_api.lua does): records the calls the Lua layer
-- makes into T._* and the backward entry points
G.replay_with_grad(C, function() T.set_grad_enabled(true) end)
uninstall()

-- paths to the tensor nodes of a frozen argument list
local function paths(args, n)
  local out = {}
  local function walk(node, path, depth)
    if node == nil or depth > 3 then return end
    if node.k == "t" or (node.k == "v" and type(node.v) == "number") then
      out[#out + 1] = path
    elseif node.k == "tab" then
      local keys = {}
      for k in pairs(node.f) do keys[#keys + 1] = k end
      table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
      for _, k in ipairs(keys) do
        local p = { table.unpack(path) }
        p[#p + 1] = k
        walk(node.f[k], p, depth + 1)
      end
    end
  end
  for i = 1, n do walk(args[i], { i }, 0) end
  return out
end

local function at(a, path)
  local v = a
  for i = 1, #path - 1 do v = v[path[i]] end
  return v, path[#path]
end

local log = os.getenv("PROBE_LOG") and assert(io.open(os.getenv("PROBE_LOG"), "w"))
-- PROBE_SKIP=file: calls (as logged) not to run, one a line (the ones that
-- crashed an earlier run)
local skip = {}
if os.getenv("PROBE_SKIP") then
  local f = io.open(os.getenv("PROBE_SKIP"))
  if f then for l in f:lines() do skip[l] = true end f:close() end
end
local names = {}
for name in pairs(C.records) do names[#names + 1] = name end
table.sort(names)
local counts = { freed = 0, accepted = 0, other = 0, misnamed = 0 }
for _, name in ipairs(names) do
  local tgt = C.by_name[name]
  if tgt and (tgt.kind == "fn" or tgt.kind == "method") and (not filter or name:find(filter, 1, true)) then
    local seen = {}
    for ri, rec in ipairs(C.records[name]) do
      for _, path in ipairs(paths(rec.args, rec.n)) do
        local key = table.concat(path, ".")
        if not seen[key] then
          seen[key] = true
          local self
          if tgt.kind == "method" then self = rec.self and (G.build(C, rec.self, false)) end
          if tgt.kind == "fn" or type(self) == "table" then
            local a, n = G.thaw_args(C, rec, false)
            if os.getenv("PROBE_GRAD") then G.grad_inputs(C, a, n) end
            local parent, k = at(a, path)
            local x = parent[k]
            -- a number becomes a freed 0-dim tensor (value arguments that
            -- take either)
            if type(x) == "number" then
              x = T.tensor(x)
              parent[k] = x
            end
            local desc = ("%s #%d arg %s"):format(name, ri, key)
            if T.is_tensor(x) and not skip[desc] then
              x:free()
              if log then log:write(desc, "\n") log:flush() end
              local ok, err
              if tgt.kind == "method" then ok, err = pcall(tgt.fn, self, table.unpack(a, 1, n))
              else ok, err = pcall(tgt.fn, table.unpack(a, 1, n)) end
              if not ok and tostring(err):find("freed", 1, true) then
                counts.freed = counts.freed + 1
                -- named after another function than the one called (an
                -- alias, or a tensor inside an options table, shows too)
                local said = tostring(err):match("^ltensor%.([%w_%.]+):")
                local last = said and said:match("([%w_]+)$")
                if not last or not name:find(last, 1, true) then
                  counts.misnamed = counts.misnamed + 1
                  print("misnamed", desc, tostring(err):sub(1, 200))
                end
              elseif ok then
                counts.accepted = counts.accepted + 1
                print("accepted", desc)
              else
                counts.other = counts.other + 1
                print("other", desc, tostring(err):sub(1, 200))
              end
              T.set_grad_enabled(true)
            end
          end
        end
      end
    end
  end
end
print(("freed-errors %d (misnamed %d), accepted %d, other errors %d"):format(counts.freed, counts.misnamed,
  counts.accepted, counts.other))
