-- ltensor's side of the real-model suite (bench/models/): torchvision's
-- resnet18 and mobilenet_v2, nn.TransformerEncoder and the LSTM language
-- model, written in T.nn with the same module names as PyTorch's
-- state_dict, so the weights exported by torch_side.py load strictly.
local T = require "ltensor"
local nn = T.nn
local F = nn.functional

local M = {}

local function conv(cin, cout, k, stride, pad, groups)
  return nn.Conv2d(cin, cout, k, { stride = stride or 1, padding = pad or 0, groups = groups or 1, bias = false })
end

---------------------------------------------------------------------------
-- resnet18 (torchvision.models.resnet: BasicBlock, layers {2, 2, 2, 2})
---------------------------------------------------------------------------
local BasicBlock = nn.Module:extend("BasicBlock")
function BasicBlock:init(cin, cout, stride)
  self.conv1 = conv(cin, cout, 3, stride, 1)
  self.bn1 = nn.BatchNorm2d(cout)
  self.relu = nn.ReLU(true)   -- torchvision's ReLU(inplace=True)
  self.conv2 = conv(cout, cout, 3, 1, 1)
  self.bn2 = nn.BatchNorm2d(cout)
  if stride ~= 1 or cin ~= cout then
    self.downsample = nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout))
  end
end
function BasicBlock:forward(x)
  local identity = x
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  if self.downsample then identity = self.downsample(x) end
  return self.relu(out + identity)
end

local ResNet = nn.Module:extend("ResNet")
function ResNet:init(num_classes)
  self.conv1 = conv(3, 64, 7, 2, 3)
  self.bn1 = nn.BatchNorm2d(64)
  self.relu = nn.ReLU(true)
  self.maxpool = nn.MaxPool2d(3, { stride = 2, padding = 1 })
  local cin = 64
  for i, c in ipairs({ 64, 128, 256, 512 }) do
    local stride = i == 1 and 1 or 2
    self["layer" .. i] = nn.Sequential(BasicBlock(cin, c, stride), BasicBlock(c, c, 1))
    cin = c
  end
  self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
  self.fc = nn.Linear(512, num_classes or 1000)
end
function ResNet:forward(x)
  x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
  x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
  return self.fc(T.flatten(self.avgpool(x), 2))
end
M.resnet18 = ResNet

---------------------------------------------------------------------------
-- mobilenet_v2 (torchvision.models.mobilenetv2, width 1.0)
---------------------------------------------------------------------------
local function conv_bn_act(cin, cout, k, stride, groups)
  return nn.Sequential(conv(cin, cout, k, stride, math.floor((k - 1) / 2), groups), nn.BatchNorm2d(cout),
    nn.ReLU6({ inplace = true }))   -- torchvision's Conv2dNormActivation: ReLU6(inplace=True)
end

local InvertedResidual = nn.Module:extend("InvertedResidual")
function InvertedResidual:init(inp, oup, stride, t)
  local hidden = math.floor(inp * t + 0.5)
  self.use_res_connect = stride == 1 and inp == oup
  local layers = {}
  if t ~= 1 then layers[#layers + 1] = conv_bn_act(inp, hidden, 1, 1, 1) end
  layers[#layers + 1] = conv_bn_act(hidden, hidden, 3, stride, hidden)
  layers[#layers + 1] = conv(hidden, oup, 1, 1, 0)
  layers[#layers + 1] = nn.BatchNorm2d(oup)
  self.conv = nn.Sequential(table.unpack(layers))
end
function InvertedResidual:forward(x)
  if self.use_res_connect then return x + self.conv(x) end
  return self.conv(x)
end

local MobileNetV2 = nn.Module:extend("MobileNetV2")
function MobileNetV2:init(num_classes)
  local settings = { { 1, 16, 1, 1 }, { 6, 24, 2, 2 }, { 6, 32, 3, 2 }, { 6, 64, 4, 2 }, { 6, 96, 3, 1 },
    { 6, 160, 3, 2 }, { 6, 320, 1, 1 } }
  local feats = { conv_bn_act(3, 32, 3, 2, 1) }
  local cin = 32
  for _, s in ipairs(settings) do
    for i = 1, s[3] do
      feats[#feats + 1] = InvertedResidual(cin, s[2], i == 1 and s[4] or 1, s[1])
      cin = s[2]
    end
  end
  feats[#feats + 1] = conv_bn_act(cin, 1280, 1, 1, 1)
  self.features = nn.Sequential(table.unpack(feats))
  self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes or 1000))
end
function MobileNetV2:forward(x)
  x = F.adaptive_avg_pool2d(self.features(x), { 1, 1 })
  return self.classifier(T.flatten(x, 2))
end
M.mobilenet_v2 = MobileNetV2

---------------------------------------------------------------------------
-- TransformerEncoder(TransformerEncoderLayer(256, 8, 1024, batch_first), 4)
---------------------------------------------------------------------------
function M.transformer()
  local layer = nn.TransformerEncoderLayer(256, 8, { dim_feedforward = 1024, batch_first = true })
  return nn.TransformerEncoder(layer, 4)
end

---------------------------------------------------------------------------
-- LSTM language model: Embedding -> LSTM(2 layers) -> Linear, batch 1
---------------------------------------------------------------------------
local LSTMLM = nn.Module:extend("LSTMLM")
function LSTMLM:init()
  self.embedding = nn.Embedding(1000, 256)
  self.lstm = nn.LSTM(256, 256, { num_layers = 2 })
  self.fc = nn.Linear(256, 1000)
end
-- greedy generation of n tokens from token `tok` (1-based ids); returns
-- the tokens and the first step's logits
function LSTMLM:generate(tok, n)
  local h, first
  local toks = {}
  local x = T.tensor({ { tok } }, { dtype = T.int64 })
  for i = 1, n do
    local out
    out, h = self.lstm(self.embedding(x), h)
    local logits = self.fc(out[1])
    first = first or logits
    x = T.argmax(logits, 2, true)
    toks[i] = x:item()
  end
  return toks, first
end
M.lstm_lm = LSTMLM

return M
