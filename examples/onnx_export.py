#!/usr/bin/env python3
"""Export torchvision classifiers to ONNX for examples/onnx_classify.lua.

    /usr/bin/python3 examples/onnx_export.py [OUTDIR] [MODEL ...]

writes, for each model (default: resnet18 mobilenet_v2), OUTDIR/<model>.onnx
(opset 13, random weights from torch.manual_seed(0), BatchNorm statistics
calibrated on random batches, a dynamic batch axis),
a test image OUTDIR/image.png (224 x 224, a smooth synthetic pattern) and
OUTDIR/<model>.expected.safetensors: PyTorch's logits for that image,
preprocessed as the Lua example does (to [0, 1], ImageNet mean/std).
OUTDIR defaults to build/onnx_models (the files are ~50 MB: not committed).
"""
import json
import os
import struct
import sys
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, t in sorted(tensors.items()):
        b = t.detach().contiguous().numpy().tobytes()
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "onnx_models")
    names = sys.argv[2:] or ["resnet18", "mobilenet_v2"]
    os.makedirs(out, exist_ok=True)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, 224), torch.linspace(0, 1, 224), indexing="ij")
    img = torch.stack([xx, yy, 0.5 + 0.5 * torch.sin(12 * xx * yy)])
    img = (img * 255).round().clamp(0, 255).to(torch.uint8)
    torchvision.io.write_png(img, os.path.join(out, "image.png"))
    x = ((img.float() / 255).unsqueeze(0) - MEAN) / STD
    for name in names:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)()
        # calibrate the BatchNorm statistics on random batches (train mode,
        # cumulative averages): freshly initialised statistics (mean 0,
        # var 1) let activations vanish with depth in mobilenet_v2, and
        # its logits would all be equal
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.momentum = None
        with torch.no_grad():
            for _ in range(3):
                model(torch.randn(8, 3, 224, 224))
        model.eval()
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13, input_names=["image"],
                          output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
        with torch.no_grad():
            logits = model(x)
        write_safetensors(os.path.join(out, name + ".expected.safetensors"), {"logits": logits})
        print("%s: %s (%.1f MB), top-5 %s" % (name, path, os.path.getsize(path) / 1e6,
                                              logits[0].topk(5).indices.tolist()))


if __name__ == "__main__":
    main()
