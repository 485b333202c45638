-- char_rnn.lua: a character-level LSTM language model (Karpathy's char-rnn,
-- the Torch7 classic, in ltensor) trained on the opening of Shakespeare's
-- Coriolanus (examples/data/shakespeare.txt), then sampling new text.
--
--   lua5.4 examples/char_rnn.lua [seconds]      (default: 45 seconds of training)
--   ltensor examples/char_rnn.lua [seconds]
--
-- Model: Embedding(V, 32) -> LSTM(32, 128) -> Linear(128, V); Adam,
-- gradient clipping, truncated backpropagation over 64 characters.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"
local nn, F = T.nn, T.nn.functional

local budget = tonumber(arg and arg[1]) or 45
local f = assert(io.open(here .. "/data/shakespeare.txt", "rb"))
local text = f:read("*a")
f:close()

-- vocabulary: the distinct characters, sorted; ids are 1-based
local seen, chars = {}, {}
for c in text:gmatch(".") do if not seen[c] then seen[c] = true chars[#chars + 1] = c end end
table.sort(chars)
local id = {}
for i, c in ipairs(chars) do id[c] = i end
local V = #chars
local codes = {}
for i = 1, #text do codes[i] = id[text:sub(i, i)] end
local data = T.tensor(codes, { dtype = T.int64 })
print(("text: %d characters, vocabulary: %d"):format(#text, V))

T.manual_seed(42)
local CharRNN = nn.Module:extend("CharRNN")
function CharRNN:init(vocab, emb, hidden)
  self.embed = nn.Embedding(vocab, emb)
  self.lstm = nn.LSTM(emb, hidden, { batch_first = true })
  self.head = nn.Linear(hidden, vocab)
end
-- idx (B, L) -> logits (B, L, V) and the LSTM state
function CharRNN:forward(idx, hc)
  local out, state = self.lstm(self.embed(idx), hc)
  return self.head(out), state
end
local model = CharRNN(V, 32, 128)
print(model)
print(("%d parameters"):format(model:num_parameters()))

local opt = T.optim.Adam(model:parameters(), { lr = 3e-3 })
local B, L = 32, 64
local n = data:numel()

-- a batch of B random windows: inputs (B, L) and the next characters (B, L)
local function batch()
  local starts = T.randint(1, n - L, { B })
  local offs = T.arange(0, L):reshape({ 1, L })
  local pos = starts:reshape({ B, 1 }) + offs
  local x = data:index_select(1, pos:reshape({ B * L })):reshape({ B, L })
  local y = data:index_select(1, (pos + 1):reshape({ B * L }))
  return x, y
end

local clock = T._clock or os.clock
local t0 = clock()
local step, smooth = 0, nil
while clock() - t0 < budget do
  step = step + 1
  local x, y = batch()
  local logits = model(x)
  local loss = F.cross_entropy(logits:reshape({ B * L, V }), y)
  opt:zero_grad()
  loss:backward()
  nn.utils.clip_grad_norm_(model, 5.0)
  opt:step()
  local l = loss:item()
  smooth = smooth and 0.9 * smooth + 0.1 * l or l
  if step % 25 == 0 or step == 1 then
    print(("step %4d  loss %.3f  (%.1f s)"):format(step, smooth, clock() - t0))
  end
end
print(("trained %d steps in %.1f s; loss %.3f (uniform guess: %.3f)"):format(step, clock() - t0, smooth, math.log(V)))

-- sampling: feed a prompt, then draw one character at a time from
-- softmax(logits / temperature), carrying the LSTM state
local function sample(prompt, count, temperature)
  model:eval()
  local out = { prompt }
  T.no_grad(function()
    local ids = {}
    for i = 1, #prompt do ids[i] = id[prompt:sub(i, i)] end
    local logits, hc = model(T.tensor({ ids }, { dtype = T.int64 }))
    local last = logits[1][#ids]
    for _ = 1, count do
      local probs = T.softmax(last / temperature, 1)
      local c = T.multinomial(probs, 1):item()
      out[#out + 1] = chars[c]
      logits, hc = model(T.tensor({ { c } }, { dtype = T.int64 }), hc)
      last = logits[1][1]
    end
  end)
  model:train()
  return table.concat(out)
end

print("\n--- sample (temperature 0.8) ---")
print(sample("MENENIUS:\n", 400, 0.8))
