-- ltensor.optim.lbfgs: L-BFGS with the strong Wolfe line search.
local T = require "ltensor.core"
local B = require "ltensor.optim.base"
local math, table, set_grad = B.math, B.table, B.set_grad
local mtype, fail, is_t, typename = B.mtype, B.fail, B.is_t, B.typename
local new_optimizer = B.new_optimizer
local check_nonneg = B.check_nonneg
local check_lr = B.check_lr
local class = B.class
local LBFGS = class("LBFGS", function(c, params, opts)
  local o = new_optimizer(c, "LBFGS", params, opts, { lr = 1, max_iter = 20, max_eval = false,
    tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100, line_search_fn = false },
    function(fname, g)
      check_lr(fname, g)
      for _, k in ipairs({ "max_iter", "history_size" }) do
        if g[k] ~= nil and (mtype(g[k]) ~= "integer" or g[k] < 1) then
          fail(fname, "Invalid %s: expected a positive integer, got %s", k, tostring(g[k]))
        end
      end
      if g.max_eval ~= nil and g.max_eval ~= false and mtype(g.max_eval) ~= "integer" then
        fail(fname, "Invalid max_eval: expected an integer, got %s", tostring(g.max_eval))
      end
      check_nonneg(fname, g, "tolerance_grad", "tolerance_grad")
      check_nonneg(fname, g, "tolerance_change", "tolerance_change")
      local ls = g.line_search_fn
      if ls ~= nil and ls ~= false and ls ~= "strong_wolfe" then
        fail(fname, "only 'strong_wolfe' is supported (got line_search_fn = %s)", tostring(ls))
      end
    end)
  if #o.param_groups ~= 1 then fail("LBFGS", "LBFGS doesn't support per-parameter options (parameter groups)") end
  local g = o.param_groups[1]
  if not g.max_eval then g.max_eval = math.floor(g.max_iter * 5 / 4) end
  if not o.defaults.max_eval then o.defaults.max_eval = math.floor(o.defaults.max_iter * 5 / 4) end
  for _, p in ipairs(g.params) do
    if p.dtype ~= T.float32 and p.dtype ~= T.float64 then
      fail("LBFGS", "parameters of dtype %s are not supported (float32 and float64 are)", tostring(p.dtype))
    end
  end
  return o
end)

function LBFGS:add_param_group()
  fail("LBFGS", "LBFGS doesn't support per-parameter options (parameter groups)")
end

local function flat_grad(params)
  local views = {}
  for i, p in ipairs(params) do
    local g = p.grad
    if g == nil then views[i] = T.zeros({ p:numel() }, { dtype = p.dtype })
    else views[i] = g:reshape({ -1 }) end
  end
  if #views == 1 then return views[1]:clone() end
  return T.cat(views, 1)
end

local function add_flat(params, t, d)
  local off = 0
  for _, p in ipairs(params) do
    local n = p:numel()
    p:add_(d:narrow(1, off + 1, n):view(p.shape), { alpha = t })
    off = off + n
  end
end

local function absmax(x) return x:abs():max():item() end
local function dot(a, b) return T.dot(a, b):item() end

local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
  local xmin, xmax
  if lo then xmin, xmax = lo, hi
  elseif x1 <= x2 then xmin, xmax = x1, x2 else xmin, xmax = x2, x1 end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2sq = d1 * d1 - g1 * g2
  if d2sq >= 0 then
    local d2 = math.sqrt(d2sq)
    local min_pos
    if x1 <= x2 then min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2)) end
    return math.min(math.max(min_pos, xmin), xmax)
  end
  return (xmin + xmax) / 2
end

local function strong_wolfe(obj, x, t, d, f, g, gtd, c1, c2, tol_change, max_ls)
  c1, c2, tol_change, max_ls = c1 or 1e-4, c2 or 0.9, tol_change or 1e-9, max_ls or 25
  local d_norm = absmax(d)
  g = g:clone()
  local f_new, g_new = obj(x, t, d)
  local evals = 1
  local gtd_new = dot(g_new, d)
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local done, ls_iter = false, 0
  local br, br_f, br_g, br_gtd
  while ls_iter < max_ls do
    if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev) then
      br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    if math.abs(gtd_new) <= -c2 * gtd then
      br, br_f, br_g = { t }, { f_new }, { g_new }
      done = true
      break
    end
    if gtd_new >= 0 then
      br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    local min_step, max_step = t + 0.01 * (t - t_prev), t * 10
    local tmp = t
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
    t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
    f_new, g_new = obj(x, t, d)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
  end
  if ls_iter == max_ls then
    br, br_f, br_g = { 0, t }, { f, f_new }, { g, g_new }
    br_gtd = br_gtd or { gtd, gtd_new }
  end
  local insuf = false
  local low, high = 1, 2
  if not (br_f[1] <= br_f[#br_f]) then low, high = 2, 1 end
  while not done and ls_iter < max_ls do
    if math.abs(br[2] - br[1]) * d_norm < tol_change then break end
    t = cubic_interpolate(br[1], br_f[1], br_gtd[1], br[2], br_f[2], br_gtd[2])
    local bmax, bmin = math.max(br[1], br[2]), math.min(br[1], br[2])
    local eps = 0.1 * (bmax - bmin)
    if math.min(bmax - t, t - bmin) < eps then
      if insuf or t >= bmax or t <= bmin then
        if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - eps else t = bmin + eps end
        insuf = false
      else
        insuf = true
      end
    else
      insuf = false
    end
    f_new, g_new = obj(x, t, d)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
    if f_new > (f + c1 * t * gtd) or f_new >= br_f[low] then
      br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new:clone(), gtd_new
      if br_f[1] <= br_f[2] then low, high = 1, 2 else low, high = 2, 1 end
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (br[high] - br[low]) >= 0 then
        br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
      end
      br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new:clone(), gtd_new
    end
  end
  return br_f[low], br_g[low], br[low], evals
end

local function loss_number(fname, v)
  if is_t(v) then return v:item() end
  if type(v) == "number" then return v end
  fail(fname, "the closure must return the loss (a tensor or a number), got %s", typename(v))
end

function LBFGS:step(closure)
  local fname = "LBFGS.step"
  if type(closure) ~= "function" and not (getmetatable(closure) or {}).__call then
    fail(fname, "bad argument #1 'closure' (function expected, got %s): LBFGS needs a closure that "
      .. "re-evaluates the model and returns the loss", typename(closure))
  end
  local prev = set_grad(false)
  local ok, res = pcall(self._lbfgs_step, self, closure, fname)
  set_grad(prev)
  if not ok then error(res, 0) end
  return res
end

function LBFGS:_lbfgs_step(closure, fname)
  local function eval() return T.enable_grad(closure) end
  local g = self.param_groups[1]
  local params = g.params
  local lr, max_iter, max_eval = g.lr, g.max_iter, g.max_eval
  if not max_eval then max_eval = math.floor(max_iter * 5 / 4) end
  local tol_grad, tol_change, hist = g.tolerance_grad, g.tolerance_change, g.history_size
  local ls_fn = g.line_search_fn
  local p1 = params[1]
  local state = self.state[p1]
  if state == nil then state = { func_evals = 0, n_iter = 0 } self.state[p1] = state end

  local orig_loss = eval()
  local loss = loss_number(fname, orig_loss)
  local current_evals = 1
  state.func_evals = state.func_evals + 1
  local fg = flat_grad(params)
  local opt_cond = absmax(fg) <= tol_grad
  if opt_cond then return orig_loss end

  local d, t = state.d, state.t
  local old_dirs, old_stps, ro = state.old_dirs, state.old_stps, state.ro
  local H_diag, prev_fg, prev_loss = state.H_diag, state.prev_flat_grad, state.prev_loss
  local n_iter = 0
  while n_iter < max_iter do
    n_iter = n_iter + 1
    state.n_iter = state.n_iter + 1
    if state.n_iter == 1 then
      d = fg:neg()
      old_dirs, old_stps, ro = {}, {}, {}
      H_diag = 1
    else
      local y = fg - prev_fg
      local s = d * t
      local ys = dot(y, s)
      if ys > 1e-10 then
        if #old_dirs == hist then
          table.remove(old_dirs, 1) table.remove(old_stps, 1) table.remove(ro, 1)
        end
        old_dirs[#old_dirs + 1] = y
        old_stps[#old_stps + 1] = s
        ro[#ro + 1] = 1.0 / ys
        H_diag = ys / dot(y, y)
      end
      local num_old = #old_dirs
      local al = state.al or {}
      state.al = al
      local q = fg:neg()
      for i = num_old, 1, -1 do
        al[i] = dot(old_stps[i], q) * ro[i]
        q:add_(old_dirs[i], { alpha = -al[i] })
      end
      local r = q * H_diag
      d = r
      for i = 1, num_old do
        local be_i = dot(old_dirs[i], r) * ro[i]
        r:add_(old_stps[i], { alpha = al[i] - be_i })
      end
    end
    if prev_fg == nil then prev_fg = fg:clone() else prev_fg:copy_(fg) end
    prev_loss = loss
    if state.n_iter == 1 then
      t = math.min(1.0, 1.0 / fg:abs():sum():item()) * lr
    else
      t = lr
    end
    local gtd = dot(fg, d)
    if gtd > -tol_change then break end
    local ls_evals = 0
    if ls_fn then
      local x_init = {}
      for i, p in ipairs(params) do x_init[i] = p:clone() end
      local function obj(x, tt, dd)
        add_flat(params, tt, dd)
        local l = loss_number(fname, eval())
        local fgn = flat_grad(params)
        for i, p in ipairs(params) do p:copy_(x[i]) end
        return l, fgn
      end
      loss, fg, t, ls_evals = strong_wolfe(obj, x_init, t, d, loss, fg, gtd, nil, nil, nil, max_eval - current_evals)
      add_flat(params, t, d)
      opt_cond = absmax(fg) <= tol_grad
    else
      add_flat(params, t, d)
      if n_iter ~= max_iter then
        loss = loss_number(fname, eval())
        fg = flat_grad(params)
        opt_cond = absmax(fg) <= tol_grad
        ls_evals = 1
      end
    end
    current_evals = current_evals + ls_evals
    state.func_evals = state.func_evals + ls_evals
    if n_iter == max_iter then break end
    if current_evals >= max_eval then break end
    if opt_cond then break end
    if absmax(d * t) <= tol_change then break end
    if math.abs(loss - prev_loss) < tol_change then break end
  end
  state.d, state.t, state.old_dirs, state.old_stps, state.ro = d, t, old_dirs, old_stps, ro
  state.H_diag, state.prev_flat_grad, state.prev_loss = H_diag, prev_fg, prev_loss
  return orig_loss
end
return true
