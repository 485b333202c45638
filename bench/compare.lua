-- bench/compare.lua: join the outputs of run.lua and torch_bench.py into a
-- markdown table with ratio = torch time / ltensor time (> 1: ltensor faster).
-- usage: lua5.4 bench/compare.lua ltensor.txt torch.txt
local function read(path)
  local t, order = {}, {}
  for line in io.lines(path) do
    local name, v, extra = line:match("^([^\t]+)\t([^\t]+)\t?(.*)$")
    if name then t[name] = { v = v, extra = extra }; order[#order + 1] = name end
  end
  return t, order
end
local lt, order = read(arg[1])
local th = read(arg[2])
local function fmt(s)
  local x = tonumber(s)
  if not x then return s end
  if x < 1e-3 then return string.format("%.3g µs", x * 1e6) end
  return string.format("%.3g ms", x * 1e3)
end
print("| case | ltensor | PyTorch (best of 1/2 threads) | ratio (PyTorch / ltensor) |")
print("|---|---|---|---|")
for _, name in ipairs(order) do
  local a, b = lt[name], th[name]
  local ratio = "–"
  if a and b and tonumber(a.v) and tonumber(b.v) then ratio = string.format("%.2f×", tonumber(b.v) / tonumber(a.v)) end
  print(string.format("| %s | %s | %s | %s |", name, fmt(a.v), b and (fmt(b.v) .. " (" .. b.extra .. "t)") or "–", ratio))
end
