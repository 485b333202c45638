-- `make BLAS=none` (issue 12): the build without OpenBLAS -- built-in gemm
-- (src/core/lt_gemm.c) and portable LAPACK (src/core/lt_lapack_portable.c) -- gives
-- the OpenBLAS build's results within tolerance.  The BLAS=none library is
-- built into build/noblas/ (incremental after the first time), then
-- spec/blas_none_cases.lua runs against each library and the results are
-- compared: values directly where both builds follow the same convention
-- (matmul, LU, Cholesky, QR, eigenvalues, singular values, lstsq), as sets
-- for a general matrix's eigenvalues, and invariants for eigen/singular
-- vectors, whose phases may differ.
local ROOT = "."
local NOBLAS = "build/noblas"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"rc=$?\"")
  local out = p:read("*a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return rc, out
end

local function run_cases(cpath)
  local file = os.tmpname()
  local rc, out = sh(("cd %s && LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='%s/?.so;;' lua5.4 spec/blas_none_cases.lua %s")
    :format(ROOT, cpath, file))
  assert(rc == 0, out)
  local r = dofile(file)
  os.remove(file)
  return r
end

local TOL = { float32 = 1e-4, complex64 = 1e-4, float64 = 1e-10, complex128 = 1e-10 }
local function tol_of(name) return TOL[name:match("^(%S+)")] end

describe("make BLAS=none", function()
  local ref, nob, build_out
  setup(function()
    local rc
    rc, build_out = sh(("cd %s && make --no-print-directory -j2 B=%s BLAS=none %s/ltensor/core.so %s/libltensor.a %s/bin/ltensor")
      :format(ROOT, NOBLAS, NOBLAS, NOBLAS, NOBLAS))
    assert(rc == 0, "BLAS=none build failed:\n" .. build_out)
    ref = run_cases("build")
    nob = run_cases(NOBLAS)
  end)

  it("links no BLAS library into core.so or the CLI", function()
    for _, f in ipairs({ NOBLAS .. "/ltensor/core.so", NOBLAS .. "/bin/ltensor" }) do
      local rc, out = sh("ldd " .. f)
      assert.are.equal(0, rc, out)
      assert.is_nil(out:lower():match("blas"), out)
      assert.is_nil(out:lower():match("lapack"), out)
    end
    -- and the static library references no BLAS/LAPACK symbol
    local _, syms = sh("nm -u " .. NOBLAS .. "/libltensor.a")
    assert.is_nil(syms:match("cblas_"), "cblas symbol in libltensor.a")
    assert.is_nil(syms:match("%f[%w_]%a?ge[tq]rf_"), "LAPACK symbol in libltensor.a")
  end)

  it("compiles with -DLT_BLAS_NONE and without the LAPACK wrappers", function()
    local _, out = sh("make --no-print-directory -n B=" .. NOBLAS .. " BLAS=none -B " .. NOBLAS .. "/obj/lt_blas.o")
    assert.is_truthy(out:match("%-DLT_BLAS_NONE"))
    local _, objs = sh("ar t " .. NOBLAS .. "/libltensor.a")
    assert.is_truthy(objs:match("lt_lapack_portable%.o"))
    assert.is_nil(objs:match("lt_lapack%.o"))
    assert.is_truthy(objs:match("lt_gemm%.o"))
  end)

  it("computes every case the OpenBLAS build computes", function()
    local n = 0
    for k in pairs(ref.values) do
      n = n + 1
      assert.is_not_nil(nob.values[k], "missing in BLAS=none: " .. k)
    end
    assert.is_true(n > 150)
  end)

  it("matches the OpenBLAS build within tolerance (matmul, LU, Cholesky, QR, eigh, SVD, lstsq)", function()
    local bad = {}
    for k, rv in pairs(ref.values) do
      local nv = nob.values[k]
      local tol = tol_of(k)
      local scale = 1
      for i = 1, #rv do scale = math.max(scale, math.abs(rv[i])) end
      if #nv ~= #rv then
        bad[#bad + 1] = ("%s: %d values, expected %d"):format(k, #nv, #rv)
      else
        local worst = 0
        for i = 1, #rv do
          local d = math.abs(nv[i] - rv[i])
          if d ~= d then d = math.huge end
          if d > worst then worst = d end
        end
        if worst > tol * scale then bad[#bad + 1] = ("%s: max diff %.3g (tol %.3g)"):format(k, worst, tol * scale) end
      end
    end
    table.sort(bad)
    assert.are.same({}, bad)
  end)

  it("gives orthonormal eigenvectors and singular vectors that reconstruct the input", function()
    local bad = {}
    for k, v in pairs(nob.invariants) do
      if not (v <= tol_of(k) * 10) then bad[#bad + 1] = ("%s: %.3g"):format(k, v) end
    end
    table.sort(bad)
    assert.are.same({}, bad)
    assert.is_not_nil(nob.invariants["complex128 eigh"])
    assert.is_not_nil(nob.invariants["float32 svd full 5x8"])
    assert.is_not_nil(nob.invariants["complex64 eig 2x5x5"])
  end)

  it("reports singular and non-positive-definite inputs with the OpenBLAS build's messages", function()
    for k, msg in pairs(ref.errors) do assert.are.equal(msg, nob.errors[k], k) end
    assert.is_truthy(nob.errors["float64 cholesky npd"]:match("leading minor of order 3"))
    assert.is_truthy(nob.errors["complex64 inv singular"]:match("The diagonal element 2 is zero"))
  end)

  it("finds the same general eigenvalues (as a set) as the OpenBLAS build", function()
    local n = 0
    for k, rv in pairs(ref.sets) do
      local nv, tol = nob.sets[k], tol_of(k) * 10
      assert.are.equal(#rv, #nv, k)
      local taken = {}
      for i = 1, #rv, 2 do   -- each reference value has a distinct match
        local best, bj = math.huge, nil
        for j = 1, #nv, 2 do
          local d = math.abs(nv[j] - rv[i]) + math.abs(nv[j + 1] - rv[i + 1])
          if not taken[j] and d < best then best, bj = d, j end
        end
        assert.is_true(best <= tol * math.max(1, math.abs(rv[i]) + math.abs(rv[i + 1])), k)
        taken[bj] = true
        n = n + 1
      end
    end
    assert.is_true(n >= 4 * 2 * (7 + 10))
  end)
end)
