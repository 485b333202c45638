-- tools/gen_doc.lua OUTDIR: renders the reference documentation (the
-- entries of lua/ltensor/docs/*.lua, the same source T.help reads) as HTML:
-- OUTDIR/index.html (every name, by area) and OUTDIR/<area>.html.
-- Run by `make doc`.
local T = require "ltensor"
local help = require "ltensor.help"
local out = assert(arg[1], "usage: gen_doc.lua OUTDIR")

local TITLES = { core = "Tensors: creation, dtypes, settings, attributes", ops = "Elementwise operations",
  inplace = "In-place operations (t:op_())",
  views = "Views, indexing, joining and splitting", reductions = "Reductions, sorting, matrix products",
  structural = "Construction, structure, einsum, search, integration and statistics", linalg = "Linear algebra (T.linalg)",
  random = "Random numbers, generators and distributions",
  autograd = "Autograd", nn = "Neural networks (T.nn)",
  nn_layers = "Activations, losses, normalisation, dropout, attention (T.nn.functional and modules)",
  nn_modules = "Convolution, pooling, recurrent and transformer modules, the Module API, T.nn.init, T.nn.utils", optim = "Optimizers (T.optim)",
  training = "Optimizers, schedulers, data loading, CSV, progress", io = "Files and images",
  env = "Testing and plots" }

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end
local function anchor(name) return (name:gsub("[^%w_]", "-")) end
-- `code` spans in descriptions
local function prose(s) return (esc(s):gsub("`([^`]+)`", "<code>%1</code>")) end

local CSS = [[
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
.entry{margin:1.2rem 0 1.6rem}.sig{font-family:ui-monospace,monospace;background:#f4f4f4;padding:.3rem .5rem;border-radius:4px;display:block}
pre{background:#f8f8f8;border-left:3px solid #9ab;padding:.5rem .8rem;overflow-x:auto}
code{font-family:ui-monospace,monospace;font-size:.95em}a{color:#1f5fa8;text-decoration:none}
.names{columns:3;font-family:ui-monospace,monospace;font-size:.9rem}.names a{display:block}
]]

local function page(title, body)
  return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head>" ..
    "<body>%s</body></html>\n"):format(esc(title), CSS, body)
end

local by_area = {}
for _, e in ipairs(help.entries()) do
  by_area[e.area] = by_area[e.area] or {}
  table.insert(by_area[e.area], e)
end

local function write(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end

local index = { "<h1>ltensor " .. esc(T._VERSION) .. " reference</h1>",
  "<p>Every public function, method, class and module, from the same entries that <code>help(f)</code> shows at the " ..
  "<code>ltensor</code> prompt. Indices and dims are 1-based; tensors' methods are listed as <code>T.op</code> when " ..
  "they are also module functions, and the in-place form <code>t:op_()</code> follows its entry.</p>" }
local count = 0
for _, area in ipairs(help.AREAS) do
  local list = by_area[area]
  if list then
    table.sort(list, function(a, b) return a.name < b.name end)
    local parts = { ("<p><a href=\"index.html\">index</a></p><h1>%s</h1>"):format(esc(TITLES[area] or area)) }
    index[#index + 1] = ("<h2><a href=\"%s.html\">%s</a></h2><div class=\"names\">"):format(area, esc(TITLES[area] or area))
    for _, e in ipairs(list) do
      count = count + 1
      index[#index + 1] = ("<a href=\"%s.html#%s\">%s</a>"):format(area, anchor(e.name), esc(e.name))
      parts[#parts + 1] = ("<div class=\"entry\" id=\"%s\"><h3>%s</h3><span class=\"sig\">%s</span><p>%s</p>%s</div>")
        :format(anchor(e.name), esc(e.name), esc(e.signature), prose(e.description),
          (e.example and e.example ~= "") and ("<pre><code>" .. esc(e.example) .. "</code></pre>") or "")
    end
    index[#index + 1] = "</div>"
    write(out .. "/" .. area .. ".html", page("ltensor: " .. (TITLES[area] or area), table.concat(parts, "\n")))
  end
end
-- The promotion tables, from the code itself (T.promote_types per mode).
local DT = { "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
             "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128" }
local prom = { "<p><a href=\"index.html\">index</a></p><h1>Dtype promotion tables</h1>",
  "<p>The dtype two tensors of the row's and column's dtypes promote to (<code>T.promote_types</code>). " ..
  "Lua numbers are weak (a Lua integer acts as int64, a Lua float as the default dtype) and only change " ..
  "the result when their category (bool &lt; integer &lt; floating &lt; complex) is higher; in torch mode " ..
  "zero-dim tensors form a tier between dimensioned tensors and Lua numbers. A blank cell: the pair does " ..
  "not combine in that mode.</p>" }
for _, mode in ipairs({ "torch", "jax" }) do
  prom[#prom + 1] = ("<h2>%s mode</h2><table style=\"border-collapse:collapse;font-size:.8rem\"><tr><th></th>"):format(mode)
  for _, b in ipairs(DT) do prom[#prom + 1] = "<th style=\"writing-mode:vertical-rl;padding:2px\">" .. b .. "</th>" end
  prom[#prom + 1] = "</tr>"
  for _, a in ipairs(DT) do
    prom[#prom + 1] = "<tr><th style=\"text-align:right;padding:2px 6px\">" .. a .. "</th>"
    for _, b in ipairs(DT) do
      local ok, r = pcall(T.with_promotion, mode, T.promote_types, T[a], T[b])
      prom[#prom + 1] = "<td style=\"border:1px solid #ddd;padding:2px 4px\">" .. (ok and esc(r.name) or "") .. "</td>"
    end
    prom[#prom + 1] = "</tr>"
  end
  prom[#prom + 1] = "</table>"
end
write(out .. "/promotion.html", page("ltensor: dtype promotion", table.concat(prom, "\n")))
index[#index + 1] = "<h2><a href=\"promotion.html\">Dtype promotion tables</a></h2>"
write(out .. "/index.html", page("ltensor reference", table.concat(index, "\n")))
io.stderr:write(("doc: %d entries in %s/\n"):format(count, out))
