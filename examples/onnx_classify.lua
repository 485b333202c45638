-- Classify an image with an ONNX model exported from PyTorch (torchvision).
--
--   /usr/bin/python3 examples/onnx_export.py                  # build/onnx_models/*.onnx, image.png
--   build/bin/ltensor examples/onnx_classify.lua [MODEL.onnx [IMAGE.png]]
--
-- Loads the model with T.onnx.load, the image with T.load_image (resized to
-- 224 x 224, scaled to [0, 1], normalised with ImageNet's mean and std),
-- prints the top-5 classes, and, when examples/onnx_export.py left
-- PyTorch's logits beside the model (<model>.expected.safetensors), how far
-- ltensor's are from them.
local T = require "ltensor"
local F = T.nn.functional

local model_path = arg[1] or "build/onnx_models/resnet18.onnx"
local image_path = arg[2] or (model_path:match("^(.*)/[^/]*$") or ".") .. "/image.png"

local t0 = os.clock()
local model = T.onnx.load(model_path)
print(("loaded %s: %d parameters, opset %d, input %s {%s} (%.2f s)"):format(model_path, model:num_parameters(),
  model.opset, model.input_names[1], table.concat(model.inputs[1].shape, ", "), os.clock() - t0))

local img = T.load_image(image_path)                 -- uint8, C x H x W
if img:size(1) == 1 then img = img:expand(3, img:size(2), img:size(3)) end
if img:size(1) == 4 then img = img:narrow(1, 1, 3) end
local x = (img:float() / 255):unsqueeze(1)            -- 1 x 3 x H x W
if x:size(3) ~= 224 or x:size(4) ~= 224 then
  x = F.interpolate(x, { size = { 224, 224 }, mode = "bilinear", align_corners = false })
end
local mean = T.tensor({ 0.485, 0.456, 0.406 }):view(1, 3, 1, 1)
local std = T.tensor({ 0.229, 0.224, 0.225 }):view(1, 3, 1, 1)
x = (x - mean) / std

t0 = os.clock()
local logits = T.no_grad(function() return model(x) end)
print(("forward: %.2f s"):format(os.clock() - t0))
local probs = T.softmax(logits[1], 1)
local p, idx = T.topk(probs, 5)
print("top-5 (class index 0-based as in ImageNet, probability):")
for i = 1, 5 do print(("  %4d  %.4f"):format(idx[i]:item() - 1, p[i]:item())) end

local ref = model_path:gsub("%.onnx$", ".expected.safetensors")
local f = io.open(ref, "rb")
if f then
  f:close()
  local want = T.load(ref).logits
  local diff = (logits - want):abs():max():item()
  print(("max |ltensor - PyTorch| over the logits: %.3g (logits span %.3g)"):format(diff,
    (want:max() - want:min()):item()))
end
