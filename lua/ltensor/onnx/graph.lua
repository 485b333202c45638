-- ltensor.onnx.graph -- from a decoded ModelProto to a runnable plan:
-- attributes decoded, nodes checked (known op and attributes, inputs that
-- name something), put in dependency order (a cycle is an error), each
-- node compiled to a closure by its op's builder (ops_*.lua), and the last
-- use of every value noted so that forward() frees intermediates early.
local compat = require "ltensor.compat"
local math, table = compat.math, compat.table
local P = require "ltensor.onnx.proto"
local TP = require "ltensor.onnx.tensor"

local G = {}
local fail = P.fail

-- Node: what an op builder sees.  Errors name the node, op and opset.
local Node = {}
Node.__index = Node

function Node:label()
  return ("node '%s' (op %s, opset %d)"):format(self.name, self.op, self.opset)
end
function Node:fail(msg) error("ltensor.onnx.load: " .. self:label() .. ": " .. msg, 0) end
-- the attributes a builder understands: any other one present is an error
function Node:allow(...)
  local ok = {}
  for _, k in ipairs({ ... }) do ok[k] = true end
  for _, k in ipairs(self.attr_names) do
    if not ok[k] then self:fail("attribute '" .. k .. "' is not supported") end
  end
end
local function getter(kind)
  return function(self, name, default)
    local a = self.attrs[name]
    if a == nil then return default end
    if a.kind ~= kind then self:fail(("attribute '%s' should be %s, got %s"):format(name, kind, a.kind)) end
    return a.value
  end
end
Node.int = getter("int")
Node.float = getter("float")
Node.string = getter("string")
Node.ints = getter("ints")
Node.floats = getter("floats")
Node.strings = getter("strings")
Node.tensor = getter("tensor")
-- a float attribute also accepts an int (some writers store whole numbers so)
function Node:number(name, default)
  local a = self.attrs[name]
  if a and a.kind == "int" then return a.value end
  return self:float(name, default)
end
function Node:has_input(i) return self.inputs[i] ~= nil and self.inputs[i] ~= "" end
function Node:has_output(i) return self.outputs[i] ~= nil and self.outputs[i] ~= "" end
-- a choice among strings: anything else is "attribute x='v' is not supported"
function Node:choice(name, default, ...)
  local v = self:string(name, default)
  for _, c in ipairs({ ... }) do if v == c then return v end end
  self:fail(("attribute %s='%s' is not supported"):format(name, tostring(v)))
end
function Node:max_inputs(n)
  if #self.inputs > n then self:fail(("has %d inputs, at most %d expected"):format(#self.inputs, n)) end
end
function Node:min_inputs(n)
  for i = 1, n do
    if not self:has_input(i) then self:fail(("needs input %d"):format(i)) end
  end
end
-- outputs a builder does not produce must not be asked for
function Node:max_outputs(n, what)
  for i = n + 1, #self.outputs do
    if self:has_output(i) then
      self:fail(("output %d (%s) is not supported"):format(i, what or ("'" .. self.outputs[i] .. "'")))
    end
  end
end

local ATTR_KINDS = { "float", "int", "string", "tensor", "graph", "floats", "ints", "strings", "tensors", "graphs",
  "sparse_tensor", "sparse_tensors", "type_proto", "type_protos" }

local function floats_of(list)
  local out = {}
  for _, b in ipairs(list) do
    for j = 1, #b, 4 do out[#out + 1] = P.f32(b:sub(j, j + 3)) end
  end
  return out
end

local function decode_attr(a, where, base_dir)
  local ty = a.type
  if ty == nil or ty == 0 then   -- IR < 0.0.2 writers leave type out: infer it from the field set
    if a.f then ty = 1 elseif a.i then ty = 2 elseif a.s then ty = 3 elseif a.t then ty = 4
    elseif a.g then ty = 5 elseif #a.floats > 0 then ty = 6 elseif #a.ints > 0 then ty = 7
    elseif #a.strings > 0 then ty = 8 else ty = 7 end
  end
  local kind = ATTR_KINDS[ty]
  if not kind then fail(("%s: attribute '%s' has an unknown type %s"):format(where, tostring(a.name), tostring(ty))) end
  local v
  if ty == 1 then v = a.f and P.f32(a.f) or 0.0
  elseif ty == 2 then v = a.i or 0
  elseif ty == 3 then v = a.s or ""
  elseif ty == 4 then
    if not a.t then fail(where .. ": attribute '" .. tostring(a.name) .. "' has no tensor") end
    v = TP.to_tensor(a.t, where .. ": attribute '" .. tostring(a.name) .. "'", base_dir)
  elseif ty == 6 then v = floats_of(a.floats)
  elseif ty == 7 then v = a.ints
  elseif ty == 8 then v = a.strings
  else v = a end   -- graphs and the rest: an op that takes them reads the raw message
  return { kind = kind, value = v }
end

local function node_of(n, i, opset, base_dir, domains)
  local name = n.name
  if name == nil or name == "" then name = "#" .. i .. (n.output[1] and (" -> " .. n.output[1]) or "") end
  local node = setmetatable({ name = name, op = n.op_type or "", opset = opset, inputs = n.input,
    outputs = n.output, attrs = {}, attr_names = {}, index = i }, Node)
  if node.op == "" then fail(("node '%s' has no op_type"):format(name)) end
  local dom = n.domain or ""
  if dom ~= "" and dom ~= "ai.onnx" then
    node.opset = domains[dom] or 0
    node.op = dom .. "." .. node.op
    node:fail("operator domain '" .. dom .. "' is not supported")
  end
  for _, a in ipairs(n.attribute) do
    if type(a.name) ~= "string" or a.name == "" then node:fail("an attribute has no name") end
    if a.ref_attr_name then node:fail("attribute references (functions) are not supported") end
    if node.attrs[a.name] then node:fail("attribute '" .. a.name .. "' is given twice") end
    node.attrs[a.name] = decode_attr(a, "ltensor.onnx.load: " .. node:label(), base_dir)
    node.attr_names[#node.attr_names + 1] = a.name
  end
  return node
end
G.node_of = node_of

-- The operator's required inputs (onnx/required.lua, from the ONNX
-- schemas) are there and not named "" (the name of an absent optional
-- input): a builder may then read them without checking.
local REQUIRED = require "ltensor.onnx.required"
local function check_required(nd)
  local r = REQUIRED[nd.op]
  if r == "all" then r = math.max(#nd.inputs, 1)
  elseif type(r) == "table" then
    local n = 0
    for i = 1, #r, 2 do if nd.opset >= r[i] then n = r[i + 1] end end
    r = n
  end
  for i = 1, r or 0 do
    if not nd:has_input(i) then nd:fail(("needs input %d (%d required)"):format(i, r)) end
  end
end

-- Kahn's algorithm over the node list (stable: file order among ready
-- nodes); a node left over sits on a cycle.
local function order(nodes, known)
  local producer = {}
  for i, nd in ipairs(nodes) do
    for _, o in ipairs(nd.outputs) do
      if o ~= "" then
        if producer[o] or known[o] then nd:fail("output '" .. o .. "' is already defined") end
        producer[o] = i
      end
    end
  end
  local indeg, users = {}, {}
  for i, nd in ipairs(nodes) do
    indeg[i] = 0
    for _, x in ipairs(nd.inputs) do
      if x ~= "" then
        local p = producer[x]
        if p then
          indeg[i] = indeg[i] + 1
          users[p] = users[p] or {}
          table.insert(users[p], i)
        elseif not known[x] then
          nd:fail("input '" .. x .. "' is not produced by any node, graph input or initializer")
        end
      end
    end
  end
  local ready, out, head = {}, {}, 1
  for i = 1, #nodes do if indeg[i] == 0 then ready[#ready + 1] = i end end
  while head <= #ready do
    local i = ready[head]
    head = head + 1
    out[#out + 1] = nodes[i]
    for _, u in ipairs(users[i] or {}) do
      indeg[u] = indeg[u] - 1
      if indeg[u] == 0 then ready[#ready + 1] = u end
    end
  end
  if #out < #nodes then
    for i = 1, #nodes do
      if indeg[i] > 0 then nodes[i]:fail("the graph has a cycle through this node") end
    end
  end
  return out
end

-- declared type of a ValueInfoProto: {name=, dtype=, shape=} (shape nil when
-- unknown; a symbolic dim is its name, an unnamed unknown dim false)
local function value_info(vi)
  local info = { name = vi.name or "" }
  local tt = vi.type and vi.type.tensor_type
  if tt then
    info.dtype = TP.DTYPES[tt.elem_type]
    if tt.shape then
      info.shape = {}
      for i, d in ipairs(tt.shape.dim) do
        if d.dim_value ~= nil then info.shape[i] = d.dim_value
        elseif d.dim_param ~= nil and d.dim_param ~= "" then info.shape[i] = d.dim_param
        else info.shape[i] = false end
      end
    end
  end
  return info
end

-- build(model, ops, base_dir) -> plan
function G.build(model, ops, base_dir)
  local opset
  local domains = {}
  for _, o in ipairs(model.opset_import) do
    if (o.domain or "") == "" or o.domain == "ai.onnx" then opset = o.version
    else domains[o.domain] = o.version end
  end
  if opset == nil then
    if #model.opset_import == 0 then opset = 1 else fail("the model imports no opset of the default domain") end
  end
  if math.type(opset) ~= "integer" or opset < 1 then fail("opset version " .. tostring(opset) .. " is not valid") end
  local g = model.graph
  if #g.sparse_initializer > 0 then fail("sparse initializers are not supported") end
  local plan = { opset = opset, inits = {}, init_names = {}, inputs = {}, outputs = {} }
  local known = {}
  for i, tp in ipairs(g.initializer) do
    local name = tp.name
    if not name or name == "" then fail(("initializer %d has no name"):format(i)) end
    if known[name] then fail("initializer '" .. name .. "' is defined twice") end
    known[name] = true
    plan.init_names[#plan.init_names + 1] = name
    plan.inits[name] = TP.to_tensor(tp, "initializer '" .. name .. "'", base_dir)
  end
  for _, vi in ipairs(g.input) do
    local info = value_info(vi)
    if info.name == "" then fail("a graph input has no name") end
    if not plan.inits[info.name] then   -- IR < 4 lists initializers as inputs too
      if known[info.name] then fail("graph input '" .. info.name .. "' is defined twice") end
      known[info.name] = true
      plan.inputs[#plan.inputs + 1] = info
    end
  end
  for _, vi in ipairs(g.output) do plan.outputs[#plan.outputs + 1] = value_info(vi) end
  local nodes = {}
  for i, n in ipairs(g.node) do nodes[i] = node_of(n, i, opset, base_dir, domains) end
  nodes = order(nodes, known)
  local produced = {}
  for k in pairs(known) do produced[k] = true end
  for _, nd in ipairs(nodes) do for _, o in ipairs(nd.outputs) do produced[o] = true end end
  for _, o in ipairs(plan.outputs) do
    if not produced[o.name] then fail("graph output '" .. o.name .. "' is not produced by any node or input") end
  end
  -- compile every node; note each value's last reader
  local last = {}
  for k, nd in ipairs(nodes) do
    local build = ops[nd.op]
    if not build then nd:fail("operator '" .. nd.op .. "' is not supported") end
    check_required(nd)
    nd.run = build(nd)
    if type(nd.run) ~= "function" then nd:fail("internal error: no implementation") end
    for _, x in ipairs(nd.inputs) do if x ~= "" then last[x] = k end end
  end
  for _, o in ipairs(plan.outputs) do last[o.name] = math.huge end
  for k, nd in ipairs(nodes) do
    nd.frees = {}
    local seen = {}
    for _, x in ipairs(nd.inputs) do
      if x ~= "" and last[x] == k and not seen[x] and not plan.inits[x] then
        seen[x] = true
        nd.frees[#nd.frees + 1] = x
      end
    end
  end
  plan.nodes = nodes
  return plan
end

return G
