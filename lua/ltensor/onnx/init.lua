-- ltensor.onnx -- T.onnx.load(path_or_bytes [, opts]): an ONNX model as an
-- nn.Module whose forward runs the graph with ltensor's ops, so autograd
-- runs through it (floating initializers become Parameters).
--
-- The layers: proto.lua (the protobuf wire format), tensor.lua (TensorProto
-- -> tensor), graph.lua (checks, order, compilation), ops_*.lua (one builder
-- per ONNX operator: node -> closure over ltensor ops).
--
-- Axes inside the file stay ONNX's (0-based); tensors going in and out are
-- ordinary ltensor tensors.  Integer tensors computed inside the graph
-- (shapes, Gather indices, ArgMax results) hold ONNX's 0-based values.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local util = require "ltensor.util"
local table = compat.table
local nn = require "ltensor.nn"
local P = require "ltensor.onnx.proto"
local G = require "ltensor.onnx.graph"

local onnx = {}

-- the operator table: op_type -> builder(node) -> run(x) (x: inputs by
-- position, nil for an omitted optional one)
local OPS = {}
for _, m in ipairs({ "ops_math", "ops_shape", "ops_nn", "ops_rnn" }) do
  for k, v in pairs(require("ltensor.onnx." .. m)) do OPS[k] = v end
end
onnx.operators = OPS

local is_t = util.is_tensor
local typename = util.mtname

local Model = nn.Module:extend("OnnxModel")
onnx._Model = Model   -- the class (instances: tostring, help)
-- class methods win over initializer names (an initializer called "forward"
-- must not hide the method); initializers are reached by name with
-- m:get_parameter / m:state_dict()
do
  local base_index = Model._instance_mt.__index
  Model._instance_mt.__index = function(self, k)
    local v = Model[k]
    if v ~= nil then return v end
    return base_index(self, k)
  end
end

-- initializers that are BatchNormalization's running statistics stay
-- buffers (an optimizer must not move them); other floating ones are
-- Parameters
local function stat_names(plan)
  local stats = {}
  for _, nd in ipairs(plan.nodes) do
    if nd.op == "BatchNormalization" then
      for i = 4, 5 do if nd.inputs[i] then stats[nd.inputs[i]] = true end end
    end
  end
  return stats
end

function Model:init(plan, opts)
  rawset(self, "_plan", plan)
  local params, bufs = rawget(self, "_params"), rawget(self, "_buffers")
  local stats = stat_names(plan)
  local want_grad = opts.requires_grad ~= false
  for _, name in ipairs(plan.init_names) do
    local t = plan.inits[name]
    if t.dtype.is_floating_point and not stats[name] then
      local p = nn.Parameter(t, want_grad)
      params.keys[#params.keys + 1] = name
      params.map[name] = p
    else
      bufs.keys[#bufs.keys + 1] = name
      bufs.map[name] = t
    end
  end
  plan.inits = nil   -- from here on the registries hold them (to(), load_state_dict)
  local inputs, outputs, in_names, out_names = {}, {}, {}, {}
  for i, v in ipairs(plan.inputs) do inputs[i] = v; in_names[i] = v.name end
  for i, v in ipairs(plan.outputs) do outputs[i] = v; out_names[i] = v.name end
  rawset(self, "inputs", inputs)
  rawset(self, "outputs", outputs)
  rawset(self, "input_names", in_names)
  rawset(self, "output_names", out_names)
  rawset(self, "opset", plan.opset)
  rawset(self, "ir_version", opts.ir_version)
  rawset(self, "producer_name", opts.producer_name)
  self:eval()
end

function Model:extra_repr()
  local p = rawget(self, "_plan")
  return ("inputs={%s}, outputs={%s}, nodes=%d, opset=%d"):format(table.concat(self.input_names, ", "),
    table.concat(self.output_names, ", "), #p.nodes, p.opset)
end

local function shape_text(s)
  local parts = {}
  for i, d in ipairs(s) do parts[i] = d == false and "?" or tostring(d) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function check_input(info, x)
  if not is_t(x) then
    error(("ltensor.onnx.forward: input '%s' must be a tensor, got %s"):format(info.name, typename(x)), 0)
  end
  local s = info.shape
  if not s then return end
  local xs = x.shape
  local ok = #xs == #s
  for i = 1, #s do
    if ok and type(s[i]) == "number" and s[i] ~= xs[i] then ok = false end
  end
  if not ok then
    error(("ltensor.onnx.forward: input '%s' should have shape %s, got %s"):format(info.name, shape_text(s),
      shape_text(xs)), 0)
  end
end

-- forward(x1, x2, ...) or forward{name = x}: the graph's outputs, in order
function Model:forward(...)
  local plan = rawget(self, "_plan")
  local env = {}
  local params, bufs = rawget(self, "_params").map, rawget(self, "_buffers").map
  for k, v in pairs(bufs) do env[k] = v end
  for k, v in pairs(params) do env[k] = v end
  local nargs = select("#", ...)
  local first = ...
  if nargs == 1 and type(first) == "table" and not is_t(first) then
    local given = {}
    for k, v in pairs(first) do
      if type(k) ~= "string" then error("ltensor.onnx.forward: named inputs must be keyed by input name", 0) end
      given[k] = v
    end
    for _, info in ipairs(plan.inputs) do
      local x = given[info.name]
      if x == nil then error("ltensor.onnx.forward: missing input '" .. info.name .. "'", 0) end
      check_input(info, x)
      env[info.name] = x
      given[info.name] = nil
    end
    local extra = next(given)
    if extra then error("ltensor.onnx.forward: the model has no input named '" .. tostring(extra) .. "'", 0) end
  else
    if nargs ~= #plan.inputs then
      error(("ltensor.onnx.forward: the model takes %d input%s (%s), got %d"):format(#plan.inputs,
        #plan.inputs == 1 and "" or "s", table.concat(self.input_names, ", "), nargs), 0)
    end
    local args = { ... }
    for i, info in ipairs(plan.inputs) do
      check_input(info, args[i])
      env[info.name] = args[i]
    end
  end
  for _, nd in ipairs(plan.nodes) do
    local x = { n = #nd.inputs }
    for i, name in ipairs(nd.inputs) do
      if name ~= "" then x[i] = env[name] end
    end
    local res = { pcall(nd.run, x) }
    if not res[1] then
      local msg = tostring(res[2]):gsub("^ltensor%.onnx%.forward: ", "")
      error("ltensor.onnx.forward: " .. nd:label() .. ": " .. msg, 0)
    end
    for i, name in ipairs(nd.outputs) do
      if name ~= "" then
        local v = res[i + 1]
        if v == nil then error("ltensor.onnx.forward: " .. nd:label() .. ": output " .. i .. " was not computed", 0) end
        env[name] = v
      end
    end
    for _, name in ipairs(nd.frees) do env[name] = nil end
  end
  local out = {}
  for i, o in ipairs(plan.outputs) do out[i] = env[o.name] end
  return table.unpack(out, 1, #plan.outputs)
end

local LOAD_OPTS = { requires_grad = true, base_dir = true }

-- T.onnx.load(path_or_bytes [, {requires_grad = true, base_dir = dir}])
-- A string holding a NUL byte or starting with byte 8 (the key of
-- ModelProto.ir_version, the first field every writer emits) is the model's
-- bytes (so is ""); any other string is a path.
function onnx.load(src, opts)
  if type(src) ~= "string" then
    P.fail("bad argument #1 'path_or_bytes' (string expected, got " .. typename(src) .. ")")
  end
  if opts ~= nil and type(opts) ~= "table" then
    P.fail("bad argument #2 'opts' (table expected, got " .. typename(opts) .. ")")
  end
  opts = opts or {}
  if T._check_opts then T._check_opts("onnx.load", opts, { "requires_grad", "base_dir" }) end
  for k in pairs(opts) do
    if not LOAD_OPTS[k] then P.fail("unknown option '" .. tostring(k) .. "'") end
  end
  local bytes, base_dir = src, opts.base_dir
  if #src > 0 and not (src:byte(1) == 8 or src:find("%z")) then
    local f, err = io.open(src, "rb")
    if not f then P.fail("cannot open '" .. src .. "': " .. tostring(err)) end
    bytes = f:read("*a")
    f:close()
    if not bytes then P.fail("cannot read '" .. src .. "'") end
    if base_dir == nil then base_dir = src:match("^(.*)/[^/]*$") or "." end
  end
  local model = P.decode_model(bytes)
  local plan = G.build(model, OPS, base_dir)
  return Model(plan, { requires_grad = opts.requires_grad, ir_version = model.ir_version,
    producer_name = model.producer_name })
end

return onnx
