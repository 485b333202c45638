-- ltensor.nn.utils: T.nn.utils (torch.nn.utils): gradient clipping and
-- flattening parameters to one vector.  `parameters` is a tensor, a list of
-- tensors or a Module (its parameters()).
local T = require "ltensor.core"
local util = require "ltensor.util"
local tointeger = require("ltensor.compat").math.tointeger
require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn

local utils = nn.utils or {}
nn.utils = utils

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.utils.")
local typename = util.mtname

local function param_list(fname, params)
  if is_t(params) then return { params } end
  if nn.is_module(params) then return params:parameters() end
  if type(params) ~= "table" then
    fail(fname, "bad argument #1 'parameters' (tensor, list of tensors or Module expected, got " .. typename(params) .. ")")
  end
  local out = {}
  for i, p in ipairs(params) do
    if not is_t(p) then fail(fname, "bad argument #1 'parameters' (entry " .. i .. " is a " .. typename(p) .. ", not a tensor)") end
    out[i] = p
  end
  return out
end

local function norm_type_of(fname, v)
  if v == nil then return 2.0 end
  if v == "inf" then return math.huge end
  if v == "-inf" then return -math.huge end
  if type(v) ~= "number" then fail(fname, "bad argument 'norm_type' (number or \"inf\" expected, got " .. typename(v) .. ")") end
  return v
end

-- clip_grad_norm_(parameters, max_norm [, norm_type = 2] [, {error_if_nonfinite = false, norm_type}])
-- scales every gradient by max_norm / (total_norm + 1e-6) when that is < 1
-- and returns the total norm (a 0-dim tensor) of all gradients seen as one vector.
function utils.clip_grad_norm_(parameters, max_norm, norm_type, opts)
  local fname = "clip_grad_norm_"
  if type(norm_type) == "table" then norm_type, opts = nil, norm_type end
  if opts ~= nil and type(opts) ~= "table" then fail(fname, "bad argument 'opts' (table expected, got " .. typename(opts) .. ")") end
  opts = opts or {}
  T._check_opts("nn.utils." .. fname, opts, { "error_if_nonfinite", "norm_type" })   -- the one checker
  util.check_flags(fail, fname, opts)
  if norm_type == nil then norm_type = opts.norm_type end
  local ps = param_list(fname, parameters)
  if type(max_norm) ~= "number" then fail(fname, "bad argument #2 'max_norm' (number expected, got " .. typename(max_norm) .. ")") end
  norm_type = norm_type_of(fname, norm_type)
  local grads = {}
  for _, p in ipairs(ps) do if p.grad ~= nil then grads[#grads + 1] = p.grad end end
  if #grads == 0 then return T.tensor(0.0) end
  return T.no_grad(function()
    local total
    if norm_type == math.huge then
      local ms = {}
      for i, g in ipairs(grads) do ms[i] = T.amax(T.abs(g)):to(grads[1].dtype) end
      total = T.amax(T.stack(ms))
    else
      local ns = {}
      for i, g in ipairs(grads) do ns[i] = T.norm(g, norm_type):to(grads[1].dtype) end
      total = T.norm(T.stack(ns), norm_type)
    end
    local tn = total:item()
    if opts.error_if_nonfinite and (tn ~= tn or tn == math.huge or tn == -math.huge) then
      fail(fname, "The total norm of order " .. tostring(norm_type) .. " for gradients from `parameters` is non-finite, " ..
        "so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, " ..
        "set `error_if_nonfinite=False`")
    end
    local coef = max_norm / (tn + 1e-6)
    -- as PyTorch: clamped to 1 and always applied (NaN propagates)
    if not (coef >= 1) then
      for _, g in ipairs(grads) do g:mul_(coef) end
    end
    return total
  end)
end

-- clip_grad_value_(parameters, clip_value): clamps gradients to [-v, v] in place
function utils.clip_grad_value_(parameters, clip_value)
  local fname = "clip_grad_value_"
  local ps = param_list(fname, parameters)
  if type(clip_value) ~= "number" then
    fail(fname, "bad argument #2 'clip_value' (number expected, got " .. typename(clip_value) .. ")")
  end
  T.no_grad(function()
    for _, p in ipairs(ps) do
      if p.grad ~= nil then p.grad:clamp_(-clip_value, clip_value) end
    end
  end)
end

-- parameters_to_vector(parameters): one 1-D tensor (differentiable)
function utils.parameters_to_vector(parameters)
  local ps = param_list("parameters_to_vector", parameters)
  local flat = {}
  for i, p in ipairs(ps) do flat[i] = p:reshape({ p:numel() }) end
  if #flat == 0 then return T.zeros({ 0 }) end
  return T.cat(flat, 1)
end

-- vector_to_parameters(vec, parameters): copies consecutive slices of vec
-- into the parameters, in place
function utils.vector_to_parameters(vec, parameters)
  local fname = "vector_to_parameters"
  if not is_t(vec) then fail(fname, "expected torch.Tensor, but got: " .. typename(vec)) end
  if vec:dim() ~= 1 then fail(fname, "expected a 1-D vector, got " .. vec:dim() .. "-D") end
  local ps = param_list(fname, parameters)
  local total = 0
  for _, p in ipairs(ps) do total = total + p:numel() end
  if total ~= vec:numel() then
    fail(fname, ("vector has %d elements but the parameters have %d"):format(vec:numel(), total))
  end
  T.no_grad(function()
    local off = 1
    for _, p in ipairs(ps) do
      local n = p:numel()
      p:copy_(vec:narrow(1, off, n):reshape(p.shape))
      off = off + n
    end
  end)
end

---------------------------------------------------------------------------
-- T.nn.utils.rnn: PackedSequence, pad_sequence, pack_padded_sequence,
-- pad_packed_sequence, pack_sequence (torch.nn.utils.rnn).  A packed
-- batch stores its sequences time-major without padding: data (N, *) holds,
-- for each step t, the rows of the batch_sizes[t] sequences still running,
-- longest first; sorted_indices / unsorted_indices (1-based, or nil when
-- the input was already sorted) map between that order and the caller's.
---------------------------------------------------------------------------
local rnn = utils.rnn or {}
utils.rnn = rnn
local tunpack = table.unpack or unpack   -- (Lua 5.1)
local function rfail(fname, msg) error("ltensor.nn.utils.rnn." .. fname .. ": " .. msg, 0) end

local PackedSequence = {}
PackedSequence.__index = PackedSequence
PackedSequence.__name = "ltensor.nn.utils.rnn.PackedSequence"
rnn.PackedSequence_mt = PackedSequence
function PackedSequence.__tostring(p)
  return ("PackedSequence(data=%s, batch_sizes=%s)"):format(table.concat(p.data.shape, "x"),
    table.concat(p.batch_sizes:totable(), ", "))
end
-- the same batch with other data (an RNN's output), keeping the order
function PackedSequence:_with_data(data)
  return setmetatable({ data = data, batch_sizes = self.batch_sizes, sorted_indices = self.sorted_indices,
    unsorted_indices = self.unsorted_indices }, PackedSequence)
end
function PackedSequence:to(...) return self:_with_data(self.data:to(...)) end
function rnn.is_packed(x) return getmetatable(x) == PackedSequence end

-- PackedSequence(data, batch_sizes [, sorted_indices [, unsorted_indices]])
function rnn.PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)
  local fname = "PackedSequence"
  if not is_t(data) then rfail(fname, "bad argument #1 'data' (Tensor expected, got " .. typename(data) .. ")") end
  if type(batch_sizes) == "table" and not is_t(batch_sizes) then batch_sizes = T.tensor(batch_sizes, { dtype = T.int64 }) end
  if not is_t(batch_sizes) or batch_sizes:dim() ~= 1 then rfail(fname, "batch_sizes must be a 1-D tensor") end
  if sorted_indices ~= nil and unsorted_indices == nil then unsorted_indices = T.argsort(sorted_indices) end
  return setmetatable({ data = data, batch_sizes = batch_sizes:to(T.int64), sorted_indices = sorted_indices,
    unsorted_indices = unsorted_indices }, PackedSequence)
end

-- The options of the rnn utilities: nil, PyTorch's first keyword argument
-- positionally (a boolean: batch_first or enforce_sorted), or a table of
-- them, checked by the one checker; flags by util.check_flags.
local function rnn_opts(fname, opts, argn, allowed)
  if opts == nil then return {} end
  if type(opts) == "boolean" then return { [allowed[1]] = opts } end
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    rfail(fname, ("bad argument #%d '%s' (boolean or table expected, got %s)"):format(argn, allowed[1], typename(opts)))
  end
  T._check_opts("nn.utils.rnn." .. fname, opts, allowed)
  util.check_flags(rfail, fname, opts)
  if opts.padding_value ~= nil and type(opts.padding_value) ~= "number" then
    rfail(fname, "bad option 'padding_value' (number expected, got " .. typename(opts.padding_value) .. ")")
  end
  return opts
end

local function seq_list(fname, seqs)
  if type(seqs) ~= "table" or is_t(seqs) then
    rfail(fname, "bad argument #1 'sequences' (list of tensors expected, got " .. typename(seqs) .. ")")
  end
  if #seqs == 0 then rfail(fname, "received an empty list of sequences") end
  for i, t in ipairs(seqs) do
    if not is_t(t) then rfail(fname, ("bad argument #1 'sequences' (entry %d is a %s, not a tensor)"):format(i, typename(t))) end
    if t:dim() < 1 then rfail(fname, ("sequence %d is a zero-dim tensor"):format(i)) end
  end
  return seqs
end

-- pad_sequence(sequences [, {batch_first = false, padding_value = 0}]):
-- (L_i, *) tensors into (L_max, B, *) (or (B, L_max, *))
function rnn.pad_sequence(sequences, opts)
  local fname = "pad_sequence"
  seq_list(fname, sequences)
  opts = rnn_opts(fname, opts, 2, { "batch_first", "padding_value" })
  local trail = { tunpack(sequences[1].shape, 2) }
  local Lmax = 0
  for i, t in ipairs(sequences) do
    local s = t.shape
    if #s ~= #trail + 1 then rfail(fname, ("sequence %d has %d dims, the first %d"):format(i, #s, #trail + 1)) end
    for k = 2, #s do
      if s[k] ~= trail[k - 1] then
        rfail(fname, ("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d"):format(
          trail[k - 1], s[k], k - 1))
      end
    end
    if s[1] > Lmax then Lmax = s[1] end
  end
  local pv = opts.padding_value or 0
  local cols = {}
  for i, t in ipairs(sequences) do
    local L = t.shape[1]
    local c = t
    if L < Lmax then
      local shape = { Lmax - L }
      for k = 1, #trail do shape[k + 1] = trail[k] end
      c = T.cat({ t, T.full(shape, pv, { dtype = t.dtype }) }, 1)
    end
    cols[i] = c
  end
  return T.stack(cols, opts.batch_first and 1 or 2)
end

local function lengths_table(fname, lengths)
  if is_t(lengths) then
    if lengths:dim() ~= 1 then rfail(fname, "lengths must be a 1-D tensor or a list of integers") end
    return lengths:to(T.int64):totable()
  end
  if type(lengths) ~= "table" then rfail(fname, "bad argument #2 'lengths' (tensor or list expected, got " .. typename(lengths) .. ")") end
  local out = {}
  for i, v in ipairs(lengths) do
    out[i] = type(v) == "number" and tointeger(v)
    if not out[i] then rfail(fname, ("bad argument #2 'lengths' (entry %d is not an integer)"):format(i)) end
  end
  return out
end

-- pack_padded_sequence(input, lengths [, {batch_first = false, enforce_sorted = true}])
function rnn.pack_padded_sequence(input, lengths, opts)
  local fname = "pack_padded_sequence"
  if not is_t(input) then rfail(fname, "bad argument #1 'input' (Tensor expected, got " .. typename(input) .. ")") end
  opts = rnn_opts(fname, opts, 3, { "batch_first", "enforce_sorted" })
  local lens = lengths_table(fname, lengths)
  local enforce = opts.enforce_sorted ~= false
  if input:dim() < 2 then rfail(fname, "input must have at least 2 dims (time and batch), got " .. input:dim()) end
  local x = opts.batch_first and input:transpose(1, 2) or input
  local Tn, B = x:size(1), x:size(2)
  if #lens ~= B then
    rfail(fname, ("Expected `len(lengths)` to be equal to batch_size, but got %d (batch_size=%d)"):format(#lens, B))
  end
  local sorted_indices, unsorted_indices
  if enforce then
    for i = 2, #lens do
      if lens[i] > lens[i - 1] then
        rfail(fname, "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass " ..
          "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do " ..
          "not need ONNX exportability.")
      end
    end
  else
    local lt = T.tensor(lens, { dtype = T.int64 })
    sorted_indices = T.argsort(lt, { descending = true, stable = true })
    unsorted_indices = T.argsort(sorted_indices)
    x = x:index_select(2, sorted_indices)
    local sl = {}
    for i, k in ipairs(sorted_indices:totable()) do sl[i] = lens[k] end
    lens = sl
  end
  for i = 1, #lens do
    if lens[i] <= 0 then
      rfail(fname, "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    end
  end
  if B > 0 and lens[1] > Tn then
    rfail(fname, ("the longest length (%d) exceeds the input's time steps (%d)"):format(lens[1], Tn))
  end
  local Lmax = B > 0 and lens[1] or 0
  local bs, rows = {}, {}
  local b = B
  for t = 1, Lmax do
    while b > 0 and lens[b] < t do b = b - 1 end
    bs[t] = b
    rows[t] = x:select(1, t):narrow(1, 1, b)
  end
  local data
  if Lmax == 0 then
    local shape = { 0 }
    for k = 3, x:dim() do shape[k - 1] = x:size(k) end
    data = T.zeros(shape, { dtype = x.dtype })
  else data = T.cat(rows, 1) end
  return setmetatable({ data = data, batch_sizes = T.tensor(bs, { dtype = T.int64 }), sorted_indices = sorted_indices,
    unsorted_indices = unsorted_indices }, PackedSequence)
end

-- pad_packed_sequence(packed [, {batch_first = false, padding_value = 0, total_length}])
--   -> padded (T, B, *) or (B, T, *), lengths (int64, the caller's order)
function rnn.pad_packed_sequence(sequence, opts)
  local fname = "pad_packed_sequence"
  if getmetatable(sequence) ~= PackedSequence then
    rfail(fname, "bad argument #1 'sequence' (PackedSequence expected, got " .. typename(sequence) .. ")")
  end
  opts = rnn_opts(fname, opts, 2, { "batch_first", "padding_value", "total_length" })
  local bs = sequence.batch_sizes:totable()
  local data = sequence.data
  local Tn = #bs
  local B = Tn > 0 and bs[1] or 0
  local total = opts.total_length
  if total ~= nil then
    if type(total) ~= "number" or total ~= math.floor(total) or total == math.huge then
      rfail(fname, "total_length must be an integer, got " .. (type(total) == "number" and tostring(total) or typename(total)))
    end
    if total < Tn then
      rfail(fname, ("Expected total_length to be at least the length of the longest sequence in input, but got " ..
        "total_length=%d and max sequence length being %d"):format(total, Tn))
    end
  else total = Tn end
  local pv = opts.padding_value or 0
  local trail = { tunpack(data.shape, 2) }
  local function fill(n)
    local shape = { n }
    for k = 1, #trail do shape[k + 1] = trail[k] end
    return T.full(shape, pv, { dtype = data.dtype })
  end
  local steps, off = {}, 1
  for t = 1, Tn do
    local r = data:narrow(1, off, bs[t])
    off = off + bs[t]
    if bs[t] < B then r = T.cat({ r, fill(B - bs[t]) }, 1) end
    steps[t] = r
  end
  for t = Tn + 1, total do steps[t] = fill(B) end
  local padded
  if total == 0 then
    local shape = { 0, B }
    for k = 1, #trail do shape[k + 2] = trail[k] end
    padded = T.zeros(shape, { dtype = data.dtype })
  else padded = T.stack(steps, 1) end
  -- lengths: how many steps each sorted sequence runs
  local lens = {}
  for b = 1, B do
    local n = 0
    for t = 1, Tn do if bs[t] >= b then n = t end end
    lens[b] = n
  end
  local lengths = T.tensor(lens, { dtype = T.int64 })
  if sequence.unsorted_indices ~= nil then
    padded = padded:index_select(2, sequence.unsorted_indices)
    lengths = lengths:index_select(1, sequence.unsorted_indices)
  end
  if opts.batch_first then padded = padded:transpose(1, 2) end
  return padded, lengths
end

-- pack_sequence(sequences [, {enforce_sorted = true}])
function rnn.pack_sequence(sequences, opts)
  local fname = "pack_sequence"
  seq_list(fname, sequences)
  opts = rnn_opts(fname, opts, 2, { "enforce_sorted" })
  local lens = {}
  for i, t in ipairs(sequences) do lens[i] = t.shape[1] end
  local ok, res = pcall(rnn.pack_padded_sequence, rnn.pad_sequence(sequences), lens,
    { enforce_sorted = opts.enforce_sorted })
  if not ok then error((tostring(res):gsub("pack_padded_sequence: ", "pack_sequence: ", 1)), 0) end
  return res
end

-- unpad_sequence(padded, lengths [, {batch_first = false}]): the list of
-- sequences padded[:lengths[b], b] (views; the inverse of pad_sequence)
function rnn.unpad_sequence(padded, lengths, opts)
  local fname = "unpad_sequence"
  if not is_t(padded) then rfail(fname, "bad argument #1 'padded_sequences' (Tensor expected, got " .. typename(padded) .. ")") end
  opts = rnn_opts(fname, opts, 3, { "batch_first" })
  local lens = lengths_table(fname, lengths)
  if padded:dim() < 2 then rfail(fname, "padded_sequences must have at least 2 dims, got " .. padded:dim()) end
  local x = opts.batch_first and padded or padded:transpose(1, 2)
  if #lens ~= x:size(1) then
    rfail(fname, ("expected %d lengths (one per sequence), got %d"):format(x:size(1), #lens))
  end
  local out = {}
  for b = 1, #lens do
    if lens[b] < 0 or lens[b] > x:size(2) then
      rfail(fname, ("length %d of sequence %d is outside 0..%d"):format(lens[b], b, x:size(2)))
    end
    out[b] = x:select(1, b):narrow(1, 1, lens[b])
  end
  return out
end

-- unpack_sequence(packed): the list of its sequences, in the caller's order
function rnn.unpack_sequence(packed)
  if getmetatable(packed) ~= PackedSequence then
    rfail("unpack_sequence", "bad argument #1 'packed_sequences' (PackedSequence expected, got " .. typename(packed) .. ")")
  end
  local padded, lengths = rnn.pad_packed_sequence(packed, { batch_first = true })
  return rnn.unpad_sequence(padded, lengths, { batch_first = true })
end

return utils
