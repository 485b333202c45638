-- examples/digits_data.lua: the UCI handwritten digits (examples/data/digits.csv.gz,
-- 1,797 8x8 images, 10 classes, CC BY 4.0, see examples/data/README.md) and
-- the split the digits examples share.
--
--   local digits = dofile(here .. "/digits_data.lua")
--   local d = digits.load(T, here .. "/data/digits.csv.gz")
--   -- d.Xtr (1437 x 64 float32), d.Ytr (int64 classes 1..10), d.Xte, d.Yte, d.n, d.ntrain
--
-- Pixels are scaled from 0..16 to 0..1; labels 0..9 become classes 1..10
-- (1-based).  Split: T.randperm over the rows with the caller's generator
-- state (the examples call T.manual_seed(0) first); the first 80% train, the
-- rest test.
local digits = {}

local function read_csv_gz(T, path)
  local f = assert(io.open(path, "rb"), "cannot open " .. path)
  f:close()
  local p = assert(io.popen("gzip -dc '" .. path:gsub("'", "'\\''") .. "'", "r"))
  local xs, ys = {}, {}
  for line in p:lines() do
    local row = {}
    for v in line:gmatch("[^,]+") do row[#row + 1] = tonumber(v) end
    if #row == 65 then
      ys[#ys + 1] = math.floor(table.remove(row)) + 1
      for i = 1, 64 do row[i] = row[i] / 16 end
      xs[#xs + 1] = row
    end
  end
  p:close()
  assert(#xs > 0, "no rows read from " .. path .. " (is gzip installed?)")
  return T.tensor(xs, { dtype = T.float32 }), T.tensor(ys, { dtype = T.int64 })
end

function digits.load(T, path)
  local X, Y = read_csv_gz(T, path)
  local n = X:size(1)
  local perm = T.randperm(n)
  local ntrain = math.floor(n * 0.8)
  local train_idx, test_idx = perm:narrow(1, 1, ntrain), perm:narrow(1, ntrain + 1, n - ntrain)
  return { Xtr = X[train_idx], Ytr = Y[train_idx], Xte = X[test_idx], Yte = Y[test_idx], n = n, ntrain = ntrain }
end

return digits
