-- spec/blas_none_cases.lua -- run by spec/blas_none_spec.lua once against the
-- OpenBLAS build and once against the BLAS=none build (LUA_CPATH picks the
-- library); writes a Lua table of results to the file named by arg[1]:
--   values[name]     = flat list of numbers, compared between the builds
--   invariants[name] = a residual computed in this build (must be small)
--   sets[name]       = complex numbers as flat (re, im) pairs whose order may
--                      differ (eigenvalues of a general matrix)
--   errors[name]     = an error message (or false when the call succeeded)
-- Inputs come from T.manual_seed, so both builds see the same matrices.
local T = require "ltensor"
local L = T.linalg

local values, invariants, errors, sets = {}, {}, {}, {}

local function flat(x)
  x = x:contiguous():reshape({ -1 })
  if x.dtype == T.complex64 or x.dtype == T.complex128 then
    local out, re, im = {}, T.real(x):totable(), T.imag(x):totable()
    for i = 1, #re do out[2 * i - 1], out[2 * i] = re[i], im[i] end
    return out
  end
  return x:totable()
end

local function H(x) return x:conj():transpose(-2, -1) end
local function maxabs(x) return x:numel() == 0 and 0 or x:abs():max():item() end
local function eye_like(n, dt) return T.eye(n, { dtype = dt }) end

local DT = { float32 = T.float32, float64 = T.float64, complex64 = T.complex64, complex128 = T.complex128 }
local NAMES = { "float32", "float64", "complex64", "complex128" }

T.manual_seed(1234)
for _, name in ipairs(NAMES) do
  local dt = DT[name]
  local function randn(shape) return T.randn(shape, { dtype = dt }) end
  local function put(key, x) values[name .. " " .. key] = flat(x) end
  local invariants = setmetatable({}, { __newindex = function(_, k, v) invariants[name .. " " .. k] = v end })

  -- matmul: plain, transposed, strided (every other row/column), expanded,
  -- batched with broadcasting, matrix-vector, vector-matrix, blocking edges
  local A, B = randn({ 37, 53 }), randn({ 53, 29 })
  put("mm plain", A:matmul(B))
  put("mm transposed", randn({ 53, 37 }):t():matmul(randn({ 29, 53 }):t()))
  local As = randn({ 74, 106 }):narrow(1, 1, 73)
  local strided = As:unfold(1, 1, 2):squeeze(-1):unfold(2, 1, 2):squeeze(-1)   -- rows/cols 1, 3, 5, ...
  put("mm strided", strided:matmul(B:narrow(1, 1, strided.shape[2])))
  put("mm expanded", randn({ 1, 53 }):expand({ 7, 53 }):matmul(B))
  put("mm batched", randn({ 3, 1, 17, 19 }):matmul(randn({ 2, 19, 23 })))
  put("mv", A:matmul(randn({ 53 })))
  put("vm", randn({ 37 }):matmul(A))
  put("mv transposed", A:t():matmul(randn({ 37 })))
  put("mm blocks", randn({ 151, 300 }):matmul(randn({ 300, 170 })))
  put("mm k1", randn({ 9, 1 }):matmul(randn({ 1, 11 })))

  -- solve, inv, det through LU
  local n = 6
  local S = randn({ 2, n, n }) + eye_like(n, dt) * 4
  local Bs = randn({ 2, n, 3 })
  put("solve", L.solve(S, Bs))
  put("solve transposed", L.solve(S:transpose(-2, -1), Bs))
  put("inv", L.inv(S))
  put("det", L.det(S))
  local LU, piv = L.lu_factor(S)
  put("lu_factor", LU)
  put("lu pivots", piv)
  put("lu_solve adjoint", L.lu_solve(LU, piv, Bs, { adjoint = true }))

  -- Cholesky (both triangles), triangular solve
  local P = S:matmul(H(S)) + eye_like(n, dt)
  put("cholesky", L.cholesky(P))
  put("cholesky upper", L.cholesky(P, { upper = true }))
  local Lf = L.cholesky(P)
  put("solve_triangular", L.solve_triangular(Lf, Bs, { upper = false }))
  put("solve_triangular right", L.solve_triangular(H(Lf), H(Bs), { upper = true, left = false }))

  -- QR: same Householder convention, so Q and R compare directly
  for _, sh in ipairs({ { 7, 4 }, { 4, 7 } }) do
    local M = randn(sh)
    local Q, R = L.qr(M)
    put(("qr Q %dx%d"):format(sh[1], sh[2]), Q)
    put(("qr R %dx%d"):format(sh[1], sh[2]), R)
    local Qc, Rc = L.qr(M, { mode = "complete" })
    invariants[("qr complete %dx%d"):format(sh[1], sh[2])] =
      math.max(maxabs(Qc:matmul(Rc) - M), maxabs(H(Qc):matmul(Qc) - eye_like(sh[1], dt)))
  end

  -- eigh: eigenvalues compare; vectors checked by invariants
  local w, V = L.eigh(P)
  put("eigh values", w)
  put("eigvalsh upper", L.eigvalsh(P, { UPLO = "U" }))
  invariants["eigh"] = math.max(maxabs(P:matmul(V) - V * w:to(dt):unsqueeze(-2)) / maxabs(P),
                                maxabs(H(V):matmul(V) - eye_like(n, dt)))

  -- SVD: values compare; vectors by invariants; tall, wide, full and reduced
  for _, sh in ipairs({ { 8, 5 }, { 5, 8 }, { 2, 6, 6 } }) do
    local M = randn(sh)
    local tag = table.concat(sh, "x")
    local U, Sv, Vh = L.svd(M, { full_matrices = false })
    put("svd S " .. tag, Sv)
    put("svdvals " .. tag, L.svdvals(M))
    local rec = (U * Sv:to(dt):unsqueeze(-2)):matmul(Vh)
    local k = Sv.shape[#Sv.shape]
    invariants["svd reduced " .. tag] = math.max(maxabs(rec - M) / maxabs(M),
                                                 maxabs(H(U):matmul(U) - eye_like(k, dt)),
                                                 maxabs(Vh:matmul(H(Vh)) - eye_like(k, dt)))
    local Uf, _, Vhf = L.svd(M)
    local m_, n_ = sh[#sh - 1], sh[#sh]
    invariants["svd full " .. tag] = math.max(maxabs(H(Uf):matmul(Uf) - eye_like(m_, dt)),
                                              maxabs(H(Vhf):matmul(Vhf) - eye_like(n_, dt)))
  end
  -- a rank-deficient matrix: zero singular values still give orthonormal U
  local Rk = randn({ 6, 2 }):matmul(randn({ 2, 5 }))
  local Ur, Sr = L.svd(Rk)
  put("svd rank2 S", Sr:narrow(1, 1, 2))
  invariants["svd rank2 U"] = maxabs(H(Ur):matmul(Ur) - eye_like(6, dt))

  -- least squares, every driver, tall and wide
  for _, sh in ipairs({ { 9, 4 }, { 4, 9 } }) do
    local M, Bl = randn(sh), randn({ sh[1], 2 })
    for _, drv in ipairs({ "gels", "gelsy", "gelsd", "gelss" }) do
      local X, res, rank = L.lstsq(M, Bl, { driver = drv })
      local tag = ("lstsq %s %dx%d"):format(drv, sh[1], sh[2])
      put(tag, X)
      if res:numel() > 0 then put(tag .. " residuals", res) end
      if rank:numel() > 0 then put(tag .. " rank", rank) end
    end
  end
  put("pinv", L.pinv(randn({ 5, 3 })))

  -- errors keep LAPACK's info: singular matrix, not positive definite
  local sing = randn({ 4, 4 })
  sing:select(2, 2):fill_(0)
  local function err(key, f, ...)
    local ok, msg = pcall(f, ...)
    errors[name .. " " .. key] = not ok and tostring(msg) or false
  end
  err("solve singular", L.solve, sing, randn({ 4, 1 }))
  err("inv singular", L.inv, sing)
  local npd = eye_like(4, dt) * T.tensor({ 1, 1, -1, 1 }):to(dt)
  err("cholesky npd", L.cholesky, npd)

  -- general eigen: values as a set, vectors by A V = V diag(w), unit norm
  for _, sh in ipairs({ { 7, 7 }, { 2, 5, 5 } }) do
    local E = randn(sh)
    local tag = table.concat(sh, "x")
    local w, V = L.eig(E)
    sets[name .. " eig " .. tag] = flat(w)
    sets[name .. " eigvals " .. tag] = flat(L.eigvals(E))
    invariants["eig " .. tag] = math.max(maxabs(E:to(V.dtype):matmul(V) - V * w:unsqueeze(-2)) / maxabs(E),
                                         maxabs((V:abs() ^ 2):sum(-2) - 1))
  end
end

-- a file name, never an option: run by mistake under a test runner's
-- arguments (busted's --ignore-lua) this once wrote a file of that name
local path = arg and arg[1]
assert(path and not path:match("^%-"), "usage: lua5.4 spec/blas_none_cases.lua OUT_FILE")
local out = assert(io.open(path, "w"))
local function ser(v)
  if type(v) == "number" then
    if v ~= v then return "0/0" elseif v == math.huge then return "math.huge" elseif v == -math.huge then return "-math.huge" end
    return math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
  elseif type(v) == "string" then return ("%q"):format(v)
  elseif type(v) == "boolean" or v == nil then return tostring(v or false)
  end
  local parts = {}
  for i = 1, #v do parts[i] = ser(v[i]) end
  for k, x in pairs(v) do
    if type(k) == "string" then parts[#parts + 1] = ("[%q] = %s"):format(k, ser(x)) end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end
out:write("return ", ser({ values = values, invariants = invariants, errors = errors, sets = sets }), "\n")
out:close()
