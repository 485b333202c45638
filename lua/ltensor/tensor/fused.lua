-- ltensor.tensor.fused: BLAS-style fused ops (addmm, addmv, addr, baddbmm,
-- addbmm), tensordot and einsum.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local select, type, mtype = select, type, math.type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local ck = C.ck
local normdim = C.normdim
local named, def = C.named, C.def
local shape_str, common = C.shape_str, C.common
local into = C.into
---------------------------------------------------------------------------
-- BLAS-style fused ops: beta * input + alpha * (product)
---------------------------------------------------------------------------
local function fused(fname, product, check)
  return function(input, a, b, opts, ...)
    check_t(fname, 1, input)
    check_t(fname, 2, a)
    check_t(fname, 3, b)
    if not is_opts(opts) then
      -- positional beta, alpha are not PyTorch's keyword-only form; accept options only
      opts = is_opts((...)) and (...) or {}
    end
    ck(fname, opts, { "beta", "alpha" })
    local beta, alpha = opts.beta, opts.alpha
    if beta == nil then beta = 1 end
    if alpha == nil then alpha = 1 end
    if check then check(a, b) end
    local p = product(a, b)
    if alpha ~= 1 then p = p * alpha end
    local ps = p.shape
    local ok, msg = pcall(function() return input:expand(ps) end)
    if not ok or #input.shape > #ps then
      fail(fname, ("The expanded size of the tensor must match: input of shape %s cannot be broadcast to %s"):format(
        shape_str(input.shape), shape_str(ps)))
    end
    if beta == 0 then
      -- PyTorch ignores input (NaN and inf in it do not propagate)
      local dt = T.promote_types(p.dtype, input.dtype)
      return p:to(dt) + T.zeros_like(input, { dtype = dt }) * 0
    end
    if beta ~= 1 then input = input * beta end
    local r = input + p
    if #r.shape ~= #ps then r = r:expand(ps) end
    return r
  end
end
local function need_dim(fname, t, n, what)
  if t:dim() ~= n then fail(fname, ("%s must be a %dD tensor (got %dD)"):format(what, n, t:dim())) end
end
def("addmm", fused("addmm", function(a, b) return T.mm(a, b) end, function(a, b)
  need_dim("addmm", a, 2, "mat1"); need_dim("addmm", b, 2, "mat2")
  if a:size(2) ~= b:size(1) then
    fail("addmm", ("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)"):format(a:size(1), a:size(2), b:size(1), b:size(2)))
  end
end))
def("addmv", fused("addmv", function(a, b) return T.mv(a, b) end, function(a, b)
  need_dim("addmv", a, 2, "mat"); need_dim("addmv", b, 1, "vec")
  if a:size(2) ~= b:size(1) then
    fail("addmv", ("size mismatch, got input (%d), mat (%dx%d), vec (%d)"):format(a:size(1), a:size(1), a:size(2), b:size(1)))
  end
end))
def("addr", fused("addr", function(a, b) return T.outer(a, b) end, function(a, b)
  need_dim("addr", a, 1, "vec1"); need_dim("addr", b, 1, "vec2")
end))
def("baddbmm", fused("baddbmm", function(a, b) return T.bmm(a, b) end, function(a, b)
  need_dim("baddbmm", a, 3, "batch1"); need_dim("baddbmm", b, 3, "batch2")
  if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
    fail("baddbmm", ("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."):format(
      a:size(1), a:size(3), b:size(1), b:size(2)))
  end
end))
def("addbmm", fused("addbmm", function(a, b) return T.sum(T.bmm(a, b), 1) end, function(a, b)
  need_dim("addbmm", a, 3, "batch1"); need_dim("addbmm", b, 3, "batch2")
  if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
    fail("addbmm", ("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."):format(
      a:size(1), a:size(3), b:size(1), b:size(2)))
  end
end))

---------------------------------------------------------------------------
-- tensordot and einsum: permute + reshape + mm/bmm
---------------------------------------------------------------------------

def("tensordot", function(a, b, dims, ...)
  check_t("tensordot", 1, a)
  check_t("tensordot", 2, b)
  if is_opts(dims) then dims = ck("tensordot", dims, { "dims" }).dims end
  if dims == nil then dims = 2 end
  local na, nb = a:dim(), b:dim()
  local da, db = {}, {}
  if mtype(dims) == "integer" then
    if dims < 0 then fail("tensordot", ("tensordot expects dims >= 0, but got dims=%d"):format(dims)) end
    if dims > na or dims > nb then
      fail("tensordot", ("tensordot expects dims < ndim_a or ndim_b, but got dims=%d"):format(dims))
    end
    for i = 1, dims do da[i] = na - dims + i; db[i] = i end
  elseif type(dims) == "table" then
    local x, y = dims[1], dims[2]
    if mtype(x) == "integer" then x = { x } end
    if mtype(y) == "integer" then y = { y } end
    if type(x) ~= "table" or type(y) ~= "table" then fail("tensordot", "dims must be an integer or a pair of dim lists") end
    if #x ~= #y then fail("tensordot", "both dimension lists should have same length") end
    for i = 1, #x do da[i] = normdim("tensordot", x[i], na); db[i] = normdim("tensordot", y[i], nb) end
  else
    fail("tensordot", "dims must be an integer or a pair of dim lists")
  end
  local sa, sb = a.shape, b.shape
  local ca, cb = {}, {}
  local k = 1
  for i = 1, #da do
    if ca[da[i]] or cb[db[i]] then fail("tensordot", "dims can not repeat") end
    -- a zero-dim operand has no dim to contract (normdim accepts 1 for it)
    if sa[da[i]] == nil or sb[db[i]] == nil then
      fail("tensordot", ("cannot contract dim %d of a %d-dim tensor with dim %d of a %d-dim tensor"):format(
        da[i], #sa, db[i], #sb))
    end
    ca[da[i]], cb[db[i]] = true, true
    if sa[da[i]] ~= sb[db[i]] then
      fail("tensordot", ("contracted dimensions need to match, but first has size %d in dim %d and second has size %d in dim %d"):format(
        sa[da[i]], da[i], sb[db[i]], db[i]))
    end
    k = k * sa[da[i]]
  end
  local pa, pb, outshape = {}, {}, {}
  local fa, fb = 1, 1
  for i = 1, na do if not ca[i] then pa[#pa + 1] = i; outshape[#outshape + 1] = sa[i]; fa = fa * sa[i] end end
  for i = 1, #da do pa[#pa + 1] = da[i] end
  for i = 1, #db do pb[#pb + 1] = db[i] end
  for i = 1, nb do if not cb[i] then pb[#pb + 1] = i; outshape[#outshape + 1] = sb[i]; fb = fb * sb[i] end end
  local ab = common("tensordot", { a, b })
  local A = (na > 0 and ab[1]:permute(pa) or ab[1]):reshape({ fa, k })
  local B = (nb > 0 and ab[2]:permute(pb) or ab[2]):reshape({ k, fb })
  return T.mm(A, B):reshape(outshape)
end)

-- einsum -------------------------------------------------------------------
local function einsum_parse(eq, nops)
  eq = eq:gsub("%s", "")
  local lhs, rhs = eq:match("^(.-)%->(.*)$")
  if not lhs then lhs = eq end
  local terms = {}
  for term in (lhs .. ","):gmatch("(.-),") do terms[#terms + 1] = term end
  if #terms < nops then fail("einsum", "more operands were provided than specified in the equation") end
  if #terms > nops then fail("einsum", "fewer operands were provided than were specified in the equation") end
  -- offset: where the term starts in the equation (error indices are PyTorch's: 0-based in the whole string)
  local function labels(term, what, offset)
    local list, ell = {}, false
    local i = 1
    while i <= #term do
      local c = term:sub(i, i)
      if c == "." then
        if term:sub(i, i + 2) ~= "..." then fail("einsum", ("invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]"):format(offset + i - 1)) end
        if ell then fail("einsum", ("found more than one ellipsis (\"...\") in %s"):format(what)) end
        ell = true
        list[#list + 1] = "..."
        i = i + 3
      elseif c:match("%a") then
        list[#list + 1] = c
        i = i + 1
      else
        fail("einsum", ("invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]"):format(offset + i - 1))
      end
    end
    return list, ell
  end
  local ins, at = {}, 0
  for k, term in ipairs(terms) do
    ins[k] = { labels(term, "operand " .. (k - 1), at) }
    at = at + #term + 1
  end
  local out
  if rhs then out = { labels(rhs, "the output", #lhs + 2) } end
  return ins, out
end

-- the contraction of two aligned operands (same rank; each dim size 1 or
-- the shared size) over the aligned dims in `sum`, through one bmm
local function sumproduct_pair(l, r, sum)
  -- as PyTorch's: with nothing to contract the pair is a broadcast product
  -- (types promote); a contraction is one bmm, which takes one dtype and
  -- no bool or (on the CPU) half operands
  if next(sum) == nil then return l * r end
  if l.dtype ~= r.dtype then
    fail("einsum", ("expected scalar type %s but found %s"):format(torch_dtype_name(l.dtype), torch_dtype_name(r.dtype)))
  end
  if l.dtype == T.bool or l.dtype == T.float16 then
    fail("einsum", ('"bmm" not implemented for \'%s\''):format(torch_dtype_name(l.dtype)))
  end
  local R = l:dim()
  local ls, rs = l.shape, r.shape
  local lro, lo, ro, sd = {}, {}, {}, {}
  local bsz, lsz, rsz, ksz = 1, 1, 1, 1
  for j = 1, R do
    if sum[j] then
      -- a summed dim present on one side only is summed there first
      if ls[j] ~= rs[j] then
        if ls[j] == 1 then r = r:sum(j, true); rs = r.shape
        elseif rs[j] == 1 then l = l:sum(j, true); ls = l.shape end
      end
      sd[#sd + 1] = j
      ksz = ksz * ls[j]
    elseif ls[j] ~= 1 and rs[j] ~= 1 then
      lro[#lro + 1] = j; bsz = bsz * ls[j]
    elseif rs[j] ~= 1 then
      ro[#ro + 1] = j; rsz = rsz * rs[j]
    else
      lo[#lo + 1] = j; lsz = lsz * ls[j]
    end
  end
  local pl, pr, order, shape = {}, {}, {}, {}
  for _, j in ipairs(lro) do pl[#pl + 1] = j; pr[#pr + 1] = j; order[#order + 1] = j; shape[#shape + 1] = ls[j] end
  for _, j in ipairs(lo) do pl[#pl + 1] = j; order[#order + 1] = j; shape[#shape + 1] = ls[j] end
  for _, j in ipairs(sd) do pl[#pl + 1] = j; pr[#pr + 1] = j end
  for _, j in ipairs(ro) do pr[#pr + 1] = j; order[#order + 1] = j; shape[#shape + 1] = rs[j] end
  -- dims absent from the product (l's ro dims and r's lo dims are size 1 there)
  for _, j in ipairs(ro) do pl[#pl + 1] = j end
  for _, j in ipairs(lo) do pr[#pr + 1] = j end
  for _, j in ipairs(sd) do order[#order + 1] = j; shape[#shape + 1] = 1 end
  local L3 = l:permute(pl):reshape({ bsz, lsz, ksz })
  local R3 = r:permute(pr):reshape({ bsz, ksz, rsz })
  local out = T.bmm(L3, R3):reshape(shape)
  local inv, identity = {}, true
  for i, j in ipairs(order) do inv[j] = i; if i ~= j then identity = false end end
  if identity then return out end
  return out:permute(inv)
end

-- The plan of an equation for operands of given ranks (cached: a loop that
-- calls einsum with the same equation pays for the parsing once).
local function einsum_plan(eq, ranks)
  local n = #ranks
  local ins, outspec = einsum_parse(eq, n)
  local ell = 0
  local opl, diag = {}, {}
  for k = 1, n do
    local nd = ranks[k]
    local labs, has_ell = ins[k][1], ins[k][2]
    local nlab = #labs - (has_ell and 1 or 0)
    if has_ell then
      if nd < nlab then
        fail("einsum", ("the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d"):format(nlab, nd, k - 1))
      end
    elseif nd ~= nlab then
      fail("einsum", ("the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d and no ellipsis was given"):format(nlab, nd, k - 1))
    end
    local e = nd - nlab
    if e > ell then ell = e end
    -- "..." expands to one entry per ellipsis dim: {"...", i} (i counted from the right)
    local dims = {}
    for _, l in ipairs(labs) do
      if l == "..." then for i = e, 1, -1 do dims[#dims + 1] = { "...", i } end
      else dims[#dims + 1] = l end
    end
    -- a label repeated within an operand: take that diagonal (it moves last)
    local steps = {}
    local again = true
    while again do
      again = false
      for p = 1, #dims do
        for q = p + 1, #dims do
          if type(dims[p]) == "string" and dims[p] == dims[q] then
            local l = dims[p]
            steps[#steps + 1] = { p, q, l }
            table.remove(dims, q); table.remove(dims, p)
            dims[#dims + 1] = l
            again = true
            break
          end
        end
        if again then break end
      end
    end
    diag[k] = steps
    opl[k] = dims
  end
  -- occurrences in the equation: the implicit output keeps labels seen once
  local count, seen_order = {}, {}
  for k = 1, n do
    for _, l in ipairs(ins[k][1]) do
      if l ~= "..." then
        if not count[l] then count[l] = 0; seen_order[#seen_order + 1] = l end
        count[l] = count[l] + 1
      end
    end
  end
  local out = {}
  if outspec then
    local seen = {}
    for _, l in ipairs(outspec[1]) do
      if l == "..." then
        for i = ell, 1, -1 do out[#out + 1] = { "...", i } end
      else
        if seen[l] then fail("einsum", ("output subscript %s appears more than once in the output"):format(l)) end
        if not count[l] then fail("einsum", ("output subscript %s does not appear in the equation for any input operand"):format(l)) end
        seen[l] = true
        out[#out + 1] = l
      end
    end
  else
    for i = ell, 1, -1 do out[#out + 1] = { "...", i } end
    local once = {}
    for _, l in ipairs(seen_order) do if count[l] == 1 then once[#once + 1] = l end end
    table.sort(once)
    for _, l in ipairs(once) do out[#out + 1] = l end
  end
  -- the aligned order: output dims first, then every other label / ellipsis dim
  local key = function(d) return type(d) == "table" and ("..." .. d[2]) or d end
  local pos, aligned = {}, {}
  for _, d in ipairs(out) do aligned[#aligned + 1] = d; pos[key(d)] = #aligned end
  local nout = #aligned
  for i = ell, 1, -1 do
    local kk = "..." .. i
    if not pos[kk] then aligned[#aligned + 1] = { "...", i }; pos[kk] = #aligned end
  end
  for _, l in ipairs(seen_order) do
    if not pos[l] then aligned[#aligned + 1] = l; pos[l] = #aligned end
  end
  local R = #aligned
  local last, users = {}, {}
  for k = 1, n do
    for _, d in ipairs(opl[k]) do
      local j = pos[key(d)]
      last[j] = k
      users[j] = (users[j] or 0) + 1
    end
  end
  -- per operand: permutation into aligned order, missing dims, dims summed at once
  local ops = {}
  for k = 1, n do
    local present, perm, missing, presum = {}, {}, {}, {}
    for i, d in ipairs(opl[k]) do present[pos[key(d)]] = i end
    local identity = true
    for j = 1, R do
      if present[j] then
        perm[#perm + 1] = present[j]
        if present[j] ~= #perm then identity = false end
      end
    end
    for j = 1, R do if not present[j] then missing[#missing + 1] = j end end
    for j = nout + 1, R do if present[j] and users[j] == 1 then presum[#presum + 1] = j end end
    ops[k] = { diag = diag[k], perm = (#perm > 0 and not identity) and perm or nil, missing = missing, presum = presum }
  end
  local pair_sum = {}
  for k = 2, n do
    local sum = {}
    for j = nout + 1, R do if (last[j] or 0) <= k then sum[j] = true end end
    pair_sum[k] = sum
  end
  local rest = {}
  for j = nout + 1, R do rest[#rest + 1] = j end
  return { n = n, R = R, nout = nout, aligned = aligned, ops = ops, pair_sum = pair_sum, rest = rest, ell = ell }
end

local plan_cache, plan_count = {}, 0
local function einsum(eq, ...)
  if type(eq) ~= "string" then fail("einsum", "bad argument #1 (equation string expected)") end
  local ops = { ... }
  if type(ops[1]) == "table" and not is_t(ops[1]) and select("#", ...) == 1 then ops = ops[1] end
  local n = #ops
  if n == 0 then fail("einsum", "must provide at least one operand") end
  local ranks = {}
  for i = 1, n do check_t("einsum", i + 1, ops[i]); ranks[i] = ops[i]:dim() end
  local ck = eq .. "|" .. table.concat(ranks, ",")
  local plan = plan_cache[ck]
  if not plan then
    plan = einsum_plan(eq, ranks)
    if plan_count >= 256 then plan_cache, plan_count = {}, 0 end
    plan_cache[ck] = plan
    plan_count = plan_count + 1
  end
  ops = { table.unpack(ops, 1, n) }   -- the caller's list stays as it was
  local R = plan.R
  local sizes = {}
  for k = 1, n do
    local t = ops[k]
    local op = plan.ops[k]
    for _, st in ipairs(op.diag) do
      local p, q = st[1], st[2]
      if t:size(p) ~= t:size(q) then
        fail("einsum", ("subscript %s is repeated for operand %d but the sizes don't match, %d != %d"):format(st[3], k - 1, t:size(p), t:size(q)))
      end
      t = T.diagonal(t, 0, p, q)
    end
    if op.perm then t = t:permute(op.perm) end
    for _, j in ipairs(op.missing) do t = t:unsqueeze(j) end
    local sh = t.shape
    for j = 1, R do
      local s = sh[j]
      if s ~= 1 then
        local have = sizes[j]
        if have and have ~= s then
          local d = plan.aligned[j]
          if type(d) == "table" then
            fail("einsum", ("dimension %d covered by ellipsis in operand %d has size %d which does not broadcast with previously seen ellipsis with size %d for the respective dimension")
              :format(plan.ell - d[2], k - 1, s, have))
          end
          fail("einsum", ("subscript %s has size %d for operand %d which does not broadcast with previously seen size %d"):format(d, s, k - 1, have))
        end
        sizes[j] = s
      end
    end
    local sum
    for _, j in ipairs(op.presum) do
      if sh[j] ~= 1 then sum = sum or {}; sum[#sum + 1] = j end
    end
    if sum then t = T.sum(t, sum, true) end
    ops[k] = t
  end
  local res = ops[1]
  for k = 2, n do res = sumproduct_pair(res, ops[k], plan.pair_sum[k]) end
  -- whatever remains beyond the output dims is summed away (or is size 1)
  local nout, rest = plan.nout, plan.rest
  if #rest > 0 then
    local sh = res.shape
    local all1 = true
    for _, j in ipairs(rest) do if sh[j] ~= 1 then all1 = false break end end
    if all1 then
      local keep = {}
      for j = 1, nout do keep[j] = sh[j] end
      res = res:reshape(keep)
    else
      res = T.sum(res, rest)
    end
  end
  if nout == 0 and res:dim() ~= 0 then res = res:reshape({}) end
  return res
end
T.einsum = named("einsum", einsum)
return true
