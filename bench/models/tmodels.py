"""PyTorch's side of the real-model suite (bench/models/): the models, their
seeded random weights, the workloads, and a minimal safetensors writer (the
Python `safetensors` package is not installed here)."""
import json
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.nn.utils.fusion import fuse_conv_bn_eval

VOCAB, EMB, HID, GEN_TOKENS = 1000, 256, 256, 100


class LSTMLM(nn.Module):
    """Embedding -> 2-layer LSTM -> Linear, batch 1, sequence first."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMB)
        self.lstm = nn.LSTM(EMB, HID, num_layers=2)
        self.fc = nn.Linear(HID, VOCAB)

    def generate(self, tok, n):
        """greedy: n tokens one at a time from token `tok`; returns the tokens
        and the first step's logits"""
        h, toks, first = None, [], None
        x = torch.tensor([[tok]])
        for _ in range(n):
            out, h = self.lstm(self.embedding(x), h)
            logits = self.fc(out[0])
            if first is None:
                first = logits
            x = logits.argmax(1, keepdim=True)
            toks.append(int(x))
        return toks, first


def transformer():
    layer = nn.TransformerEncoderLayer(256, 8, dim_feedforward=1024, batch_first=True)
    return nn.TransformerEncoder(layer, 4)


def build(name):
    """the model `name` with seeded random weights (BatchNorm's running
    statistics randomised too, so eval-mode BatchNorm is not the identity)"""
    torch.manual_seed(0)
    if name == "resnet18":
        m = torchvision.models.resnet18(weights=None)
    elif name == "mobilenet_v2":
        m = torchvision.models.mobilenet_v2(weights=None)
    elif name == "transformer":
        m = transformer()
    elif name == "lstm_lm":
        m = LSTMLM()
    else:
        raise ValueError(name)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
                mod.weight.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
    return m


def fold(m):
    """eval-mode BatchNorm folded into the convolution before it: inside
    Sequentials, and torchvision's conv1/bn1, conv2/bn2 attribute pairs"""
    for mod in list(m.modules()):
        if isinstance(mod, nn.Sequential):
            for i in range(len(mod) - 1):
                if isinstance(mod[i], nn.Conv2d) and isinstance(mod[i + 1], nn.BatchNorm2d):
                    mod[i] = fuse_conv_bn_eval(mod[i], mod[i + 1])
                    mod[i + 1] = nn.Identity()
        for c, b in (("conv1", "bn1"), ("conv2", "bn2")):
            if isinstance(getattr(mod, c, None), nn.Conv2d) and isinstance(getattr(mod, b, None), nn.BatchNorm2d):
                setattr(mod, c, fuse_conv_bn_eval(getattr(mod, c), getattr(mod, b)))
                setattr(mod, b, nn.Identity())
    return m


def base_of(name):
    return name.replace("_train", "").replace("_folded", "")


def inputs(name):
    """the workload inputs, seeded (shared by both sides through the export)"""
    g = torch.Generator().manual_seed(2)
    if base_of(name) in ("resnet18", "mobilenet_v2") and not name.endswith("_train"):
        return {"x": torch.randn(1, 3, 224, 224, generator=g)}
    if name == "resnet18_train":
        return {"x": torch.randn(8, 3, 112, 112, generator=g),
                "y": torch.randint(0, 1000, (8,), generator=g)}
    if name == "transformer":
        return {"x": torch.randn(1, 128, 256, generator=g)}
    if name == "transformer_train":
        return {"x": torch.randn(16, 128, 256, generator=g),
                "y": torch.randn(16, 128, 256, generator=g)}
    if name == "lstm_lm":
        return {}
    raise ValueError(name)


DT = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        a = t.detach().contiguous().numpy().tobytes()
        header[k] = {"dtype": DT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(a)]}
        blobs.append(a)
        off += len(a)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def no_dropout(m):
    """p = 0 everywhere (the training-step check compares two steps, which
    random dropout masks would make differ)"""
    for mod in m.modules():
        if isinstance(mod, nn.Dropout):
            mod.p = 0.0
        if isinstance(mod, nn.MultiheadAttention):
            mod.dropout = 0.0


class Workload:
    """setup() once, step() timed; check() -> dict of named tensors compared
    with ltensor's"""

    def __init__(self, name):
        self.name = name
        self.model = build(base_of(name))
        self.inp = inputs(name)
        if not name.endswith("_train"):
            self.model.eval()
            if name.endswith("_folded"):
                fold(self.model)
        else:
            self.model.train()
            if name == "resnet18_train":
                self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
            else:
                self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train_step(self):
        self.opt.zero_grad()
        out = self.model(self.inp["x"])
        if self.name == "resnet18_train":
            loss = F.cross_entropy(out, self.inp["y"])
        else:
            loss = F.mse_loss(out, self.inp["y"])
        loss.backward()
        self.opt.step()
        return loss

    def step(self):
        if self.name == "lstm_lm":
            with torch.no_grad():
                return self.model.generate(0, GEN_TOKENS)
        if hasattr(self, "opt"):
            return self.train_step()
        with torch.no_grad():
            return self.model(self.inp["x"])

    def check(self):
        if self.name == "lstm_lm":
            with torch.no_grad():
                toks, first = self.model.generate(0, GEN_TOKENS)
            return {"tokens": torch.tensor(toks, dtype=torch.int64), "logits": first}
        if hasattr(self, "opt"):
            no_dropout(self.model)
            l1 = self.train_step()
            l2 = self.train_step()
            return {"loss": torch.stack([l1.detach(), l2.detach()])}
        with torch.no_grad():
            return {"out": self.model(self.inp["x"])}


WORKLOADS = ["resnet18", "mobilenet_v2", "resnet18_train", "transformer", "transformer_train", "lstm_lm",
             "resnet18_folded", "mobilenet_v2_folded"]
