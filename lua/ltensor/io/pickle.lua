-- ltensor.io.pickle: a restricted unpickler and a minimal pickler, for
-- PyTorch checkpoints (io/pt.lua).
--
-- The unpickler accepts exactly the opcodes of PyTorch's weights_only=True
-- unpickler (torch/_weights_only_unpickler.py, 2.x: protocol 2 plus BINFLOAT)
-- and never calls anything it is not given: GLOBAL asks the caller's
-- `find_global(module, name)` for a value (the caller refuses what is not
-- allowed), REDUCE and NEWOBJ call only the `call`/`new` function of such a
-- value, BINPERSID asks `persistent_load(pid)`.  Anything else (another
-- opcode, a stack underflow, a memo index never stored, a missing STOP) is
-- an error through the caller's `fail`.  It runs in one loop over the bytes
-- (no recursion), so input size bounds its time and memory.
--
-- Python values in Lua:
--   None -> nil (a dict entry whose value is None is absent; a list or tuple
--     holding None gets a hole and records its length, see seq_len)
--   bool, str (UTF-8 bytes), bytes -> boolean, string
--   int -> integer (beyond +-2^53 only where Lua has 64-bit integers; beyond
--     int64 refused), float -> number
--   list -> a Lua array (1-based); tuple -> a Lua array marked as a tuple
--     (metatable "ltensor.tuple", is_tuple); dict -> a table with the same
--     keys; collections.OrderedDict -> the ordered table of nn's state_dict
--     (pairs visits keys in order; getmetatable(t).__keys lists them)
local compat = require "ltensor.compat"
local math = compat.math

local P = {}

local NONE = setmetatable({}, { __name = "pickle.None" })
local MARK = setmetatable({}, { __name = "pickle.MARK" })

local TUPLE_MT_NAME, LIST_MT_NAME = "ltensor.tuple", "ltensor.list"

-- a sequence's metatable: its kind and length (n counts trailing holes)
local function seq_mt(name, n)
  local mt = { __name = name, n = n }
  mt.__len = function() return mt.n end
  return mt
end

function P.tuple(t, n)
  return setmetatable(t, seq_mt(TUPLE_MT_NAME, n or #t))
end
function P.is_tuple(t)
  local mt = type(t) == "table" and getmetatable(t)
  return type(mt) == "table" and mt.__name == TUPLE_MT_NAME
end
-- length of a loaded list or tuple (holes where Python had None count)
function P.seq_len(t)
  local mt = getmetatable(t)
  if type(mt) == "table" and (mt.__name == TUPLE_MT_NAME or mt.__name == LIST_MT_NAME) then return mt.n end
  return compat.rawlen(t)
end

local function u32(s, pos)
  local a, b, c, d = s:byte(pos, pos + 3)
  return a + b * 256 + c * 65536 + d * 16777216
end

-- LONG1: n bytes, little-endian two's complement
local TWO53 = 9007199254740992
local function decode_long(s, pos, n, fail)
  if n == 0 then return 0 end
  -- drop sign-extension bytes above the 8 that int64 holds
  local neg = s:byte(pos + n - 1) >= 128
  while n > 8 do
    local top = s:byte(pos + n - 1)
    if top ~= (neg and 255 or 0) or ((s:byte(pos + n - 2) >= 128) ~= neg) then
      fail("an integer of %d bytes is outside int64", n)
    end
    n = n - 1
  end
  if compat.has_integers then
    -- integer arithmetic wraps modulo 2^64: 8 bytes give the int64 directly
    local v, p = math.tointeger(0), math.tointeger(1)
    for k = 0, n - 1 do
      v = v + s:byte(pos + k) * p
      p = p * 256
    end
    if neg and n < 8 then v = v - p end
    return v
  end
  -- doubles: exact while the magnitude stays within 2^53
  local v, p = 0, 1
  for k = 0, n - 1 do
    local b = s:byte(pos + k)
    if neg then b = 255 - b end
    v = v + b * p
    p = p * 256
  end
  if neg then v = -v - 1 end
  if v > TWO53 or v < -TWO53 then
    fail("an integer beyond 2^53 (%d bytes) cannot be represented exactly on %s", n, _VERSION)
  end
  return v
end

-- P.load(s, env) -> value.  env: fail(fmt, ...) (raises), find_global(module,
-- name) -> value, persistent_load(pid) -> value, ordered(keys, map) -> table.
-- Callables are tables {call = fn(args, argc) [, new = fn(args, argc)]}.
function P.load(s, env)
  local fail = env.fail
  local len = #s
  local pos = 1
  local stack, sp = {}, 0        -- values; NONE stands for None, MARK for a mark
  local memo = {}
  local kind = {}                -- container -> "list" | "dict" | "odict" | "tuple" | "set"
  local count = {}               -- list/tuple -> length; odict -> keys
  local seen = {}                -- odict -> set of its keys
  local function need(n)
    if pos + n - 1 > len then fail("the pickle is truncated (no STOP opcode)") end
  end
  local function push(v) sp = sp + 1 stack[sp] = v end
  local function pop()
    if sp == 0 then fail("the pickle's stack underflows") end
    local v = stack[sp]
    if v == MARK then fail("the pickle pops a mark as a value") end
    stack[sp] = nil
    sp = sp - 1
    return v
  end
  local function top()
    if sp == 0 or stack[sp] == MARK then fail("the pickle's stack underflows") end
    return stack[sp]
  end
  -- the values above the last mark, as a list (NONE kept), mark removed
  local function pop_mark()
    local m = sp
    while m > 0 and stack[m] ~= MARK do m = m - 1 end
    if m == 0 then fail("the pickle has no mark to pop") end
    local items, n = {}, sp - m
    for i = 1, n do items[i] = stack[m + i] stack[m + i] = nil end
    stack[m] = nil
    sp = m - 1
    return items, n
  end
  local function new_tuple(items, n)
    for i = 1, n do if items[i] == NONE then items[i] = nil end end
    kind[items], count[items] = "tuple", n
    return items
  end
  local function list_add(l, v)
    if kind[l] ~= "list" then fail("the pickle appends to a %s, not a list", kind[l] or type(l)) end
    local n = count[l] + 1
    count[l] = n
    if v ~= NONE then l[n] = v end
  end
  local function set_item(d, k, v)
    local kd = kind[d]
    if kd ~= "dict" and kd ~= "odict" then fail("the pickle sets an item of a %s, not a dict", kd or type(d)) end
    if k == NONE or k ~= k then fail("the pickle has a dict key None or NaN, which Lua tables cannot hold") end
    if kd == "odict" and not seen[d][k] then
      local keys = count[d]
      keys[#keys + 1] = k
      seen[d][k] = true
    end
    if v == NONE then rawset(d, k, nil) else rawset(d, k, v) end
  end
  local function args_of(v, what)
    if kind[v] ~= "tuple" then fail("the pickle calls %s with arguments that are not a tuple", what) end
    return v, count[v]
  end
  local function callable(f, field)
    if type(f) ~= "table" or kind[f] or type(f[field]) ~= "function" then
      fail("the pickle calls a value that is not an allowed function")
    end
    return f
  end
  local function readline()
    local e = s:find("\n", pos, true)
    if not e then fail("the pickle is truncated (no STOP opcode)") end
    local line = s:sub(pos, e - 1)
    pos = e + 1
    return line
  end

  while true do
    need(1)
    local op = s:sub(pos, pos)
    pos = pos + 1
    if op == "\128" then                 -- PROTO
      need(1) pos = pos + 1
    elseif op == "." then                -- STOP
      local v = pop()
      -- containers take their final form (kinds were tracked on the side)
      for c, k in pairs(kind) do
        if k == "odict" then env.ordered(count[c], c)
        elseif k == "tuple" then setmetatable(c, seq_mt(TUPLE_MT_NAME, count[c]))
        elseif k == "list" and (count[c] ~= compat.rawlen(c) or count[c] == 0) then setmetatable(c, seq_mt(LIST_MT_NAME, count[c]))
        end
      end
      if v == NONE then return nil end
      return v
    elseif op == "c" then                -- GLOBAL
      local module = readline()
      local name = readline()
      if module == "collections" and name == "OrderedDict" then
        push({ call = function(_, n)
          if n ~= 0 then fail("the pickle builds an OrderedDict from arguments, which is not supported") end
          local d = {}
          kind[d], count[d], seen[d] = "odict", {}, {}
          return d
        end })
      else
        push(env.find_global(module, name))
      end
    elseif op == "R" then                -- REDUCE
      local args, n = args_of(pop(), "a function")
      local f = callable(top(), "call")
      local v = f.call(args, n)
      stack[sp] = v == nil and NONE or v
    elseif op == "\129" then             -- NEWOBJ
      local args, n = args_of(pop(), "a class")
      local cls = callable(pop(), "new")
      push(cls.new(args, n))
    elseif op == "b" then                -- BUILD
      local state = pop()
      local inst = top()
      -- an OrderedDict's attributes (a state_dict's _metadata): not kept
      if kind[inst] ~= "odict" then
        fail("the pickle sets the state of a %s; only OrderedDict state is accepted",
          kind[inst] or (type(inst) == "userdata" and "tensor" or type(inst)))
      end
    elseif op == "a" then                -- APPEND
      local v = pop()
      list_add(top(), v)
    elseif op == "e" then                -- APPENDS
      local items, n = pop_mark()
      local l = top()
      for i = 1, n do list_add(l, items[i]) end
      if kind[l] ~= "list" then fail("the pickle appends to a %s, not a list", kind[l] or type(l)) end
    elseif op == "s" then                -- SETITEM
      local v = pop()
      local k = pop()
      set_item(top(), k, v)
    elseif op == "u" then                -- SETITEMS
      local items, n = pop_mark()
      if n % 2 == 1 then fail("the pickle's SETITEMS has an odd number of values") end
      local d = top()
      for i = 1, n, 2 do set_item(d, items[i], items[i + 1]) end
      if kind[d] ~= "dict" and kind[d] ~= "odict" then
        fail("the pickle sets an item of a %s, not a dict", kind[d] or type(d))
      end
    elseif op == "(" then                -- MARK
      push(MARK)
    elseif op == "t" then                -- TUPLE
      push(new_tuple(pop_mark()))
    elseif op == "\133" then             -- TUPLE1
      local a = pop()
      push(new_tuple({ a }, 1))
    elseif op == "\134" then             -- TUPLE2
      local b = pop()
      local a = pop()
      push(new_tuple({ a, b }, 2))
    elseif op == "\135" then             -- TUPLE3
      local c = pop()
      local b = pop()
      local a = pop()
      push(new_tuple({ a, b, c }, 3))
    elseif op == "N" then push(NONE)     -- NONE
    elseif op == "\137" then push(false) -- NEWFALSE
    elseif op == "\136" then push(true)  -- NEWTRUE
    elseif op == ")" then push(new_tuple({}, 0))   -- EMPTY_TUPLE
    elseif op == "]" then                -- EMPTY_LIST
      local l = {}
      kind[l], count[l] = "list", 0
      push(l)
    elseif op == "}" then                -- EMPTY_DICT
      local d = {}
      kind[d] = "dict"
      push(d)
    elseif op == "\143" then             -- EMPTY_SET (nothing can add to it)
      local st = {}
      kind[st] = "set"
      push(st)
    elseif op == "J" then                -- BININT
      need(4)
      local v = u32(s, pos)
      if v >= 2147483648 then v = v - 4294967296 end
      push(v) pos = pos + 4
    elseif op == "K" then                -- BININT1
      need(1) push(s:byte(pos)) pos = pos + 1
    elseif op == "M" then                -- BININT2
      need(2) push(s:byte(pos) + s:byte(pos + 1) * 256) pos = pos + 2
    elseif op == "\138" then             -- LONG1
      need(1)
      local n = s:byte(pos)
      pos = pos + 1
      need(n)
      push(decode_long(s, pos, n, fail)) pos = pos + n
    elseif op == "G" then                -- BINFLOAT (big-endian double)
      need(8)
      push((compat.sunpack(">d", s, pos))) pos = pos + 8
    elseif op == "X" then                -- BINUNICODE
      need(4)
      local n = u32(s, pos)
      pos = pos + 4
      need(n)
      push(s:sub(pos, pos + n - 1)) pos = pos + n
    elseif op == "U" then                -- SHORT_BINSTRING
      need(1)
      local n = s:byte(pos)
      pos = pos + 1
      need(n)
      push(s:sub(pos, pos + n - 1)) pos = pos + n
    elseif op == "Q" then                -- BINPERSID
      local pid = pop()
      if kind[pid] ~= "tuple" then fail("the pickle has a persistent id that is not a tuple") end
      push(env.persistent_load(pid, count[pid]))
    elseif op == "h" or op == "j" then   -- BINGET, LONG_BINGET
      local n = op == "h" and 1 or 4
      need(n)
      local i = n == 1 and s:byte(pos) or u32(s, pos)
      pos = pos + n
      local v = memo[i]
      if v == nil then fail("the pickle reads memo entry %d, which was never stored", i) end
      push(v)
    elseif op == "q" or op == "r" then   -- BINPUT, LONG_BINPUT
      local n = op == "q" and 1 or 4
      need(n)
      local i = n == 1 and s:byte(pos) or u32(s, pos)
      pos = pos + n
      memo[i] = top()
    else
      fail("the pickle uses opcode %s (0x%02x) at byte %d, which is not allowed",
        ("%q"):format(op), op:byte(), pos - 2)
    end
  end
end

-- ---------------------------------------------------------------------------
-- pickling (protocol 2, only the opcodes the unpickler above accepts)

local char = string.char
local function le32(v)
  local a = v % 256; v = (v - a) / 256
  local b = v % 256; v = (v - b) / 256
  local c = v % 256; v = (v - c) / 256
  return char(a, b, c, v % 256)
end

-- int64 as LONG1's minimal two's complement bytes
local function encode_long(v)
  local bytes = {}
  if compat.has_integers then
    v = math.tointeger(v)
    repeat
      local b = v % 256   -- floor modulo: also right for negative integers
      bytes[#bytes + 1] = b
      v = compat.idiv(v - b, 256)
    until (v == 0 and b < 128) or (v == -1 and b >= 128)
  else
    repeat
      local b = v % 256
      bytes[#bytes + 1] = b
      v = (v - b) / 256
    until (v == 0 and b < 128) or (v == -1 and b >= 128)
  end
  return char((compat.unpack or table.unpack)(bytes))
end

-- n when t is saved as a list: a loaded list (its recorded length), or a
-- table whose keys are exactly 1..n (n > 0); nil for a dict
local function array_len(t)
  local n, cnt = 0, 0
  for k in next, t do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    cnt = cnt + 1
    if k > n then n = k end
  end
  local mt = getmetatable(t)
  if type(mt) == "table" and mt.__name == LIST_MT_NAME then return mt.n >= n and mt.n or nil end
  if cnt == 0 or cnt ~= n then return nil end
  return n
end

-- P.dump(v, env) -> string.  env: fail(fmt, ...); global(module, name)
-- writes a GLOBAL (memoized); tensor(w, t) writes a tensor through w (the
-- writer below: w.op(s), w.global(m, n), w.value(v)); order(t) -> keys of
-- an ordered table or nil; is_ordered(t).
function P.dump(root, env)
  local fail = env.fail
  local out = {}
  local memo, nmemo = {}, 0
  local active = {}
  local w = {}
  local function put(s) out[#out + 1] = s end
  local function memoize(key)
    if nmemo < 256 then put("q" .. char(nmemo)) else put("r" .. le32(nmemo)) end
    memo[key] = nmemo
    nmemo = nmemo + 1
  end
  local function get(i)
    if i < 256 then put("h" .. char(i)) else put("j" .. le32(i)) end
  end
  function w.op(s) put(s) end
  function w.global(module, name)
    local key = "global:" .. module .. "." .. name
    if memo[key] then get(memo[key]) return end
    put("c" .. module .. "\n" .. name .. "\n")
    memoize(key)
  end
  function w.string(s)
    put("X" .. le32(#s) .. s)
  end
  local value
  function w.value(v) value(v) end
  function w.tuple(items, n)
    put("(")
    for i = 1, n or #items do value(items[i]) end
    put("t")
  end
  local function int(v)
    if v >= 0 and v < 256 then put("K" .. char(v))
    elseif v >= 0 and v < 65536 then put("M" .. char(v % 256, (v - v % 256) / 256))
    elseif v >= -2147483648 and v < 2147483648 then put("J" .. le32(v % 4294967296))
    else
      local b = encode_long(v)
      put("\138" .. char(#b) .. b)
    end
  end
  local function sorted_keys(t)
    local keys = {}
    for k in next, t do
      local tk = type(k)
      if tk ~= "string" and tk ~= "number" and tk ~= "boolean" then
        fail("cannot save a table key of type %s (keys must be strings, numbers or booleans)", tk)
      end
      keys[#keys + 1] = k
    end
    table.sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      if ta == "boolean" then return (not a) and b end
      return a < b
    end)
    return keys
  end
  local function items(t, keys)
    local i = 0
    while i < #keys do
      put("(")
      for j = i + 1, math.min(i + 1000, #keys) do   -- batches, as Python's pickler
        value(keys[j])
        value(rawget(t, keys[j]))
      end
      put("u")
      i = i + 1000
    end
  end
  function value(v)
    local tv = type(v)
    if v == nil then put("N")
    elseif tv == "boolean" then put(v and "\136" or "\137")
    elseif tv == "number" then
      if math.type(v) == "integer" and (compat.has_integers or (v <= TWO53 and v >= -TWO53)) then int(v)
      else put("G" .. compat.spack(">d", v)) end
    elseif tv == "string" then w.string(v)
    elseif memo[v] then get(memo[v])
    elseif env.is_tensor(v) then
      env.tensor(w, v)
      memoize(v)
    elseif tv == "table" then
      if active[v] then fail("cannot save a table that contains itself") end
      active[v] = true
      local mt = getmetatable(v)
      local keys = env.order(v)
      local n = P.seq_len(v)
      if P.is_tuple(v) then
        w.tuple(v, n)
      elseif keys then
        w.global("collections", "OrderedDict")
        put(")R")
        memoize(v)
        items(v, keys)
      elseif mt ~= nil and not (type(mt) == "table" and mt.__name == LIST_MT_NAME) then
        fail("cannot save a %s (only tensors, tables, numbers, strings and booleans)",
          type(mt) == "table" and mt.__name or "table with a metatable")
      elseif not env.as_dict[v] and array_len(v) then
        n = array_len(v)
        put("]")
        memoize(v)
        put("(")
        for i = 1, n do value(rawget(v, i)) end
        put("e")
      else
        put("}")
        memoize(v)
        items(v, sorted_keys(v))
      end
      active[v] = nil
    else
      fail("cannot save a %s (only tensors, tables, numbers, strings and booleans)", tv)
    end
  end
  put("\128\2")
  value(root)
  put(".")
  return table.concat(out)
end

return P
