-- examples/pca.lua: principal component analysis through T.linalg.svd, with
-- the explained variance of each component.
--
--   lua5.4 examples/pca.lua      (from the checkout, after make)
--   ltensor examples/pca.lua
--
-- The data is the UCI handwritten digits shipped with the examples
-- (examples/data/digits.csv.gz: 1,797 8x8 images, 64 pixel features 0..16,
-- 10 classes; CC BY 4.0, see examples/data/README.md), so the example needs
-- nothing beside the repository (and gzip to read the file).  The features
-- are centred; the SVD X = U S V^T gives the principal axes (rows of V^T)
-- and the variance along each, S^2 / (n - 1).  The digits' mean positions in
-- the plane of the first two components show how far apart they lie.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"

local DATA = here .. "/data/digits.csv.gz"
local SHOW = 10   -- components listed

local function die(msg)
  io.stderr:write("pca.lua: ", msg, "\n")
  os.exit(1)
end

local function load(path)
  local f = io.open(path, "rb")
  if not f then die(("cannot open %s: the digits data ships in examples/data/ of the repository"):format(path)) end
  f:close()
  local p = io.popen("gzip -dc '" .. path:gsub("'", "'\\''") .. "' 2>/dev/null", "r")
  if not p then die("cannot run gzip to read " .. path) end
  local xs, ys = {}, {}
  for line in p:lines() do
    local row = {}
    for v in line:gmatch("[^,]+") do row[#row + 1] = tonumber(v) end
    if #row == 65 then
      ys[#ys + 1] = math.floor(table.remove(row)) + 1   -- classes 0..9 become 1..10
      xs[#xs + 1] = row
    end
  end
  p:close()
  if #xs == 0 then die("no rows read from " .. path .. " (is gzip installed?)") end
  return T.tensor(xs, { dtype = T.float64 }), T.tensor(ys, { dtype = T.int64 })
end

local X, labels = load(DATA)
local n, d = X.shape[1], X.shape[2]
local Xc = X - X:mean(1, true)
local _, S, Vh = T.linalg.svd(Xc, { full_matrices = false })
local var = S * S / (n - 1)
local ratio = var / var:sum()
local cum = T.cumsum(ratio, 1)

print(("PCA of %d handwritten digits, %d pixel features"):format(n, d))
print("component  variance  explained  cumulative")
for k = 1, SHOW do
  print(("PC%-2d       %8.3f   %6.2f%%    %6.2f%%"):format(k, var[k]:item(), 100 * ratio[k]:item(), 100 * cum[k]:item()))
end
local need = T.searchsorted(cum, 0.9):item()   -- 1-based: the first component reaching 90%
print(("%d of %d components explain 90%% of the variance"):format(need, d))

-- project on the first two axes; the mean position of each digit
local Z = Xc:matmul(Vh:narrow(1, 1, 2):transpose(1, 2))                     -- n x 2
local sums = T.zeros(10, 2, { dtype = T.float64 }):index_add(1, labels, Z)
local counts = T.bincount(labels, nil, 11):narrow(1, 2, 10):to(T.float64)  -- labels are 1..10
local means = sums / counts:unsqueeze(2)
print("\ndigit means in the (PC1, PC2) plane:")
for c = 1, 10 do
  print(("  %d  (%8.3f, %8.3f)  %d images"):format(c - 1, means[c][1]:item(), means[c][2]:item(), counts[c]:item()))
end
