-- examples/pca.lua: principal component analysis of the iris data through
-- T.linalg.svd, with the explained variance of each component.
--
--   lua5.4 examples/pca.lua      (from the checkout, after make)
--   ltensor examples/pca.lua
--
-- The data is the shared copy of Fisher's iris measurements (150 flowers,
-- 4 features, 3 species), read from ../shared/data/iris.csv beside the
-- repository (its first line: "150,4,setosa,versicolor,virginica"; then one
-- row per flower, the features and the 0-based class).  The features are
-- centred; the SVD X = U S V^T gives the principal axes (rows of V^T) and the
-- variance along each, S^2 / (n - 1).  The first two components are printed
-- per species (their means) to show the separation.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"

local DATA = here .. "/../../shared/data/iris.csv"
local FEATURES = { "sepal length", "sepal width", "petal length", "petal width" }

local function load(path)
  local f = io.open(path, "r")
  if not f then
    io.stderr:write(("pca.lua: cannot open %s: the iris data is expected in shared/data/ beside the repository\n"):format(path))
    os.exit(1)
  end
  local header = f:read("*l")
  local n, d, names = header:match("^(%d+),(%d+),(.*)$")
  local species = {}
  for s in (names or ""):gmatch("[^,]+") do species[#species + 1] = s end
  local xs, ys = {}, {}
  for line in f:lines() do
    local row = {}
    for v in line:gmatch("[^,]+") do row[#row + 1] = tonumber(v) end
    if #row == tonumber(d) + 1 then
      ys[#ys + 1] = math.tointeger(table.remove(row)) + 1
      xs[#xs + 1] = row
    end
  end
  f:close()
  if #xs ~= tonumber(n) then
    io.stderr:write(("pca.lua: %s: expected %s rows, read %d\n"):format(path, n, #xs))
    os.exit(1)
  end
  return T.tensor(xs, { dtype = T.float64 }), ys, species
end

local X, labels, species = load(DATA)
local n = X.shape[1]
local Xc = X - X:mean(1, true)
local _, S, Vh = T.linalg.svd(Xc, { full_matrices = false })
local var = S * S / (n - 1)
local ratio = var / var:sum()

print(("PCA of %d iris flowers, %d features"):format(n, X.shape[2]))
print("component  variance  explained  cumulative")
local cum = 0
for k = 1, S.shape[1] do
  cum = cum + ratio[k]:item()
  print(("PC%d        %8.4f   %6.2f%%    %6.2f%%"):format(k, var[k]:item(), 100 * ratio[k]:item(), 100 * cum))
end
print("\nloadings of the first two components:")
for j, name in ipairs(FEATURES) do
  print(("  %-13s %7.3f %7.3f"):format(name, Vh[1][j]:item(), Vh[2][j]:item()))
end

-- project on the first two axes; mean position of each species
local Z = Xc:matmul(Vh:narrow(1, 1, 2):transpose(1, 2))
local z = Z:totable()
print("\nspecies means in the (PC1, PC2) plane:")
for s, name in ipairs(species) do
  local a, b, c = 0, 0, 0
  for i = 1, n do if labels[i] == s then a, b, c = a + z[i][1], b + z[i][2], c + 1 end end
  print(("  %-11s (%7.3f, %7.3f)  %d flowers"):format(name, a / c, b / c, c))
end
